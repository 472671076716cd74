//! Template kernels bound to the instantiations a file launches.
//!
//! `template <int BM, int BN> __global__ void tk(...)` declares `__shared__ float
//! t[BM][BN]` and maybe `__launch_bounds__(BM * BN / 4)`, whose values the kernel's own
//! text does not fix. A launch `tk<32, 32><<<1, 64>>>(...)` in the file binds them. The
//! functions here refold a kernel's launch bounds and shared declarations with the
//! arguments of one instantiation ([`Instantiation`], from
//! [`launched_instantiations`]), and pick the instantiation the occupancy and the
//! hovers use: the one with the most static shared memory (the worst case for
//! occupancy), the first on a tie.

use kernaut_syntax::{FileFacts, Function, SharedDecl, TemplateParam};

use crate::reports::{launched_instantiations, Instantiation};

/// `f` with its `__launch_bounds__` arguments folded again with `bound`.
pub fn bind_function(facts: &FileFacts, f: &Function, bound: &[(String, i64)]) -> Function {
    let mut out = f.clone();
    if bound.is_empty() {
        return out;
    }
    if let Some(lb) = out.launch_bounds.as_mut() {
        let at = lb.range.start;
        let fold = |i: usize| {
            lb.args
                .get(i)
                .and_then(|t| facts.fold_text_with(t, at, bound))
        };
        lb.max_threads = fold(0);
        lb.min_blocks = fold(1);
        lb.max_cluster = fold(2);
    }
    out
}

/// `d` with its dimensions and static size folded again with `bound`.
pub fn bind_shared(facts: &FileFacts, d: &SharedDecl, bound: &[(String, i64)]) -> SharedDecl {
    let mut out = d.clone();
    if bound.is_empty() {
        return out;
    }
    out.dims = d
        .dims_text
        .iter()
        .map(|t| {
            facts
                .fold_text_with(t, d.range.start, bound)
                .and_then(|v| u64::try_from(v).ok())
                .filter(|v| *v > 0)
        })
        .collect();
    out.static_bytes = if d.is_extern {
        None
    } else {
        d.element_size
            .and_then(|e| out.dims.iter().try_fold(e, |acc, v| acc.checked_mul((*v)?)))
    };
    out
}

/// The static shared memory of `kernel` in the instantiation `bound`: the sum of its
/// non-`extern` declarations, and the names of those whose size stays unknown (summed
/// by [`crate::model::static_shared`], like every other total).
pub fn static_shared(
    facts: &FileFacts,
    kernel: &str,
    bound: &[(String, i64)],
) -> (u64, Vec<String>) {
    let decls: Vec<SharedDecl> = facts
        .shared
        .iter()
        .filter(|d| d.function.as_deref() == Some(kernel))
        .map(|d| bind_shared(facts, d, bound))
        .collect();
    let s = crate::model::static_shared(&decls);
    (s.bytes, s.unknown)
}

/// The instantiation of `kernel` the occupancy and hovers use: of those the file
/// launches, the one with the most static shared memory (the first on a tie). `None`
/// when the kernel is not a template or no launch binds its parameters.
pub fn chosen_instantiation(facts: &FileFacts, kernel: &str) -> Option<Instantiation> {
    let mut best: Option<(u64, Instantiation)> = None;
    for inst in launched_instantiations(facts, kernel) {
        let (bytes, _) = static_shared(facts, kernel, &inst.bound);
        if best.as_ref().is_none_or(|(b, _)| bytes > *b) {
            best = Some((bytes, inst));
        }
    }
    best.map(|(_, i)| i)
}

/// How a hover or note names the chosen instantiation: `` `BM = 32, BN = 32`, the
/// instantiation the file launches `` or `` `BM = 64`, the one with the most shared
/// memory of the 2 instantiations the file launches ``.
pub fn chosen_phrase(inst: &Instantiation) -> String {
    if inst.of > 1 {
        format!(
            "{}, the one with the most shared memory of the {} instantiations the file launches",
            inst.describe(),
            inst.of
        )
    } else {
        format!("{}, the instantiation the file launches", inst.describe())
    }
}

/// The value template parameters of `f` when the file never launches it (a launch
/// binds them, or uses the defaults): each with its default if it has one.
pub fn unbound_params<'f>(facts: &FileFacts, f: &'f Function) -> Vec<&'f TemplateParam> {
    let short = kernaut_syntax::short_name(&f.name);
    if facts
        .launches
        .iter()
        .any(|l| kernaut_syntax::short_name(&l.kernel) == short)
    {
        return Vec::new();
    }
    f.template_params.iter().filter(|p| !p.is_type).collect()
}

/// A sentence on what was assumed for unbound template parameters: `` The template
/// parameters `BM`, `BN` are unbound (no launch in the file instantiates `tk`); `BN = 16`
/// is its default, `BM` has none, so sizes that depend on it are not known. ``
pub fn unbound_sentence(kernel: &str, params: &[&TemplateParam]) -> Option<String> {
    if params.is_empty() {
        return None;
    }
    let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
    let (with, without): (Vec<&&TemplateParam>, Vec<&&TemplateParam>) =
        params.iter().partition(|p| p.default_value.is_some());
    let mut s = format!(
        "The template parameter{} {} {} unbound (no launch in the file instantiates `{kernel}`)",
        if params.len() == 1 { "" } else { "s" },
        names.join(", "),
        if params.len() == 1 { "is" } else { "are" }
    );
    if !with.is_empty() {
        let d: Vec<String> = with
            .iter()
            .map(|p| format!("{} = {}", p.name, p.default_value.unwrap_or(0)))
            .collect();
        s.push_str(&format!(
            "; the default{} `{}` assumed",
            if with.len() == 1 { "" } else { "s" },
            d.join(", ")
        ));
    }
    if !without.is_empty() {
        let n: Vec<String> = without.iter().map(|p| format!("`{}`", p.name)).collect();
        s.push_str(&format!(
            "; {} {} no default, so what depends on {} is not known",
            n.join(", "),
            if without.len() == 1 { "has" } else { "have" },
            if without.len() == 1 { "it" } else { "them" }
        ));
    }
    s.push('.');
    Some(s)
}

/// The static size of `d` as hovers and hints show it: in the instantiation chosen for
/// its kernel when that is a template the file launches, else as the text folds it.
/// Also returns that instantiation.
pub fn shared_bytes(facts: &FileFacts, d: &SharedDecl) -> (Option<u64>, Option<Instantiation>) {
    if d.is_extern {
        return (None, None);
    }
    let inst = d
        .function
        .as_deref()
        .and_then(|k| facts.kernel(k))
        .filter(|k| !k.template_params.is_empty())
        .and_then(|k| chosen_instantiation(facts, &k.name));
    match inst {
        Some(i) => (bind_shared(facts, d, &i.bound).static_bytes, Some(i)),
        None => (d.static_bytes, None),
    }
}
