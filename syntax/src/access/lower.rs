//! Lowering a subscript to an [`IndexExpr`]: names resolved through their declarations,
//! loop variables through their `for` headers, memoised per function walk.

use super::*;
use crate::util::short_name;

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
    /// Names bound to values (a template instantiation's arguments), read before anything
    /// else the file says of them.
    bound: &'a [(String, i64)],
    /// Whether a name, load or call the model cannot value but that reads no thread index
    /// lowers to [`IndexExpr::Uniform`] (the same in every thread of the block) instead of
    /// [`IndexExpr::Unknown`]: for questions of uniformity, not for figures.
    pub(crate) opaque_uniform: bool,
    /// The block every launch gives, where known ([`Self::for_uniformity`]): an axis of
    /// extent 1 makes its `threadIdx` 0.
    pub(crate) block: Option<[u32; 3]>,
    /// The parameters of a helper whose result is asked for ([`Self::helper_result`]),
    /// each bound to its argument as the call lowers it.
    pub(crate) params: Vec<(String, IndexExpr)>,
    /// How many helpers deep this lowerer is ([`Self::helper_result`]).
    pub(crate) helper_depth: usize,
    /// Whether the results of warp-wide votes and broadcasts (`__ballot_sync`,
    /// `__shfl_sync(m, v, 0)`, `__ffs` of such) lower to [`IndexExpr::Uniform`]: they are
    /// one value for the lanes of a warp, which is all a question about the lanes of
    /// one warp needs (not one about the block).
    pub(crate) warp_values: bool,
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
    /// The writes to plain names after their declaration in each function asked about
    /// ([`Lowerer::reassigned`]), by function node id.
    writes: HashMap<usize, Rc<Writes<'a>>>,
}

/// For each name, where a function assigns it (`=`, `op=`, `++`, `--`): the write and the
/// loops around it.
pub(crate) type Writes<'a> = HashMap<String, Vec<(Node<'a>, Vec<Node<'a>>)>>;

/// How many ancestor chains a [`Lowerer`] keeps (the names of one index share one).
pub(crate) const ANCESTOR_MEMO: usize = 8;

impl<'a> Lowerer<'a> {
    pub(crate) fn new(text: &'a str, facts: &'a FileFacts, tree: &'a Ancestry<'a>) -> Self {
        Lowerer {
            text,
            facts,
            tree,
            memo: RefCell::default(),
            bound: &[],
            opaque_uniform: false,
            block: None,
            params: Vec::new(),
            helper_depth: 0,
            warp_values: false,
        }
    }

    /// The same lowerer, with `bound` names taken at their values and what it cannot
    /// value but reads no thread index taken as one unknown value for the whole block.
    pub(crate) fn for_uniformity(
        mut self,
        bound: &'a [(String, i64)],
        block: Option<[u32; 3]>,
    ) -> Self {
        self.bound = bound;
        self.opaque_uniform = true;
        self.block = block;
        self
    }

    /// `lowered`, or, where it is unknown and `expr` reads no thread index, one uniform
    /// value named by its text (with [`Self::for_uniformity`]). A load whose address
    /// lowers to a value that does not depend on the thread (`deg[row]` with `row =
    /// blockIdx.x + threadIdx.y` in a block of one row) is one value too.
    fn opaque(&self, expr: &Expr, at: Node<'a>, lowered: IndexExpr, depth: usize) -> IndexExpr {
        if !self.opaque_uniform || !matches!(lowered, IndexExpr::Unknown(_)) {
            return lowered;
        }
        if self.uniform_load(expr, at, depth) || !self.thread_tainted(expr, at, 0) {
            return IndexExpr::Uniform(show(expr));
        }
        lowered
    }

    /// Whether `expr` loads at an address that does not depend on the thread: an
    /// element whose index lowers to such a value (`deg[row]`), or a member of one
    /// (`items[*pick].key`, `nodes[0].next->weight`).
    /// `depth` is the lowering's, which the index's lowering goes on from: a chain of
    /// loads through one another (`tmp = chase[tmp];` thousands of times) ends.
    fn uniform_load(&self, expr: &Expr, at: Node<'a>, depth: usize) -> bool {
        match expr {
            Expr::Subscript(_, index) => {
                let i = self.lower(index, at, depth + 1);
                i.unknown_reason().is_none() && !i.depends_on_thread()
            }
            Expr::Member(base, _) => self.uniform_load(base, at, depth),
            _ => false,
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
            let mut h = for_header(node, self.text, self.facts, "");
            // Known while the bound is lowered (the bound's names are looked up among
            // the loops around them, this one included).
            self.memo
                .borrow_mut()
                .for_headers
                .insert(id, Rc::new(h.clone()));
            // A bound the file's constants do not fold may be a local holding one
            // (`unsigned per = SECTION / THREADS; for (i = 0; i < per; ++i)`).
            if let Some(h) = h.as_mut().filter(|h| h.2.is_none()) {
                h.2 = self.local_bound(node, &h.1);
            }
            let h = Rc::new(h);
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

    /// The exclusive end of the `for` loop `node` over `var` whose condition compares it
    /// with a name (`i < per`, `i <= last`) that lowers to a constant the same for every
    /// thread: a local initialised from constants and never assigned again.
    fn local_bound(&self, node: Node<'a>, var: &str) -> Option<i64> {
        let cond = node.field("condition")?;
        if cond.kind_name() != "binary_expression" {
            return None;
        }
        let left = cond.field("left")?;
        let right = cond.field("right")?;
        if left.kind_name() != "identifier"
            || node_text(left, self.text) != var
            || right.kind_name() != "identifier"
        {
            return None;
        }
        let op = node_text(cond.field("operator")?, self.text);
        let bound = self.lower(&from_node(right, self.text, 0), right, 1);
        if bound.depends_on_thread() || bound.has_loop_var() {
            return None;
        }
        let v = bound.eval(&|_| None)?;
        match op {
            "<" | "!=" => Some(v),
            "<=" => v.checked_add(1),
            _ => None,
        }
    }

    /// What `find_declaration_full` finds for `name` used at `use_node` (the initialiser
    /// and whether it is a parameter), with each scope's declarations indexed once.
    pub(crate) fn declaration(
        &self,
        use_node: Node<'a>,
        name: &str,
    ) -> Option<(Option<Node<'a>>, bool)> {
        self.declaration_nodes(use_node, name)
            .map(|(c, d)| init_and_param(c, d))
    }

    /// Whether `name` used at `use_node` is a variable declared outside every function
    /// (the file's or a namespace's) without `const` or `constexpr`.
    fn mutable_global(&self, use_node: Node<'a>, name: &str) -> bool {
        let Some((decl, _)) = self.declaration_nodes(use_node, name) else {
            return false;
        };
        if decl.kind_name() != "declaration" {
            return false;
        }
        let local = self.ancestors(decl).iter().any(|a| {
            matches!(
                a.kind_name(),
                "function_definition" | "lambda_expression" | "field_declaration_list"
            )
        });
        let constant = crate::util::children(decl).iter().any(|c| {
            c.kind_name() == "type_qualifier"
                && matches!(node_text(*c, self.text).trim(), "const" | "constexpr")
        });
        !local && !constant
    }

    /// The initialiser of the local `name` used at `use_node` when no assignment can
    /// reach the use ([`Self::reassigned`]): its value there (`p` in `const bool p = lane
    /// < 8; if (p) …` gives `lane < 8`). `None` for a parameter or a local assigned again.
    pub(crate) fn read_only_initializer(&self, use_node: Node<'a>, name: &str) -> Option<Node<'a>> {
        match self.declaration(use_node, name)? {
            (Some(init), false) if !self.reassigned(use_node, name) => Some(init),
            _ => None,
        }
    }

    /// The declaration (or parameter declaration) of `name` used at `use_node`, and its
    /// declarator of that name.
    pub(crate) fn declaration_nodes(
        &self,
        use_node: Node<'a>,
        name: &str,
    ) -> Option<(Node<'a>, Node<'a>)> {
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
                        return Some((c, d));
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
                return Some((c, d));
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
                    _ => {
                        let unknown =
                            IndexExpr::Unknown(format!("`{}` is a member access", show(expr)));
                        return self.opaque(expr, at, unknown, depth);
                    }
                };
                match &**base {
                    Expr::Name(b)
                        if b == "threadIdx"
                            && self.block.is_some_and(|d| d[axis as usize] == 1) =>
                    {
                        IndexExpr::Int(0)
                    }
                    Expr::Name(b) if b == "threadIdx" => IndexExpr::ThreadIdx(axis),
                    Expr::Name(b) if b == "blockDim" => IndexExpr::BlockDim(axis),
                    Expr::Name(b) if b == "blockIdx" || b == "gridDim" || b == "clusterIdx" => {
                        IndexExpr::Uniform(format!("{b}.{axis}"))
                    }
                    _ => {
                        let unknown =
                            IndexExpr::Unknown(format!("`{}` is a member access", show(expr)));
                        self.opaque(expr, at, unknown, depth)
                    }
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
                    return self.opaque(
                        expr,
                        at,
                        IndexExpr::Unknown(format!("`{op}` is a comparison or logical operator")),
                        depth,
                    );
                };
                let l = self.lower(a, at, d);
                let r = self.lower(b, at, d);
                IndexExpr::binary(l, bop, r)
            }
            Expr::Subscript(..) => self.opaque(
                expr,
                at,
                IndexExpr::Unknown(format!("`{}` is loaded from memory", show(expr))),
                depth,
            ),
            Expr::Call { callee, args } if args.is_empty() && callee.ends_with(".thread_rank") => {
                let object = &callee[..callee.len() - ".thread_rank".len()];
                match self.group_size(object, at, d) {
                    Some(None) => self.block_rank(),
                    Some(Some(n)) => IndexExpr::binary(self.block_rank(), BinOp::Rem, n),
                    None => self.opaque(
                        expr,
                        at,
                        IndexExpr::Unknown(format!(
                            "`{callee}()` is the rank in a group of unknown size"
                        )),
                        depth,
                    ),
                }
            }
            Expr::Call { callee, args }
                if self.warp_values && self.warp_value(callee, args, at, d) =>
            {
                IndexExpr::Uniform(show(expr))
            }
            // `ceil((double)n / threads)`: a division rounded up, as integers (`n` is no
            // less than 0 and `threads` more, as for a grid's size).
            Expr::Call { callee, args }
                if args.len() == 1
                    && matches!(
                        callee.trim_start_matches("::").trim_start_matches("std::"),
                        "ceil" | "ceilf"
                    ) =>
            {
                match self.float_division(&args[0], at, d) {
                    Some((n, m)) => IndexExpr::binary(
                        IndexExpr::binary(
                            IndexExpr::binary(n, BinOp::Add, m.clone()),
                            BinOp::Sub,
                            IndexExpr::Int(1),
                        ),
                        BinOp::Div,
                        m,
                    ),
                    None => self.opaque(
                        expr,
                        at,
                        IndexExpr::Unknown(format!("`{callee}(...)` is a function call")),
                        depth,
                    ),
                }
            }
            Expr::Call { callee, args } => match self.facts.env.fold(expr, at.start_byte()) {
                Some(v) => IndexExpr::Int(v),
                None => match self.helper_result(callee, args, at, d) {
                    Some(v) => v,
                    None => self.opaque(
                        expr,
                        at,
                        IndexExpr::Unknown(format!("`{callee}(...)` is a function call")),
                        depth,
                    ),
                },
            },
            Expr::SizeofType(ty) => match type_size(ty) {
                Some(v) => IndexExpr::Int(v as i64),
                None => self.opaque(
                    expr,
                    at,
                    IndexExpr::Unknown(format!("the size of `{ty}` is not known")),
                    depth,
                ),
            },
            // A condition that folds (`(M == 1) ? 0 : threadIdx.z` with `M` bound) picks
            // its arm.
            Expr::Cond(c, a, b) => match self.condition_value(c, at, d) {
                Some(true) => self.lower(a, at, d),
                Some(false) => self.lower(b, at, d),
                None => self.opaque(
                    expr,
                    at,
                    IndexExpr::Unknown("a conditional expression selects the index".into()),
                    depth,
                ),
            },
            other => self.opaque(
                expr,
                at,
                IndexExpr::Unknown(format!("`{}` cannot be modelled", show(other))),
                depth,
            ),
        }
    }

    /// The integer operands of a division made in floating point (`(double)n / (double)m`,
    /// `n / (float)m`, `float(n) / m`): each operand with its floating cast removed,
    /// where at least one has one and both lower without one.
    fn float_division(
        &self,
        e: &Expr,
        at: Node<'a>,
        depth: usize,
    ) -> Option<(IndexExpr, IndexExpr)> {
        let Expr::Binary(a, op, b) = e else {
            return None;
        };
        if *op != "/" {
            return None;
        }
        let floating = |ty: &str| ty.contains("float") || ty.contains("double");
        let strip = |x: &Expr| -> (Expr, bool) {
            match x {
                Expr::Cast(ty, inner) if floating(ty) => ((**inner).clone(), true),
                Expr::Call { callee, args } if args.len() == 1 && floating(callee) => {
                    (args[0].clone(), true)
                }
                other => (other.clone(), false),
            }
        };
        let ((a, ca), (b, cb)) = (strip(a), strip(b));
        if !(ca || cb) {
            return None;
        }
        let (n, m) = (self.lower(&a, at, depth + 1), self.lower(&b, at, depth + 1));
        (n.unknown_reason().is_none() && m.unknown_reason().is_none()).then_some((n, m))
    }

    /// Whether the call is one value in every lane of the warp that runs it together:
    /// a vote (`__ballot_sync`, `__any_sync`, `__all_sync`, `__activemask`, the
    /// `__reduce_*_sync` family), a shuffle from a lane every lane names alike
    /// (`__shfl_sync(m, v, 0)`), or a bit count of such (`__ffs`, `__popc`, `__clz`,
    /// `__brev`).
    fn warp_value(&self, callee: &str, args: &[Expr], at: Node<'a>, depth: usize) -> bool {
        let lane_free = |e: &Expr| {
            let v = self.lower(e, at, depth + 1);
            !v.depends_on_thread() && v.unknown_reason().is_none()
        };
        match callee.trim_start_matches("::") {
            "__ballot_sync" | "__any_sync" | "__all_sync" | "__activemask" | "__ballot"
            | "__any" | "__all" | "__reduce_add_sync" | "__reduce_min_sync"
            | "__reduce_max_sync" | "__reduce_and_sync" | "__reduce_or_sync"
            | "__reduce_xor_sync" => true,
            "__shfl_sync" | "__shfl" => args.get(2).is_some_and(lane_free),
            "__ffs" | "__ffsll" | "__popc" | "__popcll" | "__clz" | "__clzll" | "__brev"
            | "__brevll" => args.first().is_some_and(lane_free),
            _ => false,
        }
    }

    /// The value of a condition whose operands lower to constants (comparisons, `!`,
    /// `&&`, `||` of them, or a value tested for truth); `None` where one does not.
    fn condition_value(&self, c: &Expr, at: Node<'a>, depth: usize) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        let d = depth + 1;
        match c {
            Expr::Unary("!", a) => self.condition_value(a, at, d).map(|v| !v),
            Expr::Binary(l, "&&", r) => {
                Some(self.condition_value(l, at, d)? && self.condition_value(r, at, d)?)
            }
            Expr::Binary(l, "||", r) => {
                Some(self.condition_value(l, at, d)? || self.condition_value(r, at, d)?)
            }
            Expr::Binary(l, op @ ("==" | "!=" | "<" | "<=" | ">" | ">="), r) => {
                let l = self.lower(l, at, d).constant()?;
                let r = self.lower(r, at, d).constant()?;
                Some(match *op {
                    "==" => l == r,
                    "!=" => l != r,
                    "<" => l < r,
                    "<=" => l <= r,
                    ">" => l > r,
                    _ => l >= r,
                })
            }
            other => self.lower(other, at, d).constant().map(|v| v != 0),
        }
    }

    /// `threadIdx` along `axis`, or 0 where the known block has extent 1 there.
    fn thread_idx(&self, axis: Axis) -> IndexExpr {
        if self.block.is_some_and(|d| d[axis as usize] == 1) {
            IndexExpr::Int(0)
        } else {
            IndexExpr::ThreadIdx(axis)
        }
    }

    /// A thread block's `thread_rank()`: the linear thread index, `threadIdx.x +
    /// blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)`.
    fn block_rank(&self) -> IndexExpr {
        let (x, y, z) = (
            self.thread_idx(Axis::X),
            self.thread_idx(Axis::Y),
            self.thread_idx(Axis::Z),
        );
        let yz = IndexExpr::binary(
            y,
            BinOp::Add,
            IndexExpr::binary(IndexExpr::BlockDim(Axis::Y), BinOp::Mul, z),
        );
        IndexExpr::binary(
            x,
            BinOp::Add,
            IndexExpr::binary(IndexExpr::BlockDim(Axis::X), BinOp::Mul, yz),
        )
    }

    /// The cooperative group `object` (the text before `.thread_rank`) names, used at
    /// `at`: `Some(None)` for the thread block (`cg::this_thread_block()`, a
    /// `thread_block` or a local initialised from `this_thread_block()`), `Some(Some(n))`
    /// for a tile of `n` threads (`thread_block_tile<n>`, `tiled_partition<n>(…)` or
    /// `tiled_partition(…, n)` with `n` a constant), `None` otherwise.
    fn group_size(&self, object: &str, at: Node<'a>, depth: usize) -> Option<Option<IndexExpr>> {
        if short_name(object.trim_end_matches("()")) == "this_thread_block"
            && object.ends_with("()")
        {
            return Some(None);
        }
        if !object
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return None;
        }
        let (decl, declarator) = self.declaration_nodes(at, object)?;
        let constant = |node: Node<'a>| {
            let v = self.lower(&from_node(node, self.text, 0), node, depth + 1);
            v.constant().map(IndexExpr::Int)
        };
        // `thread_block_tile<32>` or `thread_block` as declared.
        if let Some(mut ty) = decl.field("type") {
            // `cg::thread_block_tile<32>`: down the qualified name to its last part.
            while ty.kind_name() == "qualified_identifier" {
                match ty.field("name") {
                    Some(n) => ty = n,
                    None => break,
                }
            }
            let name = node_text(ty.field("name").unwrap_or(ty), self.text);
            match name {
                "thread_block" => return Some(None),
                "thread_block_tile" if ty.kind_name() == "template_type" => {
                    let arg = ty
                        .field("arguments")
                        .and_then(|a| named_children(a).first().copied())?;
                    return Some(Some(constant(arg)?));
                }
                _ => {}
            }
        }
        // `auto g = cg::this_thread_block()` or `auto t = cg::tiled_partition<32>(block)`.
        let (init, _) = init_and_param(decl, declarator);
        let init = init.filter(|i| i.kind_name() == "call_expression")?;
        let mut function = init.field("function")?;
        while function.kind_name() == "qualified_identifier" {
            match function.field("name") {
                Some(n) => function = n,
                None => break,
            }
        }
        let name = node_text(function.field("name").unwrap_or(function), self.text);
        match name {
            "this_thread_block" => Some(None),
            "tiled_partition" => {
                let size = match function.field("arguments") {
                    Some(targs) if function.kind_name() == "template_function" => {
                        named_children(targs).first().copied()
                    }
                    _ => init
                        .field("arguments")
                        .and_then(|a| named_children(a).get(1).copied()),
                }?;
                Some(Some(constant(size)?))
            }
            _ => None,
        }
    }

    fn lower_name(&self, n: &str, at: Node<'a>, depth: usize) -> IndexExpr {
        if let Some((_, v)) = self.bound.iter().find(|(b, _)| b == n) {
            return IndexExpr::Const {
                name: n.to_string(),
                value: *v,
            };
        }
        let lowered = self.lower_name_in_file(n, at, depth);
        self.opaque(&Expr::Name(n.to_string()), at, lowered, depth)
    }

    fn lower_name_in_file(&self, n: &str, at: Node<'a>, depth: usize) -> IndexExpr {
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
            // A variable of the file or a namespace that is not `const` (a `__constant__`
            // or `__device__` scalar, which the host sets with `cudaMemcpyToSymbol`):
            // its initialiser is not its value when a kernel runs, but it is one value
            // for every thread.
            if !is_param && self.mutable_global(at, n) {
                return IndexExpr::Uniform(n.to_string());
            }
            if is_param {
                // A helper's parameter, where its call is followed, is its argument.
                if let Some((_, v)) = self.params.iter().find(|(p, _)| p == n) {
                    return v.clone();
                }
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
            if let Some(lv) = init.and_then(|i| self.scaled_once_per_iteration(at, n, i, depth)) {
                return lv;
            }
            return match init {
                // A later assignment can reach the use (`id /= w;` between them, or in a
                // loop around both): the initialiser is not the value there.
                // Where neither the initialiser nor any assignment reads the thread index
                // (`stage = next;` in a double-buffered loop) it is still one value for the
                // whole warp.
                Some(init) if self.reassigned(at, n) => {
                    if let Some(e) = self.straight_line_definition(at, n, depth) {
                        return e;
                    }
                    if let Some(lv) = self.stepped_once_per_iteration(at, n, init, depth) {
                        return lv;
                    }
                    let uniform = !self.thread_tainted(&from_node(init, self.text, 0), init, 0)
                        && self.writes_of(at, n).iter().all(|w| {
                            w.field("right").is_none_or(|r| {
                                !self.thread_tainted(&from_node(r, self.text, 0), r, 0)
                            }) && !self.under_thread_condition(*w)
                        });
                    if uniform {
                        IndexExpr::Uniform(n.to_string())
                    } else {
                        IndexExpr::Unknown(format!("`{n}` is assigned again after its declaration"))
                    }
                }
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

    /// Whether an assignment to the local `n` in the function around `at` can reach the
    /// use at `at`: one before it, or one inside a loop that also holds `at` (the next
    /// iteration reads it). A name declared twice in the function counts the writes of
    /// both, which only makes the answer more cautious.
    pub(crate) fn reassigned(&self, at: Node<'a>, n: &str) -> bool {
        !self.writes_of(at, n).is_empty()
    }

    /// The assignments to `n` in the function around `at` that can reach the use at
    /// `at` ([`Self::reassigned`]).
    pub(crate) fn writes_of(&self, at: Node<'a>, n: &str) -> Vec<Node<'a>> {
        let Some(writes) = self.function_writes_of(at, n) else {
            return Vec::new();
        };
        let use_at = at.start_byte();
        let Some(ws) = writes.get(n) else {
            return Vec::new();
        };
        ws.iter()
            .filter(|(w, loops)| {
                let start = w.start_byte();
                // A loop's own update (a `for` header's, or the counting step of a
                // `while` that counts like a `for`) makes the name the loop's variable.
                let own_update = loops.iter().any(|l| match l.kind_name() {
                    "for_statement" => [l.field("initializer"), l.field("update")]
                        .into_iter()
                        .flatten()
                        .any(|h| h.byte_range().contains(&start)),
                    _ => self
                        .while_header(*l, n)
                        .as_deref()
                        .and_then(Option::as_ref)
                        .is_some_and(|h| h.update_stmt.byte_range().contains(&start)),
                });
                // A write after the use reaches it only through a loop's next iteration:
                // for a question of uniformity every iteration counts; for the models'
                // figures, which are those of the first iteration, it does not.
                !own_update
                    && !w.byte_range().contains(&use_at)
                    && (start < use_at
                        || (self.opaque_uniform
                            && loops.iter().any(|l| l.byte_range().contains(&use_at))))
            })
            .map(|(w, _)| *w)
            .collect()
    }

    /// Every assignment in the function around `at`, by name, when `n` is among the
    /// names it assigns.
    fn function_writes_of(&self, at: Node<'a>, n: &str) -> Option<Rc<Writes<'a>>> {
        let function = self
            .ancestors(at)
            .iter()
            .find(|a| a.kind_name() == "function_definition")
            .copied()?;
        // Most names are never assigned: the file's table of written names answers
        // without this lowerer walking the function.
        let written = self.facts.locals_memo.get_or_insert_with(
            (function.start_byte(), function.end_byte()),
            || {
                let mut names = rustc_hash::FxHashSet::default();
                written_names(function, self.text, &mut names);
                names
            },
        );
        if !written.contains(n) {
            return None;
        }
        Some({
            let cached = self.memo.borrow().writes.get(&function.id()).cloned();
            match cached {
                Some(w) => w,
                None => {
                    let w = Rc::new(function_writes(function, self.text));
                    self.memo
                        .borrow_mut()
                        .writes
                        .insert(function.id(), w.clone());
                    w
                }
            }
        })
    }

    /// The value of `n` at `at` where the last assignment before the use is a statement
    /// of a block around the use, so that every thread runs it on the way (`col = col ^
    /// ((row & 3) << 3);`, `id /= w;`), also inside bare `{ … }` blocks: its right side,
    /// with `n` there taken at its previous definition. `None` where another assignment
    /// can reach the use through a loop, or the last one is inside a branch or a loop of
    /// its own.
    fn straight_line_definition(&self, at: Node<'a>, n: &str, depth: usize) -> Option<IndexExpr> {
        let use_at = at.start_byte();
        let writes = self.writes_of(at, n);
        if writes.iter().any(|w| w.start_byte() > use_at) {
            return None;
        }
        let w = *writes.iter().max_by_key(|w| w.start_byte())?;
        let stmt = w
            .parent()
            .filter(|p| p.kind_name() == "expression_statement")?;
        let mut block = stmt
            .parent()
            .filter(|b| b.kind_name() == "compound_statement")?;
        // A bare `{ … }` statement runs whole wherever it stands: the write in it is one
        // every thread runs on the way when the block around that is the use's.
        let around = self.ancestors(at);
        while !around.contains(&block) {
            block = block
                .parent()
                .filter(|b| b.kind_name() == "compound_statement")?;
        }
        let previous = |node: Node<'a>| self.lower_name(n, node, depth + 1);
        Some(match w.kind_name() {
            "assignment_expression" => {
                let op = node_text(w.field("operator")?, self.text);
                let right = w.field("right")?;
                let value = self.lower(&from_node(right, self.text, 0), right, depth + 1);
                if op == "=" {
                    value
                } else {
                    let bop = BinOp::from_symbol(op.strip_suffix('=')?)?;
                    IndexExpr::binary(previous(w.field("left")?), bop, value)
                }
            }
            "update_expression" => {
                let op = node_text(w.field("operator")?, self.text);
                let bop = if op == "++" { BinOp::Add } else { BinOp::Sub };
                IndexExpr::binary(previous(w.field("argument")?), bop, IndexExpr::Int(1))
            }
            _ => return None,
        })
    }

    /// A local that one statement of the innermost loop around the use steps by an amount
    /// that reads no thread index (`i += blockDim.x * gridDim.x;` in a `while (1)`), as a
    /// loop variable: its initialiser at the first iteration, plus the step once more
    /// where the step comes before the use in the body.
    fn stepped_once_per_iteration(
        &self,
        at: Node<'a>,
        n: &str,
        init: Node<'a>,
        depth: usize,
    ) -> Option<IndexExpr> {
        let writes = self.writes_of(at, n);
        let [w] = writes.as_slice() else {
            return None;
        };
        if w.kind_name() != "assignment_expression" {
            return None;
        }
        let op = node_text(w.field("operator")?, self.text);
        let step = w.field("right")?;
        if !matches!(op, "+=" | "-=")
            || self.thread_tainted(&from_node(step, self.text, 0), step, 0)
        {
            return None;
        }
        self.once_per_iteration(at, *w)?;
        let start = self.lower(&from_node(init, self.text, 0), init, depth + 1);
        let stride = self.lower(&from_node(step, self.text, 0), step, depth + 1);
        let stride = if op == "-=" {
            IndexExpr::binary(IndexExpr::Int(0), BinOp::Sub, stride)
        } else {
            stride
        };
        let start = if w.start_byte() < at.start_byte() {
            IndexExpr::binary(start, BinOp::Add, stride.clone())
        } else {
            start
        };
        Some(IndexExpr::LoopVar {
            name: n.to_string(),
            start: Box::new(start),
            end: None,
            step: stride.eval(&|_| None),
            stride: Some(Box::new(stride)),
            scale: None,
        })
    }

    /// The innermost loop around the use at `at`, where `write` is a statement of its own
    /// directly in that loop's body, so that it runs once per iteration: no `continue` of
    /// the loop comes before it.
    fn once_per_iteration(&self, at: Node<'a>, write: Node<'a>) -> Option<Node<'a>> {
        let lp = self
            .ancestors(at)
            .iter()
            .find(|a| {
                matches!(
                    a.kind_name(),
                    "for_statement" | "while_statement" | "do_statement"
                )
            })
            .copied()?;
        let stmt = write
            .parent()
            .filter(|p| p.kind_name() == "expression_statement")?;
        let body = stmt
            .parent()
            .filter(|b| b.kind_name() == "compound_statement")?;
        if lp.field("body") != Some(body) {
            return None;
        }
        // A `continue` of this loop before the step skips it in some iterations.
        let mut skipped = false;
        preorder(body, |c| {
            if c.kind_name() == "continue_statement"
                && c.start_byte() < write.start_byte()
                && self
                    .ancestors(c)
                    .iter()
                    .find(|a| {
                        matches!(
                            a.kind_name(),
                            "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
                        )
                    })
                    .is_some_and(|a| *a == lp)
            {
                skipped = true;
            }
            !skipped
        });
        if skipped {
            return None;
        }
        Some(lp)
    }

    /// A local that one statement directly in the body of the innermost loop around the
    /// use multiplies or divides by a constant each iteration (`offset *= 2;` at the end
    /// of a scan's sweep), declared before that loop and assigned nowhere else: a loop
    /// variable that scales with the loop ([`Scale`]), its initialiser at the first
    /// iteration (one step on where the statement comes before the use).
    fn scaled_once_per_iteration(
        &self,
        at: Node<'a>,
        n: &str,
        init: Node<'a>,
        depth: usize,
    ) -> Option<IndexExpr> {
        let writes = self.function_writes_of(at, n)?;
        let all = writes.get(n)?;
        // The one write inside the loop (its step), and any others before the loop (`stride
        // = n >> 1;` after `int stride = 1;`): the value at the loop's entry is the last
        // of those, as a straight-line definition gives it.
        // Writes after the loop (`s >>= 1` in a later down-sweep) do not reach it, unless
        // a loop around both carries them back.
        let (inside, before): (Vec<_>, Vec<_>) = match all.as_slice() {
            [(w, _)] => (vec![*w], Vec::new()),
            _ => {
                let lp = all
                    .iter()
                    .find_map(|(w, _)| self.once_per_iteration(at, *w))?;
                let outer: Vec<Node<'a>> = self
                    .ancestors(lp)
                    .iter()
                    .copied()
                    .filter(|a| {
                        matches!(
                            a.kind_name(),
                            "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
                        )
                    })
                    .collect();
                let mut kept = Vec::new();
                for (w, _) in all {
                    if w.start_byte() >= lp.end_byte() {
                        if outer
                            .iter()
                            .any(|o| o.byte_range().contains(&w.start_byte()))
                        {
                            return None;
                        }
                        continue;
                    }
                    kept.push(*w);
                }
                kept.into_iter()
                    .partition(|w| lp.byte_range().contains(&w.start_byte()))
            }
        };
        let [w] = inside.as_slice() else {
            return None;
        };
        let lp = self.once_per_iteration(at, *w)?;
        if !matches!(lp.kind_name(), "for_statement" | "while_statement")
            || lp.byte_range().contains(&init.start_byte())
            || at.start_byte() <= lp.start_byte()
            || before.iter().any(|b| b.end_byte() > lp.start_byte())
        {
            return None;
        }
        let stepping = scale_update(*w, self.text, self.facts, n, lp.start_byte())?;
        let mut start = if before.is_empty() {
            self.lower(&from_node(init, self.text, 0), init, depth + 1)
        } else {
            self.straight_line_definition(lp, n, depth)?
        };
        if w.start_byte() < at.start_byte() {
            start = match stepping {
                Stepping::Mul(c) => IndexExpr::binary(start, BinOp::Mul, IndexExpr::Int(c)),
                Stepping::Div(c) => IndexExpr::binary(start, BinOp::Div, IndexExpr::Int(c)),
                Stepping::Add(c) => IndexExpr::binary(start, BinOp::Add, IndexExpr::Int(c)),
            };
        }
        Some(IndexExpr::LoopVar {
            name: n.to_string(),
            start: Box::new(start),
            end: None,
            step: None,
            stride: None,
            scale: Some(Box::new(Scale {
                stepping,
                trip: self.loop_trip(lp, depth),
            })),
        })
    }

    /// Whether a statement or branch around `node` in its function runs for some threads
    /// and not others: an `if`, loop, `switch` or `?:` whose condition reads the thread
    /// index.
    fn under_thread_condition(&self, node: Node<'a>) -> bool {
        self.ancestors(node)
            .iter()
            .take_while(|a| a.kind_name() != "function_definition")
            .any(|a| {
                let condition = match a.kind_name() {
                    "if_statement"
                    | "while_statement"
                    | "do_statement"
                    | "switch_statement"
                    | "conditional_expression" => a.field("condition"),
                    "for_statement" => a.field("condition"),
                    _ => None,
                };
                condition.is_some_and(|c| {
                    !c.byte_range().contains(&node.start_byte())
                        && self.thread_tainted(&from_node(c, self.text, 0), c, 0)
                })
            })
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
                    let scale = self.own_scale(node, w.update, n, depth);
                    return Some(IndexExpr::LoopVar {
                        name: n.to_string(),
                        start: Box::new(start),
                        end: *end,
                        step: *step,
                        stride,
                        scale,
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
        let scale = match (step, &stride, node.field("update")) {
            (None, None, Some(update)) => self.own_scale(node, update, n, depth),
            _ => None,
        };
        Some(IndexExpr::LoopVar {
            name: n.to_string(),
            start: Box::new(start),
            end,
            step,
            stride,
            scale,
        })
    }

    /// The [`Scale`] of the variable `n` of loop `lp` that `update` multiplies or divides
    /// by a constant (`s <<= 1`, `s /= 2`), with the loop's trip.
    fn own_scale(
        &self,
        lp: Node<'a>,
        update: Node<'a>,
        n: &str,
        depth: usize,
    ) -> Option<Box<Scale>> {
        let stepping = scale_update(update, self.text, self.facts, n, lp.start_byte())?;
        Some(Box::new(Scale {
            stepping,
            trip: self.loop_trip(lp, depth),
        }))
    }

    /// The trip of loop `lp` (a `for`, or a `while` that counts like one) as a
    /// [`Trip`]: its variable, start, how it changes, and the comparison that keeps it
    /// running, when all are read.
    fn loop_trip(&self, lp: Node<'a>, depth: usize) -> Option<Trip> {
        let at = lp.start_byte();
        let (var, start, update, condition) = match lp.kind_name() {
            "for_statement" => {
                let (start, var, _, step, stride) = self.for_header(lp, "")?;
                if stride.is_some() {
                    return None;
                }
                let (start, start_at) = start?;
                let start = self.lower(&start, start_at, depth + 1);
                let update = lp.field("update")?;
                let stepping = match step {
                    Some(s) => Stepping::Add(s),
                    None => scale_update(update, self.text, self.facts, &var, at)?,
                };
                (var, start, stepping, lp.field("condition")?)
            }
            "while_statement" => {
                let h = self.while_header(lp, "")?;
                let w = h.as_ref().as_ref()?;
                let (start, var, _, step, stride) = &w.header;
                if stride.is_some() {
                    return None;
                }
                let (start, start_at) = start.as_ref()?;
                let start = self.lower(start, *start_at, depth + 1);
                let stepping = match step {
                    Some(s) => Stepping::Add(*s),
                    None => scale_update(w.update, self.text, self.facts, var, at)?,
                };
                (var.clone(), start, stepping, w.condition)
            }
            _ => return None,
        };
        let (op, bound) = loop_condition(condition, self.text, &var)?;
        let bound = self.lower(&bound, condition, depth + 1);
        if start.unknown_reason().is_some() || bound.unknown_reason().is_some() {
            return None;
        }
        Some(Trip {
            var,
            start,
            stepping: update,
            op,
            bound,
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

/// The assignments to plain names in `function` ([`Writes`]).
fn function_writes<'a>(function: Node<'a>, text: &str) -> Writes<'a> {
    let mut out: Writes<'a> = HashMap::default();
    let mut loops: Vec<Node<'a>> = Vec::new();
    walk_writes(function, text, &mut loops, &mut out);
    out
}

impl SourceFile {
    /// The plain names assigned (`=`, `+=`, `++`) anywhere inside `range` (a loop with its
    /// header, a block).
    pub fn names_written_in(&self, range: &TextRange) -> rustc_hash::FxHashSet<String> {
        let mut out = rustc_hash::FxHashSet::default();
        if let Some(node) = self
            .root_at(range.start)
            .and_then(|r| r.descendant_for_byte_range(range.start, range.end))
        {
            written_names(node, self.text(), &mut out);
        }
        out
    }
}

/// One assignment to a plain name: its operator (`=`, `+=`, `<<=`, …; `++` and `--`
/// for either side of an update) and the range of the assigned value (none for `++`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameWrite {
    /// `=`, `+=`, `<<=`, …, or `++`/`--`.
    pub op: String,
    /// The assigned value's range (`None` for `++` and `--`).
    pub value: Option<TextRange>,
}

impl SourceFile {
    /// Every assignment to the plain name `name` inside `range`, in source order.
    pub fn writes_of(&self, range: &TextRange, name: &str) -> Vec<NameWrite> {
        let mut out = Vec::new();
        if let Some(node) = self
            .root_at(range.start)
            .and_then(|r| r.descendant_for_byte_range(range.start, range.end))
        {
            writes_of_name(node, self.text(), name, &mut out);
        }
        out
    }
}

impl SourceFile {
    /// The condition at `range` (an `if`'s condition, parentheses around it allowed) when
    /// it is one ordering comparison `left op right` (`<`, `<=`, `>`, `>=`): the sides'
    /// ranges and the operator.
    pub fn ordering_comparison(&self, range: &TextRange) -> Option<(TextRange, String, TextRange)> {
        let text = self.text();
        let mut node = self
            .root_at(range.start)?
            .descendant_for_byte_range(range.start, range.end)?;
        while matches!(
            node.kind_name(),
            "condition_clause" | "parenthesized_expression"
        ) {
            let mut cursor = node.walk();
            let inner: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            match inner.as_slice() {
                [one] => node = *one,
                _ => return None,
            }
        }
        if node.kind_name() != "binary_expression" {
            return None;
        }
        let op = node_text(node.field("operator")?, text);
        if !matches!(op, "<" | "<=" | ">" | ">=") {
            return None;
        }
        let (l, r) = (node.field("left")?, node.field("right")?);
        Some((
            l.start_byte()..l.end_byte(),
            op.to_string(),
            r.start_byte()..r.end_byte(),
        ))
    }
}

fn writes_of_name(node: Node<'_>, text: &str, name: &str, out: &mut Vec<NameWrite>) {
    let write = match node.kind_name() {
        "assignment_expression" => node
            .field("left")
            .filter(|t| t.kind_name() == "identifier" && node_text(*t, text) == name)
            .map(|_| NameWrite {
                op: node
                    .field("operator")
                    .map_or("=", |o| node_text(o, text))
                    .to_string(),
                value: node.field("right").map(|r| r.start_byte()..r.end_byte()),
            }),
        "update_expression" => node
            .field("argument")
            .filter(|t| t.kind_name() == "identifier" && node_text(*t, text) == name)
            .map(|_| NameWrite {
                op: if node_text(node, text).contains("++") {
                    "++"
                } else {
                    "--"
                }
                .to_string(),
                value: None,
            }),
        _ => None,
    };
    out.extend(write);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        writes_of_name(child, text, name, out);
    }
}

/// The plain names assigned anywhere under `node` (the targets [`walk_writes`] records).
fn written_names(node: Node<'_>, text: &str, out: &mut rustc_hash::FxHashSet<String>) {
    let target = match node.kind_name() {
        "assignment_expression" => node.field("left"),
        "update_expression" => node.field("argument"),
        _ => None,
    };
    if let Some(t) = target.filter(|t| t.kind_name() == "identifier") {
        out.insert(node_text(t, text).to_string());
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        written_names(child, text, out);
    }
}

fn walk_writes<'a>(node: Node<'a>, text: &str, loops: &mut Vec<Node<'a>>, out: &mut Writes<'a>) {
    let target = match node.kind_name() {
        "assignment_expression" => node.field("left"),
        "update_expression" => node.field("argument"),
        _ => None,
    };
    if let Some(t) = target.filter(|t| t.kind_name() == "identifier") {
        out.entry(node_text(t, text).to_string())
            .or_default()
            .push((node, loops.clone()));
    }
    let is_loop = matches!(
        node.kind_name(),
        "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
    );
    if is_loop {
        loops.push(node);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk_writes(child, text, loops, out);
    }
    if is_loop {
        loops.pop();
    }
}
