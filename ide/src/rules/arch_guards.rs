//! Architecture guards: which part of a file is compiled only for a minimum SM.
//!
//! Not a rule: `arch/requires-newer-sm` asks it how far each call is guarded. Two kinds
//! of guard are read from the text, because neither is a node tree-sitter gives:
//!
//! - preprocessor regions: `#if __CUDA_ARCH__ >= 900`, `#if defined(__CUDA_ARCH__) &&
//!   __CUDA_ARCH__ >= 900`, the `#else` of `#if __CUDA_ARCH__ < 800`, `#elif` chains (the
//!   parser sees only one branch of these, as the preprocessor would not);
//! - the `<nv/target>` macros `NV_IF_TARGET(q, (...))`, `NV_IF_ELSE_TARGET(q, (...),
//!   (...))` and `NV_DISPATCH_TARGET(q1, (...), q2, (...), ...)`, whose bracketed
//!   statements tree-sitter parses as the arguments of a call (the calls inside are
//!   found, the condition is not): each branch is guarded by its query and the negation
//!   of the queries before it.
//!
//! A condition is read as the least `__CUDA_ARCH__` it ensures when true and when false
//! ([`Level`]). A condition on the architecture that cannot be read exactly (a
//! toolkit-version test, a `..._ENABLED` macro without an SM number) keeps the old
//! answer: the author guarded the code, so it is [`Level::Silent`].

use super::TextRange;

/// What a guard ensures about the architecture the code inside it is compiled for.
/// Ordered from weakest to strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Nothing: the code may be compiled for any SM.
    Nothing,
    /// `__CUDA_ARCH__` is at least this (`900` for sm_90).
    AtLeast(u32),
    /// Host-only code, or a guard on the architecture whose level is not known: assumed
    /// correct.
    Silent,
}

/// A guarded part of the file.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub range: TextRange,
    pub level: Level,
    /// The guard as written (`__CUDA_ARCH__ >= 800`, `NV_PROVIDES_SM_80`), for messages.
    pub guard: String,
}

/// Every guarded region of a file.
#[derive(Debug, Default)]
pub(crate) struct ArchGuards {
    regions: Vec<Region>,
}

impl ArchGuards {
    pub(crate) fn scan(text: &str) -> ArchGuards {
        let mut regions = preprocessor_regions(text);
        regions.extend(target_macro_regions(text));
        regions.retain(|r| r.level != Level::Nothing);
        ArchGuards { regions }
    }

    /// The strongest guard around `offset`, with how it is written.
    pub(crate) fn at(&self, offset: usize) -> (Level, Option<&str>) {
        let mut best = (Level::Nothing, None);
        for r in &self.regions {
            if r.range.contains(&offset) && r.level > best.0 {
                best = (r.level, Some(r.guard.as_str()));
            }
        }
        best
    }
}

/// The branches of the `<nv/target>` macros whose queries name an SM
/// (`NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70, (...), (...))`): code the author wrote per
/// architecture, whichever branch it is in.
pub(crate) fn sm_dispatch_branches(text: &str) -> Vec<TextRange> {
    target_macro_regions(text)
        .into_iter()
        .filter(|r| r.guard.contains("_SM_"))
        .map(|r| r.range)
        .collect()
}

/// `(when true, when false)`.
type Cond = (Level, Level);

const NEUTRAL: Cond = (Level::Nothing, Level::Nothing);
const OPAQUE: Cond = (Level::Silent, Level::Silent);

fn and(a: Cond, b: Cond) -> Cond {
    (a.0.max(b.0), a.1.min(b.1))
}

fn or(a: Cond, b: Cond) -> Cond {
    (a.0.min(b.0), a.1.max(b.1))
}

fn not(a: Cond) -> Cond {
    (a.1, a.0)
}

/// The regions of `#if`/`#elif`/`#else` branches.
fn preprocessor_regions(text: &str) -> Vec<Region> {
    struct Open {
        /// What all earlier branches being false ensures.
        earlier_false: Level,
        branch_start: usize,
        branch: Level,
        guard: String,
    }
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(first) = lines.next() {
        let start = offset;
        offset += first.len();
        let t = first.trim_start();
        let Some(d) = t.strip_prefix('#') else {
            continue;
        };
        // A directive continued with `\` on the following lines.
        let mut directive = d.to_string();
        while directive.trim_end().ends_with('\\') {
            let Some(next) = lines.next() else { break };
            offset += next.len();
            let cut = directive.trim_end().len() - 1;
            directive.truncate(cut);
            directive.push(' ');
            directive.push_str(next);
        }
        let directive = strip_comments(&directive);
        let d = directive.trim_start();
        let word: String = d.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        let rest = d[word.len()..].trim();
        let cond = match word.as_str() {
            "if" => Some(condition(rest)),
            "ifdef" => Some(identifier(rest)),
            "ifndef" => Some(not(identifier(rest))),
            _ => None,
        };
        let close = |o: &Open, out: &mut Vec<Region>| {
            out.push(Region {
                range: o.branch_start..start,
                level: o.branch,
                guard: o.guard.clone(),
            });
        };
        match word.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let c = cond.unwrap_or(NEUTRAL);
                stack.push(Open {
                    earlier_false: c.1,
                    branch_start: offset,
                    branch: c.0,
                    guard: shown(&word, rest),
                });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                let Some(top) = stack.last_mut() else {
                    continue;
                };
                close(top, &mut out);
                let c = match word.as_str() {
                    "elif" => condition(rest),
                    "elifdef" => identifier(rest),
                    "elifndef" => not(identifier(rest)),
                    _ => (Level::Nothing, Level::Nothing),
                };
                top.branch = top.earlier_false.max(c.0);
                top.guard = if word == "else" {
                    format!("#else of {}", top.guard)
                } else {
                    shown(&word, rest)
                };
                top.earlier_false = top.earlier_false.max(c.1);
                top.branch_start = offset;
            }
            "endif" => {
                if let Some(top) = stack.pop() {
                    close(&top, &mut out);
                }
            }
            _ => {}
        }
    }
    for top in stack {
        out.push(Region {
            range: top.branch_start..text.len(),
            level: top.branch,
            guard: top.guard,
        });
    }
    out
}

fn shown(word: &str, rest: &str) -> String {
    format!(
        "#{word} {}",
        rest.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// `s` without `//` and `/* */` comments.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                match rest[l..].find('\n') {
                    Some(n) => rest = &rest[l + n..],
                    None => return out,
                }
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                match rest[b + 2..].find("*/") {
                    Some(e) => rest = &rest[b + 2 + e + 2..],
                    None => return out,
                }
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Whether a name or condition is about the architecture or the toolkit version.
pub(crate) fn mentions_arch(cond: &str) -> bool {
    let c = cond.to_ascii_uppercase();
    let sm_digit = c
        .match_indices("SM")
        .any(|(i, _)| c[i + 2..].starts_with(|ch: char| ch.is_ascii_digit() || ch == '_'));
    c.contains("ARCH")
        || sm_digit
        || c.contains("CUDART_VERSION")
        || c.contains("CUDACC_VER")
        || c.contains("CUDA_VERSION")
}

/// The SM a macro name such as `CUTE_ARCH_TMA_SM90_ENABLED` or
/// `__CUDA_ARCH_FEAT_SM90_ALL` names, as a `__CUDA_ARCH__` value.
fn sm_in_name(name: &str) -> Option<u32> {
    let upper = name.to_ascii_uppercase();
    upper.match_indices("SM").find_map(|(i, _)| {
        let digits: String = upper[i + 2..]
            .trim_start_matches('_')
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (2..=3)
            .contains(&digits.len())
            .then(|| digits.parse::<u32>().ok().map(|n| n * 10))
            .flatten()
    })
}

/// `#ifdef name`.
fn identifier(name: &str) -> Cond {
    let name = name.split_whitespace().next().unwrap_or("");
    defined(name)
}

/// `defined(name)`.
fn defined(name: &str) -> Cond {
    if name == "__CUDA_ARCH__" {
        // Defined only while compiling device code.
        (Level::Nothing, Level::Silent)
    } else if let Some(sm) = sm_in_name(name) {
        // A feature macro of one SM: defined for that SM and newer (or for exactly it).
        (Level::AtLeast(sm), Level::Silent)
    } else if mentions_arch(name) {
        OPAQUE
    } else {
        NEUTRAL
    }
}

/// A `#if` condition, or [`OPAQUE`] (or [`NEUTRAL`] when it is not about the
/// architecture) where it cannot be read.
fn condition(s: &str) -> Cond {
    let tokens = tokens(s);
    let mut p = Parser { t: &tokens, i: 0 };
    match p.or() {
        Some(c) if p.i == tokens.len() => c,
        _ if mentions_arch(s) => OPAQUE,
        _ => NEUTRAL,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(u64),
    Op(&'static str),
}

fn tokens(s: &str) -> Vec<Tok> {
    const OPS: &[&str] = &[
        "&&", "||", ">=", "<=", "==", "!=", "!", "(", ")", ">", "<", "+", "-", "*", "/", "%",
    ];
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let digits = s[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            match digits.parse() {
                Ok(n) => out.push(Tok::Num(n)),
                Err(_) => out.push(Tok::Op("?")),
            }
            continue;
        }
        for op in OPS {
            if s[i..].starts_with(op) {
                out.push(Tok::Op(op));
                i += op.len();
                continue 'outer;
            }
        }
        out.push(Tok::Op("?"));
        i += 1;
    }
    out
}

/// A term of a comparison.
enum Term {
    Arch,
    Num(u64),
    Cond(Cond),
}

struct Parser<'t> {
    t: &'t [Tok],
    i: usize,
}

impl Parser<'_> {
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.t.get(self.i), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Option<Cond> {
        let mut c = self.and()?;
        while self.eat("||") {
            c = or(c, self.and()?);
        }
        Some(c)
    }

    fn and(&mut self) -> Option<Cond> {
        let mut c = self.unary()?;
        while self.eat("&&") {
            c = and(c, self.unary()?);
        }
        Some(c)
    }

    fn unary(&mut self) -> Option<Cond> {
        if self.eat("!") {
            return Some(not(self.unary()?));
        }
        let a = self.term()?;
        let op = match self.t.get(self.i) {
            Some(Tok::Op(o)) if matches!(*o, ">=" | "<=" | ">" | "<" | "==" | "!=") => *o,
            _ => {
                return Some(match a {
                    // `#if __CUDA_ARCH__`: device code of any SM.
                    Term::Arch => (Level::Nothing, Level::Silent),
                    Term::Num(n) => {
                        if n == 0 {
                            (Level::Silent, Level::Nothing)
                        } else {
                            (Level::Nothing, Level::Silent)
                        }
                    }
                    Term::Cond(c) => c,
                });
            }
        };
        self.i += 1;
        let b = self.term()?;
        Some(match (a, b) {
            (Term::Arch, Term::Num(n)) => compare(op, n),
            (Term::Num(n), Term::Arch) => compare(flip(op), n),
            (Term::Cond(c), _) | (_, Term::Cond(c)) if c == OPAQUE => OPAQUE,
            _ => NEUTRAL,
        })
    }

    fn term(&mut self) -> Option<Term> {
        if self.eat("(") {
            let c = self.or()?;
            return self.eat(")").then_some(Term::Cond(c));
        }
        let tok = self.t.get(self.i)?.clone();
        self.i += 1;
        match tok {
            Tok::Num(n) => Some(Term::Num(n)),
            Tok::Ident(name) if name == "defined" => {
                let paren = self.eat("(");
                let Some(Tok::Ident(name)) = self.t.get(self.i).cloned() else {
                    return None;
                };
                self.i += 1;
                if paren && !self.eat(")") {
                    return None;
                }
                Some(Term::Cond(defined(&name)))
            }
            Tok::Ident(name) if name == "__CUDA_ARCH__" => Some(Term::Arch),
            Tok::Ident(name) => Some(Term::Cond(if mentions_arch(&name) {
                OPAQUE
            } else {
                NEUTRAL
            })),
            Tok::Op(_) => None,
        }
    }
}

fn flip(op: &'static str) -> &'static str {
    match op {
        ">=" => "<=",
        "<=" => ">=",
        ">" => "<",
        "<" => ">",
        o => o,
    }
}

/// `__CUDA_ARCH__ op n`. Outside device code `__CUDA_ARCH__` reads as 0, so a false `>=`
/// may be host code and a false `<` is device code of at least `n`.
fn compare(op: &str, n: u64) -> Cond {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    match op {
        ">=" => (Level::AtLeast(n), Level::Nothing),
        ">" => (Level::AtLeast(n.saturating_add(1)), Level::Nothing),
        "<" => (Level::Nothing, Level::AtLeast(n)),
        "<=" => (Level::Nothing, Level::AtLeast(n.saturating_add(1))),
        "==" => (Level::AtLeast(n), Level::Nothing),
        _ => (Level::Nothing, Level::AtLeast(n)),
    }
}

/// A `<nv/target>` query: `NV_PROVIDES_SM_90`, `NV_IS_EXACTLY_SM_80`,
/// `NV_HAS_FEATURE_SM_90a`, `NV_IS_DEVICE`, `NV_IS_HOST`, `NV_ANY_TARGET`, `NV_NO_TARGET`.
fn target_query(q: &str) -> Cond {
    let q = q.trim();
    for prefix in ["NV_PROVIDES_SM_", "NV_IS_EXACTLY_SM_", "NV_HAS_FEATURE_SM_"] {
        if let Some(rest) = q.strip_prefix(prefix) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            return match digits.parse::<u32>() {
                Ok(n) => (Level::AtLeast(n * 10), Level::Nothing),
                Err(_) => OPAQUE,
            };
        }
    }
    match q {
        "NV_IS_DEVICE" => (Level::Nothing, Level::Silent),
        "NV_IS_HOST" => (Level::Silent, Level::Nothing),
        "NV_ANY_TARGET" => (Level::Nothing, Level::Silent),
        "NV_NO_TARGET" => (Level::Silent, Level::Nothing),
        _ => OPAQUE,
    }
}

/// The branches of every `NV_IF_TARGET`, `NV_IF_ELSE_TARGET` and `NV_DISPATCH_TARGET`.
fn target_macro_regions(text: &str) -> Vec<Region> {
    let mut out = Vec::new();
    if !text.contains("NV_") {
        return out;
    }
    for name in ["NV_IF_TARGET", "NV_IF_ELSE_TARGET", "NV_DISPATCH_TARGET"] {
        let mut from = 0;
        while let Some(at) = super::find_word(text, name, from) {
            from = at + name.len();
            let after = text[from..].trim_start();
            if !after.starts_with('(') {
                continue;
            }
            let open = text.len() - after.len();
            let Some(args) = split_args(text, open) else {
                continue;
            };
            // (query, branch) pairs; a trailing odd branch is the `else`.
            let mut earlier_false = Level::Nothing;
            let pairs = if name == "NV_DISPATCH_TARGET" {
                args.chunks(2).collect::<Vec<_>>()
            } else {
                vec![&args[..args.len().min(2)]]
            };
            for pair in pairs {
                let [q, branch] = pair else { continue };
                let c = target_query(&text[q.clone()]);
                out.push(Region {
                    range: branch.clone(),
                    level: earlier_false.max(c.0),
                    guard: text[q.clone()].trim().to_string(),
                });
                earlier_false = earlier_false.max(c.1);
            }
            if name != "NV_DISPATCH_TARGET" && args.len() >= 3 {
                let q = &args[0];
                out.push(Region {
                    range: args[2].clone(),
                    level: earlier_false,
                    guard: format!("else of {}", text[q.clone()].trim()),
                });
            }
        }
    }
    out
}

/// The ranges of the top-level arguments of the parenthesised list opening at `open`.
fn split_args(text: &str, open: usize) -> Option<Vec<TextRange>> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut start = open + 1;
    let mut out = Vec::new();
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    out.push(start..i);
                    return Some(out);
                }
            }
            b',' if depth == 1 => {
                out.push(start..i);
                start = i + 1;
            }
            b'"' | b'\'' => {
                let quote = b[i];
                i += 1;
                while i < b.len() && b[i] != quote {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}
