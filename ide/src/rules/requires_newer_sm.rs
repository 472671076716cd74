//! `arch/requires-newer-sm`: an API or PTX instruction whose wiki page says it needs a
//! newer architecture than the configured target.
//!
//! Every call in device code (kernels and `__device__` functions) is looked up in the
//! wiki's symbol table; the page's `requires_sm` (or the symbol's own entry in
//! `symbol_requires_sm`) is compared with the target. An arch-specific requirement
//! (`>=9.0a`: `wgmma`, `setmaxnreg`) needs exactly that `a` target.
//!
//! Guarded calls are read with the least SM their guard ensures (`arch_guards.rs`):
//! `#if __CUDA_ARCH__ >= 900`, `#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900`, the
//! `#else` of `#if __CUDA_ARCH__ < 900`, `#elif` chains, `NV_IF_TARGET(NV_PROVIDES_SM_90,
//! (...))`, the first branch of `NV_IF_ELSE_TARGET` (not the second), each branch of
//! `NV_DISPATCH_TARGET` (guarded by its own query and the negation of the earlier ones),
//! and the host branches of `NV_IS_HOST`/`NV_IS_DEVICE`. A guard that ensures the SM the
//! call needs silences it; a guard for a lower SM is reported as too low. A guard on the
//! architecture whose level cannot be read (a toolkit-version test, a `..._ENABLED` macro
//! without an SM number) is trusted, as is a `..._SM90_ENABLED`-style macro for its SM. A
//! `__device__` function whose every call in the file is guarded is guarded as its
//! weakest call site. Functions and macros the file defines with the same name stay
//! silent. In a header (`.cuh`, `.h`, `.hpp`), a call inside a `__device__` function is a
//! warning rather than an error: the header's functions are compiled only into the files
//! that call them, where the guards around those calls are. Diagnostics cite the
//! symbol's api page. Without a configured target
//! (`--arch`, `arch` in `.kernaut.toml`) the rule is silent: code full of `wgmma` is
//! written for sm_90a, and a default target would only flag every line of it.
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

use super::arch_guards::{ArchGuards, Level};
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
    if !ctx.arch_configured {
        return;
    }
    let text = ctx.text();
    // Read only for a call that would be reported: most files have none.
    let guards = OnceCell::new();
    // By function start: how far every call of that function is guarded.
    let mut callers = HashMap::default();
    let defined: HashSet<&str> = ctx
        .facts
        .kernels
        .iter()
        .chain(&ctx.facts.device_functions)
        .map(|f| short_name(&f.name))
        .chain(ctx.facts.macros.iter().map(String::as_str))
        .collect();
    let target = (ctx.arch.cc.major(), ctx.arch.cc.minor());
    let risky = unmet_names(ctx, target);
    if risky.is_empty() {
        return;
    }
    let risky: Vec<&str> = risky.iter().map(String::as_str).collect();
    let mut seen = HashSet::default();
    // By callee, for calls and for PTX instructions.
    let mut verdicts: [HashMap<String, Option<Verdict>>; 2] = Default::default();
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
            let known = &mut verdicts[usize::from(call.kind == SymbolKind::Ptx)];
            if !known.contains_key(call.callee.as_str()) {
                known.insert(call.callee.clone(), verdict(ctx, call, target));
            }
            // Where the callee's own requirement is met, the overload its argument
            // types pick may not be (`atomicAdd` on `float4*`).
            let overloaded =
                if known[call.callee.as_str()].is_none() && call.kind != SymbolKind::Ptx {
                    overload_verdict(ctx, call, target)
                } else {
                    None
                };
            let verdict = &overloaded.or_else(|| known[call.callee.as_str()].clone());
            let Some(Verdict {
                symbol,
                page,
                needed,
                major,
                minor,
                too_old,
            }) = verdict
            else {
                continue;
            };
            let (major, minor, too_old) = (*major, *minor, *too_old);
            let needs = major * 100 + minor * 10;
            let guards = guards.get_or_init(|| ArchGuards::scan(text));
            let (mut level, mut guard) = guards.at(call.range.start);
            let mut from_callers = false;
            if !ensures(level, needs) {
                let (lc, gc) = helper_level(ctx, guards, &mut callers, call.range.start, 0);
                if lc > level {
                    (level, guard, from_callers) = (lc, gc, true);
                }
            }
            if ensures(level, needs) {
                continue;
            }
            let why = if too_old {
                format!("the target is {}", ctx.arch)
            } else {
                format!(
                    "the target {} lacks the arch-specific features of {needed}",
                    ctx.arch
                )
            };
            let message = match (level, guard) {
                (Level::AtLeast(n), Some(guard)) => format!(
                    "`{symbol}` needs {needed} but the guard `{guard}`{} only ensures sm_{}{}, and {why}: the guarded code is still compiled for sm_{}{}, which lacks `{symbol}`, and does not compile there; raise the guard to `__CUDA_ARCH__ >= {major}{minor}0` (`NV_PROVIDES_SM_{major}{minor}`)",
                    if from_callers { " around every call of this function" } else { "" },
                    n / 100,
                    n % 100 / 10,
                    n / 100,
                    n % 100 / 10,
                ),
                _ => format!(
                    "`{symbol}` needs {needed} but {why}: it does not compile for this target; raise the target or guard the call with `#if __CUDA_ARCH__ >= {major}{minor}0` (`NV_IF_TARGET(NV_PROVIDES_SM_{major}{minor}, (...))`)",
                ),
            };
            // A `__device__` function of a header is compiled only into the files that
            // call it, and the guard around those calls lives there: what the file
            // alone shows is a warning.
            let in_header_helper = in_header(ctx)
                && ctx
                    .facts
                    .function_at(call.range.start)
                    .is_some_and(|f| !f.is_kernel);
            let (severity, message) = if in_header_helper {
                (
                    Severity::Warning,
                    format!(
                        "{message} (a warning: this `__device__` function is in a header, so it is compiled only into the files that call it, and it breaks the build there if a call reaches it on this target without a guard)"
                    ),
                )
            } else {
                (RULE.severity, message)
            };
            out.push(RuleDiagnostic {
                rule: RULE.id,
                severity,
                range: call.callee_range.clone(),
                message,
                wiki: page.clone(),
                fixes: Vec::new(),
            });
        }
    }
}

/// Whether the file is a header (`.cuh`, `.h`, `.hpp`, `.hxx`, `.inl`), as the host
/// names it; a file checked outside a host is not.
fn in_header(ctx: &RuleContext) -> bool {
    ctx.path().is_some_and(|p| {
        let lower = p.to_ascii_lowercase();
        [".cuh", ".h", ".hpp", ".hxx", ".inl"]
            .iter()
            .any(|e| lower.ends_with(e))
    })
}

/// Whether a guard of `level` keeps code that needs `needs` (`900` for sm_90) from the
/// SMs that lack it.
fn ensures(level: Level, needs: u32) -> bool {
    match level {
        Level::Nothing => false,
        Level::AtLeast(n) => n >= needs,
        Level::Silent => true,
    }
}

/// How far every call, in this file, of the `__device__` function around `offset` is
/// guarded (the weakest guard of its call sites, each strengthened by its own callers'
/// guards, three calls deep): a helper called only from guarded code is guarded too. A
/// kernel, a function the file never calls, or one called from unguarded code is not.
fn helper_level<'g>(
    ctx: &RuleContext,
    guards: &'g ArchGuards,
    memo: &mut HashMap<usize, (Level, Option<&'g str>)>,
    offset: usize,
    depth: usize,
) -> (Level, Option<&'g str>) {
    let Some(f) = ctx.facts.function_at(offset) else {
        return (Level::Nothing, None);
    };
    if f.is_kernel || depth > 3 {
        return (Level::Nothing, None);
    }
    if let Some(known) = memo.get(&f.range.start) {
        return *known;
    }
    // A recursive call sees the function as unguarded.
    memo.insert(f.range.start, (Level::Nothing, None));
    let (range, name) = (f.range.clone(), short_name(&f.name).to_string());
    let mut weakest: Option<(Level, Option<&str>)> = None;
    for site in ctx.file.find_calls(&name) {
        if range.contains(&site.range.start) || short_name(&site.callee) != name {
            continue;
        }
        let mut here = guards.at(site.range.start);
        if here.0 != Level::Silent {
            let up = helper_level(ctx, guards, memo, site.range.start, depth + 1);
            if up.0 > here.0 {
                here = up;
            }
        }
        if weakest.is_none_or(|w| here.0 < w.0) {
            weakest = Some(here);
        }
    }
    let level = weakest.unwrap_or((Level::Nothing, None));
    memo.insert(range.start, level);
    level
}

/// Why a callee does not compile for the target: the wiki symbol, its page, the
/// architecture it needs and whether the target is older than that.
#[derive(Clone)]
struct Verdict {
    symbol: String,
    page: String,
    needed: String,
    major: u32,
    minor: u32,
    too_old: bool,
}

/// The [`Verdict`] on the overload `call` picks by its first argument's type, where the
/// page gives that overload a requirement of its own and the file shows the type.
fn overload_verdict(ctx: &RuleContext, call: &CallSite, target: (u32, u32)) -> Option<Verdict> {
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
    let (key, req) = crate::hover::overload_requirement(page, &m.symbol, &args)?;
    let (major, minor, _) = parse_requires_sm(req)?;
    if (major, minor) <= target {
        return None;
    }
    Some(Verdict {
        symbol: key,
        page: page.id.clone(),
        needed: format!("sm_{major}{minor}"),
        major,
        minor,
        too_old: true,
    })
}

/// The [`Verdict`] on `call`'s callee (`None` when the target meets its requirement or
/// the wiki has none). It depends only on the callee and whether it is PTX.
fn verdict(ctx: &RuleContext, call: &CallSite, target: (u32, u32)) -> Option<Verdict> {
    let m = ctx.knowledge.symbol(&call.callee)?;
    let trusted =
        m.matched == MatchKind::Exact || call.kind == SymbolKind::Ptx || call.callee.contains("::");
    if !trusted {
        return None;
    }
    let page = m
        .api
        .as_deref()
        .and_then(|id| ctx.knowledge.wiki.page(id))?;
    let requirement = page.requires_sm_for(&m.symbol);
    let (major, minor, specific) = requirement.and_then(parse_requires_sm)?;
    let needed = format!("sm_{major}{minor}{}", if specific { "a" } else { "" });
    let too_old = (major, minor) > target;
    let not_specific = specific && (!ctx.arch.arch_specific || (major, minor) != target);
    if !too_old && !not_specific {
        return None;
    }
    Some(Verdict {
        symbol: m.symbol.clone(),
        page: page.id.clone(),
        needed,
        major,
        minor,
        too_old,
    })
}

/// The short names (last `::` segment, first PTX segment) of every wiki symbol whose
/// requirement the target does not meet: a function that mentions none of them has
/// nothing to report.
fn unmet_names(ctx: &RuleContext, target: (u32, u32)) -> Vec<String> {
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
            let unmet =
                parse_requires_sm(req).is_some_and(|(major, minor, _)| (major, minor) > target);
            if unmet && !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
        for sym in &api.symbols {
            let requirement = page.requires_sm_for(sym);
            let Some((major, minor, specific)) = requirement.and_then(parse_requires_sm) else {
                continue;
            };
            let unmet = (major, minor) > target
                || (specific && (!ctx.arch.arch_specific || (major, minor) != target));
            if !unmet {
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
"#,
            expect![[r#"
                error: `wgmma.fence` needs sm_90a but the target sm_90 lacks the arch-specific features of sm_90a: it does not compile for this target; raise the target or guard the call with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`) (api-wgmma)
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
// Called only from guarded code: guarded too.
__device__ void fence_helper() {
    @
}
__global__ void k() {
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
                    // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90 but the target is sm_80
    NV_IF_TARGET(NV_IS_DEVICE, (asm volatile("fence.proxy.async.shared::cta;");));
                                           // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90 but the target is sm_80
#if __CUDA_ARCH__ < 900
    asm volatile("fence.proxy.async.shared::cta;");
               // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90 but the target is sm_80
#else
    __syncthreads();
#endif
}
// Called from one guarded and one unguarded place.
__device__ void helper() {
    asm volatile("fence.proxy.async.shared::cta;");
               // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: `fence.proxy.async` needs sm_90 but the target is sm_80
}
__global__ void k() {
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
    NV_DISPATCH_TARGET(NV_PROVIDES_SM_100, (__syncthreads();), NV_PROVIDES_SM_80, (helper();));
}
"#,
            expect![[r#"
                error: `fence.proxy.async` needs sm_90 but the guard `NV_PROVIDES_SM_80` only ensures sm_80, and the target is sm_80: the guarded code is still compiled for sm_80, which lacks `fence.proxy.async`, and does not compile there; raise the guard to `__CUDA_ARCH__ >= 900` (`NV_PROVIDES_SM_90`) (api-ptx-cp-async-bulk)
                error: `fence.proxy.async` needs sm_90 but the guard `#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800` only ensures sm_80, and the target is sm_80: the guarded code is still compiled for sm_80, which lacks `fence.proxy.async`, and does not compile there; raise the guard to `__CUDA_ARCH__ >= 900` (`NV_PROVIDES_SM_90`) (api-ptx-cp-async-bulk)
                error: `fence.proxy.async` needs sm_90 but the guard `NV_PROVIDES_SM_80` around every call of this function only ensures sm_80, and the target is sm_80: the guarded code is still compiled for sm_80, which lacks `fence.proxy.async`, and does not compile there; raise the guard to `__CUDA_ARCH__ >= 900` (`NV_PROVIDES_SM_90`) (api-ptx-cp-async-bulk)
            "#]],
        );
    }
}
