//! The exact symbol table: a name as written in code → its API entry and the pages that
//! list it in `related_apis`.

use std::collections::{BTreeSet, HashMap};

use kernaut_wiki::{PageKind, Wiki};

/// How a name was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The name is listed exactly.
    Exact,
    /// Found after normalising (template arguments, namespaces, PTX modifiers, case).
    Normalized,
}

/// What the table knows about one symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolMatch {
    /// The name looked up, as given.
    pub query: String,
    /// The symbol as the wiki lists it (`cp.async`, `cuda::memcpy_async`).
    pub symbol: String,
    /// The api page that documents it, if any.
    pub api: Option<String>,
    /// Pages (skills, pitfalls, …) that list it in `related_apis`, sorted.
    pub related_pages: Vec<String>,
    /// How it matched.
    pub matched: MatchKind,
}

#[derive(Debug, Clone, Default)]
struct Entry {
    api: Option<String>,
    related: BTreeSet<String>,
    /// A PTX mnemonic (`wgmma`, `mma.sync`) of a page whose header is `ptx`, not a C
    /// intrinsic listed there (`__hfma2`).
    ptx: bool,
}

/// Symbol → entries, with the normalisation needed to find names as written in code.
#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    entries: HashMap<String, Entry>,
    lowercase: HashMap<String, String>,
    by_last_segment: HashMap<String, BTreeSet<String>>,
    /// Names in pages' `related_apis` that no api page documents: (page id, name).
    pub unresolved: Vec<(String, String)>,
}

impl SymbolTable {
    /// Builds the table from every api page's `symbols` and every page's `related_apis`.
    pub fn build(wiki: &Wiki) -> SymbolTable {
        let mut t = SymbolTable::default();
        for page in wiki.pages() {
            if page.kind != PageKind::Api {
                continue;
            }
            let Some(api) = &page.api else { continue };
            for s in &api.symbols {
                let key = strip_template_args(s.trim());
                if key.is_empty() {
                    continue;
                }
                let e = t.entries.entry(key.clone()).or_default();
                if e.api.is_none() {
                    e.api = Some(page.id.clone());
                    // A mnemonic has no `::` and no `_` (C intrinsics on a PTX page do).
                    e.ptx = api.header.as_deref() == Some("ptx")
                        && !key.contains("::")
                        && !key.contains('_');
                }
            }
        }
        t.reindex();
        for page in wiki.pages() {
            for name in &page.frontmatter.related_apis {
                match t.resolve(name) {
                    Some((sym, _)) => {
                        if let Some(e) = t.entries.get_mut(&sym) {
                            e.related.insert(page.id.clone());
                        }
                    }
                    None => t.unresolved.push((page.id.clone(), name.clone())),
                }
            }
        }
        t
    }

    fn reindex(&mut self) {
        self.lowercase.clear();
        self.by_last_segment.clear();
        for k in self.entries.keys() {
            self.lowercase.insert(k.to_lowercase(), k.clone());
            if let Some((_, last)) = k.rsplit_once("::") {
                self.by_last_segment
                    .entry(last.to_string())
                    .or_default()
                    .insert(k.clone());
            }
        }
    }

    /// Number of distinct symbols.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every symbol, sorted.
    pub fn symbols(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Looks a name up as written in code or PTX.
    pub fn lookup(&self, name: &str) -> Option<SymbolMatch> {
        let (symbol, matched) = self.resolve(name)?;
        let e = self.entries.get(&symbol)?;
        Some(SymbolMatch {
            query: name.to_string(),
            symbol,
            api: e.api.clone(),
            related_pages: e.related.iter().cloned().collect(),
            matched,
        })
    }

    fn resolve(&self, name: &str) -> Option<(String, MatchKind)> {
        let raw = name.trim();
        if self.entries.contains_key(raw) {
            return Some((raw.to_string(), MatchKind::Exact));
        }
        // A qualified C++ name (`Mma::wgmma`, a user's method) never names a PTX
        // instruction, whatever its last segment (a PTX name has dots:
        // `fence.proxy.async.shared::cta`).
        let cpp = raw.trim_start_matches("::").contains("::") && !raw.contains('.');
        let ptx = |k: &str| cpp && self.entries.get(k).is_some_and(|e| e.ptx);
        for candidate in candidates(raw) {
            if ptx(&candidate) {
                continue;
            }
            if self.entries.contains_key(&candidate) {
                return Some((candidate, MatchKind::Normalized));
            }
            if let Some(k) = self.lowercase.get(&candidate.to_lowercase()) {
                if !ptx(k) {
                    return Some((k.clone(), MatchKind::Normalized));
                }
            }
            // A bare name that only one qualified symbol ends with.
            if !candidate.contains("::") && !candidate.contains('.') {
                if let Some(set) = self.by_last_segment.get(&candidate) {
                    if set.len() == 1 {
                        let only = set.iter().next().cloned()?;
                        return Some((only, MatchKind::Normalized));
                    }
                }
            }
        }
        None
    }
}

/// The forms a name is tried in, most specific first.
pub fn candidates(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    let base = normalize(name);
    push(base.clone());
    // Common namespace aliases.
    for (alias, full) in [
        ("cg::", "cooperative_groups::"),
        ("cuda::std::", "cuda::"),
        ("cuda::device::", "cuda::"),
        ("std::", "cuda::"),
    ] {
        if let Some(rest) = base.strip_prefix(alias) {
            push(format!("{full}{rest}"));
        }
    }
    if base.contains('.') {
        // PTX: drop modifiers from the right: cp.async.cg.shared.global → cp.async.
        let mut cur = base.as_str();
        while let Some((head, _)) = cur.rsplit_once('.') {
            if head.is_empty() {
                break;
            }
            push(head.to_string());
            cur = head;
        }
    } else if base.contains("::") {
        // Drop leading namespaces one at a time: nvcuda::wmma::mma_sync → wmma::mma_sync
        // → mma_sync.
        let mut rest = base.as_str();
        while let Some((_, tail)) = rest.split_once("::") {
            push(tail.to_string());
            rest = tail;
        }
    }
    out
}

/// Strips template arguments, call parentheses, a leading `::` and whitespace.
pub fn normalize(name: &str) -> String {
    let mut s = strip_template_args(name.trim());
    if let Some(i) = s.find('(') {
        s.truncate(i);
    }
    let s = s.trim().trim_start_matches("::");
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `pipeline_consumer_wait_prior<N - 1>` → `pipeline_consumer_wait_prior`; nested
/// brackets are balanced. `<<<` launch brackets never reach here.
pub fn strip_template_args(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    const API: &str = "---
id: api-things
type: api
title: Things
symbols: [__hfma2, cuda::memcpy_async, memcpy_async, cuda::pipeline_consumer_wait_prior, cp.async, cp.async.wait_group, wmma::mma_sync, cuda::pipeline::producer_commit, cooperative_groups::invoke_one]
signatures: ['x']
header: ptx
requires_sm: '>=8.0'
---
## Semantics
x
";
    const SKILL: &str = "---
id: skill-things
type: skill
related_apis: [__hfma2, cp.async.cg.shared.global, nope_not_real]
---
## What
x
";

    fn table() -> SymbolTable {
        SymbolTable::build(&Wiki::from_files([("a.md", API), ("s.md", SKILL)]))
    }

    #[test]
    fn a_users_method_named_like_a_ptx_instruction_is_not_the_instruction() {
        let page = "---\nid: api-wgmma\ntype: api\ntitle: W\nsymbols: [wgmma, wgmma.fence, cuda::ptx::wgmma_fence]\nsignatures: ['x']\nheader: ptx\nrequires_sm: '>=9.0a'\n---\n## Semantics\nx\n";
        let t = SymbolTable::build(&Wiki::from_files([("w.md", page)]));
        let found = |n: &str| t.lookup(n).map(|m| m.symbol);
        assert_eq!(found("Mma::wgmma"), None);
        assert_eq!(found("detail::Mma::WGMMA"), None);
        assert_eq!(
            found("wgmma.fence.sync.aligned").as_deref(),
            Some("wgmma.fence")
        );
        assert_eq!(found("wgmma").as_deref(), Some("wgmma"));
        assert_eq!(
            found("cuda::ptx::wgmma_fence").as_deref(),
            Some("cuda::ptx::wgmma_fence")
        );
    }

    #[test]
    fn names_as_written_in_code_resolve() {
        let t = table();
        let show = |n: &str| match t.lookup(n) {
            Some(m) => format!(
                "{n} -> {} {:?} {:?} {:?}\n",
                m.symbol, m.api, m.related_pages, m.matched
            ),
            None => format!("{n} -> none\n"),
        };
        let names = [
            "__hfma2",
            "cuda::memcpy_async",
            "memcpy_async",
            "cuda::pipeline_consumer_wait_prior<1>",
            "cuda::pipeline_consumer_wait_prior<N - 1>",
            "cp.async.wait_group",
            "cp.async.cg.shared.global",
            "cp.async.ca.shared.global.L2::128B",
            "nvcuda::wmma::mma_sync",
            "::__hfma2",
            "cuda::std::memcpy_async",
            "cg::invoke_one",
            "invoke_one",
            "producer_commit",
            "__HFMA2",
            "__hfma",
            "cp",
        ];
        let out: String = names.iter().map(|n| show(n)).collect();
        expect![[r#"
            __hfma2 -> __hfma2 Some("api-things") ["skill-things"] Exact
            cuda::memcpy_async -> cuda::memcpy_async Some("api-things") [] Exact
            memcpy_async -> memcpy_async Some("api-things") [] Exact
            cuda::pipeline_consumer_wait_prior<1> -> cuda::pipeline_consumer_wait_prior Some("api-things") [] Normalized
            cuda::pipeline_consumer_wait_prior<N - 1> -> cuda::pipeline_consumer_wait_prior Some("api-things") [] Normalized
            cp.async.wait_group -> cp.async.wait_group Some("api-things") [] Exact
            cp.async.cg.shared.global -> cp.async Some("api-things") ["skill-things"] Normalized
            cp.async.ca.shared.global.L2::128B -> cp.async Some("api-things") ["skill-things"] Normalized
            nvcuda::wmma::mma_sync -> wmma::mma_sync Some("api-things") [] Normalized
            ::__hfma2 -> __hfma2 Some("api-things") ["skill-things"] Normalized
            cuda::std::memcpy_async -> cuda::memcpy_async Some("api-things") [] Normalized
            cg::invoke_one -> cooperative_groups::invoke_one Some("api-things") [] Normalized
            invoke_one -> cooperative_groups::invoke_one Some("api-things") [] Normalized
            producer_commit -> cuda::pipeline::producer_commit Some("api-things") [] Normalized
            __HFMA2 -> __hfma2 Some("api-things") ["skill-things"] Normalized
            __hfma -> none
            cp -> none
        "#]]
        .assert_eq(&out);
        assert_eq!(
            t.unresolved,
            [("skill-things".to_string(), "nope_not_real".to_string())]
        );
    }
}
