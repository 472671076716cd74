//! Wiki hover: the page a symbol matches, its summary, its measured figures and the
//! architecture it requires.

use super::*;

/// The wiki's entry for a symbol, trying each of syntax's candidates. A name the user
/// declared (a local, a parameter, a field) is not a library symbol, and a member of a
/// library type is reached only through an object of that type (`frag.x`,
/// `block.size()`), never by its bare name.
pub(crate) fn lookup(
    k: &Knowledge,
    s: &SymbolRef,
    file: &kernaut_syntax::SourceFile,
) -> Option<SymbolMatch> {
    let mut names: Vec<&str> = s.candidates.iter().map(String::as_str).collect();
    if names.is_empty() {
        names.push(&s.name);
    }
    let mut user_name: Option<bool> = None;
    names
        .into_iter()
        .filter_map(|n| k.symbol(n))
        .filter(|m| s.kind == SymbolKind::Ptx || !is_bare_ptx(k, m))
        .find(|m| match &s.kind {
            SymbolKind::Identifier => {
                // A call names a function: the user's own functions are looked up after
                // the wiki, as before, but a free call never names a library type's
                // member. Other plain names are checked against the file's declarations.
                let named = if s.is_call {
                    !only_a_member_name(k, &m.symbol)
                } else {
                    !*user_name.get_or_insert_with(|| file.is_user_name_at(s.range.start))
                };
                named && !member_of_type(k, &m.symbol)
            }
            SymbolKind::Member { receiver_type, .. } => {
                // `threadIdx.x` is documented with `threadIdx` itself.
                s.name
                    .strip_prefix(m.symbol.as_str())
                    .is_some_and(|r| r.starts_with('.'))
                    || reached_through(k, receiver_type.as_deref(), m, s.is_call)
            }
            SymbolKind::Qualified => {
                same_library(&s.name, &m.symbol) && !static_member_of_users_type(k, &s.name, m)
            }
            _ => true,
        })
}

/// Whether a bare wiki symbol (`shfl_xor`, `thread_rank`) names only members of types
/// the wiki documents (`cooperative_groups::thread_block_tile::shfl_xor`): a free call of
/// that name (`shfl_xor(v, 16)`) is some library's or the user's own function, never the
/// member.
fn only_a_member_name(k: &Knowledge, symbol: &str) -> bool {
    if symbol.contains("::") || symbol.contains('.') {
        return false;
    }
    let suffix = format!("::{symbol}");
    let mut member = false;
    for s in k.index.symbols().symbols() {
        if let Some(owner) = s.strip_suffix(suffix.as_str()) {
            if k.symbol(owner).is_some_and(|o| o.symbol == owner) {
                member = true;
            } else {
                // A free function of that name in a namespace (`cooperative_groups::sync`).
                return false;
            }
        }
    }
    member
}

/// Whether a qualified name (`x128::size`) matched a bare wiki symbol (`size`, a
/// member the wiki lists without its class) through a qualifier that is no library
/// namespace: no wiki symbol lives in it. It is then a static member of the user's own
/// type (llm.c's `x128::size` is the lanes of its `Packed128`), not the library member.
fn static_member_of_users_type(k: &Knowledge, written: &str, m: &SymbolMatch) -> bool {
    let qualifier = namespace_of(written).trim_start_matches("::");
    if qualifier.is_empty() || m.symbol.contains("::") {
        return false;
    }
    let root = qualifier.split("::").next().unwrap_or(qualifier);
    let prefix = format!("{root}::");
    !k.index
        .symbols()
        .symbols()
        .iter()
        .any(|s| s.starts_with(&prefix))
}

/// Whether a qualified name as written (`std::sort`) and the wiki symbol it matched
/// (`thrust::sort`) are in the same library: one's namespaces contain the other's, or
/// the name is `std::` or `cuda::std::` and the symbol libcu++'s `cuda::`.
pub(crate) fn same_library(written: &str, symbol: &str) -> bool {
    let (w, m) = (namespace_of(written), namespace_of(symbol));
    if w.is_empty() || m.is_empty() || w.contains(m) || m.contains(w) {
        return true;
    }
    let root = |ns: &str| ns.split("::").next().unwrap_or("").to_string();
    root(w) == root(m) || (matches!(root(w).as_str(), "std" | "cuda") && root(m) == "cuda")
}

/// Whether a wiki symbol is a member of a type the wiki documents
/// (`nvcuda::wmma::fragment::x`, `cooperative_groups::thread_block::size`).
pub(crate) fn member_of_type(k: &Knowledge, symbol: &str) -> bool {
    symbol
        .rsplit_once("::")
        .is_some_and(|(owner, _)| k.symbol(owner).is_some_and(|o| o.symbol == owner))
}

/// A type's last name, without namespaces, template arguments, `const`, `*` or `&`.
pub(crate) fn type_name(t: &str) -> &str {
    let t = t.split('<').next().unwrap_or(t);
    let t = t.trim().trim_end_matches(['*', '&', ' ']);
    let t = t.rsplit("::").next().unwrap_or(t);
    t.rsplit(' ').next().unwrap_or(t).trim()
}

/// The namespaces of a qualified symbol (`cooperative_groups` for
/// `cooperative_groups::thread_block`), empty for a bare one.
pub(crate) fn namespace_of(symbol: &str) -> &str {
    symbol.rsplit_once("::").map_or("", |(ns, _)| ns)
}

/// Whether member `m` is reached through a receiver of type `receiver_type`: the wiki's
/// symbol belongs to that type, or to a type of the same library when the receiver's
/// type is a library type (a tile reaches the group interface). A receiver of unknown
/// type reaches only called members (`g.sync()`), never a field such as `.x`.
pub(crate) fn reached_through(
    k: &Knowledge,
    receiver_type: Option<&str>,
    m: &SymbolMatch,
    is_call: bool,
) -> bool {
    let Some(t) = receiver_type else {
        return is_call;
    };
    let library_type = k
        .symbol(t)
        .map(|tm| tm.symbol)
        .filter(|ts| ts.contains("::") && type_name(ts) == type_name(t));
    match m.symbol.rsplit_once("::") {
        Some((owner, _)) => {
            type_name(owner) == type_name(t)
                || library_type.is_some_and(|ts| {
                    let ns = namespace_of(&ts);
                    ns == owner || ns == namespace_of(owner)
                })
        }
        None => library_type.is_some(),
    }
}

/// Whether a match is a bare PTX mnemonic (`add`, `mov`, `fence`): C++ code that names
/// it is using a variable or function of its own, not the instruction.
pub(crate) fn is_bare_ptx(k: &Knowledge, m: &SymbolMatch) -> bool {
    let ptx_page = m
        .api
        .as_deref()
        .and_then(|id| k.wiki.page(id))
        .and_then(|p| p.api.as_ref())
        .is_some_and(|a| a.header.as_deref() == Some("ptx"));
    ptx_page && !m.symbol.contains("::") && !m.symbol.contains('_')
}

pub(crate) fn wiki_info(
    analysis: &Analysis,
    k: &Knowledge,
    s: &SymbolRef,
    m: &SymbolMatch,
    page: Option<&Page>,
    call: Option<&kernaut_syntax::SourceFile>,
) -> WikiInfo {
    let api = page.and_then(|p| p.api.as_ref());
    let (mut signatures, mut signatures_left_out) = api.map_or_else(
        || (Vec::new(), 0),
        |a| matching_signatures(&a.signatures, s, &m.symbol),
    );
    // The call's argument types, read only where they can choose something: several
    // overloads, or overloads with a requirement of their own.
    let short = m.symbol.rsplit("::").next().unwrap_or(&m.symbol);
    let has_overload_reqs = api.is_some_and(|a| {
        a.symbol_requires_sm
            .keys()
            .any(|key| key.strip_prefix(short).is_some_and(|r| r.starts_with('(')))
    });
    let args = call
        .filter(|_| signatures.len() > 1 || has_overload_reqs)
        .and_then(|f| f.call_argument_types(s.range.start));
    let args = args.as_deref();
    // The overloads the call's argument types pick, where the file shows them.
    let mut picked_one = false;
    if let Some(args) = args {
        let picked = pick_overloads(&signatures, args);
        if !picked.is_empty() && picked.len() < signatures.len() {
            signatures_left_out += signatures.len() - picked.len();
            signatures = picked;
            picked_one = true;
        }
    }
    if signatures.len() > MAX_SIGNATURES {
        signatures_left_out += signatures.len() - MAX_SIGNATURES;
        signatures.truncate(MAX_SIGNATURES);
    }
    // The header follows the overloads shown: the bf16 overloads of `__hfma2` are declared
    // in `cuda_bf16.h`, its half ones in `cuda_fp16.h`.
    let shown_signatures = signatures.clone();
    let overload = page
        .zip(args)
        .and_then(|(p, a)| overload_requirement(p, &m.symbol, a));
    let requires_sm = overload
        .as_ref()
        .map(|(_, r)| *r)
        .or_else(|| page.and_then(|p| p.requires_sm_for(&m.symbol)))
        .and_then(|r| requirement(r, analysis));
    let requires_range = match (&overload, page) {
        (None, Some(p)) if !picked_one => overload_range(p, &m.symbol),
        _ => None,
    };
    let summary = page
        .and_then(|p| p.section("semantics").map(|s| lead(&s.content)))
        .or_else(|| page.map(|p| cap(&p.summary(), SUMMARY_CHARS)))
        .filter(|s| !s.is_empty());
    let performance = page
        .and_then(|p| p.section("performance"))
        .map(|s| measured(&s.content))
        .filter(|s| !s.is_empty());
    let pitfalls = api
        .map(|a| {
            a.related_pitfalls
                .iter()
                .map(|id| PitfallLink {
                    id: id.clone(),
                    title: k.resolve(id).and_then(|(p, anchor)| match anchor {
                        Some(a) => p
                            .pitfall(a)
                            .map(|x| x.title.clone())
                            .or_else(|| p.section(a).map(|x| x.title.clone())),
                        None => Some(p.title.clone()),
                    }),
                })
                .collect()
        })
        .unwrap_or_default();
    let related_pages = m
        .related_pages
        .iter()
        .filter(|id| Some(id.as_str()) != m.api.as_deref())
        .filter(|id| {
            // Pitfall pages already linked by anchor are not repeated.
            !api.is_some_and(|a| {
                a.related_pitfalls
                    .iter()
                    .any(|p| p.starts_with(&format!("{id}#")))
            })
        })
        .take(6)
        .cloned()
        .collect();
    WikiInfo {
        symbol: m.symbol.clone(),
        page: page.map(|p| p.id.clone()),
        title: page.map(|p| p.title.clone()),
        signatures,
        signatures_left_out,
        overload: overload.map(|(key, _)| key),
        requires_range,
        header: page
            .and_then(|p| p.headers_for(&shown_signatures))
            .map(|h| h.join(", ")),
        requires_sm,
        summary,
        performance,
        measured_on: page.and_then(|p| p.frontmatter.measured_on.clone()),
        pitfalls,
        related_pages,
    }
}

/// A requirement such as `>=8.0` against the configured target.
pub(crate) fn requirement(r: &str, analysis: &Analysis) -> Option<ArchRequirement> {
    let (major, minor, specific) = parse_requires_sm(r)?;
    let target = analysis.config.arch;
    let (tmaj, tmin) = (target.cc.major(), target.cc.minor());
    let satisfied = if specific {
        (tmaj, tmin) == (major, minor) && target.arch_specific
    } else {
        (tmaj, tmin) >= (major, minor)
    };
    Some(ArchRequirement {
        required: format!("sm_{major}{minor}{}", if specific { "a" } else { "" }),
        target: target.to_string(),
        satisfied,
    })
}

/// The most characters of a summary.
pub(crate) const SUMMARY_CHARS: usize = 600;

/// The lead of a section: its first paragraph, or the first item when it opens with a
/// list, capped at a sentence end.
pub(crate) fn lead(md: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            if !out.is_empty() {
                break;
            }
            continue;
        }
        if in_code || t.starts_with('#') || t.is_empty() {
            if !out.is_empty() {
                break;
            }
            continue;
        }
        let bullet = t.starts_with("- ") || t.starts_with("* ");
        if bullet && !out.is_empty() {
            break;
        }
        out.push(t.trim_start_matches("- ").trim_start_matches("* "));
    }
    cap(&out.join(" "), SUMMARY_CHARS)
}

/// The first paragraph of a Performance section and, when it introduces them with a
/// colon, the table or list that follows (at most 12 lines).
pub(crate) fn measured(md: &str) -> String {
    let mut lines = md.lines().map(str::trim_end).peekable();
    let mut para: Vec<&str> = Vec::new();
    for line in lines.by_ref() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            if para.is_empty() {
                continue;
            }
            break;
        }
        para.push(t);
    }
    let mut out = cap(&para.join(" "), SUMMARY_CHARS);
    if out.ends_with(':') {
        while lines.peek().is_some_and(|l| l.trim().is_empty()) {
            lines.next();
        }
        let block: Vec<&str> = lines
            .take_while(|l| !l.trim().is_empty())
            .take(12)
            .collect();
        if !block.is_empty() {
            out.push_str("\n\n");
            out.push_str(&block.join("\n"));
        }
    }
    out
}

/// `text` cut to at most `max` characters, at the last sentence end when there is one.
pub(crate) fn cap(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    match cut.rfind(". ") {
        Some(i) if i > max / 3 => cut[..=i].to_string(),
        _ => format!("{}…", cut.trim_end()),
    }
}
