//! Lowering a subscript to an [`IndexExpr`]: names resolved through their declarations,
//! loop variables through their `for` headers, memoised per function walk.

use super::*;

/// The lowering context: the file, its facts, and the node the expression sits at.
///
/// It remembers what it looked up (ancestor chains, the declarations of each scope), so
/// it is made for one thread's walk: one per chunk, or one per query.
pub(crate) struct Lowerer<'a> {
    pub(crate) text: &'a str,
    pub(crate) facts: &'a FileFacts,
    /// The ancestor chains of the tree.
    pub(crate) tree: &'a Ancestry<'a>,
    memo: RefCell<LowerMemo<'a>>,
}

/// The declarations of a scope, by name: for each declaration (in document order) that
/// declares the name, its start, the declaration and its first declarator of that name.
pub(crate) type ScopeDecls<'a> = HashMap<&'a str, Vec<(usize, Node<'a>, Node<'a>)>>;

/// What a [`Lowerer`] has looked up.
#[derive(Default)]
pub(crate) struct LowerMemo<'a> {
    /// The ancestor chains asked for most recently, by node id.
    ancestors: Vec<(usize, Rc<[Node<'a>]>)>,
    /// The declarations of each scope but the file's top level, by scope node id.
    scopes: HashMap<usize, Rc<ScopeDecls<'a>>>,
    /// The header of each `for` statement asked about ([`for_header`] over its own
    /// variable), by node id.
    for_headers: HashMap<usize, Rc<Option<ForHeader<'a>>>>,
    /// The same for each `while` and `do` loop asked about ([`while_header`]).
    while_headers: HashMap<usize, Rc<Option<WhileHeader<'a>>>>,
    /// The vector type each function-like macro of the file reinterprets its argument
    /// as ([`vector_macros`]), read from the text once asked for.
    vector_macros: Option<Rc<HashMap<String, String>>>,
}

/// How many ancestor chains a [`Lowerer`] keeps (the names of one index share one).
pub(crate) const ANCESTOR_MEMO: usize = 8;

impl<'a> Lowerer<'a> {
    pub(crate) fn new(text: &'a str, facts: &'a FileFacts, tree: &'a Ancestry<'a>) -> Self {
        Lowerer {
            text,
            facts,
            tree,
            memo: RefCell::default(),
        }
    }

    /// The vector type the file's function-like macro `name` reinterprets its argument
    /// as, when its body is `reinterpret_cast<T*>(&(v))[0]` or the like.
    pub(crate) fn vector_macro(&self, name: &str) -> Option<String> {
        if !self.facts.defines_own_macro(name) {
            // A header's macro (the file's own definition would win).
            let def = self.facts.header_macro(name)?;
            return match def.params.as_deref() {
                Some([param]) => super::vector_macros::vector_body(&def.body, param),
                _ => None,
            };
        }
        let table = self
            .memo
            .borrow_mut()
            .vector_macros
            .get_or_insert_with(|| Rc::new(vector_macros(self.text)))
            .clone();
        table.get(name).cloned()
    }

    /// `tree.ancestors(node)`, remembered for the last few nodes.
    pub(crate) fn ancestors(&self, node: Node<'a>) -> Rc<[Node<'a>]> {
        let id = node.id();
        if let Some((_, a)) = self.memo.borrow().ancestors.iter().find(|(i, _)| *i == id) {
            return a.clone();
        }
        let a: Rc<[Node<'a>]> = self.tree.ancestors(node).into();
        let mut memo = self.memo.borrow_mut();
        if memo.ancestors.len() == ANCESTOR_MEMO {
            memo.ancestors.remove(0);
        }
        memo.ancestors.push((id, a.clone()));
        a
    }

    /// Remembers `ancestors` as the chain of `node` (nearest first, the root last), for a
    /// caller that already holds it.
    pub(crate) fn know_ancestors(&self, node: Node<'a>, ancestors: &[Node<'a>]) {
        let id = node.id();
        let mut memo = self.memo.borrow_mut();
        if memo.ancestors.iter().any(|(i, _)| *i == id) {
            return;
        }
        if memo.ancestors.len() == ANCESTOR_MEMO {
            memo.ancestors.remove(0);
        }
        memo.ancestors.push((id, ancestors.into()));
    }

    /// [`while_header`] of `node` for the variable `n` (whichever it counts when `n` is
    /// empty), computed once per loop.
    pub(crate) fn while_header(
        &self,
        node: Node<'a>,
        n: &str,
    ) -> Option<Rc<Option<WhileHeader<'a>>>> {
        let id = node.id();
        let known = self.memo.borrow().while_headers.get(&id).cloned();
        let header = known.unwrap_or_else(|| {
            let h = Rc::new(while_header(node, self.text, self.facts, ""));
            self.memo.borrow_mut().while_headers.insert(id, h.clone());
            h
        });
        let fits = header
            .as_ref()
            .as_ref()
            .is_some_and(|h| n.is_empty() || h.header.1 == n);
        fits.then_some(header)
    }

    /// [`for_header`] of `node` for the variable `n` (its own variable when `n` is
    /// empty), each loop's header computed once.
    pub(crate) fn for_header(&self, node: Node<'a>, n: &str) -> Option<ForHeader<'a>> {
        let id = node.id();
        let known = self.memo.borrow().for_headers.get(&id).cloned();
        let header = known.unwrap_or_else(|| {
            let h = Rc::new(for_header(node, self.text, self.facts, ""));
            self.memo.borrow_mut().for_headers.insert(id, h.clone());
            h
        });
        // The header does not depend on `n` but through the check that it names the
        // loop's variable.
        header
            .as_ref()
            .as_ref()
            .filter(|h| n.is_empty() || h.1 == n)
            .cloned()
    }

    /// What `find_declaration_full` finds for `name` used at `use_node` (the initialiser
    /// and whether it is a parameter), with each scope's declarations indexed once.
    pub(crate) fn declaration(
        &self,
        use_node: Node<'a>,
        name: &str,
    ) -> Option<(Option<Node<'a>>, bool)> {
        let at = use_node.start_byte();
        for &scope in self.ancestors(use_node).iter() {
            // Only these kinds hold declarations (`scope_candidates` answers `None` for
            // the rest): most ancestors are expressions and statements.
            if !SCOPE_KINDS.contains(scope) {
                continue;
            }
            if is_file_scope(self.tree, scope) {
                let Some(candidates) = scope_candidates(self.tree, scope, at) else {
                    continue;
                };
                for &c in candidates.iter().rev() {
                    if c.start_byte() > at {
                        continue;
                    }
                    if let Some(d) = declarators(c).and_then(|ds| {
                        ds.into_iter().find(|&d| {
                            declarator_name(d).is_some_and(|n| node_text(n, self.text) == name)
                        })
                    }) {
                        return Some(init_and_param(c, d));
                    }
                }
                continue;
            }
            let Some(decls) = self.scope_decls(scope) else {
                continue;
            };
            if let Some(&(_, c, d)) = decls
                .get(name)
                .and_then(|v| v.iter().rev().find(|(start, _, _)| *start <= at))
            {
                return Some(init_and_param(c, d));
            }
        }
        None
    }

    /// The declarations of `scope` (not the file's top level), indexed by name.
    fn scope_decls(&self, scope: Node<'a>) -> Option<Rc<ScopeDecls<'a>>> {
        if let Some(d) = self.memo.borrow().scopes.get(&scope.id()) {
            return Some(d.clone());
        }
        // Outside the file scope the candidates do not depend on the offset.
        let candidates = scope_candidates(self.tree, scope, 0)?;
        let mut decls: ScopeDecls<'a> = HashMap::default();
        let mut cursor = scope.walk();
        let mut ds = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for &c in candidates.iter() {
            if !declarators_into(c, &mut cursor, &mut ds) {
                continue;
            }
            seen.clear();
            for &d in &ds {
                let Some(n) = declarator_name(d).map(|n| node_text(n, self.text)) else {
                    continue;
                };
                // The first declarator of a name in a declaration is the one found.
                if !seen.contains(&n) {
                    seen.push(n);
                    decls.entry(n).or_default().push((c.start_byte(), c, d));
                }
            }
        }
        let decls = Rc::new(decls);
        self.memo
            .borrow_mut()
            .scopes
            .insert(scope.id(), decls.clone());
        Some(decls)
    }

    /// Lowers `expr`, found at `at` (a node used to find declarations and loops).
    pub(crate) fn lower(&self, expr: &Expr, at: Node<'a>, depth: usize) -> IndexExpr {
        if depth > MAX_DEPTH / 4 {
            return IndexExpr::Unknown("the index is nested too deeply".into());
        }
        let d = depth + 1;
        match expr {
            Expr::Int(v) => IndexExpr::Int(*v),
            Expr::Member(base, field) => {
                let axis = match field.as_str() {
                    "x" => Axis::X,
                    "y" => Axis::Y,
                    "z" => Axis::Z,
                    _ => return IndexExpr::Unknown(format!("`{}` is a member access", show(expr))),
                };
                match &**base {
                    Expr::Name(b) if b == "threadIdx" => IndexExpr::ThreadIdx(axis),
                    Expr::Name(b) if b == "blockDim" => IndexExpr::BlockDim(axis),
                    Expr::Name(b) if b == "blockIdx" || b == "gridDim" || b == "clusterIdx" => {
                        IndexExpr::Uniform(format!("{b}.{axis}"))
                    }
                    _ => IndexExpr::Unknown(format!("`{}` is a member access", show(expr))),
                }
            }
            Expr::Name(n) => self.lower_name(n, at, d),
            Expr::Unary("-", a) => {
                IndexExpr::binary(IndexExpr::Int(0), BinOp::Sub, self.lower(a, at, d))
            }
            Expr::Unary("+", a) => self.lower(a, at, d),
            Expr::Cast(ty, a)
                if !ty.contains('*') && !ty.contains("float") && !ty.contains("double") =>
            {
                self.lower(a, at, d)
            }
            Expr::Binary(a, op, b) => {
                let Some(bop) = BinOp::from_symbol(op) else {
                    return IndexExpr::Unknown(format!(
                        "`{op}` is a comparison or logical operator"
                    ));
                };
                let l = self.lower(a, at, d);
                let r = self.lower(b, at, d);
                let rv = r.eval(&|_| None);
                if l == IndexExpr::ThreadIdx(Axis::X)
                    && ((bop == BinOp::Rem && rv == Some(32))
                        || (bop == BinOp::And && rv == Some(31)))
                {
                    return IndexExpr::Lane;
                }
                IndexExpr::binary(l, bop, r)
            }
            Expr::Subscript(..) => {
                IndexExpr::Unknown(format!("`{}` is loaded from memory", show(expr)))
            }
            Expr::Call { callee, .. } => match self.facts.env.fold(expr, at.start_byte()) {
                Some(v) => IndexExpr::Int(v),
                None => IndexExpr::Unknown(format!("`{callee}(...)` is a function call")),
            },
            Expr::SizeofType(ty) => match type_size(ty) {
                Some(v) => IndexExpr::Int(v as i64),
                None => IndexExpr::Unknown(format!("the size of `{ty}` is not known")),
            },
            Expr::Cond(..) => {
                IndexExpr::Unknown("a conditional expression selects the index".into())
            }
            other => IndexExpr::Unknown(format!("`{}` cannot be modelled", show(other))),
        }
    }

    fn lower_name(&self, n: &str, at: Node<'a>, depth: usize) -> IndexExpr {
        if n == "warpSize" {
            return IndexExpr::Const {
                name: n.into(),
                value: 32,
            };
        }
        if let Some(lv) = self.loop_var(n, at, depth) {
            return lv;
        }
        if let Some(v) = self
            .facts
            .env
            .fold(&Expr::Name(n.to_string()), at.start_byte())
        {
            return IndexExpr::Const {
                name: n.to_string(),
                value: v,
            };
        }
        if let Some((init, is_param)) = self.declaration(at, n) {
            if is_param {
                return IndexExpr::Uniform(n.to_string());
            }
            if let Some(v) = self
                .facts
                .env
                .fold(&Expr::Name(n.to_string()), at.start_byte())
            {
                return IndexExpr::Const {
                    name: n.to_string(),
                    value: v,
                };
            }
            return match init {
                Some(init)
                    if init.kind_name() != "argument_list"
                        && init.kind_name() != "initializer_list" =>
                {
                    let e = from_node(init, self.text, 0);
                    match self.lower(&e, init, depth + 1) {
                        IndexExpr::Unknown(r) => IndexExpr::Unknown(format!("`{n}`: {r}")),
                        ok => ok,
                    }
                }
                _ => IndexExpr::Unknown(format!("`{n}` has no initialiser the file shows")),
            };
        }
        if let Some(v) = self
            .facts
            .env
            .fold(&Expr::Name(n.to_string()), at.start_byte())
        {
            return IndexExpr::Const {
                name: n.to_string(),
                value: v,
            };
        }
        IndexExpr::Unknown(format!(
            "`{n}` is not a constant, loop variable or thread-index alias"
        ))
    }

    /// The loop variable `n` of an enclosing `for` statement.
    fn loop_var(&self, n: &str, at: Node<'a>, depth: usize) -> Option<IndexExpr> {
        for &node in self.ancestors(at).iter() {
            if node.kind_name() == "function_definition" {
                return None;
            }
            if node.kind_name() == "for_statement" {
                if let Some(lv) = self.for_var(node, n, depth) {
                    return Some(lv);
                }
            }
            if matches!(node.kind_name(), "while_statement" | "do_statement")
                && node
                    .field("body")
                    .is_some_and(|b| b.byte_range().contains(&at.start_byte()))
            {
                if let Some(w) = self
                    .while_header(node, n)
                    .as_deref()
                    .and_then(Option::as_ref)
                {
                    let (start, _, end, step, stride) = &w.header;
                    let start = match start {
                        Some((e, at)) => self.lower(e, *at, depth + 1),
                        None => IndexExpr::Unknown(format!("`{n}` has no start value")),
                    };
                    let stride = stride
                        .map(|s| Box::new(self.lower(&from_node(s, self.text, 0), s, depth + 1)));
                    return Some(IndexExpr::LoopVar {
                        name: n.to_string(),
                        start: Box::new(start),
                        end: *end,
                        step: *step,
                        stride,
                    });
                }
            }
        }
        None
    }

    fn for_var(&self, node: Node<'a>, n: &str, depth: usize) -> Option<IndexExpr> {
        let (start, _, end, step, stride) = self.for_header(node, n)?;
        let start = match start {
            Some((e, at)) => self.lower(&e, at, depth + 1),
            None => IndexExpr::Unknown(format!("`{n}` has no start value")),
        };
        let stride =
            stride.map(|s| Box::new(self.lower(&from_node(s, self.text, 0), s, depth + 1)));
        Some(IndexExpr::LoopVar {
            name: n.to_string(),
            start: Box::new(start),
            end,
            step,
            stride,
        })
    }
}

pub(crate) fn show(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.clone(),
        Expr::Int(v) => v.to_string(),
        Expr::Member(b, f) => format!("{}.{f}", show(b)),
        Expr::Subscript(a, i) => format!("{}[{}]", show(a), show(i)),
        Expr::Call { callee, .. } => format!("{callee}(...)"),
        Expr::Binary(a, op, b) => format!("{} {op} {}", show(a), show(b)),
        Expr::Unary(op, a) => format!("{op}{}", show(a)),
        Expr::Cast(t, a) => format!("({t}){}", show(a)),
        Expr::Cond(..) => "?:".into(),
        Expr::SizeofType(t) => format!("sizeof({t})"),
        Expr::Other(t) => t.clone(),
    }
}
