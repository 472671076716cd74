//! A function body as the steps one thread takes ([`SourceFile::body_steps`]): its
//! statements with the `if`s, loops and exits around them, each loop's header lowered, for
//! the race analysis in `ide`, which walks the steps once per thread of a block.

use super::*;

/// A kernel's or device function's body as the steps one thread takes, in document order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodySteps {
    /// The function's name.
    pub function: String,
    /// The body's range.
    pub body: TextRange,
    /// The top-level steps of the body.
    pub steps: Vec<Step>,
    /// Reads and writes of `__shared__` scalars (`__shared__ int flag;`), which are no
    /// subscripts: the array is the scalar, the index and byte offset 0.
    pub scalar_accesses: Vec<SharedAccess>,
    /// Locals declared in the body, with their initialiser as written.
    pub locals: Vec<(String, Option<String>)>,
}

/// One step of a [`BodySteps`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A statement without statements inside (an expression, a declaration): its
    /// accesses and calls run in it.
    Stmt {
        /// Its range.
        range: TextRange,
    },
    /// An `if` (`else` steps empty when there is none).
    If {
        /// The whole statement.
        range: TextRange,
        /// The condition as written.
        condition: String,
        /// The condition's range.
        condition_range: TextRange,
        /// The condition as comparisons that all hold ([`SourceFile::guard_comparisons`]),
        /// `None` when it is anything else.
        comparisons: Option<Vec<GuardComparison>>,
        /// For a disjunction (`x >= nx || y >= ny`), the comparisons that all hold exactly
        /// when the condition does not (`x < nx`, `y < ny`); `None` otherwise.
        negated_comparisons: Option<Vec<GuardComparison>>,
        /// The steps when it holds.
        then_steps: Vec<Step>,
        /// The steps of the `else` branch.
        else_steps: Vec<Step>,
    },
    /// A `for` loop, or a `while`/`do` loop that counts like one (the variable it
    /// compares declared with its start value just before it and updated only by the
    /// body's last statement, which is then the update and not part of `body`).
    For {
        /// The whole statement.
        range: TextRange,
        /// The variable its initialiser sets.
        var: Option<String>,
        /// Its start value, lowered.
        start: Option<IndexExpr>,
        /// The condition as comparisons that all hold; `None` when it is anything else.
        condition: Option<Vec<GuardComparison>>,
        /// The update, `var = var op value`; `None` when it is anything else.
        update: Option<(BinOp, IndexExpr)>,
        /// The body's steps.
        body: Vec<Step>,
        /// Whether the condition is checked before the first iteration (`false` for
        /// `do … while`).
        check_first: bool,
    },
    /// Any other `while` or `do` loop, or a range `for`: how often it runs is not
    /// modelled.
    Loop {
        /// The whole statement.
        range: TextRange,
        /// The body's steps.
        body: Vec<Step>,
    },
    /// `return`, `break` or `continue`.
    Exit {
        /// The statement.
        range: TextRange,
        /// `return`, `break` or `continue`.
        kind: &'static str,
    },
    /// A statement whose paths are not modelled (`switch`, `goto`, a label, `#if` inside the
    /// body): its steps may or may not run.
    Other {
        /// The whole statement.
        range: TextRange,
        /// The steps inside.
        body: Vec<Step>,
    },
}

impl Step {
    /// The step's range.
    pub fn range(&self) -> &TextRange {
        match self {
            Step::Stmt { range }
            | Step::If { range, .. }
            | Step::For { range, .. }
            | Step::Loop { range, .. }
            | Step::Exit { range, .. }
            | Step::Other { range, .. } => range,
        }
    }
}

/// How deep statements nest before the rest is taken as one opaque step.
const MAX_NESTING: usize = 64;

impl SourceFile {
    /// The body of the kernel or device function that contains `offset` as the steps one
    /// thread takes. `None` outside a function with a body.
    pub fn body_steps(&self, offset: usize) -> Option<BodySteps> {
        let facts = self.facts();
        let function = facts.function_at(offset)?;
        let body_range = function.body_range.clone()?;
        let text = self.text();
        let roots = self.roots();
        let root = roots
            .iter()
            .find(|r| r.start_byte() <= body_range.start && body_range.end <= r.end_byte())?;
        let body = root.descendant_for_byte_range(body_range.start, body_range.end)?;
        if body.kind_name() != "compound_statement" {
            return None;
        }
        let tree = Ancestry::few(roots.clone(), text.len());
        let low = Lowerer::new(text, facts, &tree);
        let walk = StepWalk {
            file: self,
            low: &low,
        };
        let steps = walk.block(body, 0);
        let mut out = BodySteps {
            function: function.name.clone(),
            body: body_range,
            steps,
            scalar_accesses: Vec::new(),
            locals: Vec::new(),
        };
        walk.names(body, &function.name, &mut out);
        Some(out)
    }
}

/// The kinds of statement that [`Step::Stmt`] holds: statements without statements inside.
const SIMPLE_STATEMENTS: &[&str] = &[
    "expression_statement",
    "declaration",
    "type_definition",
    "alias_declaration",
    "static_assert_declaration",
    "using_declaration",
    "asm_statement",
];

impl SourceFile {
    /// The range of the innermost statement without statements inside (an expression, a
    /// declaration, an `asm` statement: what [`Step::Stmt`] holds) that contains `range`,
    /// through its `;`. `None` when `range` lies in no such statement of a function body
    /// (in a condition, a loop header, a block's braces).
    pub fn statement_at(&self, range: &TextRange) -> Option<TextRange> {
        match self.tree_memo() {
            Some(memo) => memo.statement(range, || self.find_statement_at(range)),
            None => self.find_statement_at(range),
        }
    }

    fn find_statement_at(&self, range: &TextRange) -> Option<TextRange> {
        let root = self.root_at(range.start)?;
        let mut node = root.descendant_for_byte_range(range.start, range.end)?;
        loop {
            let kind = node.kind_name();
            if SIMPLE_STATEMENTS.contains(&kind) {
                return Some(node.byte_range());
            }
            if kind == "compound_statement"
                || kind == "function_definition"
                || kind == "condition_clause"
                || kind.ends_with("_statement")
            {
                return None;
            }
            node = node.parent()?;
        }
    }
}

impl SourceFile {
    /// Whether `range` is exactly a declaration statement (`int i = n * 4;`).
    pub fn is_declaration(&self, range: &TextRange) -> bool {
        self.statement_node(range)
            .is_some_and(|n| n.kind_name() == "declaration")
    }

    /// Whether the statement at `range` is a declaration that declares `name` (`int off =
    /// …;`, `float a, off;`), not one that only reads it.
    pub fn declares(&self, range: &TextRange, name: &str) -> bool {
        let text = self.text();
        let Some(n) = self
            .statement_node(range)
            .filter(|n| n.kind_name() == "declaration")
        else {
            return false;
        };
        let mut cursor = n.walk();
        let declarators: Vec<Node<'_>> = n
            .children_by_field_name("declarator", &mut cursor)
            .collect();
        declarators.into_iter().any(|mut d| {
            // `int off = …` (init_declarator), `int a[4]`, `int* p`: down to the name.
            for _ in 0..8 {
                if d.kind_name() == "identifier" {
                    return &text[d.byte_range()] == name;
                }
                match d.field("declarator") {
                    Some(inner) => d = inner,
                    None => return false,
                }
            }
            false
        })
    }

    /// The node whose range is exactly `range` (or whose only child it is).
    fn statement_node(&self, range: &TextRange) -> Option<Node<'_>> {
        let n = self
            .root_at(range.start)?
            .descendant_for_byte_range(range.start, range.end)?;
        if n.byte_range() == *range {
            Some(n)
        } else {
            n.parent().filter(|p| p.byte_range() == *range)
        }
    }

    /// Whether the statement at `range` only assigns named locals (`m = c - 1 - y;`,
    /// `i += 2, j--;`): an expression statement of plain-name assignments and updates.
    /// (What the right sides read is the caller's question.)
    pub fn is_local_assignment(&self, range: &TextRange) -> bool {
        fn assigns_a_name(n: Node<'_>) -> bool {
            let target = match n.kind_name() {
                "assignment_expression" => n.field("left"),
                "update_expression" => n.field("argument"),
                "comma_expression" => {
                    return [n.field("left"), n.field("right")]
                        .into_iter()
                        .all(|c| c.is_some_and(assigns_a_name))
                }
                "parenthesized_expression" => return n.named_child(0).is_some_and(assigns_a_name),
                _ => return false,
            };
            target.is_some_and(|t| t.kind_name() == "identifier")
        }
        self.statement_node(range)
            .filter(|n| n.kind_name() == "expression_statement")
            .and_then(|n| n.named_child(0))
            .is_some_and(assigns_a_name)
    }
}

impl SourceFile {
    /// The statements without statements inside that lie in `range` (a loop, a body), at
    /// any depth, in document order: what [`Step::Stmt`] and [`Step::Exit`] hold, without
    /// lowering anything (a `for` header's declaration is none; a lambda's body is part of
    /// its statement). Kept with the file's facts.
    pub fn simple_statements(&self, range: &TextRange) -> Vec<TextRange> {
        match self.tree_memo() {
            Some(memo) => memo
                .simple_statements(range, || self.find_simple_statements(range))
                .to_vec(),
            None => self.find_simple_statements(range),
        }
    }

    fn find_simple_statements(&self, range: &TextRange) -> Vec<TextRange> {
        let mut out = Vec::new();
        // From the smallest node around the range, not the whole chunk.
        let Some(root) = self
            .root_at(range.start)
            .and_then(|r| r.descendant_for_byte_range(range.start, range.end))
        else {
            return out;
        };
        preorder(root, |n| {
            if n.end_byte() <= range.start || n.start_byte() >= range.end {
                return false;
            }
            let kind = n.kind_name();
            let simple = SIMPLE_STATEMENTS.contains(&kind)
                || matches!(
                    kind,
                    "return_statement" | "break_statement" | "continue_statement"
                );
            if !simple {
                return true;
            }
            let header = n.parent().is_some_and(|p| {
                matches!(p.kind_name(), "for_statement" | "condition_clause")
                    && p.field("body") != Some(n)
            });
            if !header && range.start <= n.start_byte() && n.end_byte() <= range.end {
                out.push(n.byte_range());
            }
            false
        });
        out
    }

    /// Whether the statement at `statement` (a range [`SourceFile::statement_at`] gives)
    /// is one of the statements of a `{ … }` block, not the whole body of a brace-less
    /// `if`, `else` or loop (which cannot be deleted without leaving the branch empty).
    pub fn in_block(&self, statement: &TextRange) -> bool {
        let Some(root) = self.root_at(statement.start) else {
            return false;
        };
        let Some(mut node) = root.descendant_for_byte_range(statement.start, statement.end) else {
            return false;
        };
        while let Some(p) = node.parent() {
            if p.byte_range() != *statement {
                return node.byte_range() == *statement && p.kind_name() == "compound_statement";
            }
            node = p;
        }
        false
    }
}

struct StepWalk<'s, 'a> {
    file: &'s SourceFile,
    low: &'s Lowerer<'a>,
}

impl<'a> StepWalk<'_, 'a> {
    /// The steps of a statement list (a compound statement's children).
    fn block(&self, node: Node<'a>, depth: usize) -> Vec<Step> {
        let mut out = Vec::new();
        for c in named_children(node) {
            self.statement(c, depth, &mut out);
        }
        out
    }

    /// The steps of one statement, appended to `out`.
    fn statement(&self, node: Node<'a>, depth: usize, out: &mut Vec<Step>) {
        let range = node.byte_range();
        if depth > MAX_NESTING {
            out.push(Step::Other {
                range: range.clone(),
                body: vec![Step::Stmt { range }],
            });
            return;
        }
        let d = depth + 1;
        match node.kind_name() {
            "compound_statement" => out.extend(self.block(node, d)),
            "comment" => {}
            k if SIMPLE_STATEMENTS.contains(&k) => out.push(Step::Stmt { range }),
            "if_statement" => {
                let Some(cond) = node.field("condition") else {
                    out.push(self.opaque(node, d));
                    return;
                };
                // `if constexpr` and `if` with an initialiser are still conditions; the
                // comparisons come from the condition's value.
                let value = cond.field("value").unwrap_or(cond);
                let then_steps = node
                    .field("consequence")
                    .map(|c| self.sub(c, d))
                    .unwrap_or_default();
                let else_steps = node
                    .field("alternative")
                    .map(|a| {
                        let inner = named_children(a);
                        match inner.as_slice() {
                            [one] if a.kind_name() == "else_clause" => self.sub(*one, d),
                            _ => self.sub(a, d),
                        }
                    })
                    .unwrap_or_default();
                let comparisons = self.file.guard_comparisons(&value.byte_range());
                let negated_comparisons = match comparisons {
                    Some(_) => None,
                    None => self
                        .file
                        .guard_comparisons_in(&value.byte_range(), &[], false, true)
                        .and_then(|(c, negated)| negated.then_some(c)),
                };
                out.push(Step::If {
                    range,
                    condition: squash_ws(node_text(value, self.low.text)),
                    condition_range: value.byte_range(),
                    comparisons,
                    negated_comparisons,
                    then_steps,
                    else_steps,
                });
            }
            "for_statement" => {
                let body = node
                    .field("body")
                    .map(|b| self.sub(b, d))
                    .unwrap_or_default();
                let header = self.low.for_header(node, "");
                let (var, start) = match &header {
                    Some((start, var, ..)) => (
                        Some(var.clone()),
                        start.as_ref().map(|(e, at)| self.low.lower(e, *at, 0)),
                    ),
                    None => (None, None),
                };
                let condition = node
                    .field("condition")
                    .and_then(|c| self.file.guard_comparisons(&c.byte_range()));
                let update = var
                    .as_deref()
                    .and_then(|v| node.field("update").and_then(|u| self.update(u, v)));
                out.push(Step::For {
                    range,
                    var,
                    start,
                    condition,
                    update,
                    body,
                    check_first: true,
                });
            }
            "while_statement" | "do_statement"
                if self.low.while_header(node, "").is_some_and(|h| h.is_some()) =>
            {
                let h = self.low.while_header(node, "");
                let Some(w) = h.as_deref().and_then(Option::as_ref) else {
                    return;
                };
                let (start, var, ..) = &w.header;
                let start = start.as_ref().map(|(e, at)| self.low.lower(e, *at, 0));
                let update = self.update(w.update, var);
                let condition = self.file.guard_comparisons(&w.condition.byte_range());
                let mut body = Vec::new();
                if let Some(b) = node.field("body") {
                    for c in named_children(b) {
                        if c.id() != w.update_stmt.id() {
                            self.statement(c, d, &mut body);
                        }
                    }
                }
                out.push(Step::For {
                    range,
                    var: Some(var.clone()),
                    start,
                    condition,
                    update,
                    body,
                    check_first: w.check_first,
                });
            }
            "while_statement" | "do_statement" | "for_range_loop" => {
                let body = node
                    .field("body")
                    .map(|b| self.sub(b, d))
                    .unwrap_or_default();
                out.push(Step::Loop { range, body });
            }
            "return_statement" => out.push(Step::Exit {
                range,
                kind: "return",
            }),
            "break_statement" => out.push(Step::Exit {
                range,
                kind: "break",
            }),
            "continue_statement" => out.push(Step::Exit {
                range,
                kind: "continue",
            }),
            "attributed_statement" => {
                let inner = named_children(node);
                match inner.last() {
                    Some(s) => self.statement(*s, d, out),
                    None => out.push(Step::Stmt { range }),
                }
            }
            k if k.starts_with("preproc_") && !has_statement(node) => {}
            _ => out.push(self.opaque(node, d)),
        }
    }

    /// The steps of a branch or loop body.
    fn sub(&self, node: Node<'a>, depth: usize) -> Vec<Step> {
        let mut out = Vec::new();
        self.statement(node, depth, &mut out);
        out
    }

    /// A statement whose paths are not modelled, with the steps of the statements inside.
    fn opaque(&self, node: Node<'a>, depth: usize) -> Step {
        let mut body = Vec::new();
        for c in named_children(node) {
            if is_statement(c) {
                self.statement(c, depth, &mut body);
            } else if c.kind_name().ends_with("_expression") {
                body.push(Step::Stmt {
                    range: c.byte_range(),
                });
            } else {
                // A `case` body's statements and the like.
                for g in named_children(c) {
                    if is_statement(g) {
                        self.statement(g, depth, &mut body);
                    }
                }
            }
        }
        if body.is_empty() {
            body.push(Step::Stmt {
                range: node.byte_range(),
            });
        }
        Step::Other {
            range: node.byte_range(),
            body,
        }
    }

    /// A `for` update of `var` as `var = var op value`: `++`, `--`, `+=`, `-=`, `*=`,
    /// `/=`, `<<=`, `>>=`, or `var = var op value` written out.
    fn update(&self, u: Node<'a>, var: &str) -> Option<(BinOp, IndexExpr)> {
        let text = self.low.text;
        match u.kind_name() {
            "update_expression" => {
                let arg = u.field("argument")?;
                if node_text(arg, text) != var {
                    return None;
                }
                let op = u.field("operator").map(|o| node_text(o, text))?;
                Some(match op {
                    "++" => (BinOp::Add, IndexExpr::Int(1)),
                    "--" => (BinOp::Sub, IndexExpr::Int(1)),
                    _ => return None,
                })
            }
            "assignment_expression" => {
                let left = u.field("left")?;
                if node_text(left, text) != var {
                    return None;
                }
                let right = u.field("right")?;
                let op = node_text(u.field("operator")?, text);
                if op == "=" {
                    // `s = s / 2`.
                    if let Expr::Binary(l, bop, r) = from_node(right, text, 0) {
                        if matches!(&*l, Expr::Name(n) if n == var) {
                            let bop = BinOp::from_symbol(bop)?;
                            return Some((bop, self.low.lower(&r, right, 0)));
                        }
                    }
                    return None;
                }
                let bop = BinOp::from_symbol(op.strip_suffix('=')?)?;
                Some((bop, self.low.lower(&from_node(right, text, 0), right, 0)))
            }
            "comma_expression" | "parenthesized_expression" => None,
            _ => None,
        }
    }

    /// The body's locals and the accesses of `__shared__` scalars.
    fn names(&self, body: Node<'a>, function: &str, out: &mut BodySteps) {
        let text = self.low.text;
        let facts = self.low.facts;
        preorder(body, |node| {
            match node.kind_name() {
                "init_declarator" => {
                    if let Some(n) = node.field("declarator").and_then(declarator_name) {
                        let init = node.field("value").map(|v| squash_ws(node_text(v, text)));
                        out.locals.push((node_text(n, text).to_string(), init));
                    }
                }
                "identifier" => {
                    let name = node_text(node, text);
                    let scalar = facts.shared_named(name, node.start_byte()).filter(|d| {
                        d.dims.is_empty() && !d.is_extern && d.function.as_deref() == Some(function)
                    });
                    if let Some(d) = scalar {
                        let above = self.low.ancestors(node);
                        let is_decl = d.name_range == node.byte_range()
                            || above.first().is_some_and(|p| {
                                matches!(p.kind_name(), "field_expression" | "init_declarator")
                                    && p.field("declarator") != Some(node)
                                    && p.field("argument") != Some(node)
                            });
                        if !is_decl && !d.range.contains(&node.start_byte()) {
                            let kind = access_kind(&above, node, text);
                            out.scalar_accesses.push(SharedAccess::new(
                                node.byte_range(),
                                AccessData {
                                    array: name.to_string(),
                                    root: name.to_string(),
                                    kind,
                                    index_texts: Vec::new(),
                                    indices: Vec::new(),
                                    element_size: d.element_size,
                                    width: d.element_size,
                                    cast_type: None,
                                    byte_offset: IndexExpr::Int(0),
                                    function: Some(function.to_string()),
                                },
                            ));
                        }
                    }
                }
                _ => {}
            }
            true
        });
    }
}

/// Whether `node` is a statement.
fn is_statement(node: Node) -> bool {
    let k = node.kind_name();
    k.ends_with("_statement") || k == "declaration" || k == "for_range_loop"
}

/// Whether a preprocessor node holds statements (`#if` around code).
fn has_statement(node: Node) -> bool {
    named_children(node).into_iter().any(is_statement)
}

#[cfg(test)]
mod tests {
    use super::Step;
    use crate::source::SourceFile;

    fn shape(steps: &[Step], text: &str, out: &mut Vec<String>, depth: usize) {
        for s in steps {
            let pad = "  ".repeat(depth);
            match s {
                Step::Stmt { range } => out.push(format!("{pad}stmt {}", &text[range.clone()])),
                Step::If {
                    condition,
                    comparisons,
                    then_steps,
                    else_steps,
                    ..
                } => {
                    out.push(format!(
                        "{pad}if {condition} ({} comparisons)",
                        comparisons.as_ref().map_or(0, Vec::len)
                    ));
                    shape(then_steps, text, out, depth + 1);
                    if !else_steps.is_empty() {
                        out.push(format!("{pad}else"));
                        shape(else_steps, text, out, depth + 1);
                    }
                }
                Step::For {
                    var,
                    start,
                    condition,
                    update,
                    body,
                    check_first,
                    ..
                } => {
                    out.push(
                        format!(
                            "{pad}{} {var:?} from",
                            if *check_first { "for" } else { "do-for" }
                        ) + &format!(
                            " {} while {} comparisons, update {}",
                            start.as_ref().map_or("?".into(), |s| format!("{s:#}")),
                            condition.as_ref().map_or(0, Vec::len),
                            update
                                .as_ref()
                                .map_or("?".into(), |(op, by)| format!("{} {by}", op.symbol()))
                        ),
                    );
                    shape(body, text, out, depth + 1);
                }
                Step::Loop { body, .. } => {
                    out.push(format!("{pad}loop"));
                    shape(body, text, out, depth + 1);
                }
                Step::Exit { kind, .. } => out.push(format!("{pad}{kind}")),
                Step::Other { body, .. } => {
                    out.push(format!("{pad}other"));
                    shape(body, text, out, depth + 1);
                }
            }
        }
    }

    /// A reduction's steps: the loop header lowered, the guard read as comparisons, the
    /// early exit and the shared scalar's accesses.
    #[test]
    fn reduction_steps() {
        let text = r#"__global__ void reduce(float* out, const float* in, int n) {
    __shared__ float s[256];
    __shared__ int flag;
    int tid = threadIdx.x;
    int i = blockIdx.x * 256 + tid;
    if (i >= n) return;
    s[tid] = in[i];
    flag = tid;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    int j = 0;
    while (j < 4) { j++; }
    if (tid == 0) out[blockIdx.x] = s[0]; else { }
}
"#;
        let file = SourceFile::parse(text);
        let steps = file
            .body_steps(text.find("__syncthreads").unwrap())
            .unwrap();
        let mut out = Vec::new();
        shape(&steps.steps, text, &mut out, 0);
        expect_test::expect![[r#"
            stmt __shared__ float s[256];
            stmt __shared__ int flag;
            stmt int tid = threadIdx.x;
            stmt int i = blockIdx.x * 256 + tid;
            if i >= n (1 comparisons)
              return
            stmt s[tid] = in[i];
            stmt flag = tid;
            stmt __syncthreads();
            for Some("k") from (blockDim.x / 2) while 1 comparisons, update >> 1
              if tid < k (1 comparisons)
                stmt s[tid] += s[tid + k];
              stmt __syncthreads();
            stmt int j = 0;
            for Some("j") from 0 while 1 comparisons, update + 1
            if tid == 0 (1 comparisons)
              stmt out[blockIdx.x] = s[0];"#]]
        .assert_eq(&out.join("\n"));
        assert_eq!(
            steps.scalar_accesses.len(),
            1,
            "{:?}",
            steps.scalar_accesses
        );
        assert_eq!(steps.scalar_accesses[0].kind, crate::AccessKind::Store);
        assert!(steps
            .locals
            .iter()
            .any(|(n, i)| n == "i" && i.as_deref() == Some("blockIdx.x * 256 + tid")));
    }

    /// A `while` or `do` loop counts like a `for` only when its variable is declared just
    /// before it and changed by the body's last statement alone, with no `continue`
    /// skipping that update; otherwise it stays a loop whose trips are not modelled.
    #[test]
    fn while_loops_that_count() {
        let text = r#"__global__ void k(float* s, int n) {
    int a = 8;
    while (a > 0) {
        s[a] = 0;
        a >>= 1;
    }
    int b = 0;
    do {
        s[b] += 1;
        b += 2;
    } while (b < 16);
    int c = 0;
    while (c < n) {
        if (s[c] > 0) { c += 2; continue; }
        c++;
    }
    int d = 0;
    s[0] = 1;
    while (d < 4) { d++; }
}"#;
        let file = SourceFile::parse(text);
        let steps = file.body_steps(text.find("s[a]").unwrap()).unwrap();
        let mut out = Vec::new();
        shape(&steps.steps, text, &mut out, 0);
        expect_test::expect![[r#"
            stmt int a = 8;
            for Some("a") from 8 while 1 comparisons, update >> 1
              stmt s[a] = 0;
            stmt int b = 0;
            do-for Some("b") from 0 while 1 comparisons, update + 2
              stmt s[b] += 1;
            stmt int c = 0;
            loop
              if s[c] > 0 (1 comparisons)
                stmt c += 2;
                continue
              stmt c++;
            stmt int d = 0;
            stmt s[0] = 1;
            loop
              stmt d++;"#]]
        .assert_eq(&out.join("\n"));
    }

    #[test]
    fn the_statement_around_a_range() {
        let text = "__global__ void k(int* g) {\n    if (threadIdx.x == 0) g[0] = f(1);\n    for (int i = 0; i < 4; ++i) {\n        asm volatile(\"red.add.u32 [%0], 1;\" :: \"l\"(g));\n    }\n}\n";
        let file = SourceFile::parse(text);
        let at = |n: &str| text.find(n).unwrap();
        let call = at("f(1)")..at("f(1)") + 4;
        assert_eq!(
            file.statement_at(&call).map(|r| &text[r]),
            Some("g[0] = f(1);")
        );
        let asm = at("red.add");
        assert_eq!(
            file.statement_at(&(asm..asm + 3)).map(|r| &text[r]),
            Some("asm volatile(\"red.add.u32 [%0], 1;\" :: \"l\"(g));")
        );
        // The `if`'s body is no statement of a block; the `asm` statement is.
        assert!(!file.in_block(&file.statement_at(&call).unwrap()));
        assert!(file.in_block(&file.statement_at(&(asm..asm + 3)).unwrap()));
        // The loop's statements: not its header's declaration.
        let lp = at("for (")..at("    }\n}");
        let inner: Vec<&str> = file
            .simple_statements(&lp)
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(
            inner,
            ["asm volatile(\"red.add.u32 [%0], 1;\" :: \"l\"(g));"]
        );
        // A condition and a loop header are in no such statement.
        assert_eq!(
            file.statement_at(&(at("threadIdx")..at("threadIdx") + 9)),
            None
        );
        assert_eq!(file.statement_at(&(at("i < 4")..at("i < 4") + 5)), None);
    }
}
