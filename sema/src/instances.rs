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

use kernaut_syntax::{BinOp, IndexExpr, SharedAccess};

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
/// by [`crate::shared_bytes::static_shared`], like every other total).
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
    let s = crate::shared_bytes::static_shared(&decls);
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

/// The template arguments the first launch of a kernel in the file binds, where they
/// differ from the defaults the kernel's own text folds to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instantiation {
    /// The bound parameters and their values, in parameter order; empty for the
    /// defaults.
    pub bound: Vec<(String, i64)>,
    /// How many different instantiations of the kernel the file launches.
    pub of: usize,
}

impl Instantiation {
    /// `` `OFFSET = 4, BK = 16` ``, or `the template defaults`.
    pub fn describe(&self) -> String {
        if self.bound.is_empty() {
            return "the template defaults".to_string();
        }
        let b = self
            .bound
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("`{b}`")
    }

    /// Where a finding or a hover names the instantiation: `the instantiation the file
    /// launches: `OFFSET = 4`` or `the worst of the 2 instantiations the file launches:
    /// the template defaults`.
    pub fn phrase(&self) -> String {
        if self.of > 1 {
            format!(
                "the worst of the {} instantiations the file launches: {}",
                self.of,
                self.describe()
            )
        } else {
            format!("the instantiation the file launches: {}", self.describe())
        }
    }
}

/// The instantiations of `kernel` that the file's launches make, in launch order, each
/// once: the template arguments folded at each launch, kept where they differ from the
/// defaults. Empty when the kernel has no template parameters, or every launch uses the
/// defaults.
pub fn launched_instantiations(facts: &FileFacts, kernel: &str) -> Vec<Instantiation> {
    let Some(f) = facts.kernel(kernel) else {
        return Vec::new();
    };
    if f.template_params.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Vec<(String, i64)>> = Vec::new();
    for launch in facts.launches.iter().filter(|l| l.kernel == kernel) {
        let bound = launch_bound(facts, f, launch).0;
        if !out.contains(&bound) {
            out.push(bound);
        }
    }
    if out.iter().all(Vec::is_empty) {
        return Vec::new();
    }
    let of = out.len();
    out.into_iter()
        .map(|bound| Instantiation { bound, of })
        .collect()
}

/// The value template parameters `launch` binds to other values than their defaults, in
/// parameter order, and whether it fixes every value parameter (an argument the file
/// folds, or a default where none is written).
fn launch_bound(
    facts: &FileFacts,
    f: &Function,
    launch: &kernaut_syntax::LaunchSite,
) -> (Vec<(String, i64)>, bool) {
    let args = launch
        .template_args
        .as_deref()
        .map(kernaut_syntax::split_template_args)
        .unwrap_or_default();
    let mut bound = Vec::new();
    let mut complete = true;
    for (i, p) in f.template_params.iter().enumerate() {
        if p.is_type {
            continue;
        }
        // Inside a host function template, its parameters as its call binds them.
        let v = match args.get(i) {
            Some(a) => facts.fold_text_with(a, launch.range.start, &launch.caller_bound),
            None => p.default_value,
        };
        let Some(v) = v else {
            complete = false;
            continue;
        };
        if p.default_value != Some(v) {
            bound.push((p.name.clone(), v));
        }
    }
    (bound, complete)
}

/// The static shared memory of the instantiation of its kernel that `launch` makes (bytes
/// known, and the declarations whose size is not), where the kernel is a template of the
/// file and the launch fixes every value parameter; `None` otherwise.
pub fn launch_static_shared(
    facts: &FileFacts,
    launch: &kernaut_syntax::LaunchSite,
) -> Option<(u64, Vec<String>)> {
    let f = facts.kernel(&launch.kernel)?;
    if f.template_params.is_empty() {
        return None;
    }
    let (bound, complete) = launch_bound(facts, f, launch);
    complete.then(|| static_shared(facts, &launch.kernel, &bound))
}

/// The value template parameters of `a`'s kernel with their defaults (`OFFSET = 0`), when
/// the file never launches the kernel: the analysis then assumed the defaults.
pub fn assumed_defaults(facts: &FileFacts, a: &SharedAccess) -> Option<String> {
    let name = a.function.as_deref()?;
    let f = facts.kernel(name)?;
    // A launch of `name` is one of a kernel of its short name.
    if facts
        .launches_by_short_name(kernaut_syntax::short_name(name))
        .iter()
        .any(|l| l.kernel == name)
    {
        return None;
    }
    let defaults: Vec<String> = f
        .template_params
        .iter()
        .filter(|p| !p.is_type)
        .filter_map(|p| Some(format!("{} = {}", p.name, p.default_value?)))
        .collect();
    (!defaults.is_empty()).then(|| defaults.join(", "))
}

/// The byte offset of `access` in the instantiation `inst`: its constants folded again
/// with the bound template arguments, and the rows of its array re-laid out where the
/// dimensions depend on them (`s[BK][BM + OFFSET]`).
pub fn instantiated_offset(
    facts: &FileFacts,
    access: &SharedAccess,
    inst: &Instantiation,
) -> IndexExpr {
    let at = access.range.start;
    let refold = |t: &str| facts.fold_text_with(t, at, &inst.bound);
    let mut offset = access.byte_offset.rebind(&refold);
    let Some(decl) = facts
        .shared_named(&access.array, at)
        .filter(|_| access.root == access.array)
    else {
        return offset;
    };
    let dims: Vec<Option<u64>> = decl
        .dims_text
        .iter()
        .map(|t| {
            facts
                .fold_text_with(t, decl.range.start, &inst.bound)
                .and_then(|v| u64::try_from(v).ok())
        })
        .collect();
    if dims == decl.dims || access.indices.len() != dims.len() {
        return offset;
    }
    let indices: Vec<IndexExpr> = access.indices.iter().map(|i| i.rebind(&refold)).collect();
    let linear = |dims: &[Option<u64>]| -> Option<IndexExpr> {
        let mut lin = IndexExpr::Int(0);
        for (k, i) in indices.iter().enumerate() {
            if k > 0 {
                let d = i64::try_from((*dims.get(k)?)?).ok()?;
                lin = IndexExpr::binary(lin, BinOp::Mul, IndexExpr::Int(d));
            }
            lin = IndexExpr::binary(lin, BinOp::Add, i.clone());
        }
        Some(lin)
    };
    let unknown = || {
        IndexExpr::Unknown(format!(
            "the dimensions of `{}` with {} are not known",
            access.array,
            inst.describe()
        ))
    };
    let (Some(new), Some(elem)) = (
        linear(&dims),
        access.element_size.and_then(|e| i64::try_from(e).ok()),
    ) else {
        return unknown();
    };
    if access.cast_type.is_none() {
        // No vector index on top: the new rows' flattening is the whole offset (the
        // rows as the kernel's text folds them may not be known at all: `t[BM][BN]`).
        return IndexExpr::binary(new, BinOp::Mul, IndexExpr::Int(elem));
    }
    let Some(old) = linear(&decl.dims) else {
        return unknown();
    };
    // The offset as lowered holds the old rows' flattening with the vector index of the
    // cast on top: move it to the new rows'.
    offset = IndexExpr::binary(
        offset,
        BinOp::Add,
        IndexExpr::binary(
            IndexExpr::binary(new, BinOp::Sub, old),
            BinOp::Mul,
            IndexExpr::Int(elem),
        ),
    );
    offset
}

/// The byte offset of `access` in `inst` (as lowered for the defaults).
pub fn offset_in(facts: &FileFacts, access: &SharedAccess, inst: &Instantiation) -> IndexExpr {
    if inst.bound.is_empty() {
        access.byte_offset.clone()
    } else {
        instantiated_offset(facts, access, inst)
    }
}
