//! A small internal expression tree, built from tree-sitter nodes or from macro text, that
//! constant folding and index lowering work on.

use tree_sitter::Node;

use crate::util::{named_children, node_text, squash_ws, strip_template_args, NodeExt, MAX_DEPTH};

/// An expression, reduced to what folding and lowering need.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    /// An integer literal.
    Int(i64),
    /// A plain or qualified name.
    Name(String),
    /// `a.b` or `a->b`.
    Member(Box<Expr>, String),
    /// A prefix operator: `-`, `+`, `~`, `!`, `*`, `&`.
    Unary(&'static str, Box<Expr>),
    /// A binary operator.
    Binary(Box<Expr>, &'static str, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A call; `callee` is the function text without template arguments.
    Call { callee: String, args: Vec<Expr> },
    /// `a[i]`.
    Subscript(Box<Expr>, Box<Expr>),
    /// A cast to a type (C-style, `static_cast`, `reinterpret_cast`).
    Cast(String, Box<Expr>),
    /// `sizeof(type)`.
    SizeofType(String),
    /// Anything else, kept as one-line text.
    Other(String),
}

const BINARY_OPS: &[&str] = &[
    "||", "&&", "|", "^", "&", "==", "!=", "<", "<=", ">", ">=", "<<", ">>", "+", "-", "*", "/",
    "%",
];

fn intern_op(op: &str) -> Option<&'static str> {
    BINARY_OPS.iter().copied().find(|o| *o == op)
}

/// Parses an integer literal with C suffixes (`u`, `l`, `ull`), hex, octal or binary.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let s = s.replace('\'', "");
    let t = s.trim_end_matches(['u', 'U', 'l', 'L']);
    if t.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    i64::from_str_radix(digits, radix).ok()
}

/// Builds an [`Expr`] from a tree-sitter expression node.
pub(crate) fn from_node(node: Node, text: &str, depth: usize) -> Expr {
    let raw = node_text(node, text);
    if depth > MAX_DEPTH {
        return Expr::Other(squash_ws(raw));
    }
    let d = depth + 1;
    let field = |name: &str| node.field(name);
    match node.kind_name() {
        "number_literal" => parse_int(raw).map_or_else(|| Expr::Other(raw.to_string()), Expr::Int),
        "char_literal" => {
            let inner = raw.trim_matches('\'');
            match inner.as_bytes() {
                [b] => Expr::Int(*b as i64),
                _ => Expr::Other(raw.to_string()),
            }
        }
        "true" => Expr::Int(1),
        "false" => Expr::Int(0),
        // A member of a class template's instance, `Tile<4, 64>::bytes`, keeps its template
        // arguments: the environment folds it with them (`Env::fold_member`).
        "qualified_identifier"
            if raw.contains('<') && !raw.rsplit("::").next().is_some_and(|m| m.contains('<')) =>
        {
            Expr::Name(squash_ws(raw))
        }
        "identifier" | "qualified_identifier" | "namespace_identifier" | "type_identifier" => {
            Expr::Name(squash_ws(&strip_template_args(raw)))
        }
        "template_function" => Expr::Name(squash_ws(&strip_template_args(raw))),
        "parenthesized_expression" => match named_children(node).first() {
            Some(inner) => from_node(*inner, text, d),
            None => Expr::Other(squash_ws(raw)),
        },
        "field_expression" => match (field("argument"), field("field")) {
            (Some(a), Some(f)) => Expr::Member(
                Box::new(from_node(a, text, d)),
                node_text(f, text).to_string(),
            ),
            _ => Expr::Other(squash_ws(raw)),
        },
        "unary_expression" | "pointer_expression" => {
            let op = field("operator").map(|o| node_text(o, text)).unwrap_or("");
            let op: &'static str = match op {
                "-" => "-",
                "+" => "+",
                "~" => "~",
                "!" => "!",
                "*" => "*",
                "&" => "&",
                _ => return Expr::Other(squash_ws(raw)),
            };
            match field("argument") {
                Some(a) => Expr::Unary(op, Box::new(from_node(a, text, d))),
                None => Expr::Other(squash_ws(raw)),
            }
        }
        "binary_expression" => {
            let op = field("operator").and_then(|o| intern_op(node_text(o, text)));
            match (field("left"), op, field("right")) {
                (Some(l), Some(op), Some(r)) => Expr::Binary(
                    Box::new(from_node(l, text, d)),
                    op,
                    Box::new(from_node(r, text, d)),
                ),
                _ => Expr::Other(squash_ws(raw)),
            }
        }
        "conditional_expression" => {
            match (
                field("condition"),
                field("consequence"),
                field("alternative"),
            ) {
                (Some(c), Some(a), Some(b)) => Expr::Cond(
                    Box::new(from_node(c, text, d)),
                    Box::new(from_node(a, text, d)),
                    Box::new(from_node(b, text, d)),
                ),
                _ => Expr::Other(squash_ws(raw)),
            }
        }
        "cast_expression" => match (field("type"), field("value")) {
            (Some(t), Some(v)) => Expr::Cast(
                squash_ws(node_text(t, text)),
                Box::new(from_node(v, text, d)),
            ),
            _ => Expr::Other(squash_ws(raw)),
        },
        "sizeof_expression" => {
            if let Some(t) = field("type") {
                return Expr::SizeofType(squash_ws(node_text(t, text)));
            }
            match field("value") {
                Some(v) => {
                    // `sizeof(float4)` parses as a parenthesised identifier.
                    let inner = node_text(v, text)
                        .trim()
                        .trim_start_matches('(')
                        .trim_end_matches(')');
                    Expr::SizeofType(squash_ws(inner))
                }
                None => Expr::Other(squash_ws(raw)),
            }
        }
        "subscript_expression" => {
            let index = field("indices")
                .and_then(|l| named_children(l).first().copied())
                .or_else(|| field("index"));
            match (field("argument"), index) {
                (Some(a), Some(i)) => Expr::Subscript(
                    Box::new(from_node(a, text, d)),
                    Box::new(from_node(i, text, d)),
                ),
                _ => Expr::Other(squash_ws(raw)),
            }
        }
        "call_expression" => {
            let Some(f) = field("function") else {
                return Expr::Other(squash_ws(raw));
            };
            let args: Vec<Expr> = field("arguments")
                .map(|a| {
                    named_children(a)
                        .into_iter()
                        .filter(|n| n.kind_name() != "comment")
                        .map(|n| from_node(n, text, d))
                        .collect()
                })
                .unwrap_or_default();
            // `static_cast<int>(x)` and friends are casts, not calls.
            if f.kind_name() == "template_function" {
                let name = f.field("name").map(|n| node_text(n, text)).unwrap_or("");
                if name.ends_with("_cast") && args.len() == 1 {
                    let ty = f
                        .field("arguments")
                        .map(|a| {
                            node_text(a, text)
                                .trim_start_matches('<')
                                .trim_end_matches('>')
                                .to_string()
                        })
                        .unwrap_or_default();
                    let arg = args.into_iter().next().unwrap_or(Expr::Int(0));
                    return Expr::Cast(squash_ws(&ty), Box::new(arg));
                }
            }
            Expr::Call {
                callee: squash_ws(&strip_template_args(node_text(f, text))),
                args,
            }
        }
        _ => Expr::Other(squash_ws(raw)),
    }
}

/// Parses the text of a macro body or an attribute argument into an [`Expr`].
/// Returns `Expr::Other` with the text when it is not a simple expression.
pub(crate) fn from_text(s: &str) -> Expr {
    let tokens = tokenize(s);
    let mut p = TextParser { tokens, pos: 0 };
    match p.expr(0) {
        Some(e) if p.pos == p.tokens.len() => e,
        _ => Expr::Other(squash_ws(s)),
    }
}

/// A token of [`from_text`]'s input, borrowing its text.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'s> {
    Int(i64),
    Ident(&'s str),
    Punct(&'s str),
}

fn tokenize(s: &str) -> Vec<Tok<'_>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() && out.len() < 4096 {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i += 2;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'\'') {
                i += 1;
            }
            match parse_int(&s[start..i]) {
                Some(v) => out.push(Tok::Int(v)),
                None => out.push(Tok::Punct(&s[start..i])),
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':') {
                i += 1;
            }
            out.push(Tok::Ident(&s[start..i]));
        } else {
            let two = s.get(i..i + 2).unwrap_or("");
            if matches!(
                two,
                "<<" | ">>" | "<=" | ">=" | "==" | "!=" | "&&" | "||" | "->"
            ) {
                out.push(Tok::Punct(two));
                i += 2;
            } else {
                let len = s[i..].chars().next().map_or(1, char::len_utf8);
                out.push(Tok::Punct(&s[i..i + len]));
                i += len;
            }
        }
    }
    out
}

struct TextParser<'s> {
    tokens: Vec<Tok<'s>>,
    pos: usize,
}

fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | "<=" | ">" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

impl TextParser<'_> {
    fn peek_punct(&self) -> Option<&str> {
        match self.tokens.get(self.pos) {
            Some(Tok::Punct(p)) => Some(p),
            _ => None,
        }
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.peek_punct() == Some(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self, depth: usize) -> Option<Expr> {
        if depth > MAX_DEPTH {
            return None;
        }
        let cond = self.binary(0, depth + 1)?;
        if self.eat("?") {
            let a = self.expr(depth + 1)?;
            if !self.eat(":") {
                return None;
            }
            let b = self.expr(depth + 1)?;
            return Some(Expr::Cond(Box::new(cond), Box::new(a), Box::new(b)));
        }
        Some(cond)
    }

    fn binary(&mut self, min: u8, depth: usize) -> Option<Expr> {
        let mut left = self.unary(depth + 1)?;
        while let Some(op) = self.peek_punct().and_then(intern_op) {
            let prec = precedence(op)?;
            if prec < min {
                break;
            }
            self.pos += 1;
            let right = self.binary(prec + 1, depth + 1)?;
            left = Expr::Binary(Box::new(left), op, Box::new(right));
        }
        Some(left)
    }

    fn unary(&mut self, depth: usize) -> Option<Expr> {
        if depth > MAX_DEPTH {
            return None;
        }
        for op in ["-", "+", "~", "!"] {
            if self.eat(op) {
                let inner = self.unary(depth + 1)?;
                let op: &'static str = match op {
                    "-" => "-",
                    "+" => "+",
                    "~" => "~",
                    _ => "!",
                };
                return Some(Expr::Unary(op, Box::new(inner)));
            }
        }
        let tok = *self.tokens.get(self.pos)?;
        self.pos += 1;
        match tok {
            Tok::Int(v) => Some(Expr::Int(v)),
            Tok::Ident("sizeof") => {
                if !self.eat("(") {
                    return None;
                }
                let mut parts = Vec::new();
                while let Some(t) = self.tokens.get(self.pos) {
                    self.pos += 1;
                    match t {
                        Tok::Punct(")") => break,
                        Tok::Ident(s) => parts.push(s.to_string()),
                        Tok::Punct(p) => parts.push(p.to_string()),
                        Tok::Int(v) => parts.push(v.to_string()),
                    }
                }
                Some(Expr::SizeofType(parts.join(" ")))
            }
            Tok::Ident(name) => {
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.expr(depth + 1)?);
                            if self.eat(")") {
                                break;
                            }
                            if !self.eat(",") {
                                return None;
                            }
                        }
                    }
                    return Some(Expr::Call {
                        callee: name.to_string(),
                        args,
                    });
                }
                let mut e = Expr::Name(name.to_string());
                while self.eat(".") {
                    match self.tokens.get(self.pos) {
                        Some(Tok::Ident(f)) => {
                            e = Expr::Member(Box::new(e), f.to_string());
                            self.pos += 1;
                        }
                        _ => return None,
                    }
                }
                Some(e)
            }
            Tok::Punct("(") => {
                // A C-style cast `(int)x` or a parenthesised expression.
                if let (Some(Tok::Ident(ty)), Some(Tok::Punct(close))) =
                    (self.tokens.get(self.pos), self.tokens.get(self.pos + 1))
                {
                    if *close == ")" && crate::types::is_type_name(ty) {
                        let ty = ty.to_string();
                        self.pos += 2;
                        let inner = self.unary(depth + 1)?;
                        return Some(Expr::Cast(ty, Box::new(inner)));
                    }
                }
                let e = self.expr(depth + 1)?;
                if !self.eat(")") {
                    return None;
                }
                Some(e)
            }
            Tok::Punct(_) => None,
        }
    }
}

impl Expr {
    /// Calls `f` on this expression and on the sub-expressions of those for which it
    /// returns `true`.
    pub(crate) fn walk_pruned(&self, f: &mut impl FnMut(&Expr) -> bool) {
        if !f(self) {
            return;
        }
        match self {
            Expr::Member(a, _) | Expr::Unary(_, a) | Expr::Cast(_, a) => a.walk_pruned(f),
            Expr::Binary(a, _, b) | Expr::Subscript(a, b) => {
                a.walk_pruned(f);
                b.walk_pruned(f);
            }
            Expr::Cond(a, b, c) => {
                a.walk_pruned(f);
                b.walk_pruned(f);
                c.walk_pruned(f);
            }
            Expr::Call { args, .. } => args.iter().for_each(|a| a.walk_pruned(f)),
            Expr::Int(_) | Expr::Name(_) | Expr::SizeofType(_) | Expr::Other(_) => {}
        }
    }
}
