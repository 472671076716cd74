//! Variables as the tree shows them: a parameter's or local's declaration (type,
//! qualifiers, initialiser, scope) and each use of it, resolved through the scopes so that
//! a shadowing declaration, a comment, a string or a member of the same name is not a use.
//!
//! Rules read these instead of searching the text for a name.

use tree_sitter::Node;

use crate::declarator::declarator_name;
use crate::source::SourceFile;
use crate::symbol::{declarators, scope_candidates};
use crate::util::{chain_at, named_children, node_text, preorder, squash_ws, Ancestry, NodeExt};
use crate::TextRange;

/// A parameter or local variable of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// The range of the name in its declarator.
    pub name_range: TextRange,
    /// The declared type as written, whitespace squashed, qualifiers and specifiers
    /// excluded (`int`, `__half`, `float4`); a pointer or reference declarator adds its
    /// `*` or `&` (`float*`).
    pub ty: String,
    /// The range of the type as written (`__half` in `const __half acc = 0;`).
    pub ty_range: TextRange,
    /// Whether its declaration declares other names too (`__half a = 0, b = 0;`).
    pub shares_declaration: bool,
    /// Whether it is a function parameter.
    pub is_param: bool,
    /// The range of its `const` qualifier, when it has one.
    pub const_range: Option<TextRange>,
    /// Whether it is declared `constexpr`.
    pub is_constexpr: bool,
    /// Whether its declaration is qualified `volatile` (for a pointer, the pointee:
    /// `volatile float* s`).
    pub is_volatile: bool,
    /// The whole declaration (`const int s = 3;`; a parameter's declaration for a
    /// parameter).
    pub declaration: TextRange,
    /// The initialiser's value: `3` in `int s = 3;`, `int s{3}` and `int s(3)`.
    pub init: Option<TextRange>,
    /// Where the name is visible: from the end of its declarator to the end of the scope
    /// that declares it (for a parameter, the function).
    pub scope: TextRange,
}

/// A write to a variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableWrite {
    /// The operator: `=`, `+=`, …, `++` or `--`.
    pub op: String,
    /// The assigned value (`None` for `++`/`--`).
    pub value: Option<TextRange>,
    /// The whole assignment or update expression.
    pub range: TextRange,
}

/// One use of a [`Variable`] (not its declaration).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableUse {
    /// The range of the name.
    pub range: TextRange,
    /// The write, when the use is the target of an assignment or `++`/`--`.
    pub write: Option<VariableWrite>,
    /// Whether its address is taken (`&name`).
    pub address_of: bool,
    /// The type a cast of the name converts it to (`(float4*)name`,
    /// `reinterpret_cast<float4*>(name)`), whitespace squashed.
    pub cast_to: Option<String>,
    /// The call the use is an argument of (through parentheses and casts), also as
    /// `&name` (then `address_of` is set too): the call's range, its callee as written and
    /// the argument's index.
    pub argument_of: Option<(TextRange, String, usize)>,
    /// Whether the value (through parentheses and casts) is stored whole: the right side
    /// of a plain assignment statement, an initialiser or a returned value.
    pub stored: bool,
    /// The range of the expression the name is the whole value of, up through
    /// parentheses and casts (the name itself when there are none).
    pub operand: TextRange,
}

impl SourceFile {
    /// The variable that the name at `offset` declares or refers to, found through the
    /// scopes around it. `None` for anything else (a member, a type, a function, a name
    /// the file does not declare). Kept with the file's facts.
    pub fn variable_at(&self, offset: usize) -> Option<Variable> {
        match self.tree_memo() {
            Some(memo) => memo.variable_at(offset, || self.find_variable_at(offset)),
            None => self.find_variable_at(offset),
        }
    }

    fn find_variable_at(&self, offset: usize) -> Option<Variable> {
        let text = self.text();
        let at = |o: usize| -> Option<Variable> {
            let chain = chain_at(self.root_at(o)?, o);
            let leaf = chain[0];
            if !matches!(leaf.kind_name(), "identifier" | "type_identifier") {
                return None;
            }
            let tree = Ancestry::few(self.roots(), text.len());
            let (decl, d, name) = resolve(&tree, leaf, node_text(leaf, text), text)?;
            let end = scope_end(
                tree.ancestors(decl),
                self.root_at(decl.start_byte())?,
                text.len(),
            );
            variable(decl, d, name, end, text)
        };
        at(offset).or_else(|| offset.checked_sub(1).and_then(at))
    }

    /// The variable `name` that a use at byte `at` would refer to (the same look-up as
    /// [`SourceFile::variable_at`], for a name that is not written at `at`).
    pub fn variable_named(&self, name: &str, at: usize) -> Option<Variable> {
        let text = self.text();
        let chain = chain_at(self.root_at(at)?, at);
        let tree = Ancestry::few(self.roots(), text.len());
        let (decl, d, n) = resolve(&tree, chain[0], name, text)?;
        let end = scope_end(
            tree.ancestors(decl),
            self.root_at(decl.start_byte())?,
            text.len(),
        );
        variable(decl, d, n, end, text)
    }

    /// The parameters and locals declared inside `range` (a function, a body), in
    /// document order.
    pub fn variables_in(&self, range: &TextRange) -> Vec<Variable> {
        self.variables_mentioning(range, &[])
    }

    /// [`SourceFile::variables_in`], looking only into the statements whose text holds
    /// one of `words` (all of them when `words` is empty).
    fn variables_mentioning(&self, range: &TextRange, words: &[&str]) -> Vec<Variable> {
        let text = self.text();
        let mut out = Vec::new();
        let mentions = |n: Node| {
            words.is_empty()
                || text
                    .get(n.byte_range())
                    .is_some_and(|t| words.iter().any(|w| t.contains(w)))
        };
        for root in self.roots() {
            if root.end_byte() <= range.start || root.start_byte() >= range.end {
                continue;
            }
            walk(root, range, |n, stack| {
                let k = n.kind_name();
                if (k.ends_with("statement") || k == "declaration") && !mentions(n) {
                    return false;
                }
                if let Some(ds) = declarators(n) {
                    for d in ds {
                        let Some(name) =
                            declarator_name(d).filter(|n| n.kind_name() == "identifier")
                        else {
                            continue;
                        };
                        if range.contains(&name.start_byte()) {
                            let end = scope_end(stack.iter().rev().copied(), root, text.len());
                            out.extend(variable(n, d, name, end, text));
                        }
                    }
                }
                // Declarations sit in statements, lists and parameter lists, not inside
                // expressions (but a lambda's parameters and body hold some).
                k == "lambda_expression" || !k.ends_with("expression")
            });
        }
        out
    }

    /// The uses of `v` in its scope, in document order: every name that resolves to its
    /// declaration (not a shadowing one, not a member, a comment or a string).
    pub fn uses_of(&self, v: &Variable) -> Vec<VariableUse> {
        self.uses_among(v)
    }

    /// The variables declared inside `range` that `accept` keeps, each with its uses
    /// (as [`SourceFile::uses_of`] gives them): for a rule that looks at many locals of a
    /// function at once. Only the statements whose text holds one of `written` (the type
    /// names the rule accepts, say) are looked into; empty looks into all. Kept
    /// with the file's facts: asked again, neither is looked for again.
    pub fn variables_with_uses(
        &self,
        range: &TextRange,
        written: &[&str],
        accept: &dyn Fn(&Variable) -> bool,
    ) -> Vec<(Variable, Vec<VariableUse>)> {
        let Some(memo) = self.tree_memo() else {
            return Vec::new();
        };
        memo.variables(range, written, || self.variables_mentioning(range, written))
            .iter()
            .filter(|v| accept(v))
            .map(|v| {
                let uses = memo.uses(v.name_range.start, || self.uses_among(v));
                (v.clone(), uses.to_vec())
            })
            .collect()
    }

    /// The uses of `v`: the places its name is written in its scope, each a name node of
    /// the tree (not a comment, a string or a member), not itself a declared name, and
    /// not under a declaration of the same name that hides `v` there.
    fn uses_among(&self, v: &Variable) -> Vec<VariableUse> {
        let text = self.text();
        let mut out = Vec::new();
        let Some(scope_text) = text.get(v.scope.clone()) else {
            return out;
        };
        // The scopes of the declarations of the same name met so far (each comes before
        // the names it hides).
        let mut hidden: Vec<TextRange> = Vec::new();
        let mut from = 0;
        // The text only says where to look: each place is checked in the tree.
        while let Some(i) = crate::lex::find_word(scope_text, &v.name, from) {
            from = i + v.name.len();
            let at = v.scope.start + i;
            if hidden.iter().any(|h| h.contains(&at)) {
                continue;
            }
            let Some(root) = self.root_at(at) else {
                continue;
            };
            let chain = chain_at(root, at);
            let leaf = chain[0];
            if !matches!(leaf.kind_name(), "identifier" | "type_identifier")
                || leaf.start_byte() != at
                || leaf.end_byte() != at + v.name.len()
            {
                continue;
            }
            let parents = &chain[1..];
            if crate::symbol::is_declared_name(leaf, parents) {
                // A declaration of the same name: it hides `v` from its declarator on.
                let Some(pos) = parents.iter().position(|p| declarators(*p).is_some()) else {
                    continue;
                };
                let d = if pos == 0 { leaf } else { parents[pos - 1] };
                let end = scope_end(parents[pos + 1..].iter().copied(), root, text.len());
                hidden.push(d.end_byte()..end);
                continue;
            }
            let stack: Vec<Node> = parents.iter().rev().copied().collect();
            if is_member_name(leaf, &stack) {
                continue;
            }
            out.push(classify(parents, leaf, text));
        }
        out
    }

    /// The plain names used in the expression at `range`: identifiers that are not a
    /// member, a qualified name's part, a callee's name or under `sizeof`, with their
    /// ranges (the object of a method call, `pipe` in `pipe.commit()`, is one). A range
    /// over several chunks (the whole file) is read in each.
    pub fn names_in(&self, range: &TextRange) -> Vec<(String, TextRange)> {
        let text = self.text();
        let mut out = Vec::new();
        let Some(first) = self.root_at(range.start) else {
            return out;
        };
        // A range wider than one chunk's tree (a whole file) is read in each tree it meets.
        let roots = if first.end_byte() >= range.end {
            vec![first]
        } else {
            self.roots()
                .into_iter()
                .filter(|r| r.start_byte() < range.end && range.start < r.end_byte())
                .collect()
        };
        let mut skip: Vec<TextRange> = Vec::new();
        for root in roots {
            preorder(root, |n| {
                if n.end_byte() <= range.start || n.start_byte() >= range.end {
                    return false;
                }
                match n.kind_name() {
                    "sizeof_expression" => return false,
                    // `T::k`: the parts of a qualified name are not plain names; template
                    // arguments inside it (`cuda::f<n>`) are looked at.
                    "qualified_identifier" => {
                        for c in named_children(n) {
                            if matches!(
                                c.kind_name(),
                                "identifier" | "namespace_identifier" | "type_identifier"
                            ) {
                                skip.push(c.byte_range());
                            }
                        }
                    }
                    "call_expression" => {
                        // The callee's name, not the template arguments written with it.
                        let mut f = n.field("function");
                        for _ in 0..8 {
                            match f.map(|f| f.kind_name()) {
                                Some("qualified_identifier" | "template_function") => {
                                    f = f.and_then(|f| f.field("name"));
                                }
                                _ => break,
                            }
                        }
                        // `pipe.commit()`: the object is a plain name (the member is a
                        // field, never one).
                        if let Some(name) = f.filter(|f| f.kind_name() != "field_expression") {
                            skip.push(name.byte_range());
                        }
                    }
                    "identifier" | "type_identifier"
                        if range.contains(&n.start_byte())
                            && !skip.iter().any(|s| s.contains(&n.start_byte())) =>
                    {
                        out.push((node_text(n, text).to_string(), n.byte_range()));
                    }
                    _ => {}
                }
                true
            });
        }
        out
    }

    /// The type aliases the file declares (`using half_t = __half;`,
    /// `typedef __half2 h2;`) whose type is one name (after `const` and `struct`), as
    /// `(alias, type)` in document order; a leading `::` is dropped.
    pub fn type_aliases(&self) -> Vec<(String, String)> {
        let text = self.text();
        let mut out = Vec::new();
        if !text.contains("using") && !text.contains("typedef") {
            return out;
        }
        for root in self.roots() {
            preorder(root, |n| {
                let (aliases, ty) = match n.kind_name() {
                    "alias_declaration" => (
                        n.field("name").into_iter().collect::<Vec<_>>(),
                        n.field("type"),
                    ),
                    "type_definition" => (
                        crate::declarator::declarators(n)
                            .into_iter()
                            .filter(|d| d.kind_name() == "type_identifier")
                            .collect(),
                        n.field("type"),
                    ),
                    // Aliases live at namespace, class or block level, never inside
                    // expressions.
                    k => return !k.ends_with("expression"),
                };
                let Some(ty) = ty else {
                    return false;
                };
                let words: Vec<String> = squash_ws(node_text(ty, text))
                    .split(' ')
                    .filter(|w| !matches!(*w, "const" | "struct"))
                    .map(str::to_string)
                    .collect();
                let [ty] = words.as_slice() else {
                    return false;
                };
                let name_like = |s: &str| {
                    !s.is_empty()
                        && s.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
                };
                for a in aliases {
                    let alias = node_text(a, text);
                    if name_like(alias) && !alias.contains(':') && name_like(ty) {
                        out.push((alias.to_string(), ty.trim_start_matches("::").to_string()));
                    }
                }
                false
            });
        }
        out
    }

    /// The target of the plain assignment statement whose whole right side (through
    /// parentheses) is the expression at `range`: `y[i]` for the call in
    /// `y[i] = __hfma2(a, b, c);`.
    pub fn assignment_target(&self, range: &TextRange) -> Option<TextRange> {
        let text = self.text();
        let root = self.root_at(range.start)?;
        let mut node = root.descendant_for_byte_range(range.start, range.end)?;
        while node.byte_range() != *range {
            node = node.parent()?;
            if node.end_byte() > range.end || node.start_byte() < range.start {
                return None;
            }
        }
        let tree = Ancestry::few(self.roots(), text.len());
        let parents = tree.ancestors(node);
        let mut i = 0;
        while parents
            .get(i)
            .is_some_and(|p| p.kind_name() == "parenthesized_expression")
        {
            node = parents[i];
            i += 1;
        }
        let assignment = parents.get(i)?;
        let plain = assignment.kind_name() == "assignment_expression"
            && assignment.field("right") == Some(node)
            && assignment
                .field("operator")
                .is_some_and(|o| node_text(o, text) == "=")
            && parents
                .get(i + 1)
                .is_some_and(|s| s.kind_name() == "expression_statement");
        plain.then(|| assignment.field("left").map(|l| l.byte_range()))?
    }

    /// The ranges of the template arguments written after the callee at `callee_range`
    /// (`stages - 1` in `wait_prior<stages - 1>(pipe)`), each trimmed.
    pub fn template_argument_ranges(&self, callee_range: &TextRange) -> Vec<TextRange> {
        let last = callee_range.end.saturating_sub(1).max(callee_range.start);
        let Some(root) = self.root_at(last) else {
            return Vec::new();
        };
        // The template whose name ends the callee (`cuda::wait_prior<N>` is a qualified
        // name around the template).
        let chain = chain_at(root, last);
        chain
            .iter()
            .find(|n| {
                matches!(
                    n.kind_name(),
                    "template_function" | "template_method" | "template_type"
                ) && n
                    .field("name")
                    .is_some_and(|m| m.start_byte() <= last && last < m.end_byte())
            })
            .and_then(|t| t.field("arguments"))
            .map(|args| {
                named_children(args)
                    .into_iter()
                    .filter(|a| a.kind_name() != "comment")
                    .map(|a| a.byte_range())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The declaration `c`, its declarator `d` and the declared name node of the variable
/// `name` used at `use_node`.
fn resolve<'t>(
    tree: &Ancestry<'t>,
    use_node: Node<'t>,
    name: &str,
    text: &str,
) -> Option<(Node<'t>, Node<'t>, Node<'t>)> {
    let at = use_node.start_byte();
    for scope in tree.ancestors(use_node) {
        let Some(candidates) = scope_candidates(tree, scope, at) else {
            continue;
        };
        for &c in candidates.iter().rev() {
            if c.start_byte() > at {
                continue;
            }
            for d in declarators(c).unwrap_or_default() {
                let Some(n) = declarator_name(d) else {
                    continue;
                };
                if n.kind_name() == "identifier" && node_text(n, text) == name {
                    return Some((c, d, n));
                }
            }
        }
    }
    None
}

/// Calls `f(node, ancestors)` (the ancestors root first) for each node under `root` that
/// overlaps `range`, in document order; `f` returns whether to go into the node's
/// children. One cursor, no parent look-ups.
fn walk<'t>(root: Node<'t>, range: &TextRange, mut f: impl FnMut(Node<'t>, &[Node<'t>]) -> bool) {
    let mut cursor = root.walk();
    let mut stack: Vec<Node<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        let overlaps = node.end_byte() > range.start && node.start_byte() < range.end;
        if overlaps && f(node, &stack) && cursor.goto_first_child() {
            stack.push(node);
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            stack.pop();
        }
    }
}

/// Whether the name `n` (ancestors `stack`, root first) is a qualified name's part or a
/// declared name that is no variable (a function's), which no variable's use is.
fn is_member_name(n: Node, stack: &[Node]) -> bool {
    stack.last().is_some_and(|p| {
        (p.kind_name() == "qualified_identifier" && p.field("name") == Some(n))
            || (p.kind_name() == "function_declarator" && p.field("declarator") == Some(n))
    })
}

/// The kinds of node that end a variable's scope.
fn is_scope(n: Node) -> bool {
    matches!(
        n.kind_name(),
        "compound_statement"
            | "for_statement"
            | "for_range_loop"
            | "function_definition"
            | "translation_unit"
            | "declaration_list"
            | "lambda_expression"
    )
}

/// Where the scope of a declaration whose ancestors are `ancestors` (nearest first)
/// ends: the innermost block, loop or function around it; the file scope runs to the end
/// of the file, past the tree of this run.
fn scope_end<'t>(
    ancestors: impl IntoIterator<Item = Node<'t>>,
    root: Node<'t>,
    len: usize,
) -> usize {
    match ancestors.into_iter().find(|a| is_scope(*a)) {
        Some(s) if s != root => s.end_byte(),
        _ => len,
    }
}

/// The [`Variable`] that declarator `d` of declaration `c` declares as `name`, visible
/// up to `scope_end`.
fn variable<'t>(
    c: Node<'t>,
    d: Node<'t>,
    name: Node<'t>,
    scope_end: usize,
    text: &str,
) -> Option<Variable> {
    if !matches!(
        c.kind_name(),
        "declaration" | "parameter_declaration" | "optional_parameter_declaration"
    ) {
        return None;
    }
    // A function declaration is not a variable.
    let mut cur = d;
    for _ in 0..16 {
        if cur.kind_name() == "function_declarator" {
            return None;
        }
        match cur.field("declarator") {
            Some(n) if cur != name => cur = n,
            _ => break,
        }
    }
    let is_param = c.kind_name() != "declaration";
    let mut const_range = None;
    let mut is_constexpr = false;
    let mut is_volatile = false;
    for q in named_children(c) {
        if q.kind_name() == "type_qualifier" {
            match node_text(q, text).trim() {
                "const" => const_range = Some(q.byte_range()),
                "constexpr" => is_constexpr = true,
                "volatile" => is_volatile = true,
                _ => {}
            }
        }
    }
    let ty_node = c.field("type")?;
    let base = squash_ws(node_text(ty_node, text));
    let shares_declaration = declarators(c).is_some_and(|ds| ds.len() > 1);
    let target = if d.kind_name() == "init_declarator" {
        d.field("declarator").unwrap_or(d)
    } else {
        d
    };
    let marker = match target.kind_name() {
        "pointer_declarator" => "*",
        "reference_declarator" => "&",
        _ => "",
    };
    let init = if d.kind_name() == "init_declarator" {
        d.field("value").and_then(|v| match v.kind_name() {
            "initializer_list" | "argument_list" => match named_children(v).as_slice() {
                [one] => Some(one.byte_range()),
                _ => None,
            },
            _ => Some(v.byte_range()),
        })
    } else {
        c.field("default_value").map(|v| v.byte_range())
    };
    Some(Variable {
        name: node_text(name, text).to_string(),
        name_range: name.byte_range(),
        ty: format!("{base}{marker}"),
        ty_range: ty_node.byte_range(),
        shares_declaration,
        is_param,
        const_range,
        is_constexpr,
        is_volatile,
        declaration: c.byte_range(),
        init,
        scope: d.end_byte().min(scope_end)..scope_end,
    })
}

/// The call `arg` is an argument of when `parents[i]` (an ancestor of `arg`) is the
/// argument list holding it: the call's range, its callee as written, the argument's index.
fn call_argument(
    parents: &[Node],
    i: usize,
    arg: Node,
    text: &str,
) -> Option<(TextRange, String, usize)> {
    let list = parents
        .get(i)
        .filter(|l| l.kind_name() == "argument_list")?;
    let call = parents
        .get(i + 1)
        .filter(|c| c.kind_name() == "call_expression")?;
    let index = named_children(*list)
        .into_iter()
        .filter(|a| a.kind_name() != "comment")
        .position(|a| a == arg)?;
    let f = call.field("function")?;
    Some((call.byte_range(), squash_ws(node_text(f, text)), index))
}

/// What the use of a name at `n` does.
fn classify<'t>(parents: &[Node<'t>], n: Node<'t>, text: &str) -> VariableUse {
    let mut node = n;
    let mut cast_to = None;
    let mut i = 0;
    // Up through parentheses and casts.
    while let Some(&p) = parents.get(i) {
        match p.kind_name() {
            "parenthesized_expression" => {}
            "cast_expression" if p.field("value") == Some(node) => {
                cast_to.get_or_insert_with(|| {
                    p.field("type")
                        .map(|t| squash_ws(node_text(t, text)).replace(' ', ""))
                        .unwrap_or_default()
                });
            }
            "argument_list" => {
                // `reinterpret_cast<T*>(name)`: a call of a template named `*_cast`.
                let call = parents.get(i + 1).copied();
                let cast = call
                    .filter(|c| c.kind_name() == "call_expression")
                    .and_then(|c| c.field("function"))
                    .filter(|f| f.kind_name() == "template_function")
                    .filter(|f| {
                        f.field("name")
                            .is_some_and(|n| node_text(n, text).ends_with("_cast"))
                    });
                match cast {
                    Some(f) if named_children(p).len() == 1 => {
                        cast_to.get_or_insert_with(|| {
                            f.field("arguments")
                                .map(|a| {
                                    let t = node_text(a, text).trim();
                                    let t = t.strip_prefix('<').unwrap_or(t);
                                    squash_ws(t.strip_suffix('>').unwrap_or(t)).replace(' ', "")
                                })
                                .unwrap_or_default()
                        });
                        i += 1;
                        node = parents.get(i).copied().unwrap_or(p);
                        i += 1;
                        continue;
                    }
                    _ => break,
                }
            }
            _ => break,
        }
        node = p;
        i += 1;
    }
    let operand = node.byte_range();
    let parent = parents.get(i).copied();
    let mut write = None;
    let mut address_of = false;
    let mut argument_of = None;
    let mut stored = false;
    if let Some(p) = parent {
        match p.kind_name() {
            "assignment_expression" if p.field("right") == Some(node) => {
                stored = p
                    .field("operator")
                    .is_some_and(|o| node_text(o, text) == "=")
                    && parents
                        .get(i + 1)
                        .is_some_and(|s| s.kind_name() == "expression_statement");
            }
            "init_declarator" if p.field("value") == Some(node) => stored = true,
            "return_statement" => stored = true,
            "assignment_expression" if p.field("left") == Some(node) => {
                write = Some(VariableWrite {
                    op: p
                        .field("operator")
                        .map_or("=", |o| node_text(o, text))
                        .to_string(),
                    value: p.field("right").map(|r| r.byte_range()),
                    range: p.byte_range(),
                });
            }
            "update_expression" => {
                write = Some(VariableWrite {
                    op: p
                        .field("operator")
                        .map_or("++", |o| node_text(o, text))
                        .to_string(),
                    value: None,
                    range: p.byte_range(),
                });
            }
            "pointer_expression"
                if p.field("operator")
                    .is_some_and(|o| node_text(o, text) == "&") =>
            {
                address_of = true;
                // `&name` passed to a call (`memset(&acc, 0, sizeof acc)`), through
                // parentheses and casts.
                let (mut arg, mut j) = (p, i + 1);
                while let Some(&q) = parents.get(j) {
                    match q.kind_name() {
                        "parenthesized_expression" => {}
                        "cast_expression" if q.field("value") == Some(arg) => {}
                        _ => break,
                    }
                    arg = q;
                    j += 1;
                }
                argument_of = call_argument(parents, j, arg, text);
            }
            "argument_list" => argument_of = call_argument(parents, i, node, text),
            _ => {}
        }
    }
    VariableUse {
        range: n.byte_range(),
        write,
        address_of,
        cast_to,
        argument_of,
        stored,
        operand,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, needle: &str) -> usize {
        text.find(needle).unwrap()
    }

    #[test]
    fn a_local_its_qualifiers_and_its_uses() {
        let text = "__global__ void k(int n) {\n    const int s = n * 2; // s = 3\n    int t = s;\n    { int s = 4; t += s; }\n    t = (float)s + f(s, &t);\n    s++;\n}\n";
        let f = SourceFile::parse(text);
        let v = f.variable_at(at(text, "s = n")).unwrap();
        assert_eq!(v.ty, "int");
        assert!(!v.is_param && !v.is_constexpr);
        assert_eq!(&text[v.const_range.clone().unwrap()], "const");
        assert_eq!(&text[v.init.clone().unwrap()], "n * 2");
        let uses = f.uses_of(&v);
        // Not the comment, not the shadowing block's `s`.
        let shown: Vec<String> = uses
            .iter()
            .map(|u| {
                format!(
                    "{}:{:?}:{:?}:{:?}",
                    u.range.start,
                    u.write.as_ref().map(|w| w.op.clone()),
                    u.cast_to,
                    u.argument_of.as_ref().map(|a| (a.1.clone(), a.2))
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                format!("{}:None:None:None", at(text, "s;")),
                format!("{}:None:Some(\"float\"):None", at(text, "s + f")),
                format!("{}:None:None:Some((\"f\", 0))", at(text, "s, &t")),
                format!("{}:Some(\"++\"):None:None", at(text, "s++")),
            ]
        );
        let t = f.variable_at(at(text, "t = s;")).unwrap();
        let writes: Vec<_> = f
            .uses_of(&t)
            .into_iter()
            .filter(|u| u.write.is_some() || u.address_of)
            .map(|u| u.range.start)
            .collect();
        assert_eq!(
            writes,
            vec![at(text, "t += s"), at(text, "t = (float)"), at(text, "t);")]
        );
        let n = f.variable_at(at(text, "n * 2")).unwrap();
        assert!(n.is_param);
        assert_eq!(n.ty, "int");
    }

    #[test]
    fn an_address_passed_to_a_call_is_an_argument_use() {
        let text = "__global__ void k() {\n    float v = 0;\n    memset(&v, 0, 4);\n    f(1, (void*)&(v));\n    g(&v + 1);\n    float* p = &v;\n}\n";
        let f = SourceFile::parse(text);
        let v = f.variable_at(text.find("v = 0").unwrap()).unwrap();
        let shown: Vec<(bool, Option<(String, usize)>)> = f
            .uses_of(&v)
            .into_iter()
            .map(|u| {
                (
                    u.address_of,
                    u.argument_of.map(|(_, callee, i)| (callee, i)),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                (true, Some(("memset".to_string(), 0))),
                (true, Some(("f".to_string(), 1))),
                // An address in arithmetic or stored is not the argument itself.
                (true, None),
                (true, None),
            ]
        );
    }

    #[test]
    fn type_aliases_from_the_tree() {
        let text = "typedef __nv_bfloat162 bf2;\n// using commented = __half;\nusing pair = bf2;\ntypedef const __half half_t, h_t;\nconst char* s = \"using quoted = float;\";\n__global__ void k() { using local = ::float2; }\n";
        let f = SourceFile::parse(text);
        assert_eq!(
            f.type_aliases(),
            vec![
                ("bf2".to_string(), "__nv_bfloat162".to_string()),
                ("pair".to_string(), "bf2".to_string()),
                ("half_t".to_string(), "__half".to_string()),
                ("h_t".to_string(), "__half".to_string()),
                ("local".to_string(), "float2".to_string()),
            ]
        );
    }

    #[test]
    fn variables_with_uses_in_one_walk_agree_with_uses_of() {
        let text = "__global__ void k(int n) {\n    const int s = n * 2; // s = 3\n    int t = s;\n    { int s = 4; t += s; }\n    t = (float)s + f(s, &t);\n    s++;\n}\n";
        let f = SourceFile::parse(text);
        let all = f.variables_with_uses(&(0..text.len()), &[], &|v| !v.is_param);
        assert_eq!(all.len(), 3);
        for (v, uses) in &all {
            assert_eq!(uses, &f.uses_of(v), "{}", v.name);
        }
        assert_eq!(all[0].1.len(), 4);
    }

    #[test]
    fn names_template_arguments_and_casts() {
        let text = "__global__ void k(char* smem, int stages) {\n    float4* p = reinterpret_cast<float4*>(smem + 16);\n    wait_prior<stages - T::k>(sizeof(x) + g(y) + a.b);\n}\n";
        let f = SourceFile::parse(text);
        let callee = at(text, "wait_prior");
        let args = f.template_argument_ranges(&(callee..callee + "wait_prior".len()));
        assert_eq!(args.len(), 1);
        assert_eq!(&text[args[0].clone()], "stages - T::k");
        let names: Vec<String> = f
            .names_in(&(callee..at(text, ";\n}")))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, vec!["stages", "y", "a"]);
        let smem = f.variable_at(at(text, "smem +")).unwrap();
        assert_eq!(smem.ty, "char*");
        let p = f.variables_in(&(0..text.len()));
        assert_eq!(
            p.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            vec!["smem", "stages", "p"]
        );
        assert_eq!(
            &text[p[2].init.clone().unwrap()],
            "reinterpret_cast<float4*>(smem + 16)"
        );
    }
}
