//! Facts about a file: kernels and device functions, `__shared__` declarations and carved
//! pointers, launch sites, `cudaFuncSetAttribute` calls and folded constants.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use tree_sitter::Node;

use crate::consteval::Env;
use crate::expr::{from_node, from_text, Expr};
use crate::source::SourceFile;
use crate::types::type_size;
use crate::util::{
    children, copy_map, mostly_fresh, named_children, node_text, par_map, preorder, squash_ws,
    strip_template_args, Ancestry, NodeExt,
};
use crate::TextRange;

pub(crate) use crate::data::FactsIndex;
pub(crate) use crate::data::{ChunkCache, ChunkScan, OffsetCache};
pub use crate::data::{
    Constant, ConstantKind, FileFacts, FuncAttributeCall, Function, LaunchBounds, LaunchDim,
    LaunchSite, Param, SharedCarve, SharedDecl, TemplateCall, TemplateParam,
};

mod lookup;

pub(crate) use crate::declarator::{
    declarator_name, declarators, eaten_qualifier, function_declarator, function_name,
};

mod functions;
pub(crate) use functions::{function_facts, template_params};

mod constants;
pub(crate) use constants::{constant_decl, fold_u};

mod shared;
pub(crate) use shared::{carve, shared_decls, strip_casts};

mod launch;
pub use crate::util::split_template_args;
pub(crate) use launch::call_facts;

/// What one chunk's walk finds: the nodes the second step reads.
#[derive(Default)]
struct Walk<'t> {
    functions: Vec<Node<'t>>,
    shared: Vec<Node<'t>>,
    declarations: Vec<Node<'t>>,
    calls: Vec<Node<'t>>,
    has_function: bool,
}

/// Offsets `usize::MAX..usize::MAX` stand for the whole file in a chunk's relative ranges.
const FILE_SCOPE: TextRange = usize::MAX..usize::MAX;

/// Moves `r` from one base offset to another.
fn rebase(r: &mut TextRange, from: usize, to: usize) {
    if *r != FILE_SCOPE {
        *r = crate::util::move_range(r, from, to);
    }
}

impl FileFacts {
    /// Moves every range from base `from` to base `to` (ranges equal to `file` become
    /// [`FILE_SCOPE`] when `to` is 0 and back to `file` otherwise).
    fn rebased(mut self, from: usize, to: usize, file: &TextRange) -> FileFacts {
        let r = |x: &mut TextRange| {
            if to == 0 && x == file {
                *x = FILE_SCOPE;
            } else if *x == FILE_SCOPE {
                *x = file.clone();
            } else {
                rebase(x, from, to);
            }
        };
        for f in self.kernels.iter_mut().chain(&mut self.device_functions) {
            r(&mut f.name_range);
            r(&mut f.range);
            if let Some(b) = &mut f.body_range {
                r(b);
            }
            for p in &mut f.params {
                r(&mut p.range);
            }
            if let Some(lb) = &mut f.launch_bounds {
                r(&mut lb.range);
            }
        }
        for d in &mut self.shared {
            r(&mut d.name_range);
            r(&mut d.range);
        }
        for c in &mut self.carves {
            r(&mut c.range);
            r(&mut c.name_range);
            if let Some(o) = &mut c.offset_range {
                r(o);
            }
        }
        for l in &mut self.launches {
            r(&mut l.range);
            if let Some(w) = &mut l.written {
                r(&mut w.grid);
                w.args.iter_mut().for_each(&r);
            }
        }
        for a in &mut self.func_attributes {
            r(&mut a.range);
        }
        for c in &mut self.template_calls {
            r(&mut c.range);
        }
        for c in &mut self.constants {
            r(&mut c.range);
            if let Some(s) = &mut c.scope {
                r(s);
            }
        }
        for (_, _, s) in &mut self.namespace_aliases {
            r(s);
        }
        for (_, s) in &mut self.using_namespaces {
            r(s);
        }
        self.env.rebase(&mut |x| r(x));
        self.index = OnceLock::new();
        self
    }

    /// Appends `part` (a chunk's facts with offsets relative to the chunk) at `base`.
    fn append(&mut self, part: FileFacts) {
        self.kernels.extend(part.kernels);
        self.device_functions.extend(part.device_functions);
        self.shared.extend(part.shared);
        self.carves.extend(part.carves);
        self.launches.extend(part.launches);
        self.func_attributes.extend(part.func_attributes);
        self.template_calls.extend(part.template_calls);
        self.constants.extend(part.constants);
        self.namespace_aliases.extend(part.namespace_aliases);
        self.using_namespaces.extend(part.using_namespaces);
        self.macros.extend(part.macros);
        self.env.extend(part.env);
    }

    /// A hash of the file-wide inputs of every chunk: a chunk's derived facts and
    /// accesses are reused while it and this value are unchanged.
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

impl SourceFile {
    /// Facts about the whole file, computed on first use and kept until the next edit.
    pub fn facts(&self) -> &FileFacts {
        self.facts
            .get_or_init(|| crate::facts::compute(self).unwrap_or_default())
    }
}

/// Computes the facts of `file`, chunk by chunk (see [`crate::chunk`]), reusing what an
/// edit elsewhere left valid. Returns `None` only when there is no tree.
pub(crate) fn compute(file: &SourceFile) -> Option<FileFacts> {
    let chunks = file.chunk_views();
    if chunks.is_empty() {
        return None;
    }
    let text = file.text();
    let whole = 0..text.len();
    // Chunks' roots are small: their ancestor chains need no list of top-level nodes.
    let roots: Vec<Node> = chunks.iter().map(|c| c.root).collect();
    let tree = if roots.len() > 1 {
        Ancestry::few(roots, text.len())
    } else {
        Ancestry::new(roots, text.len())
    };
    let mut facts = FileFacts::default();

    // First step: each chunk's constants and scopes, which together make the file's
    // environment for folding. Chunks not seen before are walked in parallel.
    let fresh: Vec<usize> = (0..chunks.len())
        .filter(|&i| chunks[i].cache.scan.get().is_none())
        .collect();
    let fresh_walks = par_map(&fresh, |&i| {
        let c = &chunks[i];
        let mut local = FileFacts::default();
        let w = walk(&tree, c.root, text, &mut local);
        let scan = ChunkScan {
            global: global_key(&local, c.root, text),
            has_function: w.has_function,
            facts: local.rebased(c.start, 0, &whole),
        };
        (scan, w)
    });
    let mut walks: Vec<Option<Walk>> = (0..chunks.len()).map(|_| None).collect();
    for (&i, (scan, w)) in fresh.iter().zip(fresh_walks) {
        // Another snapshot may have filled it meanwhile: then its walk is as good.
        let _ = chunks[i].cache.scan.set(scan);
        walks[i] = Some(w);
    }
    // A fingerprint, not a table: equal fingerprints reuse cached facts, so it keeps the
    // standard library's SipHash (keyed the same in every run) rather than Fx, which is
    // built for speed on table keys, not for collision resistance; it runs once per edit (docs/ARCHITECTURE.md,
    // "Hashing").
    let mut global = std::collections::hash_map::DefaultHasher::new();
    for c in &chunks {
        if let Some(scan) = c.cache.scan.get() {
            scan.global.hash(&mut global);
        }
    }
    // Each chunk's part copied to the file's offsets (in parallel for a new file), then
    // moved in order.
    let parts = copy_map(&chunks, mostly_fresh(fresh.len(), chunks.len()), |c| {
        c.cache
            .scan
            .get()
            .map(|scan| scan.facts.clone().rebased(0, c.start, &whole))
    });
    for part in parts.into_iter().flatten() {
        facts.append(part);
    }
    // The headers' macros: after the file's own constants, so that the file's own
    // definitions win (the first definition of a name in a scope wins).
    if let Some(prelude) = file.prelude() {
        prelude.hash(&mut global);
        for m in prelude.macros.iter().filter(|m| m.params.is_none()) {
            if !m.body.is_empty() {
                facts.env.insert_macro(&m.name, from_text(&m.body));
            }
        }
        for (name, value) in &prelude.constants {
            facts.env.insert(name, None, from_text(value));
        }
        facts.prelude = Some(prelude.clone());
    }
    facts.fingerprint = global.finish();

    // Second step: functions, shared memory, launches and then carves (which may point
    // into a file-scope `extern __shared__` buffer of another chunk), folded with the
    // file's environment; kept per chunk while the environment is the same.
    let fingerprint = facts.fingerprint;
    let cached: Vec<Option<Arc<FileFacts>>> = chunks
        .iter()
        .map(|c| {
            let slot = c.cache.derived.lock().ok()?;
            slot.as_ref()
                .filter(|(key, _)| *key == fingerprint)
                .map(|(_, d)| d.clone())
        })
        .collect();
    // The chunks to derive, each with its walk: taken above for a chunk scanned afresh,
    // walked again here for one whose scan was kept but whose derived part was not.
    let pending: Vec<(usize, Option<Walk>)> = walks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| cached[*i].is_none())
        .collect();
    // One entry per pending chunk: its walk when it had none.
    let mut rewalked: Vec<Option<Walk>> = if pending.iter().any(|(_, w)| w.is_none()) {
        par_map(&pending, |(i, w)| {
            w.is_none()
                .then(|| walk(&tree, chunks[*i].root, text, &mut FileFacts::default()))
        })
    } else {
        Vec::new()
    };
    rewalked.resize_with(pending.len(), || None);
    let todo: Vec<(usize, Walk)> = pending
        .into_iter()
        .zip(rewalked)
        .filter_map(|((i, w), again)| Some((i, w.or(again)?)))
        .collect();
    let env = &facts.env;
    let derived = par_map(&todo, |(_, w)| {
        let mut out = FileFacts::default();
        derive(&tree, w, file, env, &mut out);
        out
    });
    // The file-scope `__shared__` buffers, for carves.
    let globals: Vec<SharedDecl> = cached
        .iter()
        .zip(&chunks)
        .flat_map(|(d, c)| {
            d.iter().flat_map(move |d| {
                d.shared
                    .iter()
                    .filter(|s| s.function.is_none())
                    .map(move |s| {
                        let mut s = s.clone();
                        rebase(&mut s.name_range, 0, c.start);
                        rebase(&mut s.range, 0, c.start);
                        s
                    })
            })
        })
        .chain(
            derived
                .iter()
                .flat_map(|d| d.shared.iter().filter(|s| s.function.is_none()).cloned()),
        )
        .collect();
    let mut derived = derived;
    let carved = par_map(
        &todo.iter().zip(&derived).collect::<Vec<_>>(),
        |((_, w), d)| {
            let mut out = FileFacts {
                shared: d.shared.clone(),
                ..FileFacts::default()
            };
            for decl in &w.declarations {
                carve(&tree, *decl, text, env, &globals, &mut out);
            }
            out.carves
        },
    );
    for (d, carves) in derived.iter_mut().zip(carved) {
        d.carves = carves;
    }
    let parallel = mostly_fresh(todo.len(), chunks.len());
    let cached_parts = copy_map(
        &chunks.iter().zip(&cached).collect::<Vec<_>>(),
        parallel,
        |(c, d)| {
            d.as_ref()
                .map(|d| FileFacts::clone(d).rebased(0, c.start, &whole))
        },
    );
    let mut derived = derived.into_iter();
    let mut todo = todo.into_iter();
    for (c, cached) in chunks.iter().zip(cached_parts) {
        match cached {
            Some(d) => facts.append(d),
            None => {
                let (Some(d), Some(_)) = (derived.next(), todo.next()) else {
                    continue;
                };
                let keep = d.clone().rebased(c.start, 0, &whole);
                if let Ok(mut slot) = c.cache.derived.lock() {
                    *slot = Some((fingerprint, Arc::new(keep)));
                }
                facts.append(d);
            }
        }
    }

    let env = facts.env.clone();
    for c in &mut facts.constants {
        let at = c.range.start;
        c.value = env.fold(&Expr::Name(c.name.clone()), at);
    }
    // A `const int tid = threadIdx.x;` is an alias, not a constant.
    facts
        .constants
        .retain(|c| c.kind != ConstantKind::Const || c.value.is_some());
    bind_callers(&mut facts);
    launch::macro_configurations(file, &mut facts);
    launch::macro_launches(file, &mut facts);
    launch::macro_func_attributes(file, &mut facts);
    Some(facts)
}

/// Binds the template parameters of the host function templates that launch kernels, at
/// the file's first call of each with foldable template arguments, and folds the
/// launches' unknown dimensions again with them.
fn bind_callers(facts: &mut FileFacts) {
    if facts.template_calls.is_empty() {
        return;
    }
    let env = &facts.env;
    let calls = &facts.template_calls;
    for l in facts.launches.iter_mut() {
        let Some(function) = l
            .function
            .as_deref()
            .filter(|_| !l.caller_params.is_empty())
        else {
            continue;
        };
        let short = crate::short_name(function);
        let bound = calls
            .iter()
            .filter(|c| crate::short_name(&c.name) == short)
            .map(|c| {
                l.caller_params
                    .iter()
                    .zip(&c.args)
                    .filter_map(|(p, a)| Some((p.clone(), env.fold(&from_text(a), c.range.start)?)))
                    .collect::<Vec<_>>()
            })
            .find(|b| !b.is_empty());
        let Some(bound) = bound else {
            continue;
        };
        let at = l.range.start;
        for dim in [&mut l.grid, &mut l.block] {
            if dim.value.is_some() || dim.parts.is_empty() {
                continue;
            }
            let mut v = [1i64; 3];
            let mut known = true;
            for (i, p) in dim.parts.iter().take(3).enumerate() {
                match env.fold_with(&from_text(p), at, &bound) {
                    Some(x) => v[i] = x,
                    None => known = false,
                }
            }
            if known {
                dim.value = Some(v);
            }
        }
        if let (None, Some(t)) = (l.shared_bytes, &l.shared_bytes_text) {
            l.shared_bytes = env.fold_with(&from_text(t), at, &bound);
        }
        l.caller_bound = bound;
    }
}

/// Whether each chunk (in order) has a function definition, for the accesses' walk.
pub(crate) fn chunk_has_function(file: &SourceFile) -> Vec<bool> {
    file.chunk_views()
        .iter()
        .map(|c| c.cache.scan.get().is_none_or(|s| s.has_function))
        .collect()
}

/// What a chunk gives the rest of the file, hashed: its file-scope constants and the text
/// of its top-level declarations (global `__shared__` buffers, globals an index reads).
fn global_key(local: &FileFacts, root: Node, text: &str) -> u64 {
    // A fingerprint: SipHash, as the file's (see `compute`).
    let mut h = std::collections::hash_map::DefaultHasher::new();
    local.env.hash_file_scope(&mut h);
    // Every top-level item but function definitions (and comments and pragmas): global
    // variables and buffers, types, namespace aliases and `using` directives, which the
    // lowering of an index and the resolution of a call may read from another chunk.
    for d in children(root) {
        let function = match d.kind_name() {
            "function_definition" | "comment" | "preproc_call" => true,
            "template_declaration" => named_children(d)
                .iter()
                .any(|c| c.kind_name() == "function_definition"),
            _ => false,
        };
        if !function {
            node_text(d, text).hash(&mut h);
        }
    }
    h.finish()
}

/// The second step over one chunk's nodes, carves apart: functions, `__shared__`
/// declarations, launches and attribute calls into `out`.
fn derive(tree: &Ancestry, w: &Walk, file: &SourceFile, env: &Env, out: &mut FileFacts) {
    let text = file.text();
    for f in &w.functions {
        if let Some(function) = function_facts(tree, *f, file, env) {
            if function.is_kernel {
                out.kernels.push(function);
            } else if function.is_device {
                out.device_functions.push(function);
            }
        }
    }
    for d in &w.shared {
        shared_decls(tree, *d, file, env, out);
    }
    for c in &w.calls {
        call_facts(tree, *c, text, &w.declarations, env, out);
    }
}

/// The masked macros that start inside `range`.
fn masks_in(file: &SourceFile, range: TextRange) -> &[crate::MaskedMacro] {
    let masks = file.masked_macros();
    let from = masks.partition_point(|m| m.range.start < range.start);
    let to = masks.partition_point(|m| m.range.start < range.end);
    &masks[from..to.max(from)]
}

/// The first step over one chunk: constants, macros, scopes into `facts`, and the nodes
/// the second step reads.
fn walk<'t>(tree: &Ancestry<'t>, root: Node<'t>, text: &str, facts: &mut FileFacts) -> Walk<'t> {
    let mut walk = Walk::default();
    // Inside expressions only launches (`<<<>>>`, `cudaLaunchKernelEx`) and
    // `cudaFuncSetAttribute` calls matter (and the
    // declarations in a lambda's body), so an expression whose text has neither is not
    // walked: most of a file's nodes are in expressions.
    // `>(`: a call with template arguments, which may bind a host function template's
    // parameters that a launch inside it depends on.
    let has_calls = |n: Node| {
        let t = node_text(n, text);
        crate::lex::has_launch_chevrons(t)
            || t.contains("cudaFuncSetAttribute")
            || t.contains("cudaLaunchKernelEx")
            || t.contains(">(")
    };
    preorder(root, |node| {
        let kind = node.kind_name();
        if kind.ends_with("_expression") && kind != "lambda_expression" && !has_calls(node) {
            return false;
        }
        if matches!(
            kind,
            "string_literal" | "raw_string_literal" | "char_literal" | "concatenated_string"
        ) {
            return false;
        }
        match kind {
            "preproc_def" => {
                if let Some(name) = node.field("name") {
                    let name = node_text(name, text).to_string();
                    let value = node
                        .field("value")
                        .map(|v| node_text(v, text).trim().to_string())
                        .unwrap_or_default();
                    let expr = from_text(&value);
                    if !value.is_empty() {
                        facts.env.insert_macro(&name, expr);
                        facts.constants.push(Constant {
                            name: name.clone(),
                            kind: ConstantKind::Define,
                            text: value,
                            value: None,
                            range: node.field("name").map_or(0..0, |n| n.byte_range()),
                            scope: None,
                        });
                    }
                    facts.macros.push(name);
                }
                return false;
            }
            "preproc_function_def" => {
                if let Some(name) = node.field("name") {
                    facts.macros.push(node_text(name, text).to_string());
                }
                return false;
            }
            "namespace_alias_definition" => {
                let kids = named_children(node);
                if let (Some(a), Some(t)) = (kids.first(), kids.last()) {
                    if kids.len() >= 2 {
                        facts.namespace_aliases.push((
                            node_text(*a, text).to_string(),
                            squash_ws(node_text(*t, text)).replace(' ', ""),
                            scope_of(tree, node),
                        ));
                    }
                }
                return false;
            }
            "using_declaration" => {
                let is_namespace = children(node).iter().any(|c| c.kind_name() == "namespace");
                if let (true, Some(target)) = (is_namespace, named_children(node).last()) {
                    facts.using_namespaces.push((
                        squash_ws(node_text(*target, text)).replace(' ', ""),
                        scope_of(tree, node),
                    ));
                }
                return false;
            }
            "enum_specifier" => {
                if let Some(body) = node.field("body") {
                    let mut next = Expr::Int(0);
                    for e in named_children(body) {
                        if e.kind_name() != "enumerator" {
                            continue;
                        }
                        let Some(name) = e.field("name") else {
                            continue;
                        };
                        let value = e.field("value");
                        let expr = value.map_or(next.clone(), |v| from_node(v, text, 0));
                        let name = node_text(name, text).to_string();
                        facts.env.insert(&name, None, expr.clone());
                        facts.constants.push(Constant {
                            name: name.clone(),
                            kind: ConstantKind::Enum,
                            text: value.map_or_else(String::new, |v| squash_ws(node_text(v, text))),
                            value: None,
                            range: e.byte_range(),
                            scope: None,
                        });
                        next =
                            Expr::Binary(Box::new(Expr::Name(name)), "+", Box::new(Expr::Int(1)));
                    }
                }
            }
            "template_declaration" => {
                if let Some(params) = node.field("parameters") {
                    for p in named_children(params) {
                        if p.kind_name() == "optional_parameter_declaration" {
                            let name = p.field("declarator");
                            let value = p.field("default_value");
                            if let (Some(n), Some(v)) = (name, value) {
                                let name = node_text(n, text).to_string();
                                facts.env.insert(
                                    &name,
                                    Some(node.byte_range()),
                                    from_node(v, text, 0),
                                );
                                facts.constants.push(Constant {
                                    name,
                                    kind: ConstantKind::TemplateDefault,
                                    text: squash_ws(node_text(v, text)),
                                    value: None,
                                    range: n.byte_range(),
                                    scope: Some(node.byte_range()),
                                });
                            }
                        }
                    }
                }
            }
            "function_definition" => {
                walk.has_function = true;
                walk.functions.push(node);
                // Its parameters hide file-scope constants of their names inside it.
                let params = crate::declarator::function_declarator(node)
                    .and_then(|fd| fd.field("parameters"))
                    .map(named_children)
                    .unwrap_or_default();
                for p in params {
                    if let Some(n) = p
                        .field("declarator")
                        .and_then(crate::declarator::declarator_name)
                    {
                        facts.env.shadow(node_text(n, text), node.byte_range());
                    }
                }
            }
            "declaration" | "field_declaration" => {
                let quals: Vec<Node> = children(node)
                    .into_iter()
                    .filter(|c| c.kind_name() == "type_qualifier")
                    .collect();
                // A statement-like macro call with no `;` before the declaration
                // (`CHECK_SHAPE(a, M, K)\n constexpr int BM = 32;`) parses as an error
                // that ends in the declaration's qualifier.
                let eaten = eaten_qualifier(node, text);
                let has = |q: &str| {
                    eaten == Some(q) || quals.iter().any(|c| node_text(*c, text).trim() == q)
                };
                if has("__shared__") {
                    walk.shared.push(node);
                }
                if has("constexpr") || has("const") {
                    constant_decl(tree, node, text, has("constexpr"), facts);
                } else if has("__constant__")
                    && !text.contains("ToSymbol")
                    && !text.contains("SymbolAddress")
                {
                    // A `__constant__` scalar the file never writes from the host
                    // (`cudaMemcpyToSymbol`, or its address taken with
                    // `cudaGetSymbolAddress`) holds its initialiser.
                    constant_decl(tree, node, text, false, facts);
                } else if node
                    .field("type")
                    .is_some_and(|t| node_text(t, text).trim() == "dim3")
                    && enclosing_function(tree, node).is_none()
                    && launch::dim3_inits(tree, node, text)
                        .iter()
                        .all(|(name, _, _)| !written_anywhere(text, name))
                {
                    // A file-scope `dim3 block(16, 16);` the file never assigns holds
                    // its initialiser, as a `constexpr dim3` does.
                    constant_decl(tree, node, text, false, facts);
                } else if let Some(f) = enclosing_function(tree, node) {
                    // A variable of the function hides a file-scope constant of its name.
                    for d in crate::declarator::declarators(node) {
                        if let Some(n) = crate::declarator::declarator_name(d) {
                            facts.env.shadow(node_text(n, text), f.byte_range());
                        }
                    }
                }
                walk.declarations.push(node);
            }
            // Only launches and attribute calls (the check above kept those).
            "call_expression" => walk.calls.push(node),
            _ => {}
        }
        true
    });
    walk
}

/// Whether `text` assigns the variable `name` or one of its members anywhere (`name =`,
/// `name.x += …`, `++name`), or takes its address (`&name`), where it could change.
pub(crate) fn written_anywhere(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(at) = text[from..].find(name).map(|i| i + from) {
        from = at + name.len();
        let end = at + name.len();
        if (at > 0 && ident(bytes[at - 1])) || bytes.get(end).is_some_and(|b| ident(*b)) {
            continue;
        }
        let before = text[..at].trim_end();
        if before.ends_with('&') && !before.ends_with("&&")
            || before.ends_with("++")
            || before.ends_with("--")
        {
            return true;
        }
        let mut after = text[end..].trim_start();
        // A member (`.x`).
        if let Some(rest) = after.strip_prefix('.') {
            after = rest
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
                .trim_start();
        }
        let assigns = after.starts_with('=') && !after.starts_with("==");
        let compound = [
            "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--",
        ]
        .iter()
        .any(|op| after.starts_with(op));
        if assigns || compound {
            return true;
        }
    }
    false
}

/// The range of the scope a declaration lives in: the enclosing block, function or file.
fn scope_of(tree: &Ancestry, node: Node) -> TextRange {
    for n in tree.ancestors(node) {
        if tree.is_root(n) {
            return tree.file_range();
        }
        if matches!(
            n.kind_name(),
            "compound_statement" | "declaration_list" | "translation_unit" | "function_definition"
        ) {
            return n.byte_range();
        }
    }
    node.byte_range()
}

/// The innermost function around `node`, with the range that scoped constants use.
fn enclosing_function<'t>(tree: &Ancestry<'t>, node: Node<'t>) -> Option<Node<'t>> {
    tree.ancestors(node)
        .into_iter()
        .find(|n| n.kind_name() == "function_definition")
}
