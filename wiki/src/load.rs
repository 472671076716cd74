//! Loading the built-in pages and a user's folders, merged into one [`Wiki`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use include_dir::{include_dir, Dir};

use crate::diag::{Diagnostic, Severity};
use crate::model::{Origin, Page};
use crate::parse::{parse_page, Parsed};

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/pages");

/// What to load.
#[derive(Debug, Clone, Default)]
pub struct WikiConfig {
    /// Leave the built-in pages out.
    pub no_builtin: bool,
    /// Extra wiki folders, loaded in order over the built-in pages.
    pub dirs: Vec<PathBuf>,
}

impl WikiConfig {
    /// The built-in pages only.
    pub fn builtin() -> WikiConfig {
        WikiConfig::default()
    }

    /// Adds the folders listed in a `KERNAUT_WIKI`-style path list (`:`-separated on
    /// Unix), before any folder already configured.
    pub fn with_env_paths(mut self, value: Option<&std::ffi::OsStr>) -> WikiConfig {
        if let Some(v) = value {
            let mut dirs: Vec<PathBuf> = std::env::split_paths(v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect();
            dirs.append(&mut self.dirs);
            self.dirs = dirs;
        }
        self
    }
}

/// The merged wiki: pages by id, plus every problem found while loading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wiki {
    pages: Vec<Page>,
    by_id: HashMap<String, usize>,
    /// Problems found while loading (parse errors, duplicates, overrides).
    pub diagnostics: Vec<Diagnostic>,
    /// A hash of every file read, in load order (see [`Wiki::content_hash`]).
    content_hash: u64,
}

/// What [`Wiki::to_bytes`] writes (`by_id` is rebuilt from the pages).
#[derive(serde::Serialize)]
struct StoredRef<'a> {
    pages: &'a [Page],
    diagnostics: &'a [Diagnostic],
    content_hash: u64,
}

/// What [`Wiki::from_bytes`] reads: the fields of [`StoredRef`], owned.
#[derive(serde::Deserialize)]
struct Stored {
    pages: Vec<Page>,
    diagnostics: Vec<Diagnostic>,
    content_hash: u64,
}

/// One file to parse: its display path, origin, text bytes and stem.
struct Source {
    path: String,
    origin: Origin,
    bytes: Vec<u8>,
    stem: String,
}

impl Wiki {
    /// Loads the wiki described by `config`. Never fails: problems are in `diagnostics`.
    pub fn load(config: &WikiConfig) -> Wiki {
        let mut wiki = Wiki::default();
        if !config.no_builtin {
            let mut sources = Vec::new();
            collect_builtin(&BUILTIN, &mut sources);
            wiki.add_layer(sources);
        }
        wiki.with_dirs(config)
    }

    /// Loads `config.dirs` (and only them: `no_builtin` is not looked at) as layers over
    /// this wiki, as [`Wiki::load`] loads them over the built-in pages. With the built-in
    /// wiki from [`Wiki::from_bytes`] this gives what `Wiki::load(config)` gives.
    pub fn with_dirs(mut self, config: &WikiConfig) -> Wiki {
        let wiki = &mut self;
        for dir in &config.dirs {
            let mut sources = Vec::new();
            if let Err(d) = collect_dir(dir, &mut sources, &mut wiki.diagnostics) {
                wiki.diagnostics.push(d);
                continue;
            }
            wiki.add_layer(sources);
        }
        self
    }

    /// The wiki as compact bytes (postcard): its pages, load problems and content hash,
    /// for [`Wiki::from_bytes`]. `kernaut-sema`'s build script stores the built-in wiki
    /// this way, so that no process parses the built-in pages at start.
    pub fn to_bytes(&self) -> Vec<u8> {
        let stored = StoredRef {
            pages: &self.pages,
            diagnostics: &self.diagnostics,
            content_hash: self.content_hash,
        };
        postcard::to_stdvec(&stored).expect("a wiki always serialises")
    }

    /// The wiki [`Wiki::to_bytes`] wrote, the same in every respect (pages, problems,
    /// content hash, look-up by id); `None` when the bytes are not such a wiki (bytes
    /// written by another version of kernaut can be).
    pub fn from_bytes(bytes: &[u8]) -> Option<Wiki> {
        let stored: Stored = postcard::from_bytes(bytes).ok()?;
        let by_id = stored
            .pages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.clone(), i))
            .collect();
        Some(Wiki {
            pages: stored.pages,
            by_id,
            diagnostics: stored.diagnostics,
            content_hash: stored.content_hash,
        })
    }

    /// Builds a wiki from in-memory files `(path, text)`, as one external layer (tests).
    pub fn from_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Wiki {
        let sources = files
            .into_iter()
            .map(|(path, text)| Source {
                path: path.to_string(),
                origin: Origin::External,
                bytes: text.as_bytes().to_vec(),
                stem: stem_of(path),
            })
            .collect();
        let mut wiki = Wiki::default();
        wiki.add_layer(sources);
        wiki
    }

    fn add_layer(&mut self, mut sources: Vec<Source>) {
        sources.sort_by(|a, b| a.path.cmp(&b.path));
        for src in &sources {
            self.content_hash = stable_hash(&[
                &self.content_hash.to_le_bytes(),
                src.path.as_bytes(),
                &src.bytes,
            ]);
        }
        // Ids first seen in this layer, to tell duplicates (same layer) from overrides.
        let mut this_layer: HashMap<String, String> = HashMap::new();
        for parsed in parse_all(&sources) {
            let parsed = match parsed {
                Ok(parsed) => parsed,
                Err(d) => {
                    self.diagnostics.push(d);
                    continue;
                }
            };
            self.diagnostics.extend(parsed.diagnostics);
            let Some(page) = parsed.page else { continue };
            if let Some(first) = this_layer.get(&page.id) {
                self.diagnostics.push(Diagnostic::new(
                    &page.path,
                    1,
                    1,
                    Severity::Error,
                    format!(
                        "duplicate id `{}` (already defined in {first}); this page was skipped",
                        page.id
                    ),
                ));
                continue;
            }
            this_layer.insert(page.id.clone(), page.path.clone());
            match self.by_id.get(&page.id) {
                Some(&i) => {
                    let old = &self.pages[i];
                    let what = if old.origin == Origin::Builtin {
                        "the built-in page"
                    } else {
                        "the page"
                    };
                    self.diagnostics.push(Diagnostic::new(
                        &page.path,
                        1,
                        1,
                        Severity::Note,
                        format!("`{}` replaces {what} from {}", page.id, old.path),
                    ));
                    self.pages[i] = page;
                }
                None => {
                    self.by_id.insert(page.id.clone(), self.pages.len());
                    self.pages.push(page);
                }
            }
        }
    }

    /// A hash of the path and bytes of every file loaded, in order: two wikis with the
    /// same hash were loaded from the same files (for cache keys).
    pub fn content_hash(&self) -> u64 {
        self.content_hash
    }

    /// Every page, in load order.
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// The page with this id.
    pub fn page(&self, id: &str) -> Option<&Page> {
        self.by_id.get(id).map(|&i| &self.pages[i])
    }

    /// Resolves a page reference as written in links: an id, or a short skill name
    /// (`ilp` → `skill-ilp`).
    pub fn resolve_page(&self, name: &str) -> Option<&Page> {
        let name = name.trim();
        self.page(name)
            .or_else(|| self.page(&format!("skill-{name}")))
            .or_else(|| self.page(&format!("pitfall-{name}")))
    }

    /// Whether `id#anchor` (or a bare id) names an existing page and anchor.
    pub fn resolves(&self, link: &str) -> bool {
        let (id, anchor) = split_link(link);
        match self.resolve_page(id) {
            Some(p) => anchor.is_none_or(|a| p.section(a).is_some()),
            None => false,
        }
    }

    /// Diagnostics of at least this severity.
    pub fn problems(&self, at_least: Severity) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(move |d| d.severity >= at_least)
    }
}

/// A 64-bit FNV-1a hash of `parts`, stable across runs, platforms and Rust versions
/// (for cache keys).
///
/// ```
/// use kernaut_wiki::stable_hash;
/// assert_ne!(stable_hash(&[b"ab", b"c"]), stable_hash(&[b"a", b"bc"]));
/// ```
pub fn stable_hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separates ["ab", "c"] from ["a", "bc"].
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Splits `id#anchor`.
pub fn split_link(link: &str) -> (&str, Option<&str>) {
    match link.split_once('#') {
        Some((id, a)) if !a.is_empty() => (id, Some(a)),
        Some((id, _)) => (id, None),
        None => (link, None),
    }
}

fn stem_of(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn line_col(prefix: &[u8]) -> (u32, u32) {
    let line = prefix.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let last = prefix
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&prefix[last..]).chars().count() as u32 + 1;
    (line, col)
}

/// Layers of at least this many files are parsed on several threads.
const PARALLEL_PAGES: usize = 32;

/// Each source decoded and parsed, in order: the page (with its problems), or why the
/// file was skipped. Every process parses the built-in pages at start, so a large
/// layer is cut into one contiguous run per core (at most four), parsed side by side.
fn parse_all(sources: &[Source]) -> Vec<Result<Parsed, Diagnostic>> {
    let threads = if sources.len() >= PARALLEL_PAGES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    } else {
        1
    };
    let per = sources.len().div_ceil(threads).max(1);
    let parse_run = |run: &[Source]| run.iter().map(parse_source).collect::<Vec<_>>();
    let mut runs = sources.chunks(per);
    let first = runs.next().unwrap_or_default();
    std::thread::scope(|scope| {
        // A run whose thread could not be started is parsed here after the first.
        let helpers: Vec<_> = runs
            .map(|run| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || parse_run(run))
                    .map_err(|_| run)
            })
            .collect();
        let mut out = parse_run(first);
        for h in helpers {
            match h {
                Ok(h) => out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
                Err(run) => out.extend(parse_run(run)),
            }
        }
        out
    })
}

/// One source decoded and parsed (see [`parse_all`]).
fn parse_source(src: &Source) -> Result<Parsed, Diagnostic> {
    let text = match std::str::from_utf8(&src.bytes) {
        Ok(t) => t,
        Err(e) => {
            let (line, col) = line_col(&src.bytes[..e.valid_up_to()]);
            return Err(Diagnostic::new(
                &src.path,
                line,
                col,
                Severity::Error,
                "file is not valid UTF-8 (save it as UTF-8); the page was skipped",
            ));
        }
    };
    Ok(parse_page(&src.path, src.origin.clone(), text, &src.stem))
}

fn collect_builtin(dir: &Dir<'static>, out: &mut Vec<Source>) {
    for f in dir.files() {
        let p = f.path();
        if p.extension().is_some_and(|e| e == "md") {
            out.push(Source {
                path: format!("builtin:{}", p.display()),
                origin: Origin::Builtin,
                bytes: f.contents().to_vec(),
                stem: stem_of(&p.to_string_lossy()),
            });
        }
    }
    for d in dir.dirs() {
        collect_builtin(d, out);
    }
}

fn collect_dir(
    dir: &Path,
    out: &mut Vec<Source>,
    diags: &mut Vec<Diagnostic>,
) -> Result<(), Diagnostic> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        Diagnostic::new(
            dir.display().to_string(),
            0,
            0,
            Severity::Error,
            format!("cannot read wiki folder ({e}); check --wiki and KERNAUT_WIKI"),
        )
    })?;
    if !meta.is_dir() {
        return Err(Diagnostic::new(
            dir.display().to_string(),
            0,
            0,
            Severity::Error,
            "not a folder; --wiki and KERNAUT_WIKI take folders of Markdown pages",
        ));
    }
    walk(dir, out, diags, 0);
    Ok(())
}

fn walk(dir: &Path, out: &mut Vec<Source>, diags: &mut Vec<Diagnostic>, depth: usize) {
    if depth > 32 {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::new(
                dir.display().to_string(),
                0,
                0,
                Severity::Error,
                format!("cannot list folder: {e}"),
            ));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.as_deref().is_some_and(|n| n.starts_with('.')) {
            continue;
        }
        if p.is_dir() {
            walk(&p, out, diags, depth + 1);
        } else if p.extension().is_some_and(|e| e == "md") {
            match std::fs::read(&p) {
                Ok(bytes) => out.push(Source {
                    path: p.display().to_string(),
                    origin: Origin::External,
                    bytes,
                    stem: stem_of(&p.to_string_lossy()),
                }),
                Err(e) => diags.push(Diagnostic::new(
                    p.display().to_string(),
                    0,
                    0,
                    Severity::Error,
                    format!("cannot read file: {e}"),
                )),
            }
        }
    }
}
