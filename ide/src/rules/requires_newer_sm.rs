//! `arch/requires-newer-sm`: an API or PTX instruction whose wiki page says it needs a
//! newer architecture than a target the file is compiled for.
//!
//! Every call in device code (kernels and `__device__` functions) is looked up in the
//! wiki's symbol table; the page's `requires_sm` (or the symbol's own entry in
//! `symbol_requires_sm`) is compared with each target. An arch-specific requirement
//! (`>=9.0a`: `wgmma`, `setmaxnreg`) is met by an `a`/`f` target of that chip's major
//! version; whether a later `a`/`f` chip keeps it differs per instruction, so such a
//! target is not reported.
//!
//! The file is checked against every target it is compiled for (its target set: a
//! setting, `.kernaut.toml`, or the build, as the project loader finds them). A call is
//! reported for the first target that surely compiles it and lacks what it needs
//! (`target_guards.rs`): the preprocessor's conditions and the `<nv/target>` macros are
//! evaluated for that target (`__CUDA_ARCH__`, the `a`/`f` feature macros, the build's
//! `-D` macros), and the call's function must be a kernel or a `__device__` function
//! that a kernel compiled for the target reaches through calls compiled for it. A guard
//! whose value is unknown (a macro only the build might define, a toolkit-version test),
//! or a helper no kernel of the file reaches (nvcc emits no code for it unless another
//! file or `-rdc` calls it), leaves the call unreported. Functions and macros the file
//! defines with the same name stay silent. When no setting and no build file names the
//! targets, `sm_90` is assumed and findings are hints that say so. Diagnostics cite the
//! symbol's api page; the fix names the guard that works (`__CUDA_ARCH_FEAT_SM90_ALL`
//! for an `sm_90a` instruction, not `__CUDA_ARCH__ >= 900`).
//!
//! ```cuda
//! // Before, with arch = "sm_75": cp.async needs sm_80.
//! asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(dst), "l"(src));
//! // After: guard it (or raise the target).
//! #if __CUDA_ARCH__ >= 800
//! asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(dst), "l"(src));
//! #endif
//! ```

use kernaut_syntax::short_name;
use kernaut_syntax::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cell::OnceCell;

use kernaut_index::MatchKind;
use kernaut_syntax::{CallSite, SymbolKind};
use kernaut_wiki::parse_requires_sm;

use kernaut_gpu::Target;

use super::target_guards::{Compiled, Tri};
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("requires_newer_sm.rs"),
    id: "arch/requires-newer-sm",
    severity: Severity::Error,
    wiki: &["api-ptx-cp-async", "api-wgmma"],
    run,
};

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    // A file the build does not compile has no target for a call to fail on: the
    // targets it is checked against stand in for the other rules' figures only.
    if ctx.targets.not_built.is_some() {
        return;
    }
    let targets = &ctx.targets.targets;
    // The file's own functions and macros, and its headers': calls to them are the
    // project's, whatever library symbol shares the name.
    let defined = ctx.own_names();
    let risky = unmet_names(ctx);
    if risky.is_empty() {
        return;
    }
    let risky: Vec<&str> = risky.iter().map(String::as_str).collect();
    // Read only for a call that would be reported: most files have none.
    let compiled = OnceCell::new();
    let mut seen = HashSet::default();
    // By callee, for calls and for PTX instructions.
    let mut requirements: [HashMap<String, Option<Requirement>>; 2] = Default::default();
    let bodies = ctx.bodies_mentioning(&risky);
    ctx.prefetch_calls(&bodies);
    for body in bodies {
        for call in ctx.calls_in_body(body.start).iter() {
            if !seen.insert(call.range.clone()) {
                continue;
            }
            let last = short_name(&call.callee);
            if call.kind != SymbolKind::Ptx
                && (defined.contains(last) || defined.contains(call.callee_text.as_str()))
            {
                continue;
            }
            // Most calls repeat a few callees: each is looked up in the wiki once.
            let known = &mut requirements[usize::from(call.kind == SymbolKind::Ptx)];
            if !known.contains_key(call.callee.as_str()) {
                known.insert(call.callee.clone(), requirement(ctx, call));
            }
            // The overload the argument types pick may need more than the callee's
            // other overloads (`atomicAdd` on `float4*`).
            let overload = (call.kind != SymbolKind::Ptx)
                .then(|| overload_requirement(ctx, call))
                .flatten();
            let Some(req) = overload.or_else(|| known[call.callee.as_str()].clone()) else {
                continue;
            };
            let failing: Vec<usize> = (0..targets.len())
                .filter(|i| targets[*i].meets(req.major, req.minor, req.specific) == Some(false))
                .collect();
            if failing.is_empty() {
                continue;
            }
            let compiled = compiled.get_or_init(|| Compiled::scan(ctx));
            // The first target that surely compiles this call and lacks what it needs;
            // where the guards or the callers leave it unknown, nothing is said.
            // A target the build file names for certain before one it builds only under
            // a condition it does not decide; a finding that rests on such a target
            // alone is a hint (its message names the condition).
            let surely: Vec<usize> = failing
                .into_iter()
                .filter(|i| compiled.at(ctx, *i, call.range.start) == Tri::True)
                .collect();
            let Some(i) = surely
                .iter()
                .copied()
                .find(|i| !ctx.targets.is_conditional(&targets[*i]))
                .or_else(|| surely.first().copied())
            else {
                continue;
            };
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity: if ctx.targets.assumed || ctx.targets.is_conditional(&targets[i]) {
                    Severity::Hint
                } else {
                    RULE.severity
                },
                range: call.callee_range.clone(),
                message: message(
                    ctx,
                    &req,
                    &targets[i],
                    compiled.guards.innermost(i, call.range.start),
                ),
                wiki: req.page.clone(),
                fixes: Vec::new(),
            });
        }
    }
}

/// The message for a call that needs `req` and is compiled for `target`.
fn message(ctx: &RuleContext, req: &Requirement, target: &Target, guard: Option<&str>) -> String {
    let set = &*ctx.targets;
    let needed = &req.needed;
    let symbol = &req.symbol;
    let from = if set.origin.is_empty() {
        String::new()
    } else {
        format!(" (from {})", set.origin)
    };
    let built = if set.assumed {
        format!("the target is {target} (assumed)")
    } else if set.targets.len() == 1 {
        format!("the target is {target}{from}")
    } else {
        format!("this file is also built for {target}{from}")
    };
    let (major, minor) = (req.major, req.minor);
    let works = if req.specific {
        format!(
            "`#if defined(__CUDA_ARCH_FEAT_SM{major}{minor}_ALL)` (`__CUDA_ARCH__ >= {major}{minor}0` is also true where {needed}'s arch-specific instructions are missing; later `a`/`f` targets that keep it are named by `__CUDA_ARCH_SPECIFIC__`/`__CUDA_ARCH_FAMILY_SPECIFIC__`)"
        )
    } else {
        format!(
            "`#if __CUDA_ARCH__ >= {major}{minor}0` (`NV_IF_TARGET(NV_PROVIDES_SM_{major}{minor}, (...))`)"
        )
    };
    let mut m = match guard {
        Some(guard) => format!(
            "`{symbol}` needs {needed}, but {built}, and the guard `{guard}` holds there: the call is compiled for {target}, where it does not compile; guard it with {works}"
        ),
        None => format!(
            "`{symbol}` needs {needed}, but {built}: the call does not compile there; guard it with {works}, or build for {needed} only"
        ),
    };
    if set.assumed {
        m.push_str(&format!(
            " (assuming {target}: no setting or build file names the targets; set `arch` in .kernaut.toml, or keep CMakeLists.txt, compile_commands.json, setup.py or a Makefile where kernaut can read them)"
        ));
    }
    m
}

/// What a callee needs: the wiki symbol, its page, and the architecture.
#[derive(Clone)]
struct Requirement {
    symbol: String,
    page: String,
    /// `sm_80`, `sm_90a`.
    needed: String,
    major: u32,
    minor: u32,
    /// Arch-specific (`>=9.0a`).
    specific: bool,
}

/// The requirement of the overload `call` picks by its first argument's type, where the
/// page gives that overload a requirement of its own and the file shows the type.
fn overload_requirement(ctx: &RuleContext, call: &CallSite) -> Option<Requirement> {
    let m = ctx.knowledge.symbol(&call.callee)?;
    if m.matched != MatchKind::Exact && !call.callee.contains("::") {
        return None;
    }
    let page = m
        .api
        .as_deref()
        .and_then(|id| ctx.knowledge.wiki.page(id))?;
    let short = m.symbol.rsplit("::").next().unwrap_or(&m.symbol);
    let prefix = format!("{short}(");
    if !page
        .api
        .as_ref()?
        .symbol_requires_sm
        .keys()
        .any(|k| k.starts_with(&prefix))
    {
        return None;
    }
    let args = ctx.file.call_argument_types(call.callee_range.start)?;
    let (key, req) = crate::signatures::overload_requirement(page, &m.symbol, &args)?;
    let (major, minor, specific) = parse_requires_sm(req)?;
    Some(Requirement {
        symbol: key,
        page: page.id.clone(),
        needed: format!("sm_{major}{minor}{}", if specific { "a" } else { "" }),
        major,
        minor,
        specific,
    })
}

/// The requirement of `call`'s callee, when the wiki gives one. It depends only on the
/// callee and whether it is PTX.
fn requirement(ctx: &RuleContext, call: &CallSite) -> Option<Requirement> {
    let m = ctx.knowledge.symbol(&call.callee)?;
    let trusted =
        m.matched == MatchKind::Exact || call.kind == SymbolKind::Ptx || call.callee.contains("::");
    if !trusted {
        return None;
    }
    // A member call is the library's member only on a receiver of the library's class:
    // `p.x()` on a type the file does not show (a vector class from a header not in the
    // tree) is not `nvcuda::wmma::fragment::x`. An unknown receiver says nothing.
    if let SymbolKind::Member { receiver_type, .. } = &call.kind {
        let mut parts = m.symbol.rsplit("::");
        let (_, class) = (parts.next(), parts.next());
        if let Some(class) = class {
            let class = class.split('<').next().unwrap_or(class);
            let of_class = receiver_type.as_deref().is_some_and(|t| {
                let t = t.split('<').next().unwrap_or(t);
                t == class || t.ends_with(&format!("::{class}"))
            });
            if !of_class {
                return None;
            }
        }
    }
    let page = m
        .api
        .as_deref()
        .and_then(|id| ctx.knowledge.wiki.page(id))?;
    let (major, minor, specific) = page
        .requires_sm_for(&m.symbol)
        .and_then(parse_requires_sm)?;
    Some(Requirement {
        symbol: m.symbol.clone(),
        page: page.id.clone(),
        needed: format!("sm_{major}{minor}{}", if specific { "a" } else { "" }),
        major,
        minor,
        specific,
    })
}

/// The short names (last `::` segment, first PTX segment) of every wiki symbol whose
/// requirement one of the file's targets does not meet: a function that mentions none of
/// them has nothing to report.
fn unmet_names(ctx: &RuleContext) -> Vec<String> {
    let targets = &ctx.targets.targets;
    let unmet = |req: &str| {
        parse_requires_sm(req).is_some_and(|(major, minor, specific)| {
            targets
                .iter()
                .any(|t| t.meets(major, minor, specific) == Some(false))
        })
    };
    let mut out: Vec<String> = Vec::new();
    for page in ctx.knowledge.wiki.pages() {
        let Some(api) = &page.api else {
            continue;
        };
        // Overloads with a requirement of their own (`atomicAdd(float4*)`).
        for (key, req) in &api.symbol_requires_sm {
            let Some((name, _)) = key.split_once('(') else {
                continue;
            };
            if unmet(req) && !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
        for sym in &api.symbols {
            if !page.requires_sm_for(sym).is_some_and(unmet) {
                continue;
            }
            let base = sym.split('<').next().unwrap_or(sym);
            let short = match base.rsplit_once("::") {
                Some((_, last)) => last,
                None => base.split('.').next().unwrap_or(base),
            };
            if !short.is_empty() && !out.iter().any(|o| o == short) {
                out.push(short.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::rules::testing::{check, check_messages};

    const RULE: &str = "arch/requires-newer-sm";

    #[test]
    fn cp_async_on_sm75() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_75
__global__ void k(const float* in) {
    __shared__ float tile[256];
    // The primitives run on sm_70 (emulated); the PTX instruction does not.
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], 4);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(0), "l"(in));
               // ^^^^^^^^^^^^^^^^^^^^^^^^^ error: `cp.async.ca` needs sm_80
}
"#,
        );
    }

    #[test]
    fn wgmma_off_sm90a() {
        check_messages(
            RULE,
            r#"
//- /main.cu arch:sm_90
__device__ void mma() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__global__ void k() { mma(); }
"#,
            expect![[r#"
                error: `wgmma.fence` needs sm_90a, but the target is sm_90: the call does not compile there; guard it with `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)` (`__CUDA_ARCH__ >= 900` is also true where sm_90a's arch-specific instructions are missing; later `a`/`f` targets that keep it are named by `__CUDA_ARCH_SPECIFIC__`/`__CUDA_ARCH_FAMILY_SPECIFIC__`), or build for sm_90a only (api-wgmma)
            "#]],
        );
    }

    #[test]
    fn new_enough_guarded_or_user_defined_stays_silent() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_75
__device__ void __pipeline_commit() {}
__global__ void k(const float* in) {
    __shared__ float tile[256];
    __shfl_down_sync(0xffffffff, 1.0f, 1);
    __pipeline_commit();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], 4);
#else
    tile[threadIdx.x] = in[threadIdx.x];
#endif
}
"#,
        );
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90a
__device__ void mma() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__global__ void k() { mma(); }
"#,
        );
    }

    const FENCE: &str = r#"asm volatile("fence.proxy.async.shared::cta;" ::: "memory");"#;

    /// The fixture with `FENCE` (a PTX instruction of sm_90) written for each `@`.
    fn fenced(fixture: &str) -> String {
        fixture.replace('@', FENCE)
    }

    #[test]
    fn target_macros_and_arch_regions_that_provide_the_sm_stay_silent() {
        check(
            RULE,
            &fenced(
                r#"
//- /main.cu arch:sm_80
__device__ void publish() {
    NV_IF_TARGET(NV_PROVIDES_SM_90, (
        @
    ));
}
__device__ void fence_or_sync() {
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90,
        (@),
        (__syncthreads();));
}
__device__ void dispatch() {
    NV_DISPATCH_TARGET(
        NV_PROVIDES_SM_90, (@),
        NV_PROVIDES_SM_80, (__syncthreads();));
    NV_IF_TARGET(NV_IS_HOST, (printf("host\n");), (__syncthreads();));
}
__device__ void regions() {
#if __CUDA_ARCH__ >= 900
    @
#endif
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) // Hopper
    @
#endif
#if __CUDA_ARCH__ < 800
    __syncthreads();
#elif __CUDA_ARCH__ < 900
    __syncwarp();
#else
    @
#endif
}
// Called only from guarded code: not compiled for sm_80.
__device__ void fence_helper() {
    @
}
__global__ void k() {
    publish(); fence_or_sync(); dispatch(); regions();
    NV_IF_TARGET(NV_PROVIDES_SM_90, (fence_helper();));
#if __CUDA_ARCH__ >= 900
    fence_helper();
#endif
}
"#,
            ),
        );
    }

    #[test]
    fn unguarded_branches_of_target_macros_and_arch_regions() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_80
__device__ void f() {
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (__syncthreads();),
        (asm volatile("fence.proxy.async.shared::cta;");));
                    // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90, but the target is sm_80
    NV_IF_TARGET(NV_IS_DEVICE, (asm volatile("fence.proxy.async.shared::cta;");));
                                           // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90, but the target is sm_80
#if __CUDA_ARCH__ < 900
    asm volatile("fence.proxy.async.shared::cta;");
               // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90, but the target is sm_80
#else
    __syncthreads();
#endif
}
// Called from one guarded and one unguarded place.
__device__ void helper() {
    asm volatile("fence.proxy.async.shared::cta;");
               // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90, but the target is sm_80
}
__global__ void k() {
    f();
    NV_IF_TARGET(NV_PROVIDES_SM_90, (helper();));
    helper();
}
"#,
        );
    }

    #[test]
    fn a_guard_for_a_lower_sm_is_too_low() {
        check_messages(
            RULE,
            r#"
//- /main.cu arch:sm_80
__device__ void f() {
    NV_IF_TARGET(NV_PROVIDES_SM_80, (asm volatile("fence.proxy.async.shared::cta;");));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("fence.proxy.async.shared::cta;");
#endif
}
__device__ void helper() {
    asm volatile("fence.proxy.async.shared::cta;");
}
__global__ void k() {
    f();
    NV_DISPATCH_TARGET(NV_PROVIDES_SM_100, (__syncthreads();), NV_PROVIDES_SM_80, (helper();));
}
"#,
            expect![[r#"
                error: `fence.proxy.async` needs sm_90, but the target is sm_80, and the guard `NV_PROVIDES_SM_80` holds there: the call is compiled for sm_80, where it does not compile; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`) (api-ptx-cp-async-bulk)
                error: `fence.proxy.async` needs sm_90, but the target is sm_80, and the guard `#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800` holds there: the call is compiled for sm_80, where it does not compile; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`) (api-ptx-cp-async-bulk)
                error: `fence.proxy.async` needs sm_90, but the target is sm_80: the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only (api-ptx-cp-async-bulk)
            "#]],
        );
    }

    /// nvcc emits no code for a `__device__` function that no kernel reaches (or that
    /// only another file may call): nothing is said about it.
    #[test]
    fn helpers_no_kernel_reaches_stay_silent() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_80
__device__ void unused() {
    asm volatile("fence.proxy.async.shared::cta;");
}
struct Mma { __device__ void run() { asm volatile("fence.proxy.async.shared::cta;"); } };
__global__ void k() {}
"#,
        );
    }

    /// A member call on a value whose type the file does not show (a vector class from
    /// a header outside the tree) is not the library's member of that name: `p.x()` is no
    /// `nvcuda::wmma::fragment::x`.
    #[test]
    fn member_calls_on_unknown_types_are_not_library_members() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_50
#include <Eigen/Dense>
typedef Eigen::Matrix<int, 2, 1> Pix;
__device__ inline int flat(const Pix& p, int pitch) { return p.y() * pitch + p.x(); }
__global__ void touch(const Pix* pts, int* out, int pitch) {
    out[threadIdx.x] = flat(pts[threadIdx.x], pitch);
}
"#,
        );
    }

    /// A guard on a macro neither the file nor the build defines may hold or not: the
    /// call under it is not an error. The build's own macros are known.
    #[test]
    fn unknown_macros_are_silent_and_feature_macros_work() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_90
__global__ void k() {
#ifdef MYLIB_HOPPER
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
#if __CUDA_ARCH__ >= 900 && !defined(USE_ROCM)
    asm volatile("fence.proxy.async.shared::cta;");
#endif
}
"#,
        );
    }

    /// A branch of `if constexpr` on a type trait that no launched instantiation takes is
    /// not compiled; one that an instantiation takes is.
    #[test]
    fn type_trait_branches_of_launched_instantiations() {
        check(
            RULE,
            r#"
//- /main.cu arch:sm_75
#include <type_traits>
using half_t = __half;
template <typename T>
__global__ void k(T* out, const float* in) {
    if constexpr (std::is_same_v<T, float> || sizeof(T) == 8) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(0), "l"(in));
    }
}
template <typename T>
__global__ void g(T* out, const float* in) {
    if constexpr (std::is_same<T, half>::value) {
        out[threadIdx.x] = __float2half(in[threadIdx.x]);
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(0), "l"(in));
                   // ^^^^^^^^^^^^^^^^^^^^^^^^^ error: `cp.async.ca` needs sm_80
    }
}
void run(half_t* h, const float* in) {
    k<half_t><<<1, 32>>>(h, in);
    g<float><<<1, 32>>>(nullptr, in);
}
"#,
        );
    }
}
