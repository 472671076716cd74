//! Which code of a file each target compiles: the preprocessor's conditions and the
//! `<nv/target>` macros, evaluated once per target.
//!
//! Not a rule: `arch/requires-newer-sm` asks it whether a call is compiled for a target.
//! For each target the file is built for, the directives are run as nvcc's device pass
//! would run them: `__CUDA_ARCH__` is the target's value (`900` for sm_90), the feature
//! macros nvcc defines for `a` and `f` targets are defined
//! (`__CUDA_ARCH_FEAT_SM90_ALL`, `__CUDA_ARCH_SPECIFIC__`, `__CUDA_ARCH_FAMILY_SPECIFIC__`)
//! and the other `__CUDA_ARCH…` macros are not, the build's `-D` macros and the headers'
//! macros are defined, and `#define`/`#undef` in the file take effect in order.
//!
//! Every condition has three answers ([`Tri`]): compiled, not compiled, or unknown. A
//! macro nothing defines that the build might (`USE_ROCM`, `MYLIB_HOPPER`, a
//! `CUTLASS_ARCH_MMA_SM90_ENABLED` from a system header), a toolkit-version test, or a
//! function-like macro in `#if` makes a condition unknown, and code under an unknown
//! condition is never reported as an error. An include guard (`#ifndef X` followed by
//! `#define X`) is taken as true.
//!
//! `NV_IF_TARGET(q, (...))`, `NV_IF_ELSE_TARGET(q, (...), (...))` and
//! `NV_DISPATCH_TARGET(q1, (...), q2, (...), ...)` are read the same way: each branch is
//! compiled where its query holds and the earlier ones do not (`NV_PROVIDES_SM_90`,
//! `NV_IS_EXACTLY_SM_90`, `NV_HAS_FEATURE_SM_90a`, `NV_IS_DEVICE`, `NV_IS_HOST`).

use kernaut_gpu::{Target, Variant};
use kernaut_syntax::lex::strip_comments;
use kernaut_syntax::{short_name, FxHashMap as HashMap, FxHashSet as HashSet, SourceFile};

use super::{RuleContext, TextRange};

/// Which code each target compiles: the guards, and which functions a kernel compiled
/// for the target reaches through calls compiled for it.
pub struct Compiled {
    /// The preprocessor and `if constexpr` conditions per target.
    pub guards: TargetGuards,
    /// Per target, the start of each function surely compiled for it.
    surely: Vec<HashSet<usize>>,
}

impl Compiled {
    /// The guards and reachability of the context's file, for each of its targets.
    pub fn scan(ctx: &RuleContext) -> Compiled {
        Self::with_guards(ctx, TargetGuards::of(ctx))
    }

    /// [`Compiled::scan`] of the build as written ([`TargetGuards::scan_default`]): a
    /// call under `#if` on a macro nothing defines counts where the build compiles it.
    pub fn scan_default(ctx: &RuleContext) -> Compiled {
        Self::with_guards(ctx, TargetGuards::scan_default(ctx))
    }

    fn with_guards(ctx: &RuleContext, mut guards: TargetGuards) -> Compiled {
        let targets = &ctx.targets.targets;
        guards.decide_by_launches(ctx);
        let functions: Vec<&kernaut_syntax::Function> = ctx
            .facts
            .kernels
            .iter()
            .chain(&ctx.facts.device_functions)
            .collect();
        let bodies: Vec<TextRange> = functions
            .iter()
            .filter_map(|f| f.body_range.clone())
            .collect();
        ctx.prefetch_calls(&bodies);
        // Device functions by short name.
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::default();
        for f in &ctx.facts.device_functions {
            by_name
                .entry(short_name(&f.name))
                .or_default()
                .push(f.range.start);
        }
        let mut surely = Vec::new();
        for i in 0..targets.len() {
            let mut set: HashSet<usize> = HashSet::default();
            let mut work: Vec<&kernaut_syntax::Function> = Vec::new();
            // A kernel template nothing instantiates is never compiled.
            for k in ctx.facts.kernels.iter().filter(|k| ctx.emitted(k)) {
                if guards.at(i, k.name_range.start).0 == Tri::True && set.insert(k.range.start) {
                    work.push(k);
                }
            }
            while let Some(f) = work.pop() {
                let Some(body) = &f.body_range else { continue };
                for call in ctx.calls_in_body(body.start).iter() {
                    let Some(starts) = by_name.get(short_name(&call.callee)) else {
                        continue;
                    };
                    if guards.at(i, call.range.start).0 != Tri::True {
                        continue;
                    }
                    for start in starts {
                        if set.insert(*start) {
                            if let Some(g) = ctx
                                .facts
                                .device_functions
                                .iter()
                                .find(|g| g.range.start == *start)
                            {
                                work.push(g);
                            }
                        }
                    }
                }
            }
            surely.push(set);
        }
        Compiled { guards, surely }
    }

    /// Whether a kernel of the file that some target compiles reaches the function that
    /// starts at `start` through calls compiled for that target (a kernel reaches itself).
    pub fn reached(&self, start: usize) -> bool {
        self.surely.iter().any(|s| s.contains(&start))
    }

    /// Whether the code at `offset` is compiled for the `i`th target: its guards hold,
    /// and its function is a kernel or a function such a kernel reaches. A function no
    /// kernel of the file reaches is compiled only if another file or `-rdc` calls it,
    /// which the file does not show.
    pub fn at(&self, ctx: &RuleContext, i: usize, offset: usize) -> Tri {
        let here = self.guards.at(i, offset).0;
        let Some(f) = ctx.facts.function_at(offset) else {
            return Tri::Unknown.min(here);
        };
        if self.surely[i].contains(&f.range.start) {
            here
        } else {
            Tri::Unknown.min(here)
        }
    }
}

/// Whether code is compiled: ordered from "no" to "yes", so that the weakest of several
/// conditions is their `min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tri {
    /// Not compiled for the target.
    False,
    /// The file and the build do not say.
    Unknown,
    /// Compiled for the target.
    True,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::False => Tri::True,
            Tri::True => Tri::False,
            Tri::Unknown => Tri::Unknown,
        }
    }

    fn of(b: bool) -> Tri {
        if b {
            Tri::True
        } else {
            Tri::False
        }
    }
}

/// A part of the file whose code is not (or not surely) compiled for one target.
#[derive(Clone, Debug)]
struct Region {
    range: TextRange,
    state: Tri,
    /// The guard as written (`#if __CUDA_ARCH__ >= 800`, `NV_PROVIDES_SM_80`).
    guard: String,
}

/// For each target (in the order given), every guarded region and its state.
#[derive(Debug, Default)]
pub struct TargetGuards {
    per_target: Vec<Vec<Region>>,
    /// The `if constexpr` branches that no launched instantiation takes
    /// ([`TargetGuards::decide_by_launches`]): compiled for no target.
    discarded: Vec<TextRange>,
}

impl TargetGuards {
    /// Runs the file's directives for each of `targets`, with `defines` (the build's
    /// macros and the headers', as (name, body)) defined first, and for each target the
    /// macros `target_defines` gives it.
    pub fn scan(
        file: &SourceFile,
        targets: &[Target],
        defines: &[(String, String)],
        target_defines: &[(Target, Vec<(String, String)>)],
    ) -> Self {
        Self::scan_with(file, targets, defines, target_defines, false)
    }

    /// [`TargetGuards::scan`] of the build as written: a macro nothing defines is not
    /// defined (`#if !defined DISABLE_CUDA` holds, `#if LANES == 4` does not), where
    /// `scan` leaves both unknown (a `-D` may define it); the toolkit's version macros
    /// stay unknown.
    pub fn scan_default(ctx: &RuleContext) -> Self {
        let (defines, targets) = Self::inputs(ctx);
        Self::scan_with(ctx.file, targets, &defines, ctx.target_defines, true)
    }

    fn scan_with(
        file: &SourceFile,
        targets: &[Target],
        defines: &[(String, String)],
        target_defines: &[(Target, Vec<(String, String)>)],
        absent: bool,
    ) -> Self {
        let per_target = targets
            .iter()
            .map(|t| {
                let mut all = defines.to_vec();
                for (_, d) in target_defines.iter().filter(|(x, _)| x == t) {
                    all.extend(d.iter().cloned());
                }
                let (mut regions, env) = preprocess(file.text(), t, &all, absent);
                regions.extend(target_macro_regions(file.text(), t));
                regions.extend(constexpr_regions(file, &env));
                regions
            })
            .collect();
        TargetGuards {
            per_target,
            discarded: Vec::new(),
        }
    }

    /// [`TargetGuards::scan`] of the context's file for its targets, with the build's
    /// macros and those of the headers it includes.
    pub fn of(ctx: &RuleContext) -> Self {
        let (defines, targets) = Self::inputs(ctx);
        TargetGuards::scan(ctx.file, targets, &defines, ctx.target_defines)
    }

    /// The macros defined before the file's own directives run (the build's and those
    /// of the headers it includes) and the targets.
    fn inputs<'c>(ctx: &'c RuleContext) -> (Vec<(String, String)>, &'c [Target]) {
        let mut defines: Vec<(String, String)> = ctx.defines.to_vec();
        if let Some(p) = ctx.file.prelude() {
            defines.extend(
                p.macros
                    .iter()
                    .filter(|m| m.params.is_none())
                    .map(|m| (m.name.clone(), m.body.clone())),
            );
        }
        (defines, &ctx.targets.targets)
    }

    /// Whether the code at `offset` is compiled for any target, and the guard that
    /// decides it where no target surely compiles it: the best state over the targets.
    pub fn anywhere(&self, offset: usize) -> (Tri, Option<&str>) {
        let mut best: (Tri, Option<&str>) = (Tri::False, None);
        for i in 0..self.per_target.len() {
            let (state, guard) = self.at(i, offset);
            if state > best.0 || best.1.is_none() {
                best = (state.max(best.0), guard.or(best.1));
            }
        }
        if best.0 == Tri::True {
            best.1 = None;
        }
        best
    }

    /// The `if constexpr` branches on a template kernel's parameters that the file's
    /// launches decide ([`trait_regions`]) take the launches' answer where the target
    /// alone leaves them unknown.
    pub fn decide_by_launches(&mut self, ctx: &RuleContext) {
        let traits = trait_regions(ctx);
        if traits.is_empty() {
            return;
        }
        for regions in &mut self.per_target {
            regions
                .retain(|r| r.state != Tri::Unknown || !traits.iter().any(|t| t.range == r.range));
            regions.extend(traits.iter().cloned());
        }
        self.discarded = traits
            .into_iter()
            .filter(|r| r.state == Tri::False)
            .map(|r| r.range)
            .collect();
    }

    /// Whether `offset` lies in an `if constexpr` branch that no instantiation the file
    /// launches takes, whatever the target (after [`TargetGuards::decide_by_launches`]).
    pub fn discarded_by_launches(&self, offset: usize) -> bool {
        self.discarded.iter().any(|r| r.contains(&offset))
    }

    /// Whether the code at `offset` is compiled for the `i`th target, and the guard that
    /// decides it when it is not surely compiled.
    pub fn at(&self, i: usize, offset: usize) -> (Tri, Option<&str>) {
        // The outermost of the guards with the weakest state: a branch inside an
        // undecided `#ifdef` is undecided because of the `#ifdef`.
        let mut best = (Tri::True, None);
        let mut len = 0;
        for r in self.per_target.get(i).into_iter().flatten() {
            if r.range.contains(&offset)
                && (r.state < best.0
                    || (r.state == best.0 && r.state != Tri::True && r.range.len() > len))
            {
                best = (r.state, Some(r.guard.as_str()));
                len = r.range.len();
            }
        }
        best
    }

    /// The innermost guard on the architecture around `offset` that holds for the `i`th
    /// target, as written (an include guard or a feature switch is not one).
    pub fn innermost(&self, i: usize, offset: usize) -> Option<&str> {
        self.per_target
            .get(i)?
            .iter()
            .filter(|r| {
                r.range.contains(&offset)
                    && r.state == Tri::True
                    && (mentions_arch(&r.guard) || r.guard.contains("NV_"))
            })
            .min_by_key(|r| r.range.len())
            .map(|r| r.guard.as_str())
    }
}

/// What a macro is, for one target.
#[derive(Clone, Debug, PartialEq)]
enum Macro {
    /// Defined, with its replacement text (`""` for `-DNAME` bodies of `1` are `"1"`).
    Body(String),
    /// Function-like: defined, not evaluable in `#if`.
    Function,
    /// Defined or not depending on a condition that is unknown.
    Unknown,
}

#[derive(Default)]
struct Env {
    macros: HashMap<String, Macro>,
    /// A name nothing defines is not defined (and reads as 0), as in the build nothing
    /// adds a `-D` to, except the toolkit's version macros, which its headers define
    /// with a value not known here ([`TargetGuards::scan_default`]).
    absent: bool,
}

/// Macros the toolkit's headers define with the toolkit's version.
fn toolkit_version_macro(name: &str) -> bool {
    matches!(
        name,
        "CUDART_VERSION" | "CUDA_VERSION" | "THRUST_VERSION" | "CUB_VERSION" | "CCCL_VERSION"
    ) || name.starts_with("__CUDACC_VER")
        || name.starts_with("__NVCC_VER")
        || name.starts_with("__CUDA_API_VER")
}

impl Env {
    fn new(target: &Target, defines: &[(String, String)]) -> Env {
        let mut macros = HashMap::default();
        for (name, body) in defines {
            macros.insert(name.clone(), Macro::Body(body.clone()));
        }
        macros.insert(
            "__CUDA_ARCH__".to_string(),
            Macro::Body(target.cuda_arch().to_string()),
        );
        for (name, value) in target.feature_macros() {
            macros.insert(name, Macro::Body(value.to_string()));
        }
        for name in ["__CUDACC__", "__NVCC__", "__CUDA__"] {
            macros.insert(name.to_string(), Macro::Body("1".to_string()));
        }
        Env {
            macros,
            absent: false,
        }
    }

    /// Whether `name` is defined.
    fn defined(&self, name: &str) -> Tri {
        match self.macros.get(name) {
            Some(Macro::Body(_) | Macro::Function) => Tri::True,
            Some(Macro::Unknown) => Tri::Unknown,
            // nvcc's own architecture macros: what it does not define for this target
            // is not defined; other compilers' are never defined under nvcc.
            None if name.starts_with("__CUDA_ARCH") || name.starts_with("__HIP") => Tri::False,
            None if self.absent && !toolkit_version_macro(name) => Tri::False,
            None => Tri::Unknown,
        }
    }
}

/// Runs the directives for one target: the regions of every branch with their state.
fn preprocess(
    text: &str,
    target: &Target,
    defines: &[(String, String)],
    absent: bool,
) -> (Vec<Region>, Env) {
    struct Open {
        /// Whether the enclosing code is compiled.
        parent: Tri,
        /// Whether an earlier branch of this `#if` was taken.
        taken: Tri,
        /// Whether the current branch is compiled.
        state: Tri,
        start: usize,
        guard: String,
    }
    let mut env = Env::new(target, defines);
    env.absent = absent;
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let directives = directives(text);
    for (i, d) in directives.iter().enumerate() {
        let active = stack.last().map_or(Tri::True, |o| o.state);
        let close = |o: &Open, end: usize, out: &mut Vec<Region>| {
            out.push(Region {
                range: o.start..end,
                state: o.state,
                guard: o.guard.clone(),
            });
        };
        match d.word.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let cond = if is_include_guard(d, directives.get(i + 1)) {
                    Tri::True
                } else {
                    condition(&env, &d.word, &d.rest)
                };
                let state = active.min(cond);
                stack.push(Open {
                    parent: active,
                    taken: cond,
                    state,
                    start: d.end,
                    guard: shown(&d.word, &d.rest),
                });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                let Some(top) = stack.last_mut() else {
                    continue;
                };
                close(top, d.start, &mut out);
                let cond = if d.word == "else" {
                    Tri::True
                } else {
                    condition(&env, &d.word, &d.rest)
                };
                top.state = top.parent.min(top.taken.not()).min(cond);
                top.taken = top.taken.max(cond);
                top.guard = if d.word == "else" {
                    format!("#else of {}", top.guard)
                } else {
                    shown(&d.word, &d.rest)
                };
                top.start = d.end;
            }
            "endif" => {
                if let Some(top) = stack.pop() {
                    close(&top, d.start, &mut out);
                }
            }
            "define" if active != Tri::False => {
                let (name, is_function, body) = definition(&d.rest);
                if name.is_empty() {
                    continue;
                }
                let m = if active == Tri::Unknown {
                    Macro::Unknown
                } else if is_function {
                    Macro::Function
                } else {
                    Macro::Body(body)
                };
                env.macros.insert(name, m);
            }
            "undef" if active != Tri::False => {
                let name: String = ident_prefix(d.rest.trim_start());
                if active == Tri::Unknown {
                    env.macros.insert(name, Macro::Unknown);
                } else {
                    env.macros.remove(&name);
                }
            }
            _ => {}
        }
    }
    for top in stack {
        out.push(Region {
            range: top.start..text.len(),
            state: top.state,
            guard: top.guard,
        });
    }
    (out, env)
}

/// The branches of every `if constexpr (cond)` whose condition the target decides:
/// `__CUDA_ARCH__` comparisons, the macros known for the target, and `constexpr`
/// variables of the file initialised from them. A condition with anything else in it (a
/// trait such as `is_blackwell<__CUDA_ARCH__>()`, a template parameter) leaves both
/// branches unknown: nothing under them is reported.
fn constexpr_regions(file: &SourceFile, env: &Env) -> Vec<Region> {
    let text = file.text();
    let mut out = Vec::new();
    if !text.contains("constexpr") {
        return out;
    }
    let whole = 0..text.len();
    let ifs = file.constexpr_ifs(&whole);
    if ifs.is_empty() {
        return out;
    }
    // `constexpr bool NAME = EXPR;` (also `static`, `int`) of the file.
    let mut env = Env {
        macros: env.macros.clone(),
        absent: env.absent,
    };
    for v in file.variables_in(&whole) {
        if let (true, Some(init)) = (v.is_constexpr, &v.init) {
            let value = text[init.clone()].trim().to_string();
            env.macros.entry(v.name).or_insert(Macro::Body(value));
        }
    }
    for c in ifs {
        let cond = &text[c.condition.clone()];
        let value = match eval(&env, cond, 0) {
            Val::Known(v) => Tri::of(v != 0),
            Val::Unknown => Tri::Unknown,
        };
        let guard = format!("if constexpr ({})", cond.trim());
        out.push(Region {
            range: c.then,
            state: value,
            guard: guard.clone(),
        });
        if let Some(other) = c.otherwise {
            out.push(Region {
                range: other,
                state: value.not(),
                guard: format!("else of {guard}"),
            });
        }
    }
    out
}

/// The branches of `if constexpr` conditions on a template kernel's parameters: types
/// (`std::is_same_v<T, __nv_bfloat16>`, `std::is_same<T, half>::value`, `sizeof(T) == 2`)
/// and values (`Mode == 1`, `kBits > 4 && kGroup == 128`) that every instantiation the
/// launches show decides the same way: a branch no launched instantiation takes is not
/// compiled. A kernel with a launch whose arguments are not written (nor defaulted), or
/// a condition with anything the arguments do not decide, leaves both branches as they
/// are.
fn trait_regions(ctx: &RuleContext) -> Vec<Region> {
    let text = ctx.text();
    let mut out = Vec::new();
    if !text.contains("constexpr") {
        return out;
    }
    let aliases = super::type_aliases::type_aliases(ctx.file);
    let scope = ctx.scope();
    for k in ctx
        .facts
        .kernels
        .iter()
        .filter(|k| !k.template_params.is_empty())
    {
        let Some(body) = k.body_range.clone() else {
            continue;
        };
        let Some(body_text) = text.get(body.clone()) else {
            continue;
        };
        if !body_text.contains("constexpr") {
            continue;
        }
        // The type arguments of each launch, by parameter name.
        let mut instances: Vec<Vec<(String, String)>> = Vec::new();
        let mut complete = true;
        for (_, l) in scope.launches(&k.name) {
            let args = l
                .template_args
                .as_deref()
                .map(kernaut_syntax::split_template_args)
                .unwrap_or_default();
            let mut bound = Vec::new();
            for (i, p) in k.template_params.iter().enumerate() {
                match args
                    .get(i)
                    .map(|a| a.trim().to_string())
                    .or(p.default.clone())
                {
                    Some(a) => bound.push((p.name.clone(), a)),
                    None => complete = false,
                }
            }
            instances.push(bound);
        }
        if !complete || instances.is_empty() {
            continue;
        }
        for c in ctx.file.constexpr_ifs(&body) {
            let cond_text = &text[c.condition.clone()];
            let mut values = instances.iter().map(|inst| {
                let (types, values): (Vec<_>, Vec<_>) = inst.iter().cloned().partition(|(p, _)| {
                    k.template_params.iter().any(|t| t.is_type && t.name == *p)
                });
                if types
                    .iter()
                    .any(|(p, _)| super::find_word(cond_text, p, 0).is_some())
                {
                    return trait_value(cond_text, &types, &aliases);
                }
                if !values
                    .iter()
                    .any(|(p, _)| super::find_word(cond_text, p, 0).is_some())
                {
                    return None;
                }
                // The value parameters as the launch binds them; any other name in the
                // condition leaves it unknown.
                let env = Env {
                    macros: values
                        .into_iter()
                        .map(|(p, v)| (p, Macro::Body(v)))
                        .collect(),
                    absent: false,
                };
                match eval(&env, cond_text, 0) {
                    Val::Known(v) => Some(v != 0),
                    Val::Unknown => None,
                }
            });
            let Some(first) = values.next().flatten() else {
                continue;
            };
            let rest: Vec<Option<bool>> = values.collect();
            if rest.contains(&None) {
                continue;
            }
            // Instantiations that take both branches compile both.
            let (value, other_value) = if rest.iter().all(|v| *v == Some(first)) {
                (Tri::of(first), Tri::of(!first))
            } else {
                (Tri::True, Tri::True)
            };
            let guard = format!("if constexpr ({})", cond_text.trim());
            out.push(Region {
                range: c.then,
                state: value,
                guard: guard.clone(),
            });
            if let Some(other) = c.otherwise {
                out.push(Region {
                    range: other,
                    state: other_value,
                    guard: format!("else of {guard}"),
                });
            }
        }
    }
    out
}

/// The value of an `if constexpr` condition on type traits with the type parameters
/// bound as `inst` says; `None` when something in it is not decided by them.
fn trait_value(
    cond: &str,
    inst: &[(String, String)],
    aliases: &[(String, String)],
) -> Option<bool> {
    if !inst
        .iter()
        .any(|(p, _)| super::find_word(cond, p, 0).is_some())
    {
        return None;
    }
    // A type as compared: parameters bound, aliases followed, qualifiers dropped.
    let resolve = |t: &str| -> String {
        let words: Vec<&str> = t
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "typename"))
            .collect();
        let mut t = words.join(" ");
        if let Some((_, v)) = inst.iter().find(|(p, _)| *p == t) {
            t = v.clone();
        }
        for _ in 0..4 {
            match aliases.iter().find(|(a, _)| *a == t) {
                Some((_, v)) => t = v.clone(),
                None => break,
            }
        }
        let t = t.trim_start_matches("::").to_string();
        match t.as_str() {
            "half" => "__half".into(),
            "half2" => "__half2".into(),
            "nv_bfloat16" => "__nv_bfloat16".into(),
            "nv_bfloat162" => "__nv_bfloat162".into(),
            _ => t,
        }
    };
    // Types a comparison can tell apart by name: builtins and CUDA's own.
    let known = |t: &str| kernaut_syntax::type_size(t).is_some();
    let mut out = String::new();
    let mut rest = cond;
    while !rest.is_empty() {
        if let Some(i) = rest.find("is_same") {
            let head = &rest[..i];
            // `std::`, `cuda::std::` before the trait.
            let head = head
                .trim_end_matches("::")
                .trim_end_matches("std")
                .trim_end_matches("::");
            let head = head.trim_end_matches("cuda");
            out.push_str(head);
            let after = rest[i + "is_same".len()..]
                .trim_start_matches("_v")
                .trim_start();
            let after = after.strip_prefix('<')?;
            let close = matching_angle(after)?;
            let args = kernaut_syntax::split_template_args(&format!("<{}>", &after[..close]));
            let [a, b] = args.as_slice() else {
                return None;
            };
            let (a, b) = (resolve(a), resolve(b));
            let same = if a == b {
                true
            } else if known(&a) && known(&b) {
                false
            } else {
                return None;
            };
            out.push_str(if same { "1" } else { "0" });
            let mut tail = &after[close + 1..];
            tail = tail.trim_start();
            tail = tail
                .strip_prefix("::value")
                .or_else(|| tail.strip_prefix("{}"))
                .or_else(|| tail.strip_prefix("()"))
                .unwrap_or(tail);
            rest = tail;
        } else if let Some(i) = rest.find("sizeof") {
            out.push_str(&rest[..i]);
            let after = rest[i + "sizeof".len()..].trim_start().strip_prefix('(')?;
            let close = after.find(')')?;
            let size = kernaut_syntax::type_size(&resolve(&after[..close]))?;
            out.push_str(&size.to_string());
            rest = &after[close + 1..];
        } else {
            out.push_str(rest);
            rest = "";
        }
    }
    // Only numbers and operators are left to evaluate.
    if out
        .chars()
        .any(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
    {
        return None;
    }
    match eval(&Env::default(), &out, 0) {
        Val::Known(v) => Some(v != 0),
        Val::Unknown => None,
    }
}

/// The index of the `>` that closes a template argument list whose `<` is just before
/// `s`.
fn matching_angle(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            '>' if depth == 0 => return Some(i),
            '>' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// One directive: its word (`if`, `define`), the rest with comments and line
/// continuations removed, and where its lines start and end.
struct Directive {
    word: String,
    rest: String,
    start: usize,
    end: usize,
}

fn directives(text: &str) -> Vec<Directive> {
    let mut out = Vec::new();
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(first) = lines.next() {
        let start = offset;
        offset += first.len();
        let Some(d) = first.trim_start().strip_prefix('#') else {
            continue;
        };
        let mut directive = d.to_string();
        while directive.trim_end().ends_with('\\') {
            let Some(next) = lines.next() else { break };
            offset += next.len();
            let cut = directive.trim_end().len() - 1;
            directive.truncate(cut);
            directive.push(' ');
            directive.push_str(next);
        }
        let directive = strip_comments(&directive);
        let d = directive.trim_start();
        let word: String = d.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        let rest = d[word.len()..].trim().to_string();
        out.push(Directive {
            word,
            rest,
            start,
            end: offset,
        });
    }
    out
}

/// `#ifndef X` (or `#if !defined(X)`) directly followed by `#define X`.
fn is_include_guard(d: &Directive, next: Option<&Directive>) -> bool {
    let name = match d.word.as_str() {
        "ifndef" => ident_prefix(&d.rest),
        "if" => {
            let r: String = d.rest.chars().filter(|c| !c.is_whitespace()).collect();
            let Some(inner) = r.strip_prefix("!defined") else {
                return false;
            };
            let inner = inner.trim_start_matches('(').trim_end_matches(')');
            if inner.is_empty() || !inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return false;
            }
            inner.to_string()
        }
        _ => return false,
    };
    next.is_some_and(|n| n.word == "define" && ident_prefix(&n.rest) == name)
}

fn ident_prefix(s: &str) -> String {
    s.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// `#define NAME body` / `#define NAME(a, b) body` → (name, function-like, body).
fn definition(rest: &str) -> (String, bool, String) {
    let rest = rest.trim_start();
    let name = ident_prefix(rest);
    let after = &rest[name.len()..];
    let is_function = after.starts_with('(');
    (name, is_function, after.trim().to_string())
}

fn shown(word: &str, rest: &str) -> String {
    format!(
        "#{word} {}",
        rest.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// The condition of an `#if`/`#ifdef`/`#ifndef`/`#elif…` for the target.
fn condition(env: &Env, word: &str, rest: &str) -> Tri {
    match word {
        "ifdef" | "elifdef" => env.defined(&ident_prefix(rest)),
        "ifndef" | "elifndef" => env.defined(&ident_prefix(rest)).not(),
        _ => match eval(env, rest, 0) {
            Val::Known(v) => Tri::of(v != 0),
            Val::Unknown => Tri::Unknown,
        },
    }
}

/// A value in `#if`: a number, or not known.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Known(i64),
    Unknown,
}

impl Val {
    fn truth(self) -> Tri {
        match self {
            Val::Known(v) => Tri::of(v != 0),
            Val::Unknown => Tri::Unknown,
        }
    }

    fn of_tri(t: Tri) -> Val {
        match t {
            Tri::True => Val::Known(1),
            Tri::False => Val::Known(0),
            Tri::Unknown => Val::Unknown,
        }
    }
}

fn eval(env: &Env, text: &str, depth: usize) -> Val {
    if depth > 8 {
        return Val::Unknown;
    }
    let tokens = tokens(text);
    let mut p = Parser {
        t: &tokens,
        i: 0,
        env,
        depth,
    };
    match p.or() {
        Some(v) if p.i == tokens.len() => v,
        _ => Val::Unknown,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(i64),
    Op(&'static str),
}

fn tokens(s: &str) -> Vec<Tok> {
    const OPS: &[&str] = &[
        "&&", "||", ">=", "<=", "==", "!=", "<<", ">>", "!", "(", ")", ">", "<", "+", "-", "*",
        "/", "%", "?", ":", "&", "|", "^", "~", ",",
    ];
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let digits = s[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let n = if let Some(hex) = digits.strip_prefix("0x").or(digits.strip_prefix("0X")) {
                i64::from_str_radix(hex, 16).ok()
            } else {
                digits.parse().ok()
            };
            match n {
                Some(n) => out.push(Tok::Num(n)),
                None => out.push(Tok::Op("#")),
            }
            continue;
        }
        for op in OPS {
            if s[i..].starts_with(op) {
                out.push(Tok::Op(op));
                i += op.len();
                continue 'outer;
            }
        }
        out.push(Tok::Op("#"));
        i += 1;
    }
    out
}

struct Parser<'t, 'e> {
    t: &'t [Tok],
    i: usize,
    env: &'e Env,
    depth: usize,
}

impl Parser<'_, '_> {
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.t.get(self.i), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.t.get(self.i) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn or(&mut self) -> Option<Val> {
        let mut v = self.and()?;
        while self.eat("||") {
            let r = self.and()?;
            v = Val::of_tri(v.truth().max(r.truth()));
        }
        Some(v)
    }

    fn and(&mut self) -> Option<Val> {
        let mut v = self.compare()?;
        while self.eat("&&") {
            let r = self.compare()?;
            v = Val::of_tri(v.truth().min(r.truth()));
        }
        Some(v)
    }

    fn compare(&mut self) -> Option<Val> {
        let mut v = self.additive()?;
        while let Some(op) = self
            .peek_op()
            .filter(|o| matches!(*o, ">=" | "<=" | ">" | "<" | "==" | "!="))
        {
            self.i += 1;
            let r = self.additive()?;
            v = match (v, r) {
                (Val::Known(a), Val::Known(b)) => Val::Known(i64::from(match op {
                    ">=" => a >= b,
                    "<=" => a <= b,
                    ">" => a > b,
                    "<" => a < b,
                    "==" => a == b,
                    _ => a != b,
                })),
                _ => Val::Unknown,
            };
        }
        Some(v)
    }

    fn additive(&mut self) -> Option<Val> {
        let mut v = self.unary()?;
        while let Some(op) = self
            .peek_op()
            .filter(|o| matches!(*o, "+" | "-" | "*" | "/" | "%"))
        {
            self.i += 1;
            let r = self.unary()?;
            v = match (v, r) {
                (Val::Known(a), Val::Known(b)) => match op {
                    "+" => Val::Known(a.wrapping_add(b)),
                    "-" => Val::Known(a.wrapping_sub(b)),
                    "*" => Val::Known(a.wrapping_mul(b)),
                    "/" if b != 0 => Val::Known(a / b),
                    "%" if b != 0 => Val::Known(a % b),
                    _ => Val::Unknown,
                },
                _ => Val::Unknown,
            };
        }
        Some(v)
    }

    fn unary(&mut self) -> Option<Val> {
        if self.eat("!") {
            return Some(Val::of_tri(self.unary()?.truth().not()));
        }
        if self.eat("-") {
            return Some(match self.unary()? {
                Val::Known(v) => Val::Known(-v),
                Val::Unknown => Val::Unknown,
            });
        }
        if self.eat("(") {
            let v = self.or()?;
            return self.eat(")").then_some(v);
        }
        let tok = self.t.get(self.i)?.clone();
        self.i += 1;
        match tok {
            Tok::Num(n) => Some(Val::Known(n)),
            Tok::Ident(name) if name == "defined" => {
                let paren = self.eat("(");
                let Some(Tok::Ident(name)) = self.t.get(self.i).cloned() else {
                    return None;
                };
                self.i += 1;
                if paren && !self.eat(")") {
                    return None;
                }
                Some(Val::of_tri(self.env.defined(&name)))
            }
            Tok::Ident(name) => {
                // A function-like macro's call in `#if`: its arguments are skipped and
                // the value is not known.
                if matches!(self.t.get(self.i), Some(Tok::Op("("))) {
                    let mut depth = 0usize;
                    while let Some(t) = self.t.get(self.i) {
                        self.i += 1;
                        match t {
                            Tok::Op("(") => depth += 1,
                            Tok::Op(")") => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    return Some(Val::Unknown);
                }
                Some(match self.env.macros.get(&name) {
                    Some(Macro::Body(body)) if body.is_empty() => Val::Unknown,
                    Some(Macro::Body(body)) => eval(self.env, body, self.depth + 1),
                    Some(_) => Val::Unknown,
                    None => match self.env.defined(&name) {
                        // A name nothing defines reads as 0, where it is known not to be
                        // defined (nvcc's own macros).
                        Tri::False => Val::Known(0),
                        _ => Val::Unknown,
                    },
                })
            }
            Tok::Op(_) => None,
        }
    }
}

/// A `<nv/target>` query for the target.
fn target_query(q: &str, t: &Target) -> Tri {
    let q = q.trim();
    for prefix in ["NV_PROVIDES_SM_", "NV_IS_EXACTLY_SM_", "NV_HAS_FEATURE_SM_"] {
        let Some(rest) = q.strip_prefix(prefix) else {
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<u32>() else {
            return Tri::Unknown;
        };
        let value = n * 10;
        return Tri::of(match prefix {
            "NV_PROVIDES_SM_" => t.cuda_arch() >= value,
            "NV_IS_EXACTLY_SM_" => t.cuda_arch() == value,
            _ => t.cuda_arch() == value && t.variant != Variant::Generic,
        });
    }
    match q {
        "NV_IS_DEVICE" | "NV_ANY_TARGET" => Tri::True,
        "NV_IS_HOST" | "NV_NO_TARGET" => Tri::False,
        _ => Tri::Unknown,
    }
}

/// One branch of an `NV_IF_TARGET`, `NV_IF_ELSE_TARGET` or `NV_DISPATCH_TARGET`: its
/// query, its statements, and the queries of the branches before it.
struct NvBranch {
    query: Option<TextRange>,
    earlier: Vec<TextRange>,
    branch: TextRange,
}

fn nv_branches(text: &str) -> Vec<NvBranch> {
    let mut out = Vec::new();
    if !text.contains("NV_") {
        return out;
    }
    for name in ["NV_IF_TARGET", "NV_IF_ELSE_TARGET", "NV_DISPATCH_TARGET"] {
        let mut from = 0;
        while let Some(at) = super::find_word(text, name, from) {
            from = at + name.len();
            let after = text[from..].trim_start();
            if !after.starts_with('(') {
                continue;
            }
            let open = text.len() - after.len();
            let Some(args) = split_args(text, open) else {
                continue;
            };
            let pairs = if name == "NV_DISPATCH_TARGET" {
                args.chunks(2).collect::<Vec<_>>()
            } else {
                vec![&args[..args.len().min(2)]]
            };
            let mut earlier = Vec::new();
            for pair in pairs {
                let [q, branch] = pair else { continue };
                out.push(NvBranch {
                    query: Some(q.clone()),
                    earlier: earlier.clone(),
                    branch: branch.clone(),
                });
                earlier.push(q.clone());
            }
            if name != "NV_DISPATCH_TARGET" && args.len() >= 3 {
                out.push(NvBranch {
                    query: None,
                    earlier,
                    branch: args[2].clone(),
                });
            }
        }
    }
    out
}

/// The branches of every `NV_IF_TARGET`, `NV_IF_ELSE_TARGET` and `NV_DISPATCH_TARGET`,
/// with their state for the target.
fn target_macro_regions(text: &str, t: &Target) -> Vec<Region> {
    nv_branches(text)
        .into_iter()
        .map(|b| {
            let taken = b
                .earlier
                .iter()
                .map(|q| target_query(&text[q.clone()], t))
                .fold(Tri::False, Tri::max);
            let (state, guard) = match &b.query {
                Some(q) => (
                    taken.not().min(target_query(&text[q.clone()], t)),
                    text[q.clone()].trim().to_string(),
                ),
                None => (
                    taken.not(),
                    format!(
                        "else of {}",
                        b.earlier.first().map_or("", |q| text[q.clone()].trim())
                    ),
                ),
            };
            Region {
                range: b.branch,
                state,
                guard,
            }
        })
        .collect()
}

/// Whether a name or condition is about the architecture or the toolkit version.
pub fn mentions_arch(cond: &str) -> bool {
    let c = cond.to_ascii_uppercase();
    let sm_digit = c
        .match_indices("SM")
        .any(|(i, _)| c[i + 2..].starts_with(|ch: char| ch.is_ascii_digit() || ch == '_'));
    c.contains("ARCH")
        || sm_digit
        || c.contains("CUDART_VERSION")
        || c.contains("CUDACC_VER")
        || c.contains("CUDA_VERSION")
}

/// The ranges of the top-level arguments of the parenthesised list opening at `open`.
pub fn split_args(text: &str, open: usize) -> Option<Vec<TextRange>> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut start = open + 1;
    let mut out = Vec::new();
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    out.push(start..i);
                    return Some(out);
                }
            }
            b',' if depth == 1 => {
                out.push(start..i);
                start = i + 1;
            }
            b'"' | b'\'' => {
                let quote = b[i];
                i += 1;
                while i < b.len() && b[i] != quote {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state of the line holding `marker` for each target.
    fn states(text: &str, targets: &[&str], defines: &[(&str, &str)], marker: &str) -> String {
        let targets: Vec<Target> = targets.iter().map(|t| Target::parse(t).unwrap()).collect();
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let g = TargetGuards::scan(&SourceFile::parse(text), &targets, &defines, &[]);
        let at = text.find(marker).unwrap() + marker.len() - 1;
        targets
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{t}:{:?}", g.at(i, at).0))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn arch_comparisons_per_target() {
        let text = "#if __CUDA_ARCH__ >= 900\nwgmma();\n#else\nmma();\n#endif\n";
        assert_eq!(
            states(text, &["sm_80", "sm_90a"], &[], "wgmma"),
            "sm_80:False sm_90a:True"
        );
        assert_eq!(
            states(text, &["sm_80", "sm_90a"], &[], "\nmma()"),
            "sm_80:True sm_90a:False"
        );
        let host = "#ifndef __CUDA_ARCH__\nhost();\n#endif\n";
        assert_eq!(states(host, &["sm_80"], &[], "host"), "sm_80:False");
    }

    #[test]
    fn feature_and_family_macros() {
        let text = "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\nwgmma();\n#endif\n#ifdef __CUDA_ARCH_SPECIFIC__\nspecific();\n#endif\n#if __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000\nfam();\n#endif\n";
        assert_eq!(
            states(text, &["sm_90", "sm_90a"], &[], "wgmma"),
            "sm_90:False sm_90a:True"
        );
        assert_eq!(
            states(text, &["sm_90", "sm_100a"], &[], "specific"),
            "sm_90:False sm_100a:True"
        );
        assert_eq!(
            states(text, &["sm_90a", "sm_100f"], &[], "fam"),
            "sm_90a:False sm_100f:True"
        );
    }

    #[test]
    fn build_macros_known_and_unknown_macros_unknown() {
        let text = "#ifdef MYLIB_HOPPER\nwgmma();\n#endif\n#if defined(USE_ROCM)\nrocm();\n#else\ncuda();\n#endif\n";
        assert_eq!(
            states(text, &["sm_90a"], &[("MYLIB_HOPPER", "1")], "wgmma"),
            "sm_90a:True"
        );
        assert_eq!(states(text, &["sm_90a"], &[], "wgmma"), "sm_90a:Unknown");
        assert_eq!(states(text, &["sm_90a"], &[], "cuda()"), "sm_90a:Unknown");
        assert_eq!(states(text, &["sm_90a"], &[], "rocm()"), "sm_90a:Unknown");
    }

    #[test]
    fn file_defines_follow_the_target_and_include_guards_hold() {
        let text = "#ifndef LIB_H\n#define LIB_H\n#if __CUDA_ARCH__ >= 900\n#define HAS_TMA 1\n#else\n#define HAS_TMA 0\n#endif\n#if HAS_TMA\ntma();\n#endif\n#endif\n";
        assert_eq!(
            states(text, &["sm_80", "sm_90"], &[], "tma()"),
            "sm_80:False sm_90:True"
        );
    }

    #[test]
    fn if_constexpr_on_the_architecture() {
        let text = "__global__ void k() {\n  constexpr bool bw = __CUDA_ARCH__ >= 1000;\n  if constexpr (__CUDA_ARCH__ >= 1000) {\n    tma();\n  } else {\n    plain();\n  }\n  if constexpr (bw) { bwonly(); }\n  if constexpr (is_bw<__CUDA_ARCH__>()) { trait(); }\n}\n";
        assert_eq!(
            states(text, &["sm_80", "sm_100a"], &[], "tma"),
            "sm_80:False sm_100a:True"
        );
        assert_eq!(
            states(text, &["sm_80", "sm_100a"], &[], "plain"),
            "sm_80:True sm_100a:False"
        );
        assert_eq!(
            states(text, &["sm_80", "sm_100a"], &[], "bwonly"),
            "sm_80:False sm_100a:True"
        );
        assert_eq!(
            states(text, &["sm_80", "sm_100a"], &[], "trait"),
            "sm_80:Unknown sm_100a:Unknown"
        );
    }

    #[test]
    fn nv_target_macros() {
        let text = "NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (fast();), (slow();));\nNV_IF_TARGET(NV_HAS_FEATURE_SM_90a, (wgmma();));\n";
        assert_eq!(
            states(text, &["sm_80", "sm_90", "sm_90a"], &[], "fast"),
            "sm_80:False sm_90:True sm_90a:True"
        );
        assert_eq!(
            states(text, &["sm_80", "sm_90"], &[], "slow"),
            "sm_80:True sm_90:False"
        );
        assert_eq!(
            states(text, &["sm_90", "sm_90a"], &[], "wgmma"),
            "sm_90:False sm_90a:True"
        );
    }
}
