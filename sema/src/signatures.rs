//! The signatures of an intrinsic's wiki page: the overloads that match a call, and the
//! architecture each needs. Read by the hover and by the `requires-newer-sm` rule, so it
//! sits below both.

use kernaut_syntax::{SymbolKind, SymbolRef};
use kernaut_wiki::{parse_requires_sm, Page};

/// The most signatures a hover shows; the page has the rest.
pub const MAX_SIGNATURES: usize = 6;

/// The signatures that name the symbol (by the name as written, then as the wiki
/// lists it), or the page's first ones when none does; with how many that name it are
/// left out. Where more than [`MAX_SIGNATURES`] name it (a type such as `__half` is a
/// parameter of dozens of functions), only those that declare it are kept, when there
/// are such. The caller picks overloads and caps the list.
pub fn matching_signatures(
    all: &[String],
    s: &SymbolRef,
    wiki_symbol: &str,
) -> (Vec<String>, usize) {
    let mut tries: Vec<String> = Vec::new();
    if s.kind == SymbolKind::Ptx {
        // The mnemonic as written, then with modifiers dropped from the right, down to
        // the symbol the wiki lists.
        let mut cur = s.text.as_str();
        loop {
            tries.push(cur.to_string());
            match cur.rsplit_once('.') {
                Some((head, _)) if head.len() >= wiki_symbol.len() => cur = head,
                _ => break,
            }
        }
        tries.push(wiki_symbol.to_string());
    } else {
        for name in [s.name.as_str(), wiki_symbol] {
            // `cooperative_groups::thread_block::sync`, then `thread_block::sync`, then
            // `sync`.
            let parts: Vec<&str> = name.split("::").collect();
            for k in (0..parts.len()).rev() {
                let tail = parts[parts.len() - 1 - k..].join("::");
                if !tries.contains(&tail) {
                    tries.push(tail);
                }
            }
        }
        if let Some(last) = s.text.rsplit(['.', ':']).next() {
            tries.push(last.to_string());
        }
    }
    for t in tries {
        let hits: Vec<&String> = all.iter().filter(|sig| names_token(sig, &t)).collect();
        if hits.is_empty() {
            continue;
        }
        let total = hits.len();
        let declaring: Vec<&String> = hits
            .iter()
            .copied()
            .filter(|sig| s.kind == SymbolKind::Ptx || declares(sig, &t))
            .collect();
        let shown: Vec<String> = if total > MAX_SIGNATURES && !declaring.is_empty() {
            declaring
        } else {
            hits
        }
        .into_iter()
        .cloned()
        .collect();
        let left_out = total.saturating_sub(shown.len());
        return (shown, left_out);
    }
    (all.iter().take(MAX_SIGNATURES).cloned().collect(), 0)
}

/// The plain types of a C++ signature's parameters (`float4 *address` → `float4*`).
pub fn param_types(sig: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (sig.find('('), sig.rfind(')')) else {
        return Vec::new();
    };
    if close <= open {
        return Vec::new();
    }
    let mut params: Vec<String> = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in sig[open + 1..close].chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                params.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        params.push(cur);
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    params
        .iter()
        .map(|p| {
            let p = p.split('=').next().unwrap_or(p).trim();
            // Drop the parameter's name when there is a type before it.
            let ty = p.trim_end_matches(ident);
            let ty = if ty.trim().is_empty() || ty.ends_with("::") {
                p
            } else {
                ty
            };
            kernaut_syntax::plain_type(ty)
        })
        .collect()
}

/// The overloads among `sigs` that a call with these argument types picks: every known
/// argument's type matches; failing that, the first argument's alone (the pointer of an
/// atomic). Empty when the first argument's type is not known (a literal alone does not
/// decide: it converts) or nothing matches.
pub fn pick_overloads(sigs: &[String], args: &[Option<String>]) -> Vec<String> {
    if args.first().is_none_or(Option::is_none) {
        return Vec::new();
    }
    let fits = |sig: &String, n: usize| {
        let params = param_types(sig);
        params.len() >= args.len()
            && args
                .iter()
                .take(n)
                .zip(&params)
                .all(|(a, p)| a.as_ref().is_none_or(|a| a == p))
    };
    let all: Vec<String> = sigs
        .iter()
        .filter(|s| fits(s, args.len()))
        .cloned()
        .collect();
    if !all.is_empty() || args[0].is_none() {
        return all;
    }
    sigs.iter().filter(|s| fits(s, 1)).cloned().collect()
}

/// The page's own minimum architecture for the overload a call picks by its first
/// argument's type: `symbol_requires_sm` keys such as `atomicAdd(float4*)`.
pub fn overload_requirement<'p>(
    page: &'p Page,
    symbol: &str,
    args: &[Option<String>],
) -> Option<(String, &'p str)> {
    let api = page.api.as_ref()?;
    let short = symbol.rsplit("::").next().unwrap_or(symbol);
    let first = args.first()?.as_ref()?;
    let key = format!("{short}({first})");
    api.symbol_requires_sm.get(&key).map(|r| (key, r.as_str()))
}

/// `sm_50 to sm_90` when the page gives some of the symbol's overloads a minimum
/// architecture of their own.
pub fn overload_range(page: &Page, symbol: &str) -> Option<String> {
    let api = page.api.as_ref()?;
    let short = symbol.rsplit("::").next().unwrap_or(symbol);
    let prefix = format!("{short}(");
    let mut reqs: Vec<(u32, u32)> = api
        .symbol_requires_sm
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .filter_map(|(_, r)| parse_requires_sm(r).map(|(a, b, _)| (a, b)))
        .collect();
    if reqs.is_empty() {
        return None;
    }
    if let Some((a, b, _)) = page.requires_sm_for(symbol).and_then(parse_requires_sm) {
        reqs.push((a, b));
    }
    let lo = reqs.iter().min()?;
    let hi = reqs.iter().max()?;
    Some(format!(
        "sm_{}{} to sm_{}{}, by argument type",
        lo.0, lo.1, hi.0, hi.1
    ))
}

/// Whether a C++ signature declares `name` (rather than only using it): a function
/// `name(`, a `struct`/`class`/`union name`, or a `typedef … name;`.
pub fn declares(sig: &str, name: &str) -> bool {
    let last = name.rsplit("::").next().unwrap_or(name);
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let t = sig.trim().trim_end_matches(';').trim_end();
    if t.starts_with("typedef") {
        return t.rsplit(|c: char| !ident(c)).next() == Some(last);
    }
    if ["struct ", "class ", "union "]
        .iter()
        .any(|k| t.contains(&format!("{k}{last}")) && !t.contains('('))
    {
        return true;
    }
    let mut from = 0;
    while let Some(i) = t[from..].find(last) {
        let start = from + i;
        let end = start + last.len();
        let before_ok = start == 0 || !t[..start].ends_with(ident);
        let after = t[end..].trim_start();
        if before_ok && after.starts_with('(') {
            return true;
        }
        from = end;
    }
    false
}

/// Whether `sig` contains `name` as a whole name (for PTX, a prefix of a dotted
/// mnemonic counts).
pub fn names_token(sig: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = sig.as_bytes();
    let mut from = 0;
    while let Some(i) = sig[from..].find(name) {
        let start = from + i;
        let end = start + name.len();
        let before_ok = start == 0 || !(ident(bytes[start - 1]) || bytes[start - 1] == b'.');
        let after_ok = end >= bytes.len() || !ident(bytes[end]);
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
        if from >= sig.len() {
            break;
        }
        while !sig.is_char_boundary(from) {
            from += 1;
        }
    }
    false
}
