//! Vector macros: `#define`s that take a pointer and load or store a vector through it,
//! and what their body subscripts.

use super::*;

/// The file's function-like macros of one parameter whose body reinterprets the
/// parameter's address as a vector and dereferences it, by name, with the vector type:
/// `#define FLOAT4(v) (reinterpret_cast<float4 *>(&(v))[0])`, `*(float2*)(&(v))`.
pub(crate) fn vector_macros(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::default();
    for at in memchr::memmem::find_iter(text.as_bytes(), b"define") {
        let before = text[..at].trim_end_matches([' ', '\t']);
        if !before.ends_with('#') {
            continue;
        }
        let line_start = before.len() - 1;
        if !text[..line_start].trim_end_matches([' ', '\t']).is_empty()
            && !text[..line_start]
                .trim_end_matches([' ', '\t'])
                .ends_with('\n')
        {
            continue;
        }
        let rest = &text[at + "define".len()..];
        let rest = rest.trim_start_matches([' ', '\t']);
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(after) = rest[name.len()..].strip_prefix('(') else {
            continue;
        };
        let Some(close) = after.find(')') else {
            continue;
        };
        let param = after[..close].trim();
        if name.is_empty()
            || param.is_empty()
            || !param.chars().all(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        // The body, joined over `\` continuations.
        let mut body = String::new();
        for line in after[close + 1..].lines() {
            match line.strip_suffix('\\') {
                Some(l) => body.push_str(l),
                None => {
                    body.push_str(line);
                    break;
                }
            }
        }
        if let Some(ty) = vector_body(&body, param) {
            out.insert(name, ty);
        }
    }
    out
}

/// The vector type of a macro body that dereferences `param`'s address cast to `T*`
/// (`reinterpret_cast<T*>(&(p))[0]`, `*reinterpret_cast<T*>(&p)`, `((T*)&(p))[0]`,
/// `*(T*)(&(p))`).
pub(crate) fn vector_body(body: &str, param: &str) -> Option<String> {
    let s: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    if s.contains("//") || s.contains("/*") {
        return None;
    }
    let mut s = s;
    for (from, to) in [
        (format!("(&({param}))"), "@"),
        (format!("&({param})"), "@"),
        (format!("(&{param})"), "@"),
    ] {
        s = s.replace(&from, to);
    }
    if !s.contains('@') {
        // `&p` with nothing after the name but the cast's closing.
        let from = format!("&{param}");
        let ok = s.match_indices(&from).all(|(i, _)| {
            !s[i + from.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        });
        if !ok {
            return None;
        }
        s = s.replace(&from, "@");
    }
    if s.matches('@').count() != 1 || has_word(&s, param) {
        return None;
    }
    // Parentheses around the address beyond the cast's own (`((&p))`).
    while s.contains("(@)") {
        s = s.replace("(@)", "@");
    }
    let s = strip_parens(&s);
    let cast = if let Some(r) = s.strip_prefix('*') {
        strip_parens(r)
    } else {
        strip_parens(s.strip_suffix("[0]")?)
    };
    let cast = cast.strip_suffix('@')?;
    let inner = if let Some(r) = cast.strip_prefix("reinterpret_cast<") {
        r.strip_suffix('>')?
    } else {
        cast.strip_prefix('(')?.strip_suffix(')')?
    };
    let ty = inner.strip_suffix('*')?;
    let ty = ty.strip_prefix("const").unwrap_or(ty);
    if ty.is_empty() || ty.contains(['*', '(', ')', '&', '[']) {
        return None;
    }
    Some(ty.to_string())
}

/// Whether identifier `w` occurs in `s` as a whole word.
pub(crate) fn has_word(s: &str, w: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    s.match_indices(w)
        .any(|(i, _)| !s[..i].ends_with(ident) && !s[i + w.len()..].starts_with(ident))
}

/// `s` without parentheses around all of it.
pub(crate) fn strip_parens(mut s: &str) -> &str {
    while s.starts_with('(') && s.ends_with(')') {
        let mut depth = 0;
        let mut whole = true;
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 && i != s.len() - 1 {
                        whole = false;
                        break;
                    }
                }
                _ => {}
            }
        }
        if !whole {
            break;
        }
        s = &s[1..s.len() - 1];
    }
    s
}

/// Whether `body` assigns to, declares again, or increments the name `name`
/// (`name = …`, `name += …`, `++name`, `float* name = …`).
pub(crate) fn is_modified(body: &str, name: &str) -> bool {
    let bytes = body.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    body.match_indices(name).any(|(i, _)| {
        let end = i + name.len();
        if (i > 0 && ident(bytes[i - 1])) || bytes.get(end).is_some_and(|&b| ident(b)) {
            return false;
        }
        let before = body[..i].trim_end();
        if before.ends_with("++") || before.ends_with("--") {
            return true;
        }
        let after = body[end..].trim_start();
        let a = after.as_bytes();
        match (a.first(), a.get(1)) {
            (Some(b'='), Some(b'=')) => false,
            (Some(b'='), _) => true,
            (Some(b'+' | b'-'), Some(b'=')) => true,
            (Some(b'+'), Some(b'+')) | (Some(b'-'), Some(b'-')) => true,
            _ => false,
        }
    })
}
