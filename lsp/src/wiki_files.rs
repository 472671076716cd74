//! Wiki links that every editor can open. Diagnostics cite a wiki section in
//! `codeDescription.href`, and `workspace/symbol` answers with the location of a page.
//! Only the VS Code extension resolves `kernaut://wiki/ID#ANCHOR` (it asks for it with
//! `"wikiLinks": "kernaut"`); for every other client the page is written as a Markdown
//! file in the cache folder and the link is `file:///…/ID.md#ANCHOR`, which Neovim
//! (`:edit`, `gf`, `gx`), Emacs (`find-file`, `browse-url`) and Helix (`:open`) open,
//! and whose `#ANCHOR` the kernaut plugins jump to (the `## ANCHOR: title` heading).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use kernaut_ide::Analysis;
use tower_lsp_server::ls_types as lsp;

/// How a link to a wiki page is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WikiLinks {
    /// `kernaut://wiki/ID#ANCHOR`, for a client that opens it through `kernaut.showPage`.
    Kernaut,
    /// `file:///…/ID.md#ANCHOR`, the page written to the cache folder.
    #[default]
    File,
}

impl WikiLinks {
    /// `"kernaut"` or `"file"`.
    pub fn parse(s: &str) -> Option<WikiLinks> {
        match s {
            "kernaut" => Some(WikiLinks::Kernaut),
            "file" => Some(WikiLinks::File),
            _ => None,
        }
    }
}

/// The folder the pages are written to: `<cache>/wiki-pages`, where `<cache>` is the
/// folder of the cached wiki indexes, else the system's temporary folder.
pub fn pages_dir() -> PathBuf {
    kernaut_ide::knowledge::cache_dir()
        .unwrap_or_else(|| std::env::temp_dir().join("kernaut"))
        .join("wiki-pages")
}

/// The link to `target` (`id` or `id#anchor`) in the style asked for. For
/// [`WikiLinks::File`] the whole page is written (once per content: the folder is named
/// by a hash of the text, so an edited wiki never shows an old page) and its `file:` URI
/// returned; `None` when the wiki has no such page or the file cannot be written.
pub fn href(analysis: &Analysis, target: &str, style: WikiLinks) -> Option<lsp::Uri> {
    if style == WikiLinks::Kernaut {
        return crate::convert::wiki_uri(target);
    }
    let (id, anchor) = match target.split_once('#') {
        Some((id, a)) => (id, Some(a)),
        None => (target, None),
    };
    let page = analysis.wiki_page(id)?;
    let file = write_page(&pages_dir(), &page.id, &page.markdown).ok()?;
    let mut text = lsp::Uri::from_file_path(&file)?.as_str().to_string();
    if let Some(a) = anchor {
        text.push('#');
        text.push_str(a);
    }
    text.parse().ok()
}

/// Writes `markdown` to `dir/<hash>/<id>.md` unless it is there already; the path.
fn write_page(dir: &Path, id: &str, markdown: &str) -> std::io::Result<PathBuf> {
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return Err(std::io::Error::other(format!("{id:?} is not a page id")));
    }
    let mut h = DefaultHasher::new();
    markdown.hash(&mut h);
    let folder = dir.join(format!("{:016x}", h.finish()));
    let file = folder.join(format!("{id}.md"));
    if file.is_file() {
        return Ok(file);
    }
    std::fs::create_dir_all(&folder)?;
    // Another server, or another sweep of this one, may write the same page at the same
    // time: each writes aside under its own name, then renames.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = folder.join(format!(".{id}.{}.{n}.tmp", std::process::id()));
    std::fs::write(&tmp, markdown)?;
    std::fs::rename(&tmp, &file)?;
    Ok(file)
}

/// Rewrites the `kernaut://wiki/…` links of `diagnostics` in the style asked for.
pub fn relink(analysis: &Analysis, style: WikiLinks, diagnostics: &mut [lsp::Diagnostic]) {
    if style == WikiLinks::Kernaut {
        return;
    }
    // A file cites few pages: each is rendered and written once per call.
    let mut done: std::collections::HashMap<String, Option<lsp::Uri>> = Default::default();
    for d in diagnostics {
        let Some(desc) = &mut d.code_description else {
            continue;
        };
        let Some(target) = desc.href.as_str().strip_prefix("kernaut://wiki/") else {
            continue;
        };
        let link = done
            .entry(target.to_string())
            .or_insert_with(|| href(analysis, target, style))
            .clone();
        match link {
            Some(h) => desc.href = h,
            None => d.code_description = None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_written_once_per_content() {
        let dir = std::env::temp_dir().join(format!("kernaut-wiki-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = write_page(&dir, "pitfall-x", "# X\n\n## P1: one\n").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "# X\n\n## P1: one\n");
        assert_eq!(
            a,
            write_page(&dir, "pitfall-x", "# X\n\n## P1: one\n").unwrap()
        );
        let b = write_page(&dir, "pitfall-x", "# X\n\n## P1: two\n").unwrap();
        assert_ne!(a, b, "an edited page gets a new file");
        assert!(write_page(&dir, "../escape", "x").is_err());
        assert_eq!(WikiLinks::parse("kernaut"), Some(WikiLinks::Kernaut));
        assert_eq!(WikiLinks::parse("file"), Some(WikiLinks::File));
        assert_eq!(WikiLinks::parse("https"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Sweeps of one server that cite the same page write it at the same time: each gets
    /// the page's file.
    #[test]
    fn the_same_page_written_at_once_by_many_threads() {
        let dir = std::env::temp_dir().join(format!("kernaut-wiki-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for round in 0..20 {
            let text = format!("# X\n\n## P1: round {round}\n");
            let written: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..8)
                    .map(|_| s.spawn(|| write_page(&dir, "pitfall-x", &text)))
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for w in &written {
                let file = w.as_ref().expect("every writer gets the file");
                assert_eq!(std::fs::read_to_string(file).unwrap(), text);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
