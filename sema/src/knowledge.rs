//! The wiki and its index together: search, symbol look-up, page rendering, checking.

use kernaut_index::{Found, Hit, SearchOptions, SymbolMatch, WikiIndex};
use kernaut_wiki::{
    check, split_link, CheckConfig, Diagnostic, Page, PageKind, Severity, Wiki, WikiConfig,
};

/// The loaded wiki plus its search index.
#[derive(Debug)]
pub struct Knowledge {
    /// The merged wiki.
    pub wiki: Wiki,
    /// The tantivy index and symbol table.
    pub index: WikiIndex,
}

/// Why the knowledge base could not be built.
#[derive(Debug, thiserror::Error)]
#[error("building the wiki index: {0}")]
pub struct KnowledgeError(#[from] kernaut_index::IndexError);

/// The built-in wiki's index, written by `build.rs`.
mod builtin_index {
    include!(concat!(env!("OUT_DIR"), "/builtin_index.rs"));
}

impl Knowledge {
    /// Loads the wiki and its index. Load problems are in `wiki.diagnostics`.
    ///
    /// The built-in pages' index was written when kernaut was built and is read in place;
    /// a wiki with user folders is indexed once and cached on disk by a hash of its files
    /// (see [`cache_dir`]), so later processes open it without indexing.
    pub fn load(config: &WikiConfig) -> Result<Knowledge, KnowledgeError> {
        let wiki = load_wiki(config);
        if let Some(index) = builtin_index(&wiki) {
            return Ok(Knowledge { wiki, index });
        }
        let index = match cache_dir() {
            Some(dir) if !config.dirs.is_empty() && !rebuild_requested() => {
                let key = format!(
                    "{:016x}",
                    kernaut_wiki::stable_hash(&[
                        &wiki.content_hash().to_le_bytes(),
                        &builtin_index::INDEX_HASH.to_le_bytes(),
                        env!("CARGO_PKG_VERSION").as_bytes(),
                    ])
                );
                WikiIndex::build_cached(&wiki, &dir, &key)?
            }
            _ => WikiIndex::build(&wiki)?,
        };
        Ok(Knowledge { wiki, index })
    }

    /// Indexes an already loaded wiki (in RAM, unless it is exactly the built-in one).
    pub fn from_wiki(wiki: Wiki) -> Result<Knowledge, KnowledgeError> {
        let index = match builtin_index(&wiki) {
            Some(i) => i,
            None => WikiIndex::build(&wiki)?,
        };
        Ok(Knowledge { wiki, index })
    }

    /// Ranked search.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Vec<Hit> {
        self.index.search(query, opts)
    }

    /// Ranked search, with the closest pages when nothing matches well
    /// ([`WikiIndex::search_report`]).
    pub fn search_report(&self, query: &str, opts: &SearchOptions) -> Found {
        self.index.search_report(query, opts)
    }

    /// What the symbol table returns for a name as written in code.
    pub fn symbol(&self, name: &str) -> Option<SymbolMatch> {
        self.index.symbols().lookup(name)
    }

    /// The page named by `id` (or `id#anchor`), with the anchor if there is one.
    pub fn resolve<'a>(&'a self, link: &'a str) -> Option<(&'a Page, Option<&'a str>)> {
        let (id, anchor) = split_link(link);
        let page = self.wiki.resolve_page(id)?;
        Some((page, anchor))
    }

    /// Every problem `wiki check` reports: load problems (notes excluded), page checks,
    /// and `related_apis` names that no api page documents.
    pub fn check(&self, config: CheckConfig) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self.wiki.problems(Severity::Warning).cloned().collect();
        out.extend(check(&self.wiki, config));
        for (page_id, name) in &self.index.symbols().unresolved {
            let Some(page) = self.wiki.page(page_id) else {
                continue;
            };
            let standard = config.strict || page.origin == kernaut_wiki::Origin::Builtin;
            out.push(Diagnostic::new(
                &page.path,
                page.frontmatter.line_of("related_apis"),
                1,
                if standard {
                    Severity::Warning
                } else {
                    Severity::Note
                },
                format!("related API `{name}` is documented by no api page"),
            ));
        }
        out
    }
}

/// The prebuilt index, when `wiki` holds exactly the pages it was built from.
/// `KERNAUT_INDEX=rebuild` parses the built-in pages and builds every index in RAM at
/// start, as kernaut did before it shipped them prebuilt (for measurements, and to rule
/// the prebuilt pages and index out).
fn rebuild_requested() -> bool {
    std::env::var("KERNAUT_INDEX").is_ok_and(|v| v.trim() == "rebuild")
}

/// `Wiki::load(config)`, with the built-in pages as `build.rs` parsed them (user folders
/// are read and parsed as always). `KERNAUT_INDEX=rebuild` parses the built-in pages too.
pub fn load_wiki(config: &WikiConfig) -> Wiki {
    if config.no_builtin || rebuild_requested() {
        return Wiki::load(config);
    }
    match builtin_wiki() {
        Some(base) => base.with_dirs(config),
        None => Wiki::load(config),
    }
}

/// The built-in wiki as `build.rs` parsed it (`None` only if its bytes do not read back,
/// which the tests rule out).
pub fn builtin_wiki() -> Option<Wiki> {
    let wiki = Wiki::from_bytes(builtin_index::WIKI)
        .filter(|w| w.content_hash() == builtin_index::WIKI_HASH);
    // The pages are owned by `wiki` now; the 2.4 MB they were read from are not read
    // again by this process (unless it loads the built-in wiki once more).
    release_resident(builtin_index::WIKI);
    wiki
}

/// Takes the pages of `bytes`, embedded in the executable, out of this process's resident
/// set: they stay in the page cache (the next process start finds them there) and a later
/// read faults them back in, unchanged.
///
/// `bytes` lies in `.rodata`, a private, read-only mapping of the executable's file that
/// nothing writes (no relocation touches it), so `MADV_DONTNEED` only drops this process's
/// mappings of clean file pages; only the pages wholly inside `bytes` are dropped.
fn release_resident(bytes: &'static [u8]) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf has no preconditions.
        let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
            p if p > 0 => p as usize,
            _ => return,
        };
        let start = bytes.as_ptr() as usize;
        let first = start.next_multiple_of(page);
        let end = (start + bytes.len()) / page * page;
        if end > first {
            // SAFETY: [first, end) lies inside `bytes`, immutable data of the executable's
            // read-only file mapping (see above): dropping its pages changes no byte a
            // reader sees. A failure (e.g. EINVAL) leaves them resident, which is harmless.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

fn builtin_index(wiki: &Wiki) -> Option<WikiIndex> {
    if rebuild_requested() || wiki.content_hash() != builtin_index::WIKI_HASH {
        return None;
    }
    WikiIndex::open_static(wiki, builtin_index::FILES).ok()
}

/// Where the indexes of user wikis are cached: `KERNAUT_CACHE_DIR` (empty: no cache),
/// else `$XDG_CACHE_HOME/kernaut`, else `~/.cache/kernaut`.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(v) = std::env::var_os("KERNAUT_CACHE_DIR") {
        return (!v.is_empty()).then(|| PathBuf::from(v));
    }
    nonempty("XDG_CACHE_HOME")
        .map(|x| PathBuf::from(x).join("kernaut"))
        .or_else(|| nonempty("HOME").map(|h| PathBuf::from(h).join(".cache/kernaut")))
}

/// Renders a page, or one of its sections, as plain text for a terminal: title,
/// key facts from the frontmatter (never raw YAML), then the Markdown body with code
/// blocks kept as they are.
pub fn render_page(page: &Page, anchor: Option<&str>) -> Option<String> {
    let mut out = String::new();
    let fm = &page.frontmatter;
    match anchor {
        Some(a) => {
            let section = page.section(a)?;
            out.push_str(&format!(
                "{}#{}  {}\n",
                page.id, section.anchor, section.title
            ));
            out.push_str(&format!(
                "from: {} ({})\n\n",
                page.title,
                page.kind.as_str()
            ));
            out.push_str(&render_markdown(&section.content));
        }
        None => {
            out.push_str(&format!("{}  {}\n", page.id, page.title));
            let mut facts = vec![format!("kind: {}", page.kind.as_str())];
            if let Some(r) = &fm.requires_sm {
                // One way to write a minimum, as the hover does; the symbols and overloads
                // that need more say so.
                let mut req = format!("requires {}", kernaut_wiki::sm_label(r));
                let own: std::collections::BTreeSet<String> = page
                    .api
                    .iter()
                    .flat_map(|a| a.symbol_requires_sm.values())
                    .map(|v| kernaut_wiki::sm_label(v))
                    .filter(|v| *v != kernaut_wiki::sm_label(r))
                    .collect();
                if !own.is_empty() {
                    let own: Vec<String> = own.into_iter().collect();
                    req.push_str(&format!(
                        " (some symbols and overloads: {})",
                        own.join(", ")
                    ));
                }
                facts.push(req);
            }
            if let Some(e) = &fm.evidence_level {
                facts.push(format!("evidence: {e}"));
            }
            if let Some(m) = &fm.measured_on {
                facts.push(format!("measured on: {m}"));
            }
            out.push_str(&facts.join(" · "));
            out.push('\n');
            if let Some(api) = &page.api {
                if let Some(h) = &api.header {
                    out.push_str(&format!("header: {h}\n"));
                }
                for (ty, h) in &api.overload_headers {
                    out.push_str(&format!("header for `{ty}` overloads: {h}\n"));
                }
                if !api.symbols.is_empty() {
                    out.push_str(&format!("symbols: {}\n", api.symbols.join(", ")));
                }
                if !api.signatures.is_empty() {
                    out.push_str("signatures:\n");
                    for s in &api.signatures {
                        out.push_str(&format!("    {s}\n"));
                    }
                }
            }
            if !fm.related_skills.is_empty() {
                out.push_str(&format!(
                    "related skills: {}\n",
                    fm.related_skills.join(", ")
                ));
            }
            if !fm.related_apis.is_empty() {
                out.push_str(&format!("related APIs: {}\n", fm.related_apis.join(", ")));
            }
            out.push('\n');
            out.push_str(&render_markdown(&page.body));
            if !fm.source_refs.is_empty() {
                out.push_str("\nSources:\n");
                for s in &fm.source_refs {
                    let mut line = format!("  - {}", s.source_id);
                    if !s.path.is_empty() {
                        line.push_str(&format!(": {}", s.path));
                    }
                    if !s.anchor.is_empty() {
                        line.push_str(&format!(" #{}", s.anchor));
                    }
                    out.push_str(&line);
                    out.push('\n');
                }
            }
        }
    }
    Some(out)
}

/// Markdown to terminal text: headings underlined, emphasis markers dropped, code blocks
/// indented and kept verbatim.
pub fn render_markdown(md: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let level = line.bytes().take_while(|&b| b == b'#').count();
        if level > 0 && line[level..].starts_with(' ') {
            let text = line[level..].trim();
            out.push_str(text);
            out.push('\n');
            let ch = if level <= 2 { '=' } else { '-' };
            out.push_str(&ch.to_string().repeat(text.chars().count()));
            out.push('\n');
            continue;
        }
        out.push_str(&line.replace("**", ""));
        out.push('\n');
    }
    out
}

/// The kinds a `--kind` flag accepts.
pub fn parse_kind(s: &str) -> Option<PageKind> {
    PageKind::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything a reader of the wiki sees, for comparing two loads.
    fn assert_same_wiki(stored: &Wiki, parsed: &Wiki) {
        assert_eq!(stored.content_hash(), parsed.content_hash());
        assert_eq!(stored.pages(), parsed.pages());
        assert_eq!(stored.diagnostics, parsed.diagnostics);
        for page in parsed.pages() {
            assert_eq!(stored.page(&page.id), Some(page), "{}", page.id);
        }
    }

    #[test]
    fn the_stored_builtin_wiki_is_the_parsed_one() {
        let parsed = Wiki::load(&WikiConfig::builtin());
        let stored = builtin_wiki().expect("the built-in wiki reads back");
        // Its bytes read the same after their pages were dropped (`release_resident`).
        assert_eq!(builtin_wiki().as_ref(), Some(&stored));
        assert!(parsed.pages().len() > 100);
        assert_same_wiki(&stored, &parsed);
        assert_eq!(stored.content_hash(), builtin_index::WIKI_HASH);
        assert_eq!(Wiki::from_bytes(&parsed.to_bytes()), Some(parsed.clone()));
        assert_eq!(Wiki::from_bytes(b"not a wiki"), None);

        // The index and symbol table derived from either are the same.
        let k_stored = Knowledge::load(&WikiConfig::builtin()).unwrap();
        let k_parsed = Knowledge::from_wiki(parsed).unwrap();
        let (a, b) = (k_stored.index.symbols(), k_parsed.index.symbols());
        let mut names = a.symbols();
        names.sort_unstable();
        let mut names_b = b.symbols();
        names_b.sort_unstable();
        assert_eq!(names, names_b);
        for name in names {
            assert_eq!(
                format!("{:?}", a.lookup(name)),
                format!("{:?}", b.lookup(name)),
                "{name}"
            );
        }
        assert_eq!(a.unresolved, b.unresolved);
        let opts = SearchOptions::default();
        let hits = |k: &Knowledge| {
            k.search("bank conflict", &opts)
                .iter()
                .map(|h| format!("{h:?}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(hits(&k_stored), hits(&k_parsed));
    }

    #[test]
    fn user_folders_load_over_the_stored_builtin_wiki() {
        let dir = std::env::temp_dir().join(format!("kernaut-stored-wiki-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("ilp.md"),
            "---\nid: skill-ilp\ntype: skill\ntitle: My ILP notes\n---\n\n## Why\n\nMine.\n",
        )
        .unwrap();
        let config = WikiConfig {
            no_builtin: false,
            dirs: vec![dir.clone()],
        };
        let parsed = Wiki::load(&config);
        let stored = load_wiki(&config);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(stored.page("skill-ilp").unwrap().title, "My ILP notes");
        assert_same_wiki(&stored, &parsed);
    }
}
