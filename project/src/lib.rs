//! The one project loader, below every front end (as rust-analyzer's `load-cargo` sits
//! below its server and its batch commands): for each file it finds the nearest
//! `.kernaut.toml`, the targets and `-D` macros the build gives it
//! ([`build_files`]: `compile_commands.json`, CMake, `setup.py`/`pyproject.toml` and
//! `TORCH_CUDA_ARCH_LIST`, Makefiles), its include folders and headers, and its compile
//! flags, and hands them to the analysis host. `kernaut-lsp` (server and `check`),
//! `ktui explain` and `ktui FILE.cu` all load through it, so a file gets the same
//! targets, register source and findings wherever it is looked at.
//!
//! `ide` does no I/O; this crate does all of it. Nothing in a workspace chooses a program
//! to run: compile flags go through `kernaut-compiler`'s allow-list.
//!
//! ```no_run
//! use kernaut_ide::{AnalysisConfig, AnalysisHost};
//! use kernaut_project::ProjectLoader;
//!
//! let mut host = AnalysisHost::new(AnalysisConfig::default());
//! let mut loader = ProjectLoader::new(None);
//! let files = loader.load(&mut host, &["src/kernel.cu".into()]).unwrap();
//! let a = host.analysis();
//! println!("{}", a.file_config(files[0].id).targets.describe());
//! ```

pub mod build_files;
mod cmake;
pub mod compiled;
pub mod doctor;
mod loader;
mod stream;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use kernaut_ide::{AnalysisHost, Change, FileId};

pub use loader::{read_includes, IncludeRoot, Includes, ProjectLoader, ProjectScan};
pub use stream::{Plan, Stream};

/// A source file as [`ProjectLoader::read_source`] read it.
pub(crate) struct SourceRead {
    pub(crate) text: String,
    /// Read with replacement characters (not UTF-8).
    pub(crate) lossy: bool,
    /// The canonical path, the file's key in the host.
    pub(crate) absolute: String,
    /// The size on disk.
    pub(crate) bytes: usize,
}

/// A file given to the host by [`ProjectLoader::load`].
#[derive(Clone, Debug)]
pub struct LoadedFile {
    /// Its id in the host.
    pub id: FileId,
    /// The path as given.
    pub path: PathBuf,
    /// The absolute path the host names it by.
    pub absolute: String,
    /// Its text (decoded: see [`kernaut_ide::source_text`]).
    pub text: String,
    /// Whether decoding replaced bytes (the file is not UTF-8): such a file is never
    /// written back.
    pub lossy: bool,
}

impl ProjectLoader {
    /// Reads `paths` and gives `host` each file with its `.kernaut.toml`, what its build
    /// says ([`ProjectLoader::file_build`]) and the quoted headers it includes (read from
    /// disk, searched in its include folders; a header gets the targets of its first
    /// includer when its own build names none). Binary files are skipped and a file that
    /// is not UTF-8 is read with replacement characters, each with a note
    /// ([`ProjectLoader::take_notes`]). A broken `.kernaut.toml` is an error.
    pub fn load(
        &mut self,
        host: &mut AnalysisHost,
        paths: &[PathBuf],
    ) -> anyhow::Result<Vec<LoadedFile>> {
        let mut sources = Vec::new();
        for path in paths {
            let Some(read) = self.read_source(path)? else {
                continue;
            };
            sources.push(LoadedFile {
                id: host.file_id(&read.absolute),
                path: path.clone(),
                absolute: read.absolute,
                text: read.text,
                lossy: read.lossy,
            });
        }
        self.give(host, sources)
    }

    /// One source file named on the command line or opened: its text (decoded, with
    /// replacement characters and a note where it is not UTF-8), or `None` with a note for
    /// a binary file. What [`ProjectLoader::load`] and the streamed `check` both read.
    pub(crate) fn read_source(&mut self, path: &Path) -> anyhow::Result<Option<SourceRead>> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let shown = path.display().to_string();
        if kernaut_ide::source_text::is_binary(&bytes) {
            self.note(format!(
                "{shown}: a binary file (it holds NUL bytes), skipped"
            ));
            return Ok(None);
        }
        let bytes_len = bytes.len();
        let decoded = kernaut_ide::source_text::decode(bytes);
        let lossy = match decoded.note(&shown) {
            Some(note) => {
                self.note(note);
                true
            }
            None => false,
        };
        let absolute = path
            .canonicalize()
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string();
        Ok(Some(SourceRead {
            text: decoded.text,
            lossy,
            absolute,
            bytes: bytes_len,
        }))
    }

    /// [`ProjectLoader::load`] for one text already read (an editor buffer, a file
    /// `ktui` holds), named `key` in the host and found on disk at `path` (for its
    /// `.kernaut.toml`, build and headers).
    pub fn load_text(
        &mut self,
        host: &mut AnalysisHost,
        key: &str,
        path: &std::path::Path,
        text: &str,
    ) -> anyhow::Result<FileId> {
        let file = LoadedFile {
            id: host.file_id(key),
            path: path.to_path_buf(),
            absolute: path
                .canonicalize()
                .unwrap_or_else(|_| path.to_path_buf())
                .display()
                .to_string(),
            text: text.to_string(),
            lossy: false,
        };
        let id = file.id;
        self.give(host, vec![file])?;
        Ok(id)
    }

    fn give(
        &mut self,
        host: &mut AnalysisHost,
        sources: Vec<LoadedFile>,
    ) -> anyhow::Result<Vec<LoadedFile>> {
        let mut change = Change::new();
        let mut roots: Vec<IncludeRoot> = Vec::new();
        let mut builds = Vec::new();
        for f in &sources {
            if let Some((dir, config)) = self.dir_config(&f.path)? {
                change.set_dir_config(dir.display().to_string(), Some(config));
            }
            let build = self.file_build(&f.path);
            change.set_file(f.id, f.text.clone());
            roots.push((
                f.absolute.clone(),
                Arc::from(f.text.as_str()),
                build.include_dirs.clone(),
            ));
            builds.push((f.absolute.clone(), build.clone()));
            change.set_build(f.id, Some(build));
        }
        let files = sources;
        let known: std::collections::HashMap<String, Arc<str>> = roots
            .iter()
            .map(|(p, t, _)| (kernaut_ide::includes::normalize_path(p), t.clone()))
            .collect();
        let included = read_includes(&roots, &known);
        for note in included.notes {
            self.note(note);
        }
        // Which file includes each header first: the header is compiled as part of it.
        let mut texts = known.clone();
        for (p, t) in &included.headers {
            texts.insert(p.clone(), Arc::from(t.as_str()));
        }
        let mut includer: std::collections::HashMap<String, usize> = Default::default();
        for (i, (root, _, dirs)) in roots.iter().enumerate() {
            let mut text_of = |p: &str| {
                texts
                    .get(&kernaut_ide::includes::normalize_path(p))
                    .cloned()
            };
            for (h, _) in kernaut_ide::includes::include_closure_in(root, dirs, &mut text_of) {
                includer.entry(h).or_insert(i);
            }
        }
        for (path, text) in included.headers {
            let header = PathBuf::from(&path);
            let mut build = self.file_build(&header);
            if build.targets.is_none() {
                build.targets = includer
                    .get(&path)
                    .and_then(|i| builds[*i].1.targets.clone());
            }
            if let Ok(Some((dir, config))) = self.dir_config(&header) {
                change.set_dir_config(dir.display().to_string(), Some(config));
            }
            let id = host.file_id(&path);
            change.set_file(id, text);
            change.set_build(id, Some(build));
        }
        host.apply_change(change);
        Ok(files)
    }
}
