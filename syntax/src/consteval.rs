//! Constant folding over [`Expr`].

use rustc_hash::FxHashMap as HashMap;

use crate::expr::{from_text, Expr};
use crate::types::type_size;
use crate::util::{split_template_args, MAX_DEPTH};
use crate::TextRange;

/// Constants visible for folding: `#define`s, `constexpr`/`const` integers, enum values and
/// template parameter defaults, each optionally limited to a scope (a function's range).
#[derive(Default, Clone, Debug)]
pub(crate) struct Env {
    entries: HashMap<String, Vec<(Option<TextRange>, Expr)>>,
    /// Each class with constant members, by its short name: its body's range (where its
    /// members' initialisers are folded) and its template parameter names (a type
    /// parameter's too, so that arguments line up; none for a plain class).
    classes: HashMap<String, (TextRange, Vec<String>)>,
    /// Where a name is a function's parameter or a variable it declares (the function's
    /// range): there the name is that variable, not a file-scope constant of the name.
    shadows: HashMap<String, Vec<TextRange>>,
    /// The names `#define`d as objects: text replaced before any declaration is read,
    /// so no parameter or variable hides them.
    macros: rustc_hash::FxHashSet<String>,
}

impl Env {
    /// Adds a constant. Earlier definitions win over later ones in the same scope.
    pub(crate) fn insert(&mut self, name: &str, scope: Option<TextRange>, value: Expr) {
        self.entries
            .entry(name.to_string())
            .or_default()
            .push((scope, value));
    }

    /// Adds a `#define`d constant: as [`Env::insert`] at file scope, and never hidden.
    pub(crate) fn insert_macro(&mut self, name: &str, value: Expr) {
        self.insert(name, None, value);
        self.macros.insert(name.to_string());
    }

    /// Records that `name` is a variable (a parameter or a declared local) in the
    /// function whose range is `scope`.
    pub(crate) fn shadow(&mut self, name: &str, scope: TextRange) {
        self.shadows
            .entry(name.to_string())
            .or_default()
            .push(scope);
    }

    /// Records a class with constant members (the first record of a name wins).
    pub(crate) fn insert_class(&mut self, class: &str, body: TextRange, params: Vec<String>) {
        self.classes
            .entry(class.to_string())
            .or_insert((body, params));
    }

    /// Applies `f` to every scope range (for moving a chunk's constants).
    pub(crate) fn rebase(&mut self, f: &mut impl FnMut(&mut TextRange)) {
        for list in self.entries.values_mut() {
            for (scope, _) in list {
                if let Some(s) = scope {
                    f(s);
                }
            }
        }
        for (body, _) in self.classes.values_mut() {
            f(body);
        }
        for list in self.shadows.values_mut() {
            list.iter_mut().for_each(&mut *f);
        }
    }

    /// Adds `other`'s constants after this one's.
    pub(crate) fn extend(&mut self, other: Env) {
        for (name, list) in other.entries {
            self.entries.entry(name).or_default().extend(list);
        }
        for (class, c) in other.classes {
            self.classes.entry(class).or_insert(c);
        }
        for (name, list) in other.shadows {
            self.shadows.entry(name).or_default().extend(list);
        }
        self.macros.extend(other.macros);
    }

    /// Hashes the file-scope constants (names and values), in name order.
    pub(crate) fn hash_file_scope(&self, h: &mut impl std::hash::Hasher) {
        use std::hash::Hash;
        let mut names: Vec<&String> = self.entries.keys().collect();
        names.sort_unstable();
        for name in names {
            for (scope, e) in &self.entries[name] {
                if scope.is_none() {
                    name.hash(h);
                    format!("{e:?}").hash(h);
                }
            }
        }
        // Names and parameters only: the body's range moves with every edit above it.
        let mut classes: Vec<(&String, &Vec<String>)> =
            self.classes.iter().map(|(n, (_, p))| (n, p)).collect();
        classes.sort_unstable();
        classes.hash(h);
    }

    /// The expression bound to `name` at offset `at`: the innermost scoped one first.
    pub(crate) fn lookup(&self, name: &str, at: usize) -> Option<&Expr> {
        let name = name.trim_start_matches("::");
        let Some(list) = self.entries.get(name) else {
            // `cfg::kTile` for `namespace cfg { constexpr int kTile = 64; }`: constants
            // are recorded under their own names, and one defined once in the file, at
            // file scope, is that one (a class member is recorded with its class).
            let (head, last) = name.rsplit_once("::")?;
            if head.contains('<') || self.classes.contains_key(head.rsplit("::").next()?) {
                return None;
            }
            return match self.entries.get(last)?.as_slice() {
                [(None, e)] => Some(e),
                _ => None,
            };
        };
        let scoped = list
            .iter()
            .filter(|(s, _)| s.as_ref().is_some_and(|r| r.contains(&at)))
            .min_by_key(|(s, _)| s.as_ref().map_or(usize::MAX, |r| r.len()));
        // A parameter or variable of a function the constant's scope holds (or of any
        // function, for a file-scope one) hides it there.
        let within = scoped
            .and_then(|(s, _)| s.as_ref())
            .map_or(usize::MAX, |r| r.len());
        if !self.macros.contains(name)
            && self
                .shadows
                .get(name)
                .is_some_and(|list| list.iter().any(|r| r.contains(&at) && r.len() < within))
        {
            return None;
        }
        scoped
            .or_else(|| list.iter().find(|(s, _)| s.is_none()))
            .map(|(_, e)| e)
    }

    /// Folds `expr` at offset `at` to an integer, if the file determines it.
    pub(crate) fn fold(&self, expr: &Expr, at: usize) -> Option<i64> {
        self.fold_depth(expr, at, 0, &[])
    }

    /// [`Env::fold`] with the names in `bound` taking the given values (template
    /// arguments of one instantiation).
    pub(crate) fn fold_with(&self, expr: &Expr, at: usize, bound: &[(String, i64)]) -> Option<i64> {
        self.fold_depth(expr, at, 0, bound)
    }

    fn fold_depth(
        &self,
        expr: &Expr,
        at: usize,
        depth: usize,
        bound: &[(String, i64)],
    ) -> Option<i64> {
        if depth > MAX_DEPTH {
            return None;
        }
        let d = depth + 1;
        match expr {
            Expr::Int(v) => Some(*v),
            Expr::Name(n) => {
                if let Some((_, v)) = bound.iter().find(|(b, _)| b == n) {
                    return Some(*v);
                }
                match self.lookup(n, at) {
                    Some(e) => self.fold_depth(e, at, d, bound),
                    None => self.fold_member(n, at, d, bound),
                }
            }
            Expr::Unary(op, a) => {
                let v = self.fold_depth(a, at, d, bound)?;
                match *op {
                    "-" => v.checked_neg(),
                    "+" => Some(v),
                    "~" => Some(!v),
                    "!" => Some((v == 0) as i64),
                    _ => None,
                }
            }
            Expr::Binary(a, op, b) => {
                let l = self.fold_depth(a, at, d, bound)?;
                let r = self.fold_depth(b, at, d, bound)?;
                binary(l, op, r)
            }
            Expr::Cond(c, a, b) => {
                if self.fold_depth(c, at, d, bound)? != 0 {
                    self.fold_depth(a, at, d, bound)
                } else {
                    self.fold_depth(b, at, d, bound)
                }
            }
            Expr::Cast(ty, a) => {
                let v = self.fold_depth(a, at, d, bound)?;
                (!ty.contains('*') && !ty.contains("float") && !ty.contains("double")).then_some(v)
            }
            Expr::SizeofType(ty) => type_size(ty).map(|s| s as i64),
            Expr::Call { callee, args } if args.len() == 2 => {
                let a = self.fold_depth(&args[0], at, d, bound)?;
                let b = self.fold_depth(&args[1], at, d, bound)?;
                match callee
                    .trim_start_matches("std::")
                    .trim_start_matches("cuda::std::")
                {
                    "min" => Some(a.min(b)),
                    "max" => Some(a.max(b)),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

impl Env {
    /// Folds a class's constant member: `Cfg::X` from `struct Cfg { static constexpr int
    /// X = …; }`, and `Tile<4, 64>::bytes` from a class template's member whose
    /// initialiser is a constant expression of its template parameters, with the
    /// arguments bound to them. An unknown class or member, or an initialiser that needs
    /// a runtime value, gives `None`.
    fn fold_member(
        &self,
        name: &str,
        at: usize,
        depth: usize,
        bound: &[(String, i64)],
    ) -> Option<i64> {
        let (head, member) = name.trim_start_matches("::").rsplit_once("::")?;
        let (class, args) = match head.find('<') {
            Some(open) if head.ends_with('>') => (&head[..open], Some(&head[open..])),
            Some(_) => return None,
            None => (head, None),
        };
        // `ns::Tile<…>`: members are recorded under the class's own name.
        let class = class.rsplit("::").next()?.trim();
        let e = self.lookup(&format!("{class}::{member}"), at)?;
        let (body, params) = self.classes.get(class)?;
        // Inside the class: its other members and its parameters' defaults are in scope.
        let inside = body.start;
        let Some(args) = args else {
            return params
                .is_empty()
                .then(|| self.fold_depth(e, inside, depth, &[]))?;
        };
        let inner: Vec<(String, i64)> = params
            .iter()
            .zip(split_template_args(args))
            .filter(|(p, _)| !p.is_empty())
            .filter_map(|(p, a)| {
                Some((
                    p.clone(),
                    self.fold_depth(&from_text(&a), at, depth, bound)?,
                ))
            })
            .collect();
        self.fold_depth(e, inside, depth, &inner)
    }
}

/// Applies a binary operator with overflow and division checks.
pub(crate) fn binary(l: i64, op: &str, r: i64) -> Option<i64> {
    Some(match op {
        "+" => l.checked_add(r)?,
        "-" => l.checked_sub(r)?,
        "*" => l.checked_mul(r)?,
        "/" => l.checked_div(r)?,
        "%" => l.checked_rem(r)?,
        "<<" => l.checked_shl(u32::try_from(r).ok()?)?,
        ">>" => l.checked_shr(u32::try_from(r).ok()?)?,
        "&" => l & r,
        "|" => l | r,
        "^" => l ^ r,
        "&&" => ((l != 0) && (r != 0)) as i64,
        "||" => ((l != 0) || (r != 0)) as i64,
        "==" => (l == r) as i64,
        "!=" => (l != r) as i64,
        "<" => (l < r) as i64,
        "<=" => (l <= r) as i64,
        ">" => (l > r) as i64,
        ">=" => (l >= r) as i64,
        _ => return None,
    })
}
