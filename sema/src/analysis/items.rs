//! A file as a list of top-level items (functions, declarations, preprocessor lines), with
//! what each defines and mentions by name: what the rules' incremental runs
//! (`rules/incremental.rs`) use to tell which items an edit can reach.
//!
//! Everything here is lexical and errs on the side of more dependencies: an item's
//! diagnostics may depend on another item only through a name one defines and the other
//! mentions (a call, a launch, a macro expanding to one, a global variable), so two items
//! that share no such name are independent. What cannot be told apart lexically
//! (preprocessor conditionals around code, namespaces and classes with bodies) defines
//! every name it contains.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use kernaut_syntax::{FileFacts, FxHashMap, FxHasher, TextRange};

use crate::diagnostic::RuleDiagnostic;

use super::DiagnosticsKey;

/// What kind of top-level item an item is, as far as dependencies go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A function definition (kernel, device or host function, template or not) whose
    /// only preprocessor lines are `#pragma`s.
    Function,
    /// A global variable in device memory (`__shared__`, `__constant__`, `__device__`,
    /// `__managed__`): the functions that use it are analysed together.
    Data,
    /// Code that defines what it contains: a namespace, class or `#if` block with function
    /// bodies inside, or a function with preprocessor directives in it.
    Opaque,
    /// Context every item sees the same way whatever the others say: `#define`s,
    /// `#include`s, types without function bodies, host declarations, comments.
    Context,
}

/// One top-level item of a file.
#[derive(Clone, Debug)]
pub struct Item {
    /// Where the item lies in the file.
    pub range: TextRange,
    /// A hash of the item's text: two versions of a file share an item when it is equal.
    pub hash: u64,
    /// The number of line breaks in the item.
    pub newlines: u32,
    /// What the item is.
    pub kind: ItemKind,
}

/// A rules run kept with its file, and carried to the next versions of the file: the
/// base of the next incremental run.
#[derive(Debug)]
pub struct RulesRun {
    /// What the run depended on besides the text.
    pub key: DiagnosticsKey,
    /// The run's diagnostics.
    pub diagnostics: Arc<Vec<RuleDiagnostic>>,
    /// The file's items when the run was made.
    pub items: Arc<[Item]>,
    /// What the model read from launches, per kernel name the file defines or launches
    /// (the rules' key of one kernel).
    pub names: Vec<(String, u64)>,
    /// The race model's steps per kernel it ran (where the kernel's body starts), in
    /// document order: the model has a budget per file, so a kernel's races depend on the
    /// steps of the kernels before it once the budget runs short.
    pub race_steps: Vec<(usize, usize)>,
    /// Whether the run's file parsed without syntax errors.
    pub clean: bool,
    /// The run's text (the items' names are read from it when an edit changes them).
    pub text: Arc<str>,
}

/// The items of `text`.
pub fn items(text: &str) -> Vec<Item> {
    items_reusing(text, &[], "")
}

/// The items of `text`, taking the kind of an item whose text `old` (items of `old_text`)
/// has already.
pub fn items_reusing(text: &str, old: &[Item], old_text: &str) -> Vec<Item> {
    let known: FxHashMap<u64, &Item> = old.iter().map(|i| (i.hash, i)).collect();
    kernaut_syntax::top_level_items(text)
        .into_iter()
        .map(|range| {
            let t = &text[range.clone()];
            let mut h = FxHasher::default();
            t.hash(&mut h);
            let hash = h.finish();
            let kind = match known.get(&hash) {
                Some(o) if old_text.get(o.range.clone()) == Some(t) => o.kind,
                _ => kind(t),
            };
            Item {
                hash,
                newlines: memchr::memchr_iter(b'\n', t.as_bytes()).count() as u32,
                kind,
                range,
            }
        })
        .collect()
}

/// The item's kind, from its text.
fn kind(t: &str) -> ItemKind {
    let code = strip(t);
    let mut directives = false;
    let mut conditional = false;
    for line in code.lines() {
        let l = line.trim_start();
        if let Some(rest) = l.strip_prefix('#') {
            let word = rest.trim_start();
            if !word.starts_with("pragma") {
                directives = true;
            }
            if word.starts_with("if") || word.starts_with("el") || word.starts_with("endif") {
                conditional = true;
            }
        }
    }
    let has_body = has_function_body(&code);
    let first = first_words(&code);
    if conditional || (directives && has_body) {
        return if has_body {
            ItemKind::Opaque
        } else {
            ItemKind::Context
        };
    }
    if directives {
        return ItemKind::Context;
    }
    let scope_kw = |w: &str| {
        matches!(
            w,
            "namespace" | "struct" | "class" | "union" | "enum" | "typedef" | "using" | "extern"
        )
    };
    if first.iter().any(|w| scope_kw(w)) && !first.contains(&"template") {
        return if has_body {
            ItemKind::Opaque
        } else {
            ItemKind::Context
        };
    }
    if has_body {
        // `template <...> struct S { ... }` is a class template.
        if first.contains(&"template") && first.iter().any(|w| scope_kw(w)) {
            return ItemKind::Opaque;
        }
        return ItemKind::Function;
    }
    let device = code.split(|c: char| !is_ident_char(c)).any(|w| {
        matches!(
            w,
            "__shared__" | "__constant__" | "__device__" | "__managed__"
        )
    });
    if device {
        ItemKind::Data
    } else {
        ItemKind::Context
    }
}

/// The first few identifiers of the code (to find `namespace`, `struct`, `template`).
fn first_words(code: &str) -> Vec<&str> {
    let head = code.split('{').next().unwrap_or("");
    head.split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty())
        .take(4)
        .collect()
}

/// Whether the code holds a function body: a `)` followed (after qualifiers) by `{`.
fn has_function_body(code: &str) -> bool {
    let b = code.as_bytes();
    let mut i = 0;
    while let Some(p) = memchr::memchr(b')', &b[i..]) {
        let mut j = i + p + 1;
        // Skip whitespace and qualifier words (`const`, `noexcept`, `override`, a
        // trailing return type's words) between `)` and `{`.
        loop {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            let start = j;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j == start {
                break;
            }
        }
        if j < b.len() && b[j] == b'{' {
            return true;
        }
        i += p + 1;
    }
    false
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The text with comments, string and character literals replaced by spaces (line
/// breaks kept).
pub fn strip(t: &str) -> String {
    let b = t.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.extend_from_slice(b"  ");
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                    i += 1;
                }
                if i < b.len() {
                    out.extend_from_slice(b"  ");
                    i += 2;
                }
            }
            q @ (b'"' | b'\'') => {
                // A digit separator (`1'000`) is not a character literal.
                if q == b'\'' && i > 0 && b[i - 1].is_ascii_alphanumeric() {
                    out.push(b' ');
                    i += 1;
                    continue;
                }
                out.push(b' ');
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] != b'\n' {
                        out.push(b' ');
                        i += 1;
                    }
                    out.push(b' ');
                    i += 1;
                }
                if i < b.len() && b[i] == q {
                    out.push(b' ');
                    i += 1;
                }
            }
            c => {
                out.push(if c.is_ascii() { c } else { b' ' });
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The identifiers of stripped code (no keywords), each once per call's result order.
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    code.split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty() && !w.as_bytes()[0].is_ascii_digit() && !is_keyword(w))
}

/// C++ and CUDA words that never name something a file defines.
fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "alignas"
            | "alignof"
            | "asm"
            | "auto"
            | "bool"
            | "break"
            | "case"
            | "catch"
            | "char"
            | "class"
            | "const"
            | "constexpr"
            | "consteval"
            | "const_cast"
            | "continue"
            | "decltype"
            | "default"
            | "delete"
            | "do"
            | "double"
            | "dynamic_cast"
            | "else"
            | "enum"
            | "explicit"
            | "extern"
            | "false"
            | "float"
            | "for"
            | "friend"
            | "goto"
            | "if"
            | "inline"
            | "int"
            | "long"
            | "mutable"
            | "namespace"
            | "new"
            | "noexcept"
            | "nullptr"
            | "operator"
            | "private"
            | "protected"
            | "public"
            | "register"
            | "reinterpret_cast"
            | "return"
            | "short"
            | "signed"
            | "sizeof"
            | "static"
            | "static_assert"
            | "static_cast"
            | "struct"
            | "switch"
            | "template"
            | "this"
            | "throw"
            | "true"
            | "try"
            | "typedef"
            | "typename"
            | "union"
            | "unsigned"
            | "using"
            | "virtual"
            | "void"
            | "volatile"
            | "while"
            | "__global__"
            | "__device__"
            | "__host__"
            | "__shared__"
            | "__constant__"
            | "__managed__"
            | "__restrict__"
            | "__forceinline__"
            | "__noinline__"
            | "__inline__"
            | "__launch_bounds__"
            | "__attribute__"
            | "__align__"
            | "__maxnreg__"
            | "__cluster_dims__"
            | "__grid_constant__"
            | "__declspec"
            | "override"
            | "final"
            // Preprocessor words.
            | "ifdef"
            | "ifndef"
            | "elif"
            | "endif"
            | "define"
            | "undef"
            | "defined"
            | "include"
            | "pragma"
    )
}

/// What the items define and mention by name, and which belong together.
pub struct Names {
    /// For each item: the names it defines (empty for context items).
    pub defines: Vec<Vec<String>>,
    /// For each item: the names it mentions, with the names of the macros it mentions
    /// expanded (empty for context items).
    pub mentions: Vec<Vec<String>>,
    /// For each item: its group (items whose diagnostics may depend on each other share
    /// one); context items are alone.
    pub group: Vec<usize>,
}

/// The macros a file sees (its own and its headers'), by name: the identifiers of each
/// body, so that a mention of a macro mentions what it expands to.
pub struct Macros(FxHashMap<String, Vec<String>>);

impl Macros {
    /// The macros of `text` and `header_macros` (as (name, body)).
    pub fn new(text: &str, header_macros: &[(String, String)]) -> Macros {
        let mut macros: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (name, body) in header_macros {
            macros
                .entry(name.clone())
                .or_insert_with(|| identifiers(&strip(body)).map(str::to_string).collect());
        }
        for m in kernaut_syntax::macro_definitions(text) {
            let ids: Vec<String> = identifiers(&strip(&m.body))
                .filter(|w| m.params.as_ref().is_none_or(|p| !p.iter().any(|x| x == w)))
                .map(str::to_string)
                .collect();
            macros.entry(m.name).or_default().extend(ids);
        }
        Macros(macros)
    }
}

/// What one item of kind `kind` whose text is `text` defines and mentions (with its
/// macros expanded). `facts`, when given, are those of the file the item is at `range`
/// of: the functions they find there are defined too.
pub fn item_names(
    text: &str,
    kind: ItemKind,
    range: &TextRange,
    facts: Option<&FileFacts>,
    macros: &Macros,
) -> (Vec<String>, Vec<String>) {
    if kind == ItemKind::Context {
        return (Vec::new(), Vec::new());
    }
    let code = strip(text);
    let mut men: Vec<String> = Vec::new();
    let mut seen = kernaut_syntax::FxHashSet::default();
    let mut stack: Vec<&str> = identifiers(&code).collect();
    while let Some(w) = stack.pop() {
        if !seen.insert(w) {
            continue;
        }
        men.push(w.to_string());
        if let Some(body) = macros.0.get(w) {
            stack.extend(body.iter().map(String::as_str));
        }
    }
    let mut def: Vec<String> = match kind {
        ItemKind::Function => function_names(&code),
        ItemKind::Data => data_names(&code),
        _ => men.clone(),
    };
    // The functions the facts find there, by their names without namespaces.
    for f in facts
        .into_iter()
        .flat_map(|f| f.kernels.iter().chain(&f.device_functions))
    {
        if range.contains(&f.name_range.start) {
            def.push(kernaut_syntax::short_name(&f.name).to_string());
        }
    }
    def.sort();
    def.dedup();
    (def, men)
}

/// The names of `items` of `text` (with `facts` of the same text) and their groups.
/// `mentions` keeps only the names that some item defines, the macros' and `extra`.
pub fn names(
    text: &str,
    items: &[Item],
    facts: &FileFacts,
    macros: &Macros,
    extra: &kernaut_syntax::FxHashSet<String>,
) -> Names {
    let stripped = strip(text);
    let mut defines = Vec::with_capacity(items.len());
    for item in items {
        let code = &stripped[item.range.clone()];
        let mut def: Vec<String> = match item.kind {
            ItemKind::Context => Vec::new(),
            ItemKind::Function => function_names(code),
            ItemKind::Data => data_names(code),
            ItemKind::Opaque => identifiers(code).map(str::to_string).collect(),
        };
        if item.kind != ItemKind::Context {
            let fs = facts.kernels.iter().chain(&facts.device_functions);
            for f in fs.filter(|f| item.range.contains(&f.name_range.start)) {
                def.push(kernaut_syntax::short_name(&f.name).to_string());
            }
        }
        def.sort();
        def.dedup();
        defines.push(def);
    }
    // Items are grouped when one mentions a name another defines.
    let mut parent: Vec<usize> = (0..items.len()).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut by_name: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, def) in defines.iter().enumerate() {
        for n in def {
            match by_name.get(n.as_str()) {
                Some(&j) => {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a] = b;
                }
                None => {
                    by_name.insert(n, i);
                }
            }
        }
    }
    let mut mentions = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut men: Vec<String> = Vec::new();
        if item.kind != ItemKind::Context {
            let mut seen = kernaut_syntax::FxHashSet::default();
            let mut stack: Vec<&str> = identifiers(&stripped[item.range.clone()])
                .filter(|w| {
                    by_name.contains_key(w) || macros.0.contains_key(*w) || extra.contains(*w)
                })
                .collect();
            while let Some(w) = stack.pop() {
                if !seen.insert(w) {
                    continue;
                }
                if let Some(&j) = by_name.get(w) {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a] = b;
                }
                men.push(w.to_string());
                if let Some(body) = macros.0.get(w) {
                    stack.extend(body.iter().map(String::as_str));
                }
            }
        }
        mentions.push(men);
    }
    let group = (0..items.len()).map(|i| find(&mut parent, i)).collect();
    Names {
        defines,
        mentions,
        group,
    }
}

/// The names a function definition defines: its name (with the classes or namespaces
/// that qualify it) and the types it declares inside (`typedef`, `using X =`), which rules
/// that read the whole file's text see everywhere. Every identifier of the head outside
/// parentheses when the name cannot be told.
fn function_names(code: &str) -> Vec<String> {
    let head_end = code.find('{').unwrap_or(code.len());
    let head = &code[..head_end];
    let mut out = Vec::new();
    if let Some(name) = declarator_name(head) {
        out.extend(name);
    } else {
        out.extend(outside_parens(head).map(str::to_string));
    }
    // Types declared inside: every identifier of a `typedef` up to its `;`, and the
    // name of a `using X =`.
    let body = &code[head_end..];
    let words: Vec<&str> = body
        .split(|c: char| !(is_ident_char(c) || c == ';' || c == '='))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        if *w == "typedef" {
            for x in &words[i + 1..] {
                let name = x.split(';').next().unwrap_or("").trim_end_matches('=');
                if !name.is_empty() && !is_keyword(name) && !name.as_bytes()[0].is_ascii_digit() {
                    out.push(name.to_string());
                }
                if x.contains(';') {
                    break;
                }
            }
        }
        if *w == "using" {
            if let Some(name) = words.get(i + 1).map(|n| n.trim_end_matches('=')) {
                if !name.is_empty() && !is_keyword(name) {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// The identifiers of `head` outside parentheses and template argument lists.
fn outside_parens(head: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i32;
    let mut keep = String::with_capacity(head.len());
    for c in head.chars() {
        match c {
            '(' | '<' | '[' => {
                depth += 1;
                keep.push(' ');
            }
            ')' | '>' | ']' => {
                depth -= 1;
                keep.push(' ');
            }
            _ => keep.push(if depth <= 0 { c } else { ' ' }),
        }
    }
    let spans: Vec<(usize, usize)> = {
        let b = keep.as_bytes();
        let mut v = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                v.push((s, i));
            } else {
                i += 1;
            }
        }
        v
    };
    spans
        .into_iter()
        .map(move |(s, e)| &head[s..e])
        .filter(|w| !w.as_bytes()[0].is_ascii_digit() && !is_keyword(w))
}

/// The name of the function a head declares: the identifier (and its qualifiers) before
/// the first `(` outside a template parameter list that is not an attribute's.
fn declarator_name(head: &str) -> Option<Vec<String>> {
    let b = head.as_bytes();
    let mut i = 0;
    let mut angle = 0i32;
    let mut after_template = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &head[s..i];
            if word == "template" {
                after_template = true;
            }
            continue;
        }
        match c {
            b'<' if after_template || angle > 0 => angle += 1,
            b'>' if angle > 0 => {
                angle -= 1;
                if angle == 0 {
                    after_template = false;
                }
            }
            b'(' if angle == 0 => {
                let before = head[..i].trim_end();
                let name_start = before
                    .rfind(|c: char| !(is_ident_char(c) || c == ':'))
                    .map_or(0, |p| p + 1);
                let name = &before[name_start..];
                let last = name.rsplit("::").next().unwrap_or("");
                if last.is_empty() || last.as_bytes()[0].is_ascii_digit() {
                    return None;
                }
                if is_keyword(last) {
                    // An attribute: skip its parentheses.
                    let close = kernaut_syntax::lex::matching_paren(head, i)?;
                    i = close + 1;
                    continue;
                }
                return Some(
                    name.split("::")
                        .filter(|w| !w.is_empty() && !is_keyword(w))
                        .map(str::to_string)
                        .collect(),
                );
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The names a global variable declaration defines: identifiers outside brackets,
/// parentheses and initialisers.
fn data_names(code: &str) -> Vec<String> {
    let decl = code.split('=').next().unwrap_or(code);
    outside_parens(decl).map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> Vec<(String, ItemKind, Vec<String>)> {
        let file = kernaut_syntax::SourceFile::parse(text);
        let items = items(text);
        let names = names(
            text,
            &items,
            file.facts(),
            &Macros::new(text, &[]),
            &Default::default(),
        );
        items
            .iter()
            .enumerate()
            .map(|(i, it)| {
                (
                    text[it.range.clone()]
                        .trim()
                        .lines()
                        .next()
                        .unwrap_or("")
                        .to_string(),
                    it.kind,
                    names.defines[i].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn items_kinds_and_names() {
        let text = "#include <cuda.h>\n#define TILE 32\n__shared__ float buf[TILE];\n\
template <int N, typename T = decltype(f(1))>\n__global__ void __launch_bounds__(256) k(float* out, int n) {\n  typedef float real;\n  out[0] = helper(n);\n}\n\
// A helper.\n__device__ float Foo::helper(int n) const { return n; }\n\
struct S { int a; };\nnamespace ns {\nvoid h() { k<<<1, 32>>>(nullptr, 0); }\n}\n\
#if X\nvoid g() {}\n#endif\n";
        let got = summary(text);
        let want: Vec<(&str, ItemKind, Vec<&str>)> = vec![
            ("#include <cuda.h>", ItemKind::Context, vec![]),
            ("#define TILE 32", ItemKind::Context, vec![]),
            ("__shared__ float buf[TILE];", ItemKind::Data, vec!["buf"]),
            (
                "template <int N, typename T = decltype(f(1))>",
                ItemKind::Function,
                vec!["k", "real"],
            ),
            ("// A helper.", ItemKind::Function, vec!["Foo", "helper"]),
            ("struct S { int a; };", ItemKind::Context, vec![]),
            ("namespace ns {", ItemKind::Opaque, vec!["h", "k", "ns"]),
            ("#if X", ItemKind::Opaque, vec!["X", "g"]),
        ];
        let got: Vec<(&str, ItemKind, Vec<&str>)> = got
            .iter()
            .map(|(l, k, d)| (l.as_str(), *k, d.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn groups_follow_calls_launches_and_macros() {
        let text = "#define CALL_H(x) helper(x)\n\
__device__ float helper(float x) { return x; }\n\
__global__ void a(float* o) { o[0] = CALL_H(1.0f); }\n\
__global__ void b(float* o) { o[0] = 2.0f; }\n\
void launch_b(float* o) { b<<<1, 32>>>(o); }\n\
__global__ void c(float* o) { o[0] = 3.0f; }\n";
        let file = kernaut_syntax::SourceFile::parse(text);
        let items = items(text);
        let n = names(
            text,
            &items,
            file.facts(),
            &Macros::new(text, &[]),
            &Default::default(),
        );
        let g = &n.group;
        // 0: the macro, 1: helper, 2: a, 3: b, 4: launch_b, 5: c.
        assert_eq!(g[1], g[2], "a calls helper through a macro");
        assert_eq!(g[3], g[4], "launch_b launches b");
        assert_ne!(g[2], g[3]);
        assert_ne!(g[5], g[3]);
        assert_ne!(g[5], g[2]);
    }
}
