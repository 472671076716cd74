//! Type aliases a file declares (`using half_t = __half;`, `typedef __half2 h2;`), so that
//! rules that look for a type by name also see it through an alias.

/// Every `using NAME = TYPE;` and `typedef TYPE NAME;` of `text` whose type is one word
/// (after `const`/`struct`), as `(alias, type)`, with chains of aliases resolved: an alias
/// of an alias maps to the first type that is not an alias.
pub(crate) fn type_aliases(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if !text.contains("using") && !text.contains("typedef") {
        return out;
    }
    let mut statements = Vec::new();
    for keyword in ["using", "typedef"] {
        let mut from = 0;
        while let Some(at) = super::find_word(text, keyword, from) {
            from = at + keyword.len();
            let end = text[at..]
                .find([';', '{', '}'])
                .map_or(text.len(), |e| at + e);
            statements.push(&text[at..end]);
        }
    }
    for statement in statements {
        let code: Vec<&str> = statement
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect();
        let code = code.join(" ");
        let code = code.replace('=', " = ");
        let words: Vec<&str> = code.split_whitespace().collect();
        let (alias, ty) = match words.as_slice() {
            ["using", alias, "=", ty @ ..] => (*alias, ty),
            ["typedef", rest @ .., alias] => (*alias, rest),
            _ => continue,
        };
        let ty: Vec<&str> = ty
            .iter()
            .copied()
            .filter(|w| !matches!(*w, "const" | "struct"))
            .collect();
        let [ty] = ty.as_slice() else {
            continue;
        };
        let ident = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        };
        if !ident(alias) || !ident(ty) || alias.contains(':') {
            continue;
        }
        let ty = ty.trim_start_matches("::");
        out.push((alias.to_string(), ty.to_string()));
    }
    // Resolve chains (a few steps: aliases of aliases of aliases are rare).
    for _ in 0..4 {
        let snapshot = out.clone();
        for (_, ty) in &mut out {
            if let Some((_, t)) = snapshot.iter().find(|(a, _)| a == ty) {
                *ty = t.clone();
            }
        }
    }
    out
}
