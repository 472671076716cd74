//! The symbol under the cursor, as the user means it.

use std::borrow::Cow;

use tree_sitter::{Node, TreeCursor};

use crate::declarator::declarator_name;
use crate::facts::FileFacts;
use crate::source::SourceFile;
use crate::util::{
    chain_at, named_children, node_text, short_name, squash_ws, strip_template_args, Ancestry,
    KindSet, NodeExt,
};
use crate::TextRange;

pub use crate::data::SymbolKind;

/// The symbol at an offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolRef {
    /// The text as written, without template arguments (`cg::invoke_one`,
    /// `pipe.producer_commit`, `cp.async.wait_group`).
    pub text: String,
    /// The name resolved: namespace aliases expanded, a member qualified with its
    /// receiver's type when known (`cooperative_groups::invoke_one`,
    /// `cuda::pipeline::producer_commit`). Equal to the written name otherwise.
    pub name: String,
    /// What kind of symbol it is.
    pub kind: SymbolKind,
    /// The range of the symbol in the text (template arguments excluded; for a member,
    /// the receiver, the `.` and the member).
    pub range: TextRange,
    /// The template arguments as written, without the angle brackets (`N - 1`).
    pub template_args: Option<String>,
    /// Namespaces made visible at the offset by `using namespace`, innermost first.
    pub namespaces_in_scope: Vec<String>,
    /// Names to look the symbol up by, best first: `name`, then `name` qualified by each
    /// namespace in scope.
    pub candidates: Vec<String>,
    /// Whether the symbol is the callee of a call.
    pub is_call: bool,
}

/// Macros CUDA provides that the file does not define.
const BUILTIN_MACROS: &[&str] = &[
    "__launch_bounds__",
    "__cluster_dims__",
    "__align__",
    "__maxnreg__",
    "__syncthreads",
    "__CUDA_ARCH__",
    "__CUDACC__",
    "__CUDACC_VER_MAJOR__",
    "__CUDACC_RTC__",
    "warpSize",
];

/// CUDA keywords that the mask blanks before parsing.
const MASKED_KEYWORDS: &[&str] = &[
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "__restrict__",
];

/// Types implied by the functions that create cooperative-groups and pipeline objects.
const INIT_TYPES: &[(&str, &str)] = &[
    ("this_thread_block", "cooperative_groups::thread_block"),
    ("tiled_partition", "cooperative_groups::thread_block_tile"),
    ("this_grid", "cooperative_groups::grid_group"),
    ("coalesced_threads", "cooperative_groups::coalesced_group"),
    ("this_cluster", "cooperative_groups::cluster_group"),
    ("this_multi_grid", "cooperative_groups::multi_grid_group"),
    ("labeled_partition", "cooperative_groups::coalesced_group"),
    ("binary_partition", "cooperative_groups::coalesced_group"),
    ("make_pipeline", "cuda::pipeline"),
];

/// A PTX instruction or directive found in an `asm` string.
#[derive(Clone, Debug)]
pub(crate) struct PtxInstr {
    pub mnemonic: String,
    pub range: TextRange,
    pub statement: TextRange,
}

impl SourceFile {
    /// The symbol at byte `offset`, or `None` on whitespace, punctuation, literals and
    /// comments. An offset just after a word counts as on it.
    pub fn symbol_at(&self, offset: usize) -> Option<SymbolRef> {
        if offset > self.text().len() {
            return None;
        }
        let facts = self.facts();
        for m in self.masked_macros() {
            if m.name_range.contains(&offset) || (m.name_range.end == offset && offset > 0) {
                let kind = if MASKED_KEYWORDS.contains(&m.name.as_str()) {
                    SymbolKind::Keyword
                } else {
                    SymbolKind::Macro
                };
                return Some(simple(&m.name, kind, m.name_range.clone(), self, offset));
            }
        }
        // The leaf and its ancestors, in one descent of the tree that holds it.
        let at = |o: usize| {
            let chain = chain_at(self.root_at(o)?, o);
            self.symbol_for_leaf_in(chain[0], &chain[1..], o, facts)
        };
        at(offset).or_else(|| offset.checked_sub(1).and_then(at))
    }

    /// What [`SourceFile::symbol_at`] finds at the start of `leaf`, a token whose
    /// ancestors (nearest first, its tree's root last) the caller already holds: a call
    /// walk reaches each callee through its parents.
    pub(crate) fn symbol_at_leaf(&self, leaf: Node, parents: &[Node]) -> Option<SymbolRef> {
        let offset = leaf.start_byte();
        // Where `symbol_at` would take another path: a masked macro's name, a node that
        // is not a token (the descent from the root would go on into it), an empty one.
        let masked = self
            .masked_macros()
            .iter()
            .any(|m| m.name_range.contains(&offset) || (m.name_range.end == offset && offset > 0));
        if masked || leaf.child_count() > 0 || leaf.end_byte() <= offset {
            return self.symbol_at(offset);
        }
        self.symbol_for_leaf_in(leaf, parents, offset, self.facts())
            .or_else(|| self.symbol_at(offset))
    }

    fn symbol_for_leaf_in(
        &self,
        leaf: Node,
        parents: &[Node],
        offset: usize,
        facts: &FileFacts,
    ) -> Option<SymbolRef> {
        let text = self.text();
        let parent_of_leaf = parents.first().copied();
        if let Some(asm) = asm_string_owner(leaf, parents) {
            let instrs = ptx_instructions(asm, text);
            let hit = instrs
                .iter()
                .find(|i| i.range.contains(&offset) || i.range.end == offset)
                .or_else(|| instrs.iter().find(|i| i.statement.contains(&offset)))?;
            return Some(simple(
                &hit.mnemonic,
                SymbolKind::Ptx,
                hit.range.clone(),
                self,
                offset,
            ));
        }
        let kind = leaf.kind_name();
        let raw = node_text(leaf, text);
        if !leaf.is_named() || kind == "primitive_type" {
            let word =
                !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !word {
                return None;
            }
            if kind == "launch_bounds" || raw == "__launch_bounds__" {
                return Some(simple(
                    raw,
                    SymbolKind::Macro,
                    leaf.byte_range(),
                    self,
                    offset,
                ));
            }
            if parent_of_leaf.is_some_and(|p| p.kind_name() == "sizeof_expression")
                || raw == "asm"
                || raw.starts_with("__")
                || kind == "primitive_type"
                || parent_of_leaf.is_some_and(|p| {
                    matches!(p.kind_name(), "type_qualifier" | "storage_class_specifier")
                })
            {
                return Some(simple(
                    raw,
                    SymbolKind::Keyword,
                    leaf.byte_range(),
                    self,
                    offset,
                ));
            }
            return None;
        }
        if !matches!(
            kind,
            "identifier"
                | "type_identifier"
                | "namespace_identifier"
                | "field_identifier"
                | "statement_identifier"
        ) {
            return None;
        }
        if parent_of_leaf.is_some_and(|p| p.kind_name().starts_with("preproc_")) {
            let is_directive_name = parent_of_leaf
                .and_then(|p| p.field("name"))
                .is_some_and(|n| n == leaf);
            if is_directive_name {
                return Some(simple(
                    raw,
                    SymbolKind::Macro,
                    leaf.byte_range(),
                    self,
                    offset,
                ));
            }
        }
        // Climb to the whole name: qualified parts and a template's name.
        let mut node = leaf;
        // `parents[climbed]` is the parent of `node`.
        let mut climbed = 0;
        let mut template_args = None;
        while let Some(&p) = parents.get(climbed) {
            match p.kind_name() {
                "qualified_identifier" => node = p,
                "template_function" | "template_type" | "template_method"
                    if p.field("name") == Some(node) =>
                {
                    template_args = p.field("arguments").map(|a| {
                        let t = node_text(a, text).trim();
                        squash_ws(
                            t.strip_prefix('<')
                                .unwrap_or(t)
                                .strip_suffix('>')
                                .unwrap_or(t),
                        )
                    });
                    node = p;
                }
                "template_function" | "template_type" | "template_method" => {
                    if p.field("name") == Some(node) {
                        node = p;
                    } else {
                        break;
                    }
                }
                _ => break,
            }
            climbed += 1;
        }
        let parent_of_node = parents.get(climbed).copied();
        // Template arguments of a nested template (`cuda::std::min<int>`) show up here too.
        if template_args.is_none() && node_text(node, text).contains('<') {
            let t = node_text(node, text);
            if let (Some(a), Some(b)) = (t.find('<'), t.rfind('>')) {
                if a < b {
                    template_args = Some(squash_ws(&t[a + 1..b]));
                }
            }
        }
        let written = squash_ws(&strip_template_args(node_text(node, text))).replace(' ', "");
        let range = name_range(node, text);
        let is_call = parent_of_node.is_some_and(|p| {
            p.kind_name() == "call_expression" && p.field("function") == Some(node)
        });
        // A member of a field expression.
        if let Some(p) = parent_of_node {
            if p.kind_name() == "field_expression" && p.field("field") == Some(node) {
                let receiver = p.field("argument")?;
                let receiver_text = squash_ws(node_text(receiver, text));
                let receiver_type = self.expr_type(receiver, facts, offset);
                let member = written.trim_start_matches('~').to_string();
                let builtin = matches!(
                    receiver_text.as_str(),
                    "threadIdx" | "blockIdx" | "blockDim" | "gridDim" | "clusterIdx" | "clusterDim"
                );
                let receiver_type = if builtin {
                    Some(
                        if receiver_text.ends_with("Idx") {
                            "uint3"
                        } else {
                            "dim3"
                        }
                        .to_string(),
                    )
                } else {
                    receiver_type
                };
                let name = match &receiver_type {
                    _ if builtin => format!("{receiver_text}.{member}"),
                    Some(t) => format!("{t}::{member}"),
                    None => member.clone(),
                };
                let namespaces = namespaces_at(facts, offset);
                let mut candidates = vec![name.clone()];
                if let Some(t) = &receiver_type {
                    for ns in &namespaces {
                        candidates.push(format!("{ns}::{t}::{member}"));
                    }
                }
                if receiver_type.is_some() {
                    candidates.push(member.clone());
                }
                let called = parents.get(climbed + 1).is_some_and(|c| {
                    c.kind_name() == "call_expression" && c.field("function") == Some(p)
                });
                return Some(SymbolRef {
                    text: format!(
                        "{receiver_text}{}{written}",
                        if node_text(p, text).contains("->") {
                            "->"
                        } else {
                            "."
                        }
                    ),
                    name,
                    kind: SymbolKind::Member {
                        receiver: receiver_text,
                        receiver_type,
                    },
                    range: receiver.start_byte()..range.end,
                    template_args,
                    namespaces_in_scope: namespaces,
                    candidates,
                    is_call: called,
                });
            }
        }
        let resolved = resolve_aliases(&written, facts, offset);
        let kind = if facts.defines_macro(&resolved) || BUILTIN_MACROS.contains(&resolved.as_str())
        {
            SymbolKind::Macro
        } else if resolved.contains("::") {
            SymbolKind::Qualified
        } else {
            SymbolKind::Identifier
        };
        let namespaces = namespaces_at(facts, offset);
        let mut candidates = vec![resolved.clone()];
        if !written.starts_with("::") {
            for ns in &namespaces {
                candidates.push(format!("{ns}::{resolved}"));
            }
        }
        Some(SymbolRef {
            text: written,
            name: resolved,
            kind,
            range,
            template_args,
            namespaces_in_scope: namespaces,
            candidates,
            is_call,
        })
    }

    /// Whether the plain name at `offset` is the user's own: a name being declared (a
    /// variable, a parameter, a field, a function), or a use of a variable or parameter
    /// the file declares in scope. Such a name is never a library symbol, whatever the
    /// wiki lists under it (`int x`, `int size`).
    pub fn is_user_name_at(&self, offset: usize) -> bool {
        let text = self.text();
        let check = |o: usize| -> Option<bool> {
            let chain = chain_at(self.root_at(o)?, o);
            let leaf = chain[0];
            if !matches!(leaf.kind_name(), "identifier" | "field_identifier") {
                return None;
            }
            if is_declared_name(leaf, &chain[1..]) {
                return Some(true);
            }
            if leaf.kind_name() != "identifier" {
                return Some(false);
            }
            let name = node_text(leaf, text);
            let tree = Ancestry::few(self.roots(), text.len());
            Some(find_declaration(&tree, leaf, name, text).is_some())
        };
        check(offset)
            .or_else(|| offset.checked_sub(1).and_then(check))
            .unwrap_or(false)
    }

    /// The types of the arguments of the call whose callee is at `offset`, where the file
    /// shows them: a declared variable or parameter, `&x`, `*p`, `p[i]`, `p + i`, a cast
    /// or a literal; `None` for an argument it does not. Types are written without
    /// qualifiers or spaces (`float4*`, `const __half2 *const` → `__half2*`).
    pub fn call_argument_types(&self, offset: usize) -> Option<Vec<Option<String>>> {
        let text = self.text();
        let at = |o: usize| -> Option<Vec<Option<String>>> {
            let chain = chain_at(self.root_at(o)?, o);
            let call = chain.iter().copied().find(|n| {
                n.kind_name() == "call_expression"
                    && n.field("function")
                        .is_some_and(|f| f.start_byte() <= o && o <= f.end_byte())
            })?;
            let args = call.field("arguments")?;
            let tree = Ancestry::few(self.roots(), text.len());
            Some(
                named_children(args)
                    .into_iter()
                    .filter(|a| a.kind_name() != "comment")
                    .map(|a| argument_type(&tree, a, text, 0))
                    .collect(),
            )
        };
        at(offset).or_else(|| offset.checked_sub(1).and_then(at))
    }

    /// The type of an expression used as a member receiver, where the file shows it.
    fn expr_type(&self, receiver: Node, facts: &FileFacts, offset: usize) -> Option<String> {
        let text = self.text();
        match receiver.kind_name() {
            "identifier" => {
                let name = node_text(receiver, text);
                let (ty, init) = find_declaration(
                    &Ancestry::few(self.roots(), text.len()),
                    receiver,
                    name,
                    text,
                )?;
                type_from_decl(&ty, init, text, facts, offset)
            }
            "call_expression" => {
                let f = receiver.field("function")?;
                init_type(node_text(f, text), facts, offset)
            }
            "parenthesized_expression" => {
                let inner = *named_children(receiver).first()?;
                self.expr_type(inner, facts, offset)
            }
            "pointer_expression" => {
                let inner = receiver.field("argument")?;
                self.expr_type(inner, facts, offset)
            }
            _ => None,
        }
    }
}

/// The type of a call argument where the file shows it (see
/// [`SourceFile::call_argument_types`]).
fn argument_type(tree: &Ancestry, a: Node, text: &str, depth: u32) -> Option<String> {
    if depth > 8 {
        return None;
    }
    let inner = |n: Node| argument_type(tree, n, text, depth + 1);
    let t = match a.kind_name() {
        "identifier" => find_declaration(tree, a, node_text(a, text), text)?.0,
        "pointer_expression" => {
            let of = inner(a.field("argument")?)?;
            if node_text(a, text).trim_start().starts_with('&') {
                format!("{of}*")
            } else {
                of.strip_suffix('*')?.to_string()
            }
        }
        "subscript_expression" => inner(a.field("argument")?)?.strip_suffix('*')?.to_string(),
        "binary_expression" => {
            let left = inner(a.field("left")?)?;
            if !left.ends_with('*') {
                return None;
            }
            left
        }
        "parenthesized_expression" => inner(*named_children(a).first()?)?,
        "cast_expression" => node_text(a.field("type")?, text).to_string(),
        "number_literal" => {
            let n = node_text(a, text);
            let hex = n.starts_with("0x") || n.starts_with("0X");
            if !hex && n.ends_with(['f', 'F']) {
                "float"
            } else if !hex && n.contains(['.', 'e', 'E']) {
                "double"
            } else {
                "int"
            }
            .to_string()
        }
        _ => return None,
    };
    Some(plain_type(&t))
}

/// A type without qualifiers or spaces: `const __half2 *const` → `__half2*`.
pub fn plain_type(t: &str) -> String {
    let spaced = t.replace('*', " * ").replace('&', " & ");
    spaced
        .split_whitespace()
        .filter(|w| {
            !matches!(
                *w,
                "const" | "volatile" | "__restrict__" | "__restrict" | "struct" | "&"
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" *", "*")
}

/// Whether `leaf` is the name a declaration declares: climbing declarators through the
/// `declarator` field up to a declaration, parameter, field or function definition.
/// (Only a declarator can stand there as a plain identifier: a type is a
/// `type_identifier` or a primitive.)
pub(crate) fn is_declared_name(leaf: Node, parents: &[Node]) -> bool {
    let mut node = leaf;
    for &p in parents {
        let kind = p.kind_name();
        let through_declarator = p.field("declarator") == Some(node);
        match kind {
            "init_declarator"
            | "pointer_declarator"
            | "reference_declarator"
            | "array_declarator"
            | "parenthesized_declarator"
            | "function_declarator"
                if through_declarator =>
            {
                node = p
            }
            "declaration"
            | "parameter_declaration"
            | "optional_parameter_declaration"
            | "field_declaration"
            | "function_definition" => {
                // A declaration may declare several names; none is its type.
                return p.field("type") != Some(node);
            }
            _ => return false,
        }
    }
    false
}

/// The range of a name without its template arguments.
fn name_range(node: Node, text: &str) -> TextRange {
    let t = node_text(node, text);
    match t.find('<') {
        Some(i) => node.start_byte()..node.start_byte() + t[..i].trim_end().len(),
        None => node.byte_range(),
    }
}

fn simple(
    name: &str,
    kind: SymbolKind,
    range: TextRange,
    file: &SourceFile,
    offset: usize,
) -> SymbolRef {
    let namespaces = namespaces_at(file.facts(), offset);
    SymbolRef {
        text: name.to_string(),
        name: name.to_string(),
        kind,
        range,
        template_args: None,
        namespaces_in_scope: namespaces,
        candidates: vec![name.to_string()],
        is_call: false,
    }
}

/// `using namespace` directives visible at `offset`, innermost first.
pub(crate) fn namespaces_at(facts: &FileFacts, offset: usize) -> Vec<String> {
    let mut v: Vec<(&String, &TextRange)> = facts
        .using_namespaces
        .iter()
        .filter(|(_, scope)| scope.contains(&offset) || scope.end == offset)
        .map(|(n, s)| (n, s))
        .collect();
    v.sort_by_key(|(_, s)| s.len());
    let mut out: Vec<String> = Vec::new();
    for (n, _) in v {
        let n = resolve_aliases(n, facts, offset);
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Expands a leading namespace alias (`cg::sync` → `cooperative_groups::sync`).
pub(crate) fn resolve_aliases(name: &str, facts: &FileFacts, offset: usize) -> String {
    let mut name = name.trim_start_matches("::").to_string();
    // Most files declare no namespace alias.
    if facts.namespace_aliases.is_empty() {
        return name;
    }
    for _ in 0..8 {
        let first = name.split("::").next().unwrap_or("").to_string();
        let alias = facts
            .namespace_aliases
            .iter()
            .filter(|(a, _, scope)| *a == first && (scope.contains(&offset) || scope.end == offset))
            .min_by_key(|(_, _, s)| s.len());
        match alias {
            Some((_, target, _)) if name.contains("::") || name == first => {
                let rest = &name[first.len()..];
                let next = format!("{}{rest}", target.trim_start_matches("::"));
                if next == name {
                    break;
                }
                name = next;
            }
            _ => break,
        }
    }
    name
}

/// The type named by a creating call such as `cg::this_thread_block()`.
fn init_type(callee: &str, facts: &FileFacts, offset: usize) -> Option<String> {
    let callee = resolve_aliases(&strip_template_args(callee).replace(' ', ""), facts, offset);
    let last = short_name(&callee);
    INIT_TYPES
        .iter()
        .find(|(f, _)| *f == last)
        .map(|(_, t)| t.to_string())
}

fn type_from_decl(
    ty: &str,
    init: Option<Node>,
    text: &str,
    facts: &FileFacts,
    offset: usize,
) -> Option<String> {
    let cleaned = strip_template_args(ty)
        .split_whitespace()
        .filter(|w| {
            !matches!(
                *w,
                "const" | "volatile" | "__restrict__" | "__shared__" | "static" | "extern"
            )
        })
        .collect::<Vec<_>>()
        .join("")
        .trim_end_matches(['&', '*'])
        .to_string();
    if cleaned == "auto" || cleaned.is_empty() {
        let mut init = init?;
        if init.kind_name() == "argument_list" || init.kind_name() == "initializer_list" {
            return None;
        }
        while init.kind_name() == "parenthesized_expression" {
            init = *named_children(init).first()?;
        }
        if init.kind_name() != "call_expression" {
            return None;
        }
        let f = init.field("function")?;
        return init_type(node_text(f, text), facts, offset);
    }
    Some(resolve_aliases(&cleaned, facts, offset))
}

/// Finds the declaration of the variable `name` visible from `use_node`: its type text and
/// its initialiser.
pub(crate) fn find_declaration<'t>(
    tree: &Ancestry<'t>,
    use_node: Node<'t>,
    name: &str,
    text: &str,
) -> Option<(String, Option<Node<'t>>)> {
    find_declaration_full(tree, use_node, name, text).map(|(t, i, _)| (t, i))
}

/// Like [`find_declaration`], and also says whether the declaration is a parameter.
///
/// `tree` is `use_node`'s tree; the scopes are `use_node`'s ancestors.
pub(crate) fn find_declaration_full<'t>(
    tree: &Ancestry<'t>,
    use_node: Node<'t>,
    name: &str,
    text: &str,
) -> Option<(String, Option<Node<'t>>, bool)> {
    let at = use_node.start_byte();
    for scope in tree.ancestors(use_node) {
        let Some(candidates) = scope_candidates(tree, scope, at) else {
            continue;
        };
        for &c in candidates.iter().rev() {
            if c.start_byte() > at {
                continue;
            }
            if let Some(d) = declares(c, name, text) {
                return Some(declaration_parts(c, d, text));
            }
        }
    }
    None
}

/// The kinds for which [`scope_candidates`] lists candidates (keep the two in step).
pub(crate) static SCOPE_KINDS: KindSet = KindSet::new(&[
    "compound_statement",
    "translation_unit",
    "declaration_list",
    "for_statement",
    "for_range_loop",
    "function_definition",
]);

/// The nodes of `scope` that can declare a name used at byte `at`, in document order, or
/// `None` when `scope` is not a scope. Only the file's top level depends on `at`.
pub(crate) fn scope_candidates<'t, 'a>(
    tree: &'a Ancestry<'t>,
    scope: Node<'t>,
    at: usize,
) -> Option<Cow<'a, [Node<'t>]>> {
    Some(match scope.kind_name() {
        // The file's top level: only what starts before the use can declare it, and
        // the unnamed children are not declarations.
        "compound_statement" | "translation_unit" | "declaration_list" if tree.is_root(scope) => {
            tree.top_level_before(at)
        }
        "compound_statement" | "translation_unit" | "declaration_list" => {
            Cow::Owned(named_children(scope))
        }
        "for_statement" | "for_range_loop" => scope
            .field("initializer")
            .into_iter()
            // The parent of a field child is the loop itself.
            .chain(scope.field("declarator").map(|_| scope))
            .collect::<Vec<_>>()
            .into(),
        "function_definition" => {
            let mut v = Vec::new();
            if let Some(pl) = crate::declarator::function_declarator(scope)
                .filter(|fd| fd.field("declarator").is_some())
                .and_then(|fd| fd.field("parameters"))
            {
                v.extend(named_children(pl));
            }
            v.into()
        }
        _ => return None,
    })
}

/// Whether `scope` is the file's top level, whose candidates depend on the use's offset.
pub(crate) fn is_file_scope(tree: &Ancestry, scope: Node) -> bool {
    matches!(
        scope.kind_name(),
        "compound_statement" | "translation_unit" | "declaration_list"
    ) && tree.is_root(scope)
}

/// Whether `c` is a declaration kind, and if so its declarators in order.
pub(crate) fn declarators<'t>(c: Node<'t>) -> Option<Vec<Node<'t>>> {
    let mut out = Vec::new();
    declarators_into(c, &mut c.walk(), &mut out).then_some(out)
}

/// [`declarators`] of `c` into `out` (emptied first) with a cursor the caller reuses:
/// `false` when `c` is not a declaration.
pub(crate) fn declarators_into<'t>(
    c: Node<'t>,
    cursor: &mut TreeCursor<'t>,
    out: &mut Vec<Node<'t>>,
) -> bool {
    out.clear();
    if !DECLARATION_KINDS.contains(c) {
        return false;
    }
    out.extend(c.fields("declarator", cursor));
    true
}

/// The declaration kinds.
static DECLARATION_KINDS: KindSet = KindSet::new(&[
    "declaration",
    "parameter_declaration",
    "optional_parameter_declaration",
    "field_declaration",
]);

/// The first declarator of the declaration `c` that declares `name`.
fn declares<'t>(c: Node<'t>, name: &str, text: &str) -> Option<Node<'t>> {
    declarators(c)?
        .into_iter()
        .find(|&d| declarator_name(d).is_some_and(|n| node_text(n, text) == name))
}

/// The declared type (with a leading `*` of the declarator kept), the initialiser and
/// whether it is a parameter, for declarator `d` of declaration `c`.
pub(crate) fn declaration_parts<'t>(
    c: Node<'t>,
    d: Node<'t>,
    text: &str,
) -> (String, Option<Node<'t>>, bool) {
    let ty = c.field("type").map(|t| node_text(t, text)).unwrap_or("");
    let (init, is_param) = init_and_param(c, d);
    // Keep pointer and reference markers from the declarator.
    let suffix = if node_text(d, text).trim_start().starts_with('*') {
        "*"
    } else {
        ""
    };
    (format!("{ty}{suffix}"), init, is_param)
}

/// The initialiser of declarator `d`, and whether its declaration `c` is a parameter.
pub(crate) fn init_and_param<'t>(c: Node<'t>, d: Node<'t>) -> (Option<Node<'t>>, bool) {
    let init = if d.kind_name() == "init_declarator" {
        d.field("value")
    } else {
        None
    };
    (init, c.kind_name().contains("parameter"))
}

/// The `asm` expression that owns the string under `leaf`, if the leaf is in its code.
///
/// `parents` are the leaf's ancestors, nearest first.
fn asm_string_owner<'t>(leaf: Node<'t>, parents: &[Node<'t>]) -> Option<Node<'t>> {
    let mut node = leaf;
    for &parent in parents.iter().take(4) {
        if parent.kind_name() == "gnu_asm_expression" || parent.kind_name() == "asm_statement" {
            let is_code = parent.field("assembly_code") == Some(node)
                || (parent.kind_name() == "asm_statement"
                    && matches!(node.kind_name(), "string_literal" | "concatenated_string"));
            return is_code.then_some(parent);
        }
        node = parent;
    }
    None
}

/// The PTX instructions and directives in the code strings of an `asm` expression.
pub(crate) fn ptx_instructions(asm: Node, text: &str) -> Vec<PtxInstr> {
    let Some(code) = asm.field("assembly_code").or_else(|| {
        named_children(asm)
            .into_iter()
            .find(|c| matches!(c.kind_name(), "string_literal" | "concatenated_string"))
    }) else {
        return Vec::new();
    };
    let literals: Vec<Node> = if code.kind_name() == "concatenated_string" {
        named_children(code)
            .into_iter()
            .filter(|c| c.kind_name() == "string_literal")
            .collect()
    } else {
        vec![code]
    };
    let bytes = text.as_bytes();
    let mut out: Vec<PtxInstr> = Vec::new();
    let mut at_start = true;
    for lit in literals {
        let (s, e) = (lit.start_byte(), lit.end_byte());
        let Some(open) = bytes
            .get(s..e)
            .and_then(|b| b.iter().position(|&c| c == b'"'))
        else {
            continue;
        };
        let mut i = s + open + 1;
        let end = e.saturating_sub(1).max(i);
        while i < end {
            let c = bytes[i];
            if c == b'\\' {
                i += 2;
                continue;
            }
            match c {
                b'{' | b'}' if !at_start => {
                    // A vector operand such as `{%0, %1}`.
                    if let Some(last) = out.last_mut() {
                        last.statement.end = i + 1;
                    }
                    i += 1;
                }
                b';' | b'{' | b'}' => {
                    if let Some(last) = out.last_mut() {
                        if !at_start {
                            last.statement.end = i + 1;
                        }
                    }
                    at_start = true;
                    i += 1;
                }
                b'@' if at_start => {
                    i += 1;
                    while i < end && !bytes[i].is_ascii_whitespace() && bytes[i] != b'\\' {
                        i += 1;
                    }
                }
                c if at_start && (c.is_ascii_alphabetic() || c == b'.' || c == b'_') => {
                    let st = i;
                    while i < end {
                        if bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.' || bytes[i] == b'_'
                        {
                            i += 1;
                        } else if bytes[i] == b':' && bytes.get(i + 1) == Some(&b':') {
                            // A state space with a scope, `shared::cta`.
                            i += 2;
                        } else {
                            break;
                        }
                    }
                    if bytes.get(i) == Some(&b':') {
                        // A label.
                        i += 1;
                        continue;
                    }
                    let mnemonic = text
                        .get(st..i)
                        .unwrap_or("")
                        .trim_end_matches('.')
                        .to_string();
                    out.push(PtxInstr {
                        mnemonic,
                        range: st..i,
                        statement: st..i,
                    });
                    at_start = false;
                }
                _ => {
                    if !at_start {
                        if let Some(last) = out.last_mut() {
                            last.statement.end = i + 1;
                        }
                    }
                    i += 1;
                }
            }
        }
    }
    out
}
