//! Control flow of one function: its statements as a tree of sequences, branches, loops
//! and switches, the `return`, `continue` and `break` statements with the statement each
//! one leaves, and which points a thread can still reach after a statement.
//!
//! The tree follows the function's structure, so a query is a walk up and down it rather
//! than a graph search: after a statement a thread goes on with the statements after it
//! in its sequence (unless one of them cannot complete: a jump, or an `if` whose two
//! branches both jump), around its loop and out of it, through the `case`s below its
//! `case` and out of its `switch`. Code in lambdas and in `#if` blocks is read as one
//! statement that completes.
//!
//! ```
//! use kernaut_syntax::{JumpKind, SourceFile};
//!
//! let text = "__global__ void k(int n) {\n  for (int i = 0; i < n; ++i) {\n    if (threadIdx.x > i) continue;\n    __syncthreads();\n  }\n}\n";
//! let file = SourceFile::parse(text);
//! let flow = file.control_flow(text.find("for").unwrap()).unwrap();
//! let jump = &flow.jumps[0];
//! assert_eq!(jump.kind, JumpKind::Continue);
//! assert_eq!(&text[jump.target.clone().unwrap()][..3], "for");
//! let guard = text.find("if (").unwrap()..text.find(" continue;").unwrap() + 10;
//! let barrier = text.find("__syncthreads").unwrap();
//! assert!(flow.reaches_after(&guard, barrier, None));
//! // Later in the same iteration, without going round the loop.
//! assert!(flow.reaches_after(&guard, barrier, Some(&jump.target.clone().unwrap())));
//! ```

use std::sync::Arc;

use tree_sitter::Node;

use crate::source::SourceFile;
use crate::util::{chain_at, named_children, NodeExt, MAX_DEPTH};
use crate::TextRange;

/// What a `return`, `continue` or `break` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JumpKind {
    /// Leaves the function.
    Return,
    /// Goes to the head of the innermost loop.
    Continue,
    /// Leaves the innermost loop or `switch`.
    Break,
}

impl JumpKind {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            JumpKind::Return => "return",
            JumpKind::Continue => "continue",
            JumpKind::Break => "break",
        }
    }
}

/// A `return`, `continue` or `break` statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Jump {
    /// What it does.
    pub kind: JumpKind,
    /// The statement, its `;` included.
    pub range: TextRange,
    /// The loop a `continue` goes round or a `break` leaves, or the `switch` a `break`
    /// leaves; `None` for a `return` (it leaves the function), and for a jump with no
    /// loop around it.
    pub target: Option<TextRange>,
    /// Whether the `target` is a `switch` (only for `break`).
    pub leaves_switch: bool,
    /// Its statement in the tree.
    node: usize,
}

/// The kind of a statement of the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The function body, a `{ … }` block or a `case` with its statements.
    Seq,
    /// The body of a `switch`: a sequence of `case`s, entered at any of them.
    SwitchBody,
    /// An `if`: its children are the branch taken when true and, where written, the
    /// `else` branch.
    If,
    /// A loop: its child is the body.
    Loop,
    /// `do { … } while (0)`: a block that a `break` or `continue` leaves, run once (no
    /// way back to its start).
    Once,
    /// A `switch`: its child is its body.
    Switch,
    /// A jump.
    Jump(JumpKind),
    /// Any other statement (it completes).
    Other,
}

#[derive(Clone, Debug)]
struct Stmt {
    kind: Kind,
    range: TextRange,
    parent: Option<usize>,
    children: Vec<usize>,
    /// Whether a thread that enters it can come out at its end.
    completes: bool,
    /// Whether a `continue` or `break` inside it goes to a loop or `switch` around it.
    exits: bool,
}

/// A statement that runs after another ([`ControlFlow::runs_after`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaterStatement {
    /// Its range.
    pub range: TextRange,
    /// What it is.
    pub kind: LaterKind,
}

/// The shape of a [`LaterStatement`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaterKind {
    /// An `if` with no `else`.
    IfWithoutElse,
    /// A `return`.
    Return,
    /// Anything else.
    Other,
}

/// The shape of one statement of the tree ([`ControlFlow::shape`]), with the ranges of
/// the statements it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StatementShape {
    /// The function body or a `{ … }` block: its statements in order.
    Block(Vec<TextRange>),
    /// An `if`: the branch taken when true and the `else` branch, where written.
    If(TextRange, Option<TextRange>),
    /// A loop (`for`, `while`, `do`, range `for`): its body.
    Loop(TextRange),
    /// A `switch`, or a `case` inside one.
    Switch,
    /// A `return`, `continue` or `break`.
    Jump(JumpKind),
    /// Any other statement (it completes; code in lambdas and `#if` blocks included).
    Other,
}

/// The control flow of one function ([`SourceFile::control_flow`]).
#[derive(Clone, Debug)]
pub struct ControlFlow {
    /// The function (its `function_definition`).
    pub function: TextRange,
    /// Its body.
    pub body: TextRange,
    /// Every `return`, `continue` and `break` of the function outside lambdas, in
    /// document order.
    pub jumps: Vec<Jump>,
    stmts: Vec<Stmt>,
}

impl SourceFile {
    /// The statements of every arm of the preprocessor conditional at `range` (`#if`,
    /// `#ifdef`, with their `#elif`/`#else`), nested conditionals opened, as later
    /// statements ([`LaterStatement`]); `None` where `range` is not such a block. Kept
    /// with the file's facts.
    pub fn conditional_statements(&self, range: &TextRange) -> Option<Arc<[LaterStatement]>> {
        match self.tree_memo() {
            Some(memo) => memo.arms(range, || self.find_conditional_statements(range)),
            None => self.find_conditional_statements(range).map(Into::into),
        }
    }

    fn find_conditional_statements(&self, range: &TextRange) -> Option<Vec<LaterStatement>> {
        let root = self.root_at(range.start)?;
        let node = root.descendant_for_byte_range(range.start, range.end)?;
        let node = std::iter::successors(Some(node), |n| n.parent())
            .take_while(|n| n.byte_range() == *range || n.byte_range().contains(&range.start))
            .find(|n| n.byte_range() == *range)?;
        let mut out = Vec::new();
        conditional_arms(node, &mut out, 0).then_some(out)
    }

    /// The control flow of the function around `offset`; `None` outside every function
    /// with a body. Kept with the file's facts, by function: asked again, the flow is
    /// not built again.
    pub fn control_flow(&self, offset: usize) -> Option<Arc<ControlFlow>> {
        let root = self.root_at(offset)?;
        let chain = chain_at(root, offset);
        let f = *chain
            .iter()
            .find(|n| n.kind_name() == "function_definition")?;
        let body = f.field("body")?;
        // A file without trees has no function here: the memo is there.
        let memo = self.tree_memo()?;
        Some(memo.flow(&f.byte_range(), || {
            let mut flow = ControlFlow {
                function: f.byte_range(),
                body: body.byte_range(),
                jumps: Vec::new(),
                stmts: Vec::new(),
            };
            let mut targets = Vec::new();
            flow.build(body, None, &mut targets, 0, self.text());
            flow.jumps.sort_by_key(|j| j.range.start);
            flow.mark_exits();
            flow
        }))
    }
}

/// Collects the statements of the preprocessor conditional `node` into `out`; `false`
/// where `node` is none.
fn conditional_arms(node: Node, out: &mut Vec<LaterStatement>, depth: usize) -> bool {
    if depth > 8
        || !matches!(
            node.kind_name(),
            "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif" | "preproc_elifdef"
        )
    {
        return false;
    }
    let condition = node
        .field("condition")
        .or_else(|| node.field("name"))
        .map(|c| c.id());
    for c in named_children(node) {
        if Some(c.id()) == condition || c.kind_name() == "comment" {
            continue;
        }
        if conditional_arms(c, out, depth + 1) {
            continue;
        }
        // A `return` in one arm says nothing of the statements of the others.
        let kind = match c.kind_name() {
            "if_statement" if c.field("alternative").is_none() => LaterKind::IfWithoutElse,
            _ => LaterKind::Other,
        };
        out.push(LaterStatement {
            range: c.byte_range(),
            kind,
        });
    }
    true
}

impl ControlFlow {
    /// Adds `node` and its statements below `parent`; `targets` holds the loops and
    /// switches around it, innermost last (the range and whether it is a `switch`).
    fn build(
        &mut self,
        node: Node,
        parent: Option<usize>,
        targets: &mut Vec<(TextRange, bool)>,
        depth: usize,
        text: &str,
    ) -> usize {
        let i = self.stmts.len();
        self.stmts.push(Stmt {
            kind: Kind::Other,
            range: node.byte_range(),
            parent,
            children: Vec::new(),
            completes: true,
            exits: false,
        });
        if depth > MAX_DEPTH {
            return i;
        }
        let d = depth + 1;
        let kind = match node.kind_name() {
            "compound_statement" => {
                for c in named_children(node) {
                    if c.kind_name() != "comment" {
                        let child = self.build(c, Some(i), targets, d, text);
                        self.stmts[i].children.push(child);
                    }
                }
                Kind::Seq
            }
            "case_statement" => {
                let value = node.field("value").map(|v| v.id());
                for c in named_children(node) {
                    if Some(c.id()) != value && c.kind_name() != "comment" {
                        let child = self.build(c, Some(i), targets, d, text);
                        self.stmts[i].children.push(child);
                    }
                }
                Kind::Seq
            }
            "if_statement" => {
                if let Some(c) = node.field("consequence") {
                    let child = self.build(c, Some(i), targets, d, text);
                    self.stmts[i].children.push(child);
                }
                if let Some(mut alt) = node.field("alternative") {
                    if alt.kind_name() == "else_clause" {
                        if let Some(s) = named_children(alt).into_iter().last() {
                            alt = s;
                        }
                    }
                    let child = self.build(alt, Some(i), targets, d, text);
                    self.stmts[i].children.push(child);
                }
                Kind::If
            }
            "for_statement" | "for_range_loop" | "while_statement" | "do_statement" => {
                if let Some(b) = node.field("body") {
                    targets.push((node.byte_range(), false));
                    let child = self.build(b, Some(i), targets, d, text);
                    targets.pop();
                    self.stmts[i].children.push(child);
                }
                // `do { … } while (0)` (a macro's block that `break` can leave) runs once.
                let once = node.kind_name() == "do_statement"
                    && node.field("condition").is_some_and(|c| {
                        let t: String = crate::util::node_text(c, text)
                            .chars()
                            .filter(|c| !"() \t\n".contains(*c))
                            .collect();
                        t == "0" || t == "false"
                    });
                if once {
                    Kind::Once
                } else {
                    Kind::Loop
                }
            }
            "switch_statement" => {
                if let Some(b) = node.field("body") {
                    targets.push((node.byte_range(), true));
                    let child = self.build(b, Some(i), targets, d, text);
                    targets.pop();
                    self.stmts[i].children.push(child);
                    self.stmts[child].kind = Kind::SwitchBody;
                }
                Kind::Switch
            }
            "return_statement" => self.jump(node, JumpKind::Return, None),
            "continue_statement" => {
                let target = targets.iter().rev().find(|(_, switch)| !switch).cloned();
                self.jump(node, JumpKind::Continue, target)
            }
            "break_statement" => {
                let target = targets.last().cloned();
                self.jump(node, JumpKind::Break, target)
            }
            // `#if`/`#ifdef`/`#elif` arms among statements: one of them is compiled, as
            // one branch of an `if` on a value every thread shares runs.
            "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef" => {
                let skip: Vec<usize> = ["condition", "name", "alternative"]
                    .iter()
                    .filter_map(|f| node.field(f).map(|n| n.id()))
                    .collect();
                let arm: Vec<Node> = named_children(node)
                    .into_iter()
                    .filter(|c| !skip.contains(&c.id()) && c.kind_name() != "comment")
                    .collect();
                let end = node
                    .field("alternative")
                    .map_or(node.end_byte(), |a| a.start_byte());
                let then = self.arm(&arm, node.start_byte()..end, i, targets, d, text);
                self.stmts[i].children.push(then);
                match node.field("alternative") {
                    Some(alt) if alt.kind_name() == "preproc_else" => {
                        let arm: Vec<Node> = named_children(alt)
                            .into_iter()
                            .filter(|c| c.kind_name() != "comment")
                            .collect();
                        let other = self.arm(&arm, alt.byte_range(), i, targets, d, text);
                        self.stmts[i].children.push(other);
                    }
                    Some(alt) => {
                        let other = self.build(alt, Some(i), targets, d, text);
                        self.stmts[i].children.push(other);
                    }
                    None => {}
                }
                Kind::If
            }
            "labeled_statement" => {
                if let Some(s) = named_children(node).into_iter().last() {
                    let child = self.build(s, Some(i), targets, d, text);
                    self.stmts[i].children.push(child);
                }
                Kind::Seq
            }
            _ => Kind::Other,
        };
        if self.stmts[i].kind != Kind::SwitchBody {
            self.stmts[i].kind = kind;
        }
        let children = &self.stmts[i].children;
        let done = |c: &usize| self.stmts[*c].completes;
        let completes = match kind {
            Kind::Seq | Kind::SwitchBody => children.iter().all(done),
            Kind::If => children.len() < 2 || children.iter().any(done),
            Kind::Jump(_) => false,
            Kind::Loop | Kind::Once | Kind::Switch | Kind::Other => true,
        };
        self.stmts[i].completes = completes;
        i
    }

    /// A sequence of `statements` (an arm of `#if`) spanning `range`, below `parent`.
    fn arm(
        &mut self,
        statements: &[Node],
        range: TextRange,
        parent: usize,
        targets: &mut Vec<(TextRange, bool)>,
        depth: usize,
        text: &str,
    ) -> usize {
        let i = self.stmts.len();
        self.stmts.push(Stmt {
            kind: Kind::Seq,
            range,
            parent: Some(parent),
            children: Vec::new(),
            completes: true,
            exits: false,
        });
        for c in statements {
            let child = self.build(*c, Some(i), targets, depth, text);
            self.stmts[i].children.push(child);
        }
        let done = self.stmts[i]
            .children
            .iter()
            .all(|c| self.stmts[*c].completes);
        self.stmts[i].completes = done;
        i
    }

    fn jump(&mut self, node: Node, kind: JumpKind, target: Option<(TextRange, bool)>) -> Kind {
        let leaves_switch = target.as_ref().is_some_and(|(_, s)| *s);
        self.jumps.push(Jump {
            kind,
            range: node.byte_range(),
            target: target.map(|(r, _)| r),
            leaves_switch,
            node: self.stmts.len() - 1,
        });
        Kind::Jump(kind)
    }

    /// Marks the statements a `continue` or `break` leaves on its way to its target.
    fn mark_exits(&mut self) {
        for j in 0..self.jumps.len() {
            let Some(target) = self.jumps[j].target.clone() else {
                continue;
            };
            let mut s = self.jumps[j].node;
            while self.stmts[s].range != target {
                self.stmts[s].exits = true;
                match self.stmts[s].parent {
                    Some(p) => s = p,
                    None => break,
                }
            }
        }
    }

    /// The statement whose range is `range`, else the innermost one that holds it.
    fn stmt(&self, range: &TextRange) -> Option<usize> {
        if let Some(i) = self.stmts.iter().position(|s| s.range == *range) {
            return Some(i);
        }
        self.innermost(range.start)
            .filter(|&i| self.stmts[i].range.end >= range.end)
    }

    /// The innermost statement that holds `offset`.
    fn innermost(&self, offset: usize) -> Option<usize> {
        self.stmts
            .iter()
            .enumerate()
            .filter(|(_, s)| s.range.contains(&offset))
            .min_by_key(|(_, s)| s.range.len())
            .map(|(i, _)| i)
    }

    /// Whether the loop statement at `range` is `do { … } while (0)`: it runs its body
    /// once, and a `break` or `continue` in it goes on after it.
    pub fn runs_once(&self, range: &TextRange) -> bool {
        self.stmts
            .iter()
            .any(|s| s.range == *range && s.kind == Kind::Once)
    }

    /// Whether a thread that completes the statement at `from` (an `if`, a call, any
    /// statement of the function) can reach `to` afterwards in the same call of the
    /// function: later in its sequence, in a later iteration of a loop around both, or
    /// after a `switch`. With `stop` (a loop around `from`), paths that pass the head of
    /// that loop, or leave it, do not count: what is left of this iteration.
    pub fn reaches_after(&self, from: &TextRange, to: usize, stop: Option<&TextRange>) -> bool {
        let Some(i) = self.stmt(from) else {
            return false;
        };
        self.after(i, to, stop)
    }

    /// Whether a thread that completes the statement at `from` runs nothing more of the
    /// function: the statement is the last of each block around it up to the body (or
    /// only a `return` follows), and no loop holds it. `if (c) { rest }` in such a place
    /// is `if (!c) return; rest` for the threads that skip it.
    pub fn ends_after(&self, from: &TextRange) -> bool {
        let Some(mut i) = self.stmt(from) else {
            return false;
        };
        while let Some(p) = self.stmts[i].parent {
            let parent = &self.stmts[p];
            match parent.kind {
                Kind::Seq | Kind::SwitchBody => {
                    let mut later = parent.children.iter().skip_while(|c| **c != i).skip(1);
                    if let Some(&next) = later.next() {
                        return self.stmts[next].kind == Kind::Jump(JumpKind::Return);
                    }
                }
                Kind::Loop => return false,
                _ => {}
            }
            i = p;
        }
        true
    }

    /// The `if` statements without `else` that come before `offset` in the blocks around
    /// it, up to the function body, and whose branch no thread completes (`if (c)
    /// return;`, `if (c) { …; continue; }`): a thread at `offset` passed each with its
    /// condition false. Each as the range of its branch, innermost block first.
    pub fn exits_before(&self, offset: usize) -> Vec<TextRange> {
        let mut out = Vec::new();
        let Some(mut i) = self.innermost(offset) else {
            return out;
        };
        while let Some(p) = self.stmts[i].parent {
            let parent = &self.stmts[p];
            if parent.kind == Kind::Seq {
                for &c in parent.children.iter().take_while(|c| **c != i) {
                    let s = &self.stmts[c];
                    if s.kind != Kind::If || s.children.len() != 1 {
                        continue;
                    }
                    let branch = &self.stmts[s.children[0]];
                    if !branch.completes {
                        out.push(branch.range.clone());
                    }
                }
            }
            i = p;
        }
        out
    }

    /// The loop whose body holds the statement at `from` at its top level (`for (…) if (c)
    /// { … }`, also in braces among other statements), with the ranges of the body's
    /// other statements (those before it and those after it).
    pub fn loop_with_body(&self, from: &TextRange) -> Option<(TextRange, Vec<TextRange>)> {
        let i = self.stmt(from)?;
        let mut p = self.stmts[i].parent?;
        let mut others = Vec::new();
        if self.stmts[p].kind == Kind::Seq {
            others = self.stmts[p]
                .children
                .iter()
                .filter(|c| **c != i)
                .map(|c| self.stmts[*c].range.clone())
                .collect();
            p = self.stmts[p].parent?;
        }
        (self.stmts[p].kind == Kind::Loop).then(|| (self.stmts[p].range.clone(), others))
    }

    /// What a thread that completes the statement at `from` runs before the function
    /// ends: the later statements of each block around it, up to the body, in order.
    /// `None` where a loop or a `switch` holds it (the statement runs again, or `case`s
    /// fall through).
    pub fn runs_after(&self, from: &TextRange) -> Option<Vec<LaterStatement>> {
        let mut i = self.stmt(from)?;
        let mut out = Vec::new();
        while let Some(p) = self.stmts[i].parent {
            let parent = &self.stmts[p];
            match parent.kind {
                Kind::Seq => {
                    for &c in parent.children.iter().skip_while(|c| **c != i).skip(1) {
                        let s = &self.stmts[c];
                        out.push(LaterStatement {
                            range: s.range.clone(),
                            kind: match s.kind {
                                Kind::If if s.children.len() == 1 => LaterKind::IfWithoutElse,
                                Kind::Jump(JumpKind::Return) => LaterKind::Return,
                                _ => LaterKind::Other,
                            },
                        });
                    }
                }
                Kind::Loop | Kind::SwitchBody | Kind::Switch => return None,
                _ => {}
            }
            i = p;
        }
        Some(out)
    }

    /// Whether `a` and `b` lie in different branches of an `if` (or different `case`s
    /// of a `switch` entered at their own labels) that holds both, so that no thread
    /// passes both in one run through that statement.
    pub fn in_other_branches(&self, a: usize, b: usize) -> bool {
        let (Some(sa), Some(sb)) = (self.innermost(a), self.innermost(b)) else {
            return false;
        };
        let up = |mut s: usize| {
            let mut out = vec![s];
            while let Some(p) = self.stmts[s].parent {
                out.push(p);
                s = p;
            }
            out
        };
        let (ca, cb) = (up(sa), up(sb));
        // The innermost common statement and the children of it on each side.
        for (k, s) in ca.iter().enumerate() {
            if let Some(m) = cb.iter().position(|t| t == s) {
                if k == 0 || m == 0 {
                    return false;
                }
                return self.stmts[*s].kind == Kind::If && ca[k - 1] != cb[m - 1];
            }
        }
        false
    }

    /// The branches of the `if` statement at `range`: the one taken when true and the
    /// `else` branch, where written.
    pub fn branches(&self, range: &TextRange) -> Option<(TextRange, Option<TextRange>)> {
        let i = self.stmts.iter().position(|s| s.range == *range)?;
        let s = &self.stmts[i];
        if s.kind != Kind::If {
            return None;
        }
        let then = self.stmts[*s.children.first()?].range.clone();
        let other = s.children.get(1).map(|c| self.stmts[*c].range.clone());
        Some((then, other))
    }

    /// The statements of the block that is the body of a `for`, `while` or `do` loop
    /// (not `do { … } while (0)`), where the statement at `range` is one of them: the
    /// block a `continue` in that statement ends the iteration of. `None` where the
    /// statement's parent is no such block.
    pub fn loop_body_holding(&self, range: &TextRange) -> Option<Vec<TextRange>> {
        let i = self.stmts.iter().position(|s| s.range == *range)?;
        let block = self.stmts[i].parent?;
        let lp = self.stmts[block].parent?;
        if self.stmts[block].kind != Kind::Seq || self.stmts[lp].kind != Kind::Loop {
            return None;
        }
        Some(
            self.stmts[block]
                .children
                .iter()
                .map(|c| self.stmts[*c].range.clone())
                .collect(),
        )
    }

    /// The shape of the statement that spans exactly `range`; `None` where no statement
    /// of the tree does.
    pub fn shape(&self, range: &TextRange) -> Option<StatementShape> {
        let i = self.stmts.iter().position(|s| s.range == *range)?;
        let s = &self.stmts[i];
        let child = |k: usize| s.children.get(k).map(|c| self.stmts[*c].range.clone());
        Some(match s.kind {
            Kind::Seq => StatementShape::Block(
                s.children
                    .iter()
                    .map(|c| self.stmts[*c].range.clone())
                    .collect(),
            ),
            Kind::If => StatementShape::If(child(0)?, child(1)),
            Kind::Loop | Kind::Once => StatementShape::Loop(child(0)?),
            Kind::Switch | Kind::SwitchBody => StatementShape::Switch,
            Kind::Jump(k) => StatementShape::Jump(k),
            Kind::Other => StatementShape::Other,
        })
    }

    /// Whether a thread that enters `outer` (a statement) always passes `offset`
    /// within it: no branch, loop, `switch` or jump between the two can take it
    /// elsewhere.
    pub fn always_passes(&self, outer: &TextRange, offset: usize) -> bool {
        let Some(top) = self.stmts.iter().position(|s| s.range == *outer) else {
            return false;
        };
        let Some(mut s) = self.innermost(offset) else {
            return false;
        };
        loop {
            if s == top {
                return true;
            }
            let Some(p) = self.stmts[s].parent else {
                return false;
            };
            let parent = &self.stmts[p];
            match parent.kind {
                Kind::Seq => {
                    let before = parent.children.iter().take_while(|c| **c != s);
                    if before.clone().any(|c| !self.stmts[*c].completes)
                        || before.into_iter().any(|c| self.holds_jump(*c))
                    {
                        return false;
                    }
                }
                Kind::Other => {}
                _ => return false,
            }
            s = p;
        }
    }

    /// Whether statement `i` holds a jump that can take a thread out of it.
    fn holds_jump(&self, i: usize) -> bool {
        let r = &self.stmts[i].range;
        self.jumps.iter().any(|j| {
            r.contains(&j.range.start)
                && match &j.target {
                    None => true,
                    Some(t) => !(r.start <= t.start && t.end <= r.end),
                }
        })
    }

    /// [`ControlFlow::reaches_after`] from the end of statement `i`.
    fn after(&self, i: usize, to: usize, stop: Option<&TextRange>) -> bool {
        let Some(p) = self.stmts[i].parent else {
            return false;
        };
        let parent = &self.stmts[p];
        match parent.kind {
            Kind::Seq | Kind::SwitchBody => {
                let later = parent.children.iter().skip_while(|c| **c != i).skip(1);
                for &c in later {
                    if self.stmts[c].range.contains(&to) {
                        return self.entry(c, to) || self.exits_reach(c, to, stop);
                    }
                    if self.exits_reach(c, to, stop) {
                        return true;
                    }
                    if !self.stmts[c].completes {
                        return false;
                    }
                }
                self.after(p, to, stop)
            }
            Kind::Loop => {
                if stop.is_some_and(|s| *s == parent.range) {
                    return false;
                }
                (self.stmts[i].range.contains(&to) && self.entry(i, to)) || self.after(p, to, stop)
            }
            Kind::Once if stop.is_some_and(|s| *s == parent.range) => false,
            _ => self.after(p, to, stop),
        }
    }

    /// Whether a jump out of statement `c` (a `continue` or `break` to a loop around it)
    /// leads to `to`.
    fn exits_reach(&self, c: usize, to: usize, stop: Option<&TextRange>) -> bool {
        if !self.stmts[c].exits {
            return false;
        }
        let r = &self.stmts[c].range;
        self.jumps.iter().any(|j| {
            let Some(t) = &j.target else {
                return false;
            };
            if !r.contains(&j.range.start) || (r.start <= t.start && t.end <= r.end) {
                return false;
            }
            let Some(l) = self.stmts.iter().position(|s| s.range == *t) else {
                return false;
            };
            match j.kind {
                // A `continue` in `do { … } while (0)` tests the condition and leaves.
                JumpKind::Continue if self.stmts[l].kind != Kind::Once => {
                    if stop.is_some_and(|s| s == t) {
                        return false;
                    }
                    self.stmts[l].range.contains(&to)
                        && self.stmts[l]
                            .children
                            .first()
                            .is_some_and(|b| self.entry(*b, to))
                        || self.after(l, to, stop)
                }
                _ => !stop.is_some_and(|s| s == t) && self.after(l, to, stop),
            }
        })
    }

    /// Whether a thread that enters statement `i` can reach `to`, which lies inside it.
    fn entry(&self, i: usize, to: usize) -> bool {
        let s = &self.stmts[i];
        match s.kind {
            Kind::Seq => {
                for &c in &s.children {
                    if self.stmts[c].range.contains(&to) {
                        return self.entry(c, to);
                    }
                    if !self.stmts[c].completes {
                        return false;
                    }
                }
                true
            }
            Kind::SwitchBody | Kind::If | Kind::Loop | Kind::Once | Kind::Switch => {
                match s
                    .children
                    .iter()
                    .find(|c| self.stmts[**c].range.contains(&to))
                {
                    Some(&c) => self.entry(c, to),
                    // In a condition or a loop header.
                    None => true,
                }
            }
            Kind::Jump(_) | Kind::Other => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(text: &str) -> Arc<ControlFlow> {
        let file = SourceFile::parse(text);
        file.control_flow(text.find('{').unwrap() + 1).unwrap()
    }

    fn at(text: &str, s: &str) -> usize {
        text.find(s).unwrap_or_else(|| panic!("{s} not in {text}"))
    }

    /// The range of the `if` statement that starts at the first `if (` after `after`.
    fn guard(text: &str, after: &str) -> TextRange {
        let f = flow(text);
        let start = at(text, after) + text[at(text, after)..].find("if (").unwrap();
        f.stmts
            .iter()
            .find(|s| s.range.start == start && s.kind == Kind::If)
            .unwrap()
            .range
            .clone()
    }

    #[test]
    fn a_return_in_the_other_branch_never_reaches_the_barrier() {
        let text = "__global__ void k(int mode, int n) {\n  if (mode) {\n    if (threadIdx.x >= n) return;\n    work();\n  } else {\n    __syncthreads();\n  }\n  tail();\n}\n";
        let f = flow(text);
        let g = guard(text, "{\n    if");
        assert!(!f.reaches_after(&g, at(text, "__syncthreads"), None));
        assert!(f.reaches_after(&g, at(text, "tail"), None));
        assert!(f.in_other_branches(at(text, "return"), at(text, "__syncthreads")));
    }

    #[test]
    fn exits_before_an_offset_are_the_branches_that_never_complete() {
        let text = "__global__ void k(int n) {\n  if (threadIdx.x >= n) return;\n  if (n > 4) log();\n  for (int i = 0; i < n; ++i) {\n    if (i == threadIdx.x) { skip(); continue; }\n    if (i > 2) { if (n) break; }\n    body();\n  }\n  tail();\n}\n";
        let f = flow(text);
        let names = |offset: usize| -> Vec<&str> {
            f.exits_before(offset)
                .iter()
                .map(|r| text[r.clone()].lines().next().unwrap())
                .collect()
        };
        // In the loop: its own `continue` branch first, then the `return` before it; the
        // branch that may `break` also completes, and `log()` is no exit.
        assert_eq!(
            names(at(text, "body")),
            ["{ skip(); continue; }", "return;"]
        );
        assert_eq!(names(at(text, "tail")), ["return;"]);
        assert!(names(at(text, "return")).is_empty());
    }

    #[test]
    fn an_unconditional_return_ends_the_path() {
        let text = "__global__ void k(int mode, int n) {\n  if (mode) {\n    if (threadIdx.x >= n) return;\n    work();\n    return;\n  }\n  __syncthreads();\n}\n";
        let f = flow(text);
        let g = guard(text, "{\n    if");
        assert!(!f.reaches_after(&g, at(text, "__syncthreads"), None));
    }

    #[test]
    fn loops_reach_back_and_jumps_find_their_loop() {
        let text = "__global__ void k(int n) {\n  for (int i = 0; i < n; ++i) {\n    __syncthreads();\n    for (int j = 0; j < n; ++j) {\n      if (threadIdx.x > j) continue;\n      a();\n    }\n    switch (i) { case 0: break; default: b(); }\n    if (threadIdx.x == i) break;\n  }\n}\n";
        let f = flow(text);
        let kinds: Vec<_> = f
            .jumps
            .iter()
            .map(|j| {
                (
                    j.kind,
                    &text[j.target.clone().unwrap()][..6],
                    j.leaves_switch,
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (JumpKind::Continue, "for (i", false),
                (JumpKind::Break, "switch", true),
                (JumpKind::Break, "for (i", false),
            ]
        );
        let inner = guard(text, "for (int j");
        let barrier = at(text, "__syncthreads");
        // Next iteration of the outer loop, but not within the inner loop's iteration.
        assert!(f.reaches_after(&inner, barrier, None));
        let inner_loop = f.jumps[0].target.clone().unwrap();
        assert!(!f.reaches_after(&inner, barrier, Some(&inner_loop)));
    }

    #[test]
    fn a_long_function_of_many_jumps_is_answered_quickly() {
        let mut text =
            String::from("__global__ void k(int n) {\n  for (int i = 0; i < n; ++i) {\n");
        for j in 0..3000 {
            text.push_str(&format!(
                "    if (threadIdx.x == {j}) continue;\n    a({j});\n"
            ));
        }
        text.push_str("  }\n  __syncthreads();\n}\n");
        let f = flow(&text);
        let barrier = at(&text, "__syncthreads");
        let start = std::time::Instant::now();
        let mut reached = 0;
        for j in f.jumps.iter().take(200) {
            let g = f.stmts[f.stmts[j.node].parent.unwrap()].range.clone();
            reached += usize::from(f.reaches_after(&g, barrier, None));
        }
        assert_eq!(reached, 200);
        assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
    }

    #[test]
    fn both_branches_and_always_passes() {
        let text = "__global__ void k(int n) {\n  if (threadIdx.x < 16) {\n    a();\n    __syncthreads();\n  } else {\n    if (n) b();\n    __syncthreads();\n  }\n}\n";
        let f = flow(text);
        let g = guard(text, "{\n  if");
        let (then, other) = f.branches(&g).unwrap();
        let other = other.unwrap();
        let first = at(text, "__syncthreads");
        let second = first + 1 + at(&text[first + 1..], "__syncthreads");
        assert!(f.always_passes(&then, first));
        assert!(f.always_passes(&other, second));
        assert!(!f.always_passes(&other, at(text, "b()")));
    }
}
