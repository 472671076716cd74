//! `smem/over-capacity`: static plus known dynamic shared memory over the target's
//! per-block maximum.
//!
//! Three places are checked against the configured architecture: a kernel whose static
//! `__shared__` arrays exceed the 48 KB a block may declare statically (ptxas rejects
//! it); a launch whose static plus dynamic bytes exceed the opt-in maximum
//! (`cudaErrorInvalidValue`, the kernel never runs); and a
//! `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, v)` whose value
//! plus the kernel's static bytes exceeds it (the attribute is not set). Sizes the file
//! does not determine are left alone.
//!
//! ```cuda
//! // Before, for sm_80 (166912 bytes per block at most)
//! k<<<grid, block, 200 * 1024>>>(out);
//! // After: a tile (or stage count) that fits the target
//! k<<<grid, block, 160 * 1024>>>(out);
//! ```

use crate::model::{StaticShared, StaticSharedTable};
use kernaut_syntax::short_name;

use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("over_capacity.rs"),
    id: "smem/over-capacity",
    severity: Severity::Error,
    wiki: &[
        "pitfall-dynamic-shared-memory#P2",
        "pitfall-dynamic-shared-memory#P3",
    ],
    run,
};

/// The static shared memory each function declares in its body
/// ([`crate::model::static_shared`]), indexed once per run (the rules ask for every
/// kernel and launch).
pub(crate) struct StaticBytes<'a>(StaticSharedTable<'a>);

impl<'a> StaticBytes<'a> {
    pub(crate) fn new(ctx: &RuleContext<'a>) -> StaticBytes<'a> {
        StaticBytes(StaticSharedTable::new(ctx.facts))
    }

    /// The static shared memory the kernel named `kernel` declares in its body: the
    /// sizes known (the sizes the file does not fix are left out, as the occupancy
    /// report leaves them out).
    pub(crate) fn kernel(&self, kernel: &str) -> StaticShared {
        self.0.get(kernel)
    }
}

/// The name of a kernel without namespaces or template arguments.
pub(crate) fn base_kernel(name: &str) -> &str {
    let name = name.split('<').next().unwrap_or(name).trim();
    short_name(name)
}

fn kb(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let limits = ctx.arch.limits();
    let optin = u64::from(limits.smem_per_block_optin.max(limits.smem_per_block));
    // ptxas takes up to the opt-in maximum of static shared memory for an arch-specific
    // target (`sm_90a`: 232448 bytes; nvcc 13.5), 48 KB for any other: the build's
    // plainest target decides.
    let targets = &ctx.targets;
    let plain = |t: &kernaut_gpu::target::Target| {
        t.variant != kernaut_gpu::target::Variant::ArchSpecific || t.virtual_only
    };
    let static_limit = if targets.targets.iter().any(plain) {
        u64::from(limits.smem_per_block)
    } else {
        optin
    };
    // Where the targets are assumed, or only a conditional one is plain, the limit rests
    // on that: a hint that says so.
    let assumed = targets.assumed
        || targets
            .targets
            .iter()
            .filter(|t| plain(t))
            .all(|t| targets.is_conditional(t));
    let arch = ctx.arch;
    let static_bytes = StaticBytes::new(ctx);
    for k in &ctx.facts.kernels {
        let shared = static_bytes.kernel(&k.name);
        let bytes = shared.bytes;
        if bytes <= static_limit || !ctx.emitted(k) {
            continue;
        }
        let at_least = if shared.unknown.is_empty() {
            ""
        } else {
            "at least "
        };
        let (severity, assumption) = if assumed && static_limit < optin {
            (
                Severity::Hint,
                format!(
                    " (assuming {}: {}; for an arch-specific target such as `sm_90a` ptxas takes up to {optin} bytes)",
                    targets.names(),
                    if targets.assumed {
                        "no setting or build file names the targets"
                    } else {
                        "the build makes it only under a condition it does not decide"
                    }
                ),
            )
        } else {
            (RULE.severity, String::new())
        };
        // A template's size is its largest launched instantiation's: named.
        let instantiation = crate::instances::chosen_instantiation(ctx.facts, &k.name)
            .map(|i| format!(" (in {})", crate::instances::chosen_phrase(&i)))
            .unwrap_or_default();
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity,
            range: k.name_range.clone(),
            message: format!(
                "`{}` declares {at_least}{bytes} bytes of static shared memory{instantiation}, over the {} ({static_limit} bytes) a block may declare statically: ptxas rejects it{assumption}; move the arrays into dynamic shared memory and opt in",
                k.name,
                kb(static_limit)
            ),
            wiki: "pitfall-dynamic-shared-memory#P2".into(),
            fixes: Vec::new(),
        });
    }
    for l in &ctx.facts.launches {
        let Some(dynamic) = l.shared_bytes.and_then(|b| u64::try_from(b).ok()) else {
            continue;
        };
        let name = base_kernel(&l.kernel);
        // The instantiation this launch makes (`tiles<256, 64>`), else the kernel's.
        let stat = match crate::instances::launch_static_shared(ctx.facts, l) {
            Some((bytes, _)) => bytes,
            None => static_bytes.kernel(name).bytes,
        };
        let total = dynamic + stat;
        // Static arrays over what ptxas takes fail the build (the declaration's finding
        // above): the launch never runs to fail.
        if total <= optin || stat > static_limit {
            continue;
        }
        let (what, wiki) = if stat > 0 {
            (
                format!("{dynamic} bytes of dynamic plus {stat} of static shared memory"),
                "pitfall-dynamic-shared-memory#P3",
            )
        } else {
            (
                format!("{dynamic} bytes of dynamic shared memory"),
                "pitfall-dynamic-shared-memory#P2",
            )
        };
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: l.range.clone(),
            message: format!(
                "launch of `{name}` needs {what}, over the {optin} bytes ({}) a block may use on {arch}: the launch fails with cudaErrorInvalidValue and the kernel never runs",
                kb(optin)
            ),
            wiki: wiki.into(),
            fixes: Vec::new(),
        });
    }
    for a in &ctx.facts.func_attributes {
        if !a.attribute.ends_with("MaxDynamicSharedMemorySize") {
            continue;
        }
        let Some(value) = a.value.and_then(|v| u64::try_from(v).ok()) else {
            continue;
        };
        let name = base_kernel(&a.kernel);
        let stat = static_bytes.kernel(name).bytes;
        if value + stat <= optin {
            continue;
        }
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: a.range.clone(),
            message: format!(
                "`{name}` asks for {value} bytes of dynamic shared memory{}, over the {optin} bytes ({}) a block may use on {arch}: cudaFuncSetAttribute fails and leaves the old limit",
                if stat > 0 { format!(" plus {stat} static") } else { String::new() },
                kb(optin)
            ),
            wiki: if stat > 0 {
                "pitfall-dynamic-shared-memory#P3".into()
            } else {
                "pitfall-dynamic-shared-memory#P2".into()
            },
            fixes: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages};

    const RULE: &str = "smem/over-capacity";

    #[test]
    fn launch_over_the_opt_in_maximum() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_80
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
void launch(float* out) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `k` asks for 204800 bytes
    k<<<1, 256, 200 * 1024>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` needs 204800 bytes of dynamic shared memory
}
"#,
        );
    }

    #[test]
    fn sizes_from_constant_members_of_a_class_or_class_template() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
template <typename T, int Rows, int Cols, int Width = 4>
struct Tile {
    static constexpr int elems = Rows * Cols;
    static constexpr int bytes = elems * Width;
};
struct Plan { static constexpr int kBytes = 240 * 1024; };
void launch(float* out) {
    constexpr int smem = Tile<float, 256, 256>::bytes;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `k` asks for 262144 bytes
    k<<<1, 256, smem>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` needs 262144 bytes of dynamic shared memory
    k<<<1, 256, Plan::kBytes>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k` needs 245760 bytes of dynamic shared memory
}
"#,
        );
    }

    #[test]
    fn members_of_unknown_classes_or_of_runtime_values_stay_silent() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90
__global__ void k(float* out) {
    extern __shared__ float tile[];
    out[threadIdx.x] = tile[threadIdx.x];
}
int rows_from_the_command_line();
template <int Stages>
struct Ring {
    static constexpr int fits = Stages * 16 * 1024;
    static inline const int runtime = Stages * rows_from_the_command_line();
};
void launch(float* out) {
    k<<<1, 256, Ring<4>::fits>>>(out);
    constexpr int small = Ring<8>::fits;
    k<<<1, 256, small>>>(out);
    const int runtime = Ring<64>::runtime;
    k<<<1, 256, runtime>>>(out);
    constexpr int elsewhere = Library<1024>::bytes;
    k<<<1, 256, elsewhere>>>(out);
}
"#,
        );
    }

    /// Declarations in the two arms of one `#if`/`#else` are never compiled together: the
    /// arm that declares the most counts (32 KB here, under the 48 KB a block may declare
    /// statically), not both (48 KB + 16).
    #[test]
    fn the_arms_of_an_if_else_are_not_added() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90
__global__ void tiled(const float* a, float* d) {
#if USE_DB
    __shared__ float As[2][64][64];
#else
    __shared__ float As[1][64][64];
    __shared__ float pad[4];
#endif
    As[0][threadIdx.x % 64][0] = a[threadIdx.x];
    __syncthreads();
    d[threadIdx.x] = As[0][0][threadIdx.x % 64];
}
"#,
        );
    }

    /// Each launch of a kernel template is checked with the static arrays of the
    /// instantiation it makes; one whose static arrays ptxas rejects fails the build (the
    /// declaration's error, which names the instantiation), so its launch says nothing.
    #[test]
    fn each_launch_with_its_own_instantiation() {
        check_messages(
            RULE,
            r#"
//- /main.cu arch:sm_90
template <int N>
__global__ void rows(float* out) {
    __shared__ float a[N];
    extern __shared__ float dyn[];
    out[threadIdx.x] = a[threadIdx.x] + dyn[threadIdx.x];
}
void launch(float* out, int which) {
    if (which == 0) rows<8192><<<1, 256, 200000>>>(out);
    else if (which == 1) rows<1024><<<1, 256, 200000>>>(out);
    else rows<16384><<<1, 256, 1024>>>(out);
}
"#,
            expect![[r#"
                error: `rows` declares 65536 bytes of static shared memory (in `N = 16384`, the one with the most shared memory of the 3 instantiations the file launches), over the 48 KB (49152 bytes) a block may declare statically: ptxas rejects it; move the arrays into dynamic shared memory and opt in (pitfall-dynamic-shared-memory#P2)
                error: launch of `rows` needs 200000 bytes of dynamic plus 32768 of static shared memory, over the 232448 bytes (227 KB) a block may use on sm_90: the launch fails with cudaErrorInvalidValue and the kernel never runs (pitfall-dynamic-shared-memory#P3)
            "#]],
        );
    }

    #[test]
    fn static_arrays_over_48k_and_static_plus_dynamic() {
        check_messages(
            RULE,
            r#"
//- /main.cu arch:sm_90
__global__ void big(float* out) {
    __shared__ float a[64][256];
    out[0] = a[threadIdx.x][0];
}
__global__ void mixed(float* out) {
    __shared__ float red[1024];
    extern __shared__ float tile[];
    out[0] = red[0] + tile[0];
}
void launch(float* out) {
    mixed<<<1, 256, 232448>>>(out);
}
"#,
            expect![[r#"
                error: `big` declares 65536 bytes of static shared memory, over the 48 KB (49152 bytes) a block may declare statically: ptxas rejects it; move the arrays into dynamic shared memory and opt in (pitfall-dynamic-shared-memory#P2)
                error: launch of `mixed` needs 232448 bytes of dynamic plus 4096 of static shared memory, over the 232448 bytes (227 KB) a block may use on sm_90: the launch fails with cudaErrorInvalidValue and the kernel never runs (pitfall-dynamic-shared-memory#P3)
            "#]],
        );
    }

    #[test]
    fn an_arch_specific_target_takes_static_arrays_up_to_the_opt_in_maximum() {
        // nvcc 13.5 `-arch=sm_90a -cubin`: 64 KB of static `__shared__` compiles (232448
        // bytes is the most); for `sm_90` ptxas stops at 48 KB.
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90a
__global__ void big(float* out) {
    __shared__ float a[64][256];
    out[0] = a[threadIdx.x][0];
}
__global__ void huge(float* out) {
             // ^^^^ error: `huge` declares 245760 bytes of static shared memory, over the 227 KB (232448 bytes)
    __shared__ float b[240][256];
    out[0] = b[threadIdx.x][0];
}
"#,
        );
    }

    #[test]
    fn a_template_nothing_instantiates_is_never_compiled() {
        // nvcc emits no code for `draft` (no launch, no instantiation): the file builds.
        // `kept` is instantiated explicitly, `passed` by handing an instance to the runtime.
        check(
            RULE,
            r#"
//- /main.cu arch:sm_80
template <int N>
__global__ void draft(float* out) {
    __shared__ float a[64][256];
    out[0] = a[threadIdx.x][N];
}
template <int N>
__global__ void kept(float* out) {
             // ^^^^ error: `kept` declares 65536 bytes of static shared memory
    __shared__ float a[64][256];
    out[0] = a[threadIdx.x][N];
}
template __global__ void kept<1>(float*);
template <int N>
__global__ void passed(float* out) {
             // ^^^^^^ error: `passed` declares 65536 bytes of static shared memory
    __shared__ float a[64][256];
    out[0] = a[threadIdx.x][N];
}
void setup() { cudaFuncSetAttribute(passed<2>, cudaFuncAttributePreferredSharedMemoryCarveout, 100); }
"#,
        );
    }

    #[test]
    fn sizes_that_fit_or_are_unknown_stay_silent() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90
__global__ void k(float* out) {
    __shared__ float a[32][33];
    extern __shared__ float tile[];
    out[0] = a[threadIdx.x][0] + tile[0];
}
void launch(float* out, int bytes) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
    k<<<1, 256, 200 * 1024>>>(out);
    k<<<1, 256, bytes>>>(out);
}
"#,
        );
    }

    #[test]
    fn known_sizes_over_48k_beside_an_unknown_one() {
        // The sizes the file fixes already pass the limit: the unknown one can only add
        // to them (the occupancy report leaves it out the same way). Below the limit the
        // unknown size stays silent.
        let fixture = r#"
//- /main.cu arch:sm_90
__global__ void big(float* out) {
    __shared__ float a[64][256];
    __shared__ float b[UNKNOWN_ROWS];
    out[0] = a[threadIdx.x][0] + b[0];
}
__global__ void fits(float* out) {
    __shared__ float a[32][256];
    __shared__ float b[UNKNOWN_ROWS];
    out[0] = a[threadIdx.x][0] + b[0];
}
"#;
        check_messages(
            RULE,
            fixture,
            expect![[r#"
                error: `big` declares at least 65536 bytes of static shared memory, over the 48 KB (49152 bytes) a block may declare statically: ptxas rejects it; move the arrays into dynamic shared memory and opt in (pitfall-dynamic-shared-memory#P2)
            "#]],
        );
    }

    const STAGED: &str = r#"
//- /main.cu arch:sm_80
#define BM 128
#define BN 128
constexpr int BK = 64;
constexpr int STAGES = NSTAGES;
__global__ void gemm(const float* a, const float* b, float* c) {
    extern __shared__ float smem[];
    c[threadIdx.x] = smem[threadIdx.x];
}
void launch(const float* a, const float* b, float* c) {
    const size_t smem_bytes = STAGES * (BM * BK + BK * BN) * sizeof(float);
    cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    gemm<<<dim3(8, 8), 256, STAGES * (BM * BK + BK * BN) * sizeof(float)>>>(a, b, c);
    gemm<<<dim3(8, 8), 256, smem_bytes>>>(a, b, c);
}
"#;

    #[test]
    fn dynamic_size_from_stages_and_tiles() {
        check_messages(
            RULE,
            &STAGED.replace("NSTAGES", "5"),
            expect![[r#"
                error: `gemm` asks for 327680 bytes of dynamic shared memory, over the 166912 bytes (163 KB) a block may use on sm_80: cudaFuncSetAttribute fails and leaves the old limit (pitfall-dynamic-shared-memory#P2)
                error: launch of `gemm` needs 327680 bytes of dynamic shared memory, over the 166912 bytes (163 KB) a block may use on sm_80: the launch fails with cudaErrorInvalidValue and the kernel never runs (pitfall-dynamic-shared-memory#P2)
                error: launch of `gemm` needs 327680 bytes of dynamic shared memory, over the 166912 bytes (163 KB) a block may use on sm_80: the launch fails with cudaErrorInvalidValue and the kernel never runs (pitfall-dynamic-shared-memory#P2)
            "#]],
        );
    }

    #[test]
    fn dynamic_size_from_stages_and_tiles_that_fits_stays_silent() {
        check(RULE, &STAGED.replace("NSTAGES", "2"));
    }
}
