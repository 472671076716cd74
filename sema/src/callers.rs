//! Device functions under the kernels that call them.
//!
//! A `__device__` helper has no launch of its own: its block, and the values of its
//! parameters, are those of the kernel that calls it. [`contexts_of_kernel`] follows a
//! kernel's calls (through further device functions, also into the file's quoted
//! headers) and gives each reached function a [`CallContext`]: the kernel, the call it
//! was reached through, and what each parameter holds at the call, in the kernel's own
//! terms: a scalar as the lowered argument (`threadIdx.y`, `row * N`), a pointer as the
//! `__shared__` array or the kernel's global pointer it points into, with the byte
//! offset the argument adds (`&tile[r * 32]`, `out + y`).
//!
//! [`CallContext::bound_accesses`] then gives the function's accesses as they run in that
//! context: its own `__shared__` arrays and its pointer parameters' subscripts, each with
//! its byte offset rewritten over the kernel's values, so that the bank and sector models
//! evaluate them under the kernel's launch exactly as they evaluate the kernel's own
//! accesses. A parameter whose argument the model cannot read leaves the offsets that
//! use it unknown, and the models say nothing about them.
//!
//! This is part of the semantic layer (it reads syntax facts and the model's active
//! lanes only); the rules, the kernel report and the hover use it.

use kernaut_syntax::{
    short_name, type_size, AccessData, BinOp, Function, IndexExpr, SharedAccess, SourceFile,
    TextRange,
};

use crate::analysis::Analysis;
use crate::model::{launch_config, ActiveLanes, BankAnalysis, LaunchConfig, Scope};

/// Calls followed below a kernel.
const MAX_DEPTH: usize = 4;
/// Contexts kept per kernel (a kernel calling a helper in a loop of many call sites).
const MAX_CONTEXTS: usize = 64;

/// What a pointer parameter points into in a call context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pointee {
    /// A `__shared__` array of the kernel (or the `extern __shared__` buffer a carve
    /// points into), `offset` bytes from its start.
    Shared {
        /// The `__shared__` array.
        root: String,
        /// The byte offset the arguments add.
        offset: IndexExpr,
    },
    /// Global memory through the kernel's pointer parameter `param`, `offset` bytes on.
    Global {
        /// The kernel's parameter.
        param: String,
        /// The byte offset the arguments add.
        offset: IndexExpr,
    },
}

/// One way a device function runs: reached from a kernel through a chain of calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallContext {
    /// The kernel.
    pub kernel: String,
    /// The file that defines the kernel.
    pub kernel_path: String,
    /// The device function reached.
    pub function: String,
    /// The file that defines it (the kernel's, or one of its headers).
    pub function_path: String,
    /// The range of the function's definition in its file.
    pub function_range: TextRange,
    /// The call in the kernel's body the chain starts with.
    pub call_range: TextRange,
    /// The functions called on the way, the kernel's callee first, this one last.
    pub chain: Vec<String>,
    /// The scalar parameters and their values in the kernel's terms.
    scalars: Vec<(String, IndexExpr)>,
    /// The pointer parameters and what they point into.
    pointers: Vec<(String, Pointee)>,
    /// The lanes of warp 0 that make the calls (the guards around each call of the chain).
    pub lanes: ActiveLanes,
}

impl CallContext {
    /// `e` (an expression of the function) with its parameters replaced by their values
    /// at the call; a pointer parameter used as a value is unknown.
    pub fn bind(&self, e: &IndexExpr) -> IndexExpr {
        e.substitute(&|name| {
            if let Some((_, v)) = self.scalars.iter().find(|(n, _)| n == name) {
                return Some(v.clone());
            }
            self.pointers
                .iter()
                .any(|(n, _)| n == name)
                .then(|| IndexExpr::Unknown(format!("`{name}` is a pointer")))
        })
    }

    /// What pointer parameter `name` points into, when the calls show it.
    pub fn pointee(&self, name: &str) -> Option<&Pointee> {
        self.pointers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
    }

    /// How the function is reached, in words: "`column` as `transpose` calls it at line
    /// 21", or "`put` as `k` reaches it through `put_row` at line 8".
    pub fn phrase(&self, call_line: u32) -> String {
        match &self.chain[..self.chain.len().saturating_sub(1)] {
            [] => format!(
                "`{}` as `{}` calls it at line {call_line}",
                self.function, self.kernel
            ),
            via => format!(
                "`{}` as `{}` reaches it through {} at line {call_line}",
                self.function,
                self.kernel,
                via.iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(" → ")
            ),
        }
    }

    /// The function's accesses as they run in this context, in document order: `shared`
    /// (its `__shared__` arrays, and its pointer parameters' subscripts where the
    /// pointer is into a `__shared__` array) and `global` (its pointer parameters'
    /// subscripts where the pointer is a global one of the kernel). `shared_all` and
    /// `global_all` are the accesses of the function's file.
    pub fn bound_accesses(
        &self,
        shared_all: &[SharedAccess],
        global_all: &[SharedAccess],
    ) -> (Vec<SharedAccess>, Vec<SharedAccess>) {
        let inside = |a: &&SharedAccess| {
            a.function.as_deref() == Some(self.function.as_str())
                && self.function_range.start <= a.range.start
                && a.range.end <= self.function_range.end
        };
        let mut shared: Vec<SharedAccess> = shared_all
            .iter()
            .filter(inside)
            .map(|a| rebuilt(a, a.root.clone(), self.bind(&a.byte_offset)))
            .collect();
        let mut global = Vec::new();
        for a in global_all.iter().filter(inside) {
            let Some(p) = self.pointee(&a.root) else {
                continue;
            };
            let bound = self.bind(&a.byte_offset);
            match p {
                Pointee::Shared { root, offset } => shared.push(rebuilt(
                    a,
                    root.clone(),
                    IndexExpr::binary(offset.clone(), BinOp::Add, bound),
                )),
                Pointee::Global { param, offset } => global.push(rebuilt(
                    a,
                    param.clone(),
                    IndexExpr::binary(offset.clone(), BinOp::Add, bound),
                )),
            }
        }
        shared.sort_by_key(|a| a.range.start);
        (shared, global)
    }
}

/// `a` with its root and byte offset replaced.
pub fn rebuilt(a: &SharedAccess, root: String, byte_offset: IndexExpr) -> SharedAccess {
    SharedAccess::new(
        a.range.clone(),
        AccessData {
            array: a.array.clone(),
            root,
            kind: a.kind,
            index_texts: a.index_texts.clone(),
            indices: a.indices.clone(),
            element_size: a.element_size,
            width: a.width,
            cast_type: a.cast_type.clone(),
            byte_offset,
            function: a.function.clone(),
        },
    )
}

/// The size of what a pointer type (`const float* __restrict__`) points at.
fn pointee_size(ty: &str) -> Option<u64> {
    if ty.matches('*').count() != 1 || ty.contains(['&', '[', '(']) {
        return None;
    }
    let pointee: Vec<&str> = ty
        .split(|c: char| c == '*' || c.is_whitespace())
        .filter(|w| {
            !w.is_empty()
                && !matches!(
                    *w,
                    "const" | "volatile" | "__restrict__" | "__restrict" | "restrict"
                )
        })
        .collect();
    type_size(&pointee.join(" ")).filter(|_| !pointee.is_empty())
}

/// Whether a parameter type is a plain value the index model can carry (an integer).
fn is_scalar(ty: &str) -> bool {
    !ty.contains(['*', '&', '[', '<'])
        && ty.split_whitespace().any(|w| {
            matches!(
                w,
                "int"
                    | "unsigned"
                    | "long"
                    | "short"
                    | "size_t"
                    | "int32_t"
                    | "uint32_t"
                    | "int64_t"
                    | "uint64_t"
                    | "char"
            )
        })
}

/// A file the calls may lead into: its path and its parse.
#[derive(Clone, Copy)]
pub struct CalleeFile<'a> {
    /// The path.
    pub path: &'a str,
    /// The file.
    pub file: &'a SourceFile,
}

/// What a caller's parameters hold (empty for the kernel, whose parameters are
/// themselves).
#[derive(Clone, Default)]
struct Binding {
    scalars: Vec<(String, IndexExpr)>,
    pointers: Vec<(String, Pointee)>,
}

impl Binding {
    fn bind(&self, e: &IndexExpr, is_kernel: bool) -> IndexExpr {
        if is_kernel {
            return e.clone();
        }
        e.substitute(&|name| {
            if let Some((_, v)) = self.scalars.iter().find(|(n, _)| n == name) {
                return Some(v.clone());
            }
            self.pointers
                .iter()
                .any(|(n, _)| n == name)
                .then(|| IndexExpr::Unknown(format!("`{name}` is a pointer")))
        })
    }
}

/// The device functions of a kernel's file and its headers, by short name: where a
/// kernel's calls may lead.
pub struct Callees<'a> {
    /// The kernel's file first, then its headers.
    files: Vec<CalleeFile<'a>>,
    by_name: rustc_hash::FxHashMap<&'a str, Vec<(CalleeFile<'a>, &'a Function)>>,
}

impl<'a> Callees<'a> {
    /// The device functions with a body of `files` (the kernel's file first).
    pub fn new(files: Vec<CalleeFile<'a>>) -> Callees<'a> {
        let mut by_name: rustc_hash::FxHashMap<&str, Vec<(CalleeFile<'_>, &Function)>> =
            rustc_hash::FxHashMap::default();
        for f in &files {
            for d in &f.file.facts().device_functions {
                if !d.is_kernel && d.body_range.is_some() {
                    by_name
                        .entry(short_name(&d.name))
                        .or_default()
                        .push((*f, d));
                }
            }
        }
        Callees { files, by_name }
    }

    /// The contexts of the device functions `kernel` (defined in the first file)
    /// reaches: a context per call chain, the kernel's calls first, at most
    /// [`MAX_DEPTH`] calls deep and [`MAX_CONTEXTS`] in all. A callee is looked up by
    /// its name among the device functions that take as many parameters as the call
    /// passes (the kernel's file first). `shape` is the kernel's block, for the guards
    /// around the calls.
    pub fn contexts_of_kernel(
        &self,
        kernel: &Function,
        shape: [Option<i64>; 3],
    ) -> Vec<CallContext> {
        let Some(first) = self.files.first() else {
            return Vec::new();
        };
        if self.by_name.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // (caller's file, caller, its binding, chain so far, the kernel's call, lanes)
        type Todo<'f> = (
            CalleeFile<'f>,
            &'f Function,
            Binding,
            Vec<String>,
            Option<TextRange>,
            ActiveLanes,
        );
        let mut todo: Vec<Todo<'_>> = vec![(
            *first,
            kernel,
            Binding::default(),
            Vec::new(),
            None,
            ActiveLanes::All,
        )];
        while let Some((cf, caller, binding, chain, kernel_call, lanes)) = todo.pop() {
            if chain.len() >= MAX_DEPTH || out.len() >= MAX_CONTEXTS {
                continue;
            }
            let Some(body) = caller.body_range.clone() else {
                continue;
            };
            let is_kernel = chain.is_empty();
            for c in cf.file.calls_in(body.start) {
                if !(body.start <= c.range.start && c.range.end <= body.end)
                    || c.kind == kernaut_syntax::SymbolKind::Ptx
                {
                    continue;
                }
                let name = short_name(&c.callee_text);
                if name.is_empty() || chain.iter().any(|f| short_name(f) == name) {
                    continue;
                }
                let Some(&(callee_file, callee)) = self
                    .by_name
                    .get(name)
                    .and_then(|v| v.iter().find(|(_, d)| d.params.len() == c.arg_ranges.len()))
                else {
                    continue;
                };
                let mut next = Binding::default();
                for (p, arg) in callee.params.iter().zip(&c.arg_ranges) {
                    if p.name.is_empty() {
                        continue;
                    }
                    if pointee_size(&p.ty).is_some() {
                        if let Some(pointee) =
                            pointee_of(cf, caller, &binding, is_kernel, arg, c.range.start)
                        {
                            next.pointers.push((p.name.clone(), pointee));
                        }
                    } else if is_scalar(&p.ty) {
                        let value = cf.file.lower_at(arg).map_or_else(
                            || IndexExpr::Unknown("the argument is not modelled".into()),
                            |v| binding.bind(&v, is_kernel),
                        );
                        next.scalars.push((p.name.clone(), value));
                    }
                }
                let here = crate::model::active_lanes(cf.file, c.range.start, shape);
                let lanes = combine(&lanes, here);
                let mut chain = chain.clone();
                chain.push(callee.name.clone());
                let kernel_call = kernel_call.clone().unwrap_or_else(|| c.range.clone());
                out.push(CallContext {
                    kernel: kernel.name.clone(),
                    kernel_path: first.path.to_string(),
                    function: callee.name.clone(),
                    function_path: callee_file.path.to_string(),
                    function_range: callee.range.clone(),
                    call_range: kernel_call.clone(),
                    chain: chain.clone(),
                    scalars: next.scalars.clone(),
                    pointers: next.pointers.clone(),
                    lanes: lanes.clone(),
                });
                todo.push((callee_file, callee, next, chain, Some(kernel_call), lanes));
            }
        }
        out.sort_by_key(|c| (c.call_range.start, c.chain.len()));
        out
    }
}

/// The contexts of the device functions the kernels of `scope`'s file reach inside
/// the file, each kernel's in the block its launches agree on.
pub fn contexts_in_file(scope: &Scope<'_>) -> Vec<CallContext> {
    let facts = scope.file.facts();
    if facts.device_functions.is_empty() {
        return Vec::new();
    }
    let callees = Callees::new(vec![CalleeFile {
        path: scope.path,
        file: scope.file,
    }]);
    facts
        .kernels
        .iter()
        .flat_map(|k| {
            callees.contexts_of_kernel(k, crate::model::launch_shape(scope, Some(&k.name)))
        })
        .collect()
}

/// The lanes that pass both the outer calls' guards and `here`.
pub fn combine(outer: &ActiveLanes, here: ActiveLanes) -> ActiveLanes {
    match (outer, here) {
        (ActiveLanes::Partial { .. }, _) => outer.clone(),
        (_, p @ ActiveLanes::Partial { .. }) => p,
        (ActiveLanes::DataDependent { .. }, _) => outer.clone(),
        (_, d @ ActiveLanes::DataDependent { .. }) => d,
        (ActiveLanes::All, h) => h,
        (o, ActiveLanes::All) => o.clone(),
        (
            ActiveLanes::Known {
                mask: a,
                condition,
                warp,
            },
            ActiveLanes::Known {
                mask: b, warp: w, ..
            },
        ) if *warp == w => ActiveLanes::Known {
            mask: a & b,
            condition: condition.clone(),
            warp: w,
        },
        // Lanes of different warps: part of a warp, which is not known.
        (ActiveLanes::Known { condition, .. }, ActiveLanes::Known { .. }) => ActiveLanes::Partial {
            condition: condition.clone(),
            runtime_bound: false,
        },
    }
}

/// What the pointer argument at `arg` of a call in `caller` points into.
fn pointee_of(
    cf: CalleeFile<'_>,
    caller: &Function,
    binding: &Binding,
    is_kernel: bool,
    arg: &TextRange,
    at: usize,
) -> Option<Pointee> {
    let (base, index) = cf.file.pointer_operand(arg)?;
    let index = binding.bind(&index, is_kernel);
    let facts = cf.file.facts();
    let scaled =
        |size: u64| IndexExpr::binary(index.clone(), BinOp::Mul, IndexExpr::Int(size as i64));
    // A pointer parameter of the caller: what it points into, moved on.
    if let Some(p) = caller.params.iter().find(|p| p.name == base) {
        let size = pointee_size(&p.ty)?;
        if is_kernel {
            if facts.shared_named(&base, at).is_some() {
                return None;
            }
            return Some(Pointee::Global {
                param: base,
                offset: scaled(size),
            });
        }
        let (_, outer) = binding.pointers.iter().find(|(n, _)| *n == base)?;
        return Some(match outer {
            Pointee::Shared { root, offset } => Pointee::Shared {
                root: root.clone(),
                offset: IndexExpr::binary(offset.clone(), BinOp::Add, scaled(size)),
            },
            Pointee::Global { param, offset } => Pointee::Global {
                param: param.clone(),
                offset: IndexExpr::binary(offset.clone(), BinOp::Add, scaled(size)),
            },
        });
    }
    // A pointer carved from the `extern __shared__` buffer at a constant offset.
    if let Some(c) = facts.carves.iter().rev().find(|c| {
        c.name == base && c.function.as_deref() == Some(caller.name.as_str()) && c.range.start < at
    }) {
        let offset = c.offset_bytes?;
        return Some(Pointee::Shared {
            root: c.root.clone(),
            offset: IndexExpr::binary(IndexExpr::Int(offset), BinOp::Add, scaled(c.element_size?)),
        });
    }
    // A `__shared__` array.
    let decl = facts.shared_named(&base, at)?;
    Some(Pointee::Shared {
        root: decl.name.clone(),
        offset: scaled(decl.element_size?),
    })
}

/// The files a kernel of `path` may call into: `path` and `headers`, the quoted headers
/// it includes that the host holds ([`header_paths`]), in include order.
pub fn callee_files<'a>(a: &'a Analysis, path: &'a str, headers: &[String]) -> Vec<CalleeFile<'a>> {
    let Some(data) = a.file(path) else {
        return Vec::new();
    };
    let mut out = vec![CalleeFile {
        path,
        file: &data.source,
    }];
    for header in headers {
        if let Some((p, d)) = a.files.get_key_value(header.as_str()) {
            out.push(CalleeFile {
                path: p.as_str(),
                file: &d.source,
            });
        }
    }
    out
}

/// The paths (as the host spells them) of the quoted headers `path` includes, that the
/// host holds.
pub fn header_paths(a: &Analysis, path: &str) -> Vec<String> {
    let dirs = a
        .builds
        .get(path)
        .map(|b| b.include_dirs.clone())
        .unwrap_or_default();
    let by_norm: rustc_hash::FxHashMap<String, &str> = a
        .files
        .keys()
        .map(|p| (crate::includes::normalize_path(p), p.as_str()))
        .collect();
    let mut text_of = |p: &str| -> Option<std::sync::Arc<str>> {
        let key = by_norm.get(&crate::includes::normalize_path(p))?;
        Some(std::sync::Arc::from(a.files.get(*key)?.source.text()))
    };
    crate::includes::include_closure_in(path, &dirs, &mut text_of)
        .into_iter()
        .filter_map(|(h, _)| by_norm.get(&h).map(|p| p.to_string()))
        .collect()
}

/// The contexts of every kernel of the host that reaches the device function defined at
/// `function_range` of `path`: the kernels of `path` and of the files that mention the
/// function's name.
pub fn contexts_of_function(a: &Analysis, path: &str, function: &Function) -> Vec<CallContext> {
    let name = short_name(&function.name);
    let mut out = Vec::new();
    for (p, data) in a.sorted_files(path) {
        if p != path && !data.source.text().contains(name) {
            continue;
        }
        let callees = Callees::new(callee_files(a, p, &header_paths(a, p)));
        let Some(scope) = Scope::of(a, p) else {
            continue;
        };
        for k in &data.facts().kernels {
            let shape = crate::model::launch_shape(&scope, Some(&k.name));
            out.extend(
                callees
                    .contexts_of_kernel(k, shape)
                    .into_iter()
                    .filter(|c| c.function_path == path && c.function_range == function.range),
            );
        }
    }
    out
}

/// The bank model of `access` (one of `all`, the function's shared accesses bound in
/// context `c`) under `launch`, the kernel's launch configuration; `scope` is the
/// function's file. An access the calls' guards leave to part of the warp is marked so,
/// as one under a guard of its own is.
pub fn bound_bank(
    scope: &Scope<'_>,
    launch: &LaunchConfig,
    c: &CallContext,
    all: &[SharedAccess],
    access: &SharedAccess,
) -> Option<BankAnalysis> {
    let bind = |e: &IndexExpr| c.bind(e);
    let mut b = crate::model::bank_with_args(scope, all, access, launch, Some(&bind))?;
    let conflicts = b.result.as_ref().is_ok_and(|r| r.conflict_degree >= 2);
    if c.lanes.is_partial() && conflicts {
        b.partial_warp = true;
    }
    // The function's own guards with its parameters at their values in this call
    // (`if (lane == __ffs(hit) - 1)` with `lane` the caller's `threadIdx.x % 32`).
    if conflicts && !b.partial_warp {
        let bind = |e: &IndexExpr| c.bind(e);
        let lanes = crate::model::active_lanes_bound(
            scope.file,
            access.range.start,
            launch.shape(),
            &[],
            Some(&bind),
        );
        b.partial_warp = lanes.is_partial();
    }
    if let ActiveLanes::DataDependent { condition } = &c.lanes {
        b.data_guard.get_or_insert_with(|| condition.clone());
    }
    Some(b)
}

/// [`bound_bank`] in a host snapshot, for features inside a query.
pub fn bank_in_context(
    a: &Analysis,
    c: &CallContext,
    all: &[SharedAccess],
    access: &SharedAccess,
) -> Option<BankAnalysis> {
    crate::analysis::guarded(|| {
        let kernel_scope = Scope::of(a, &c.kernel_path)?;
        let kernel = kernel_scope.file.facts().kernel(&c.kernel)?;
        let launch = launch_config(&kernel_scope, Some(kernel));
        let scope = Scope::of(a, &c.function_path)?;
        bound_bank(&scope, &launch, c, all, access)
    })
    .flatten()
}

/// Where context `c` runs its function, in words, as seen from the function's file:
/// "`column` as `transpose` calls it at line 21" (with the kernel's file named when it
/// is another).
pub fn place(a: &Analysis, c: &CallContext) -> String {
    let line = a
        .file(&c.kernel_path)
        .map_or(1, |d| d.line_of(c.call_range.start));
    let mut phrase = c.phrase(line);
    if c.kernel_path != c.function_path {
        let name = c
            .kernel_path
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&c.kernel_path);
        phrase = phrase.replace(&format!("at line {line}"), &format!("at {name}:{line}"));
    }
    phrase
}

/// The shared-memory access of a device function at `offset` of `path` as the kernels
/// of the host that call the function run it: the access bound in the context with the
/// worst conflict (the first on a tie), its bank model there, and where it runs, in
/// words. `None` when no kernel calls the function or no access of it into shared
/// memory is at `offset`.
pub fn shared_access_in_callers(
    a: &Analysis,
    path: &str,
    offset: usize,
) -> Option<(SharedAccess, BankAnalysis, String)> {
    let data = a.file(path)?;
    let facts = data.facts();
    let function = facts.function_at(offset).filter(|f| !f.is_kernel)?;
    // Only a function with a `__shared__` array or a pointer parameter can have one.
    let has_shared = facts
        .shared
        .iter()
        .any(|d| d.function.as_deref() == Some(function.name.as_str()));
    if !has_shared && !function.params.iter().any(|p| p.ty.contains('*')) {
        return None;
    }
    let contexts = contexts_of_function(a, path, function);
    if contexts.is_empty() {
        return None;
    }
    let globals = data.source.global_accesses();
    let mut best: Option<(u32, SharedAccess, BankAnalysis, String)> = None;
    for c in &contexts {
        let (bound, _) = c.bound_accesses(data.accesses(), &globals);
        let Some(access) = bound
            .iter()
            .filter(|x| x.range.contains(&offset) || (x.range.end == offset && offset > 0))
            .min_by_key(|x| x.range.len())
        else {
            continue;
        };
        let Some(bank) = bank_in_context(a, c, &bound, access) else {
            continue;
        };
        let degree = bank.result.as_ref().map_or(0, |r| r.conflict_degree);
        if best.as_ref().is_none_or(|(d, ..)| degree > *d) {
            best = Some((degree, access.clone(), bank, place(a, c)));
        }
    }
    best.map(|(_, access, bank, place)| (access, bank, place))
}
