//! `smem/dynamic-over-48k-without-opt-in`: a launch with more than 48 KB of shared memory
//! (static plus dynamic; a `<<<>>>` launch, one written in a macro, or
//! `cudaLaunchKernelEx` with its config's `dynamicSmemBytes`) and no `cudaFuncSetAttribute(kernel,
//! cudaFuncAttributeMaxDynamicSharedMemorySize, …)` before it.
//!
//! Without the opt-in the launch is rejected with `cudaErrorInvalidValue` before any
//! thread runs, and `<<<>>>` returns nothing (`pitfall-dynamic-shared-memory#P1`). The
//! rule stays silent when the file raises the attribute for that kernel anywhere (also
//! through a macro of the file or of a header it includes, or in another file of the
//! project), or
//! raises it earlier for a kernel expression it cannot name (a function pointer), when the
//! size is not a constant, and on targets without an opt-in above 48 KB (there
//! `smem/over-capacity` reports the launch). It also fires when the file raises the
//! attribute for that kernel only to a value below the launch's dynamic size (the limit
//! the attribute sets is a maximum for the dynamic size, so the launch fails the same way).
//!
//! The fix inserts the call before the launch (or writes the launch's size into the
//! opt-in that is too small).
//!
//! ```cuda
//! // Before
//! k<<<1, 256, 64 * 1024>>>(out);
//! // After
//! cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
//! k<<<1, 256, 64 * 1024>>>(out);
//! ```

use super::over_capacity::{base_kernel, StaticBytes};
use super::{indent_at, line_start, Fix, Rule, RuleContext, RuleDiagnostic, TextEdit};
use crate::config::Severity;
use kernaut_syntax::short_name;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("dynamic_over_48k.rs"),
    id: "smem/dynamic-over-48k-without-opt-in",
    severity: Severity::Error,
    wiki: &["pitfall-dynamic-shared-memory#P1"],
    run,
};

const ATTRIBUTE: &str = "cudaFuncAttributeMaxDynamicSharedMemorySize";

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let limits = ctx.arch.limits();
    let default = u64::from(limits.smem_per_block);
    let optin = u64::from(limits.smem_per_block_optin);
    if optin <= default {
        return;
    }
    let text = ctx.text();
    let kernel_names: Vec<&str> = ctx.facts.kernels.iter().map(|k| k.name.as_str()).collect();
    let static_bytes = StaticBytes::new(ctx);
    for l in &ctx.facts.launches {
        let Some(dynamic) = l.shared_bytes.and_then(|b| u64::try_from(b).ok()) else {
            continue;
        };
        // A launch that asks for no dynamic shared memory needs no opt-in (its static
        // bytes over 48 KB, which only an arch-specific target compiles, launch as they
        // are: `sm_90a`, 64 KB static, no attribute, ran on an H100).
        if dynamic == 0 {
            continue;
        }
        let name = base_kernel(&l.kernel);
        let stat = static_bytes.kernel(name).bytes;
        let total = dynamic + stat;
        if total <= default || total > optin {
            continue;
        }
        let opted = ctx.facts.func_attributes.iter().any(|a| {
            a.attribute.ends_with("MaxDynamicSharedMemorySize")
                && (base_kernel(&a.kernel) == name
                    || (a.range.start < l.range.start
                        && !kernel_names.contains(&base_kernel(&a.kernel))))
        });
        // The opt-ins for this kernel by name, when every one is a known value below the
        // launch's dynamic size.
        let by_name: Vec<_> = ctx
            .facts
            .func_attributes
            .iter()
            .filter(|a| {
                a.attribute.ends_with("MaxDynamicSharedMemorySize")
                    && base_kernel(&a.kernel) == name
            })
            .collect();
        let unnamed = ctx.facts.func_attributes.iter().any(|a| {
            a.attribute.ends_with("MaxDynamicSharedMemorySize")
                && a.range.start < l.range.start
                && !kernel_names.contains(&base_kernel(&a.kernel))
        });
        let too_small = !unnamed
            && !by_name.is_empty()
            && by_name
                .iter()
                .all(|a| a.value.is_some_and(|v| v >= 0 && (v as u64) < dynamic));
        // An opt-in for the kernel in another file of the project (a helper that sets
        // the attribute once, a launcher in another translation unit): the attribute is
        // per kernel for the whole program, so this launch may well be covered.
        let elsewhere = ctx.model.host.is_some_and(|(a, path)| {
            super::host::dynamic_opt_ins(a, short_name(name))
                .iter()
                .any(|(p, _)| *p != path)
        });
        if elsewhere {
            continue;
        }
        if too_small {
            let largest = by_name.iter().filter_map(|a| a.value).max().unwrap_or(0);
            let a = by_name
                .iter()
                .find(|a| a.value == Some(largest))
                .unwrap_or(&by_name[0]);
            let written = &text[a.range.clone()];
            let value_at = written
                .rfind(a.value_text.as_str())
                .filter(|_| !a.value_text.is_empty())
                .map(|i| a.range.start + i..a.range.start + i + a.value_text.len());
            let size = l
                .shared_bytes_text
                .clone()
                .filter(|_| stat == 0)
                .unwrap_or_else(|| dynamic.to_string());
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: RULE.severity,
                range: l.range.clone(),
                message: format!(
                    "launch of `{name}` asks for {dynamic} bytes of dynamic shared memory, but `cudaFuncSetAttribute({name}, {ATTRIBUTE}, {})` raises the limit only to {largest} bytes: the attribute is the most dynamic shared memory a launch may ask for, so this launch fails with cudaErrorInvalidValue and the kernel never runs; raise the opt-in to the launch's size",
                    a.value_text
                ),
                wiki: RULE.wiki[0].to_string(),
                fixes: value_at
                    .map(|r| Fix {
                        safe: false,
                        title: format!("Raise the opt-in of `{name}` to {size}"),
                        edits: vec![TextEdit::replace(r, size.clone())],
                    })
                    .into_iter()
                    .collect(),
            });
            continue;
        }
        if opted {
            continue;
        }
        let kernel = match &l.template_args {
            Some(t) => format!("{}{t}", l.kernel),
            None => l.kernel.clone(),
        };
        let size = l
            .shared_bytes_text
            .clone()
            .unwrap_or_else(|| dynamic.to_string());
        let value = if stat > 0 { dynamic.to_string() } else { size };
        let at = line_start(text, l.range.start);
        let indent = indent_at(text, l.range.start);
        let static_part = if stat > 0 {
            format!(" (plus {stat} bytes static)")
        } else {
            String::new()
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: l.range.clone(),
            message: format!(
                "launch of `{name}` asks for {dynamic} bytes of dynamic shared memory{static_part}, over the 48 KB default, with no `cudaFuncSetAttribute({name}, {ATTRIBUTE}, …)` before it: the launch fails with cudaErrorInvalidValue and the kernel never runs"
            ),
            wiki: RULE.wiki[0].to_string(),
            fixes: vec![Fix {
                safe: false,
                title: format!("Raise {ATTRIBUTE} for `{name}` before the launch"),
                edits: vec![TextEdit::insert(
                    at,
                    format!("{indent}cudaFuncSetAttribute({kernel}, {ATTRIBUTE}, {value});\n"),
                )],
            }],
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_fix};

    const RULE: &str = "smem/dynamic-over-48k-without-opt-in";

    const HIT: &str = r#"
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void launch(float* out) {
    k<<<1, 256, 64 * 1024>>>(out);
}
"#;

    #[test]
    fn launch_without_the_opt_in() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
template <int N> __global__ void t(float* out) { extern __shared__ float s[]; out[0] = s[N]; }
void launch(float* out) {
    k<<<1, 256, 64 * 1024>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` asks for 65536 bytes
    t<4><<<1, 256, 100000>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `t` asks for 100000 bytes
}
"#,
        );
    }

    #[test]
    fn opted_in_small_or_unknown_stays_silent() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void launch(float* out, int bytes) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    k<<<1, 256, 64 * 1024>>>(out);
    k<<<1, 256, 48 * 1024>>>(out);
    k<<<1, 256, bytes>>>(out);
}
void through_a_pointer(float* out) {
    auto kernel = k;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000);
    k<<<1, 256, 100000>>>(out);
}
"#,
        );
    }

    #[test]
    fn local_assigned_once_before_the_launch_is_folded() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void launch(float* out) {
    size_t bytes = 2 * 32 * 256 * sizeof(float);
    k<<<1, 256, bytes>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` asks for 65536 bytes
}
void braced(float* out, int n) {
    unsigned smem{80 * 1024};
    for (int i = 0; i < n; ++i) {
        k<<<1, 128, smem>>>(out + i);
     // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` asks for 81920 bytes
    }
}
"#,
        );
    }

    #[test]
    fn local_changed_anywhere_in_the_function_stays_unknown() {
        check(
            RULE,
            r#"
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void reassigned(float* out, int big) {
    size_t bytes = 64 * 1024;
    bytes = 16 * 1024;
    k<<<1, 256, bytes>>>(out);
}
void in_a_branch(float* out, bool big) {
    size_t bytes;
    if (big) bytes = 64 * 1024; else bytes = 16 * 1024;
    k<<<1, 256, bytes>>>(out);
}
void shrunk_in_a_branch(float* out, bool small) {
    size_t bytes = 64 * 1024;
    if (small) bytes /= 4;
    k<<<1, 256, bytes>>>(out);
}
void written_through_a_pointer(float* out, void (*query)(size_t*)) {
    size_t bytes = 64 * 1024;
    query(&bytes);
    k<<<1, 256, bytes>>>(out);
}
void in_another_scope(float* out, bool big) {
    if (big) {
        size_t bytes = 64 * 1024;
        (void)bytes;
    }
    size_t bytes = 1024;
    k<<<1, 256, bytes>>>(out);
}
"#,
        );
    }

    #[test]
    fn fix_inserts_the_attribute_call() {
        check_fix(
            RULE,
            HIT,
            0,
            expect![[r#"
                // Raise cudaFuncAttributeMaxDynamicSharedMemorySize for `k` before the launch
                __global__ void k(float* out) {
                    extern __shared__ float tile[];
                    out[threadIdx.x] = tile[threadIdx.x];
                }
                void launch(float* out) {
                    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
                    k<<<1, 256, 64 * 1024>>>(out);
                }
            "#]],
        );
    }

    const SMALL_OPT_IN: &str = r#"
constexpr int STAGES = 3;
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void launch(float* out) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    k<<<1, 256, STAGES * 32 * 1024>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` asks for 98304 bytes of dynamic shared memory, but `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024)` raises the limit only to 65536 bytes
}
"#;

    #[test]
    fn opt_in_smaller_than_the_launch() {
        check(RULE, SMALL_OPT_IN);
        check_fix(
            RULE,
            SMALL_OPT_IN,
            0,
            expect![[r#"
            // Raise the opt-in of `k` to STAGES * 32 * 1024
            constexpr int STAGES = 3;
            __global__ void k(float* out) {
                extern __shared__ float tile[];
                out[threadIdx.x] = tile[threadIdx.x];
            }
            void launch(float* out) {
                cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, STAGES * 32 * 1024);
                k<<<1, 256, STAGES * 32 * 1024>>>(out);
            }
        "#]],
        );
    }

    #[test]
    fn opt_in_as_large_as_the_launch_stays_silent() {
        check(
            RULE,
            r#"
constexpr int STAGES = 3;
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void launch(float* out) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, STAGES * 32 * 1024);
    k<<<1, 256, STAGES * 32 * 1024>>>(out);
    k<<<1, 256, 64 * 1024>>>(out);
}
"#,
        );
    }

    #[test]
    fn opt_in_written_in_a_macro() {
        check(
            RULE,
            r#"
#define SET_MAX_SMEM(kernel, bytes) \
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
#define LAUNCH_WITH_SMEM(kernel, bytes, ...)                                              \
    do {                                                                                  \
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes); \
        kernel<<<1, 256, bytes>>>(__VA_ARGS__);                                           \
    } while (0)
__global__ void a(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
__global__ void b(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
__global__ void c(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
void launch(float* out) {
    SET_MAX_SMEM(a, 96 * 1024);
    a<<<1, 256, 96 * 1024>>>(out);
    LAUNCH_WITH_SMEM(b, 80 * 1024, out);
    SET_MAX_SMEM(a, 64 * 1024);
    c<<<1, 256, 64 * 1024>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `c` asks for 65536 bytes
}
"#,
        );
    }

    /// The kernel named with template arguments inside the macro's attribute call: the
    /// commas between them do not split the call's arguments.
    #[test]
    fn opt_in_of_a_template_kernel_in_a_dispatch_macro() {
        check(
            RULE,
            r#"
template <int A, int B>
__global__ void gemm(float* p) { extern __shared__ float s[]; p[0] = s[A + B]; }
const int SMEM = 96 * 1024;
#define CALL_IF(X, Y)                                                        \
  else if (x == X && y == Y) {                                               \
    cudaFuncSetAttribute(                                                    \
      gemm<X, Y>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);        \
    gemm<                                                                    \
      X, Y                                                                   \
    ><<<1, 256, SMEM>>>(p);                                                  \
  }
template <int A>
__global__ void other(float* p) { extern __shared__ float s[]; p[0] = s[A]; }
#define LAUNCH_ONLY(X) else if (x == X) { other<X><<<1, 256, SMEM>>>(p); }
void run(float* p, int x, int y) {
    if (false) {}
    CALL_IF(1, 2)
    CALL_IF(2, 2)
    LAUNCH_ONLY(3)
 // ^^^^^^^^^^^^^^ error: launch of `other` asks for 98304 bytes
}
"#,
        );
    }

    #[test]
    fn launch_through_cuda_launch_kernel_ex() {
        check(
            RULE,
            r#"
__global__ void k(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
__global__ void opted(float* out) { extern __shared__ float s[]; out[0] = s[threadIdx.x]; }
void launch(float* out) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = 64 * 1024;
    cudaLaunchKernelEx(&cfg, k, out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` asks for 65536 bytes
    cudaFuncSetAttribute(opted, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    cudaLaunchKernelEx(&cfg, opted, out);
    cudaLaunchConfig_t small = {.gridDim = dim3(1), .blockDim = dim3(256), .dynamicSmemBytes = 16 * 1024};
    cudaLaunchKernelEx(&small, k, out);
}
"#,
        );
    }

    #[test]
    fn a_launch_with_no_dynamic_shared_memory_needs_no_opt_in() {
        // 64 KB of static shared memory compiles for `sm_90a` and launches with no
        // attribute (an H100, through `<<<>>>` and `cudaLaunchKernelEx` alike).
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90a
__global__ void big(float* out) {
    __shared__ float a[64][256];
    out[0] = a[threadIdx.x][0];
}
void launch(float* out) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = 0;
    cudaLaunchKernelEx(&cfg, big, out);
    big<<<1, 256>>>(out);
}
"#,
        );
    }
}
