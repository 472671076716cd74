//! [`ProjectLoader`]: what a file's project says about it, read once per directory and
//! per build file, for every front end.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use kernaut_compiler::flags::CompileEntry;
use kernaut_compiler::CompileFlags;
use kernaut_ide::config::{parse_config, FileBuild, KernautConfig, TargetSet, CONFIG_FILE_NAME};
use kernaut_ide::gpu::Target;
use kernaut_ide::includes::{include_closure_in, normalize_path};
use kernaut_ide::source_text;

use crate::build_files::{self, Found};

/// A build file's reader: its text to the targets it names.
type Reader = fn(&str) -> Option<Found>;

/// The files a build file's text was read from, in order, with their line counts.
type Segments = Vec<(PathBuf, usize)>;

/// A parsed compile database: its entries by the canonical path of their file.
#[derive(Debug, Default)]
struct CompileDb {
    entries: HashMap<PathBuf, Vec<CompileEntry>>,
}

impl CompileDb {
    fn parse(text: &str) -> Result<CompileDb, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let list = value
            .as_array()
            .ok_or_else(|| "the top level is not an array".to_string())?;
        let mut db = CompileDb::default();
        for e in list {
            let Some(file) = e.get("file").and_then(|f| f.as_str()) else {
                continue;
            };
            let directory =
                PathBuf::from(e.get("directory").and_then(|d| d.as_str()).unwrap_or(""));
            let arguments = if let Some(a) = e.get("arguments").and_then(|a| a.as_array()) {
                a.iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect()
            } else if let Some(c) = e.get("command").and_then(|c| c.as_str()) {
                kernaut_compiler::flags::split_command(c)
            } else {
                continue;
            };
            let path = directory.join(file);
            let key = path.canonicalize().unwrap_or(path);
            db.entries.entry(key).or_default().push(CompileEntry {
                directory,
                arguments,
            });
        }
        Ok(db)
    }
}

/// Finds, for each file, the `.kernaut.toml` that applies, the targets and macros the
/// build gives it, its include folders and its compile flags: one answer for the editor,
/// `check`, `ktui explain` and `ktui FILE.cu`. Each directory and build file is read once;
/// problems become [`ProjectLoader::take_notes`] lines, never failures, except a broken
/// `.kernaut.toml` ([`ProjectLoader::dir_config`]).
#[derive(Debug, Default)]
pub struct ProjectLoader {
    root: Option<PathBuf>,
    /// Folder → the `.kernaut.toml` found at or above it.
    config_of_dir: HashMap<PathBuf, Option<PathBuf>>,
    configs: HashMap<PathBuf, KernautConfig>,
    /// Folder → the compile database found at or above it.
    db_of_dir: HashMap<PathBuf, Option<PathBuf>>,
    dbs: HashMap<PathBuf, Option<Arc<CompileDb>>>,
    /// Folder → the build file's targets found at or above it.
    build_of_dir: HashMap<PathBuf, Option<(Found, PathBuf)>>,
    /// Folder → the Makefile whose targets it has (where one gave them).
    makefile_of_dir: HashMap<PathBuf, PathBuf>,
    /// Makefile → its text with its includes' before it (and where each part came
    /// from), for the targets of each file it builds.
    makefile_text: HashMap<PathBuf, (Arc<str>, Segments)>,
    /// The Visual Studio projects below each project's top folder (a bounded walk), with
    /// their text, found once.
    vcxprojs: HashMap<PathBuf, Arc<Vec<ProjectText>>>,
    /// Folder → the Makefile variants it holds (`Makefile.hopper`, `cuda.mk`).
    variants_of_dir: HashMap<PathBuf, Vec<PathBuf>>,
    /// Folder → the include folders its `CMakeLists.txt` names (existing ones, absolute).
    cmake_includes_of_dir: HashMap<PathBuf, Vec<String>>,
    /// Folder → the include folders of the nearest Makefile at or above it.
    make_includes_of_dir: HashMap<PathBuf, Vec<String>>,
    /// Project root → its source files' quoted includes, by the included file's name
    /// ([`ProjectLoader::includer_targets`]).
    includers_of_root: HashMap<PathBuf, Arc<Includers>>,
    /// File (normalised) → [`ProjectLoader::includer_targets`]'s answer, once worked out
    /// (`None` while it is being worked out, so a cycle of includes ends).
    includer_targets_of: HashMap<String, Option<TargetSet>>,
    /// Folders whose files are the project's too where no root or `.git` says more (the
    /// folders `check` was given).
    scan_roots: Vec<PathBuf>,
    /// Where set ([`ProjectLoader::defer_scans`]), a project's includes are not read
    /// while a file's build is asked for: the projects still to read are kept in
    /// `wanted_scans`, and answers that needed them are not remembered.
    defer_scans: bool,
    wanted_scans: Vec<PathBuf>,
    /// The scans asked for and not given back yet.
    pending_scans: std::collections::HashSet<PathBuf>,
    /// How many times a build was worked out without a project's includes.
    scans_skipped: usize,
    notes: Vec<String>,
}

/// A project's quoted includes, read by [`ProjectScan::run`] away from the loader (on
/// another thread) and given back with [`ProjectLoader::add_scan`].
#[derive(Debug)]
pub struct ProjectScan {
    root: PathBuf,
    includers: Option<Includers>,
}

impl ProjectScan {
    /// The project folder this scan reads.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads the project's includes (bounded as [`scan_includes`] is).
    pub fn run(mut self) -> ProjectScan {
        self.includers = Some(scan_includes(&self.root));
        self
    }
}

/// A project's quoted includes by the included file's name: (includer, name as written).
type Includers = HashMap<String, Vec<(PathBuf, String)>>;

/// At most this many files of a project are read for [`ProjectLoader::includer_targets`].
const INCLUDER_SCAN_FILES: usize = 20_000;
/// At most this many entries (files and folders of any kind) are walked for it.
const INCLUDER_SCAN_ENTRIES: usize = 200_000;

impl ProjectLoader {
    /// A loader for the project at `root` (the editor's workspace folder); without one,
    /// the search for build files stops at a folder holding `.git`.
    pub fn new(root: Option<PathBuf>) -> ProjectLoader {
        ProjectLoader {
            root,
            ..ProjectLoader::default()
        }
    }

    /// Names `folders` (those `check` reads) as part of the project for
    /// [`ProjectLoader::file_build`]'s search for a file's includers, where neither the
    /// loader's root nor a `.git` folder above the file says where the project ends.
    /// A file given stands for the current folder where it lies below it (`check
    /// src/k.cu` from the project's top), else for its own folder.
    pub fn add_scan_roots(&mut self, folders: &[PathBuf]) {
        let cwd = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
        for f in folders {
            let mut f = f.canonicalize().unwrap_or_else(|_| f.clone());
            if f.is_file() {
                f = match &cwd {
                    Some(cwd) if f.starts_with(cwd) => cwd.clone(),
                    _ => folder_of(&f),
                };
            }
            if f.is_dir() && !self.scan_roots.contains(&f) {
                self.scan_roots.push(f);
            }
        }
    }

    /// From now on, [`ProjectLoader::file_build`] does not read a project's files for a
    /// file's includers itself (that can take seconds in a huge folder): the editor asks
    /// for [`ProjectLoader::take_wanted_scans`], runs them off its request path, gives them
    /// back with [`ProjectLoader::add_scan`] and asks again. Until then a file whose
    /// targets rest on its includers has none from them.
    pub fn defer_scans(&mut self) {
        self.defer_scans = true;
    }

    /// The project scans [`ProjectLoader::file_build`] wanted since the last call, each
    /// once.
    pub fn take_wanted_scans(&mut self) -> Vec<ProjectScan> {
        std::mem::take(&mut self.wanted_scans)
            .into_iter()
            .map(|root| ProjectScan {
                root,
                includers: None,
            })
            .collect()
    }

    /// Gives the loader a scan [`ProjectScan::run`] read; later builds see its includers.
    pub fn add_scan(&mut self, scan: ProjectScan) {
        self.pending_scans.remove(&scan.root);
        if let Some(i) = scan.includers {
            self.includers_of_root.insert(scan.root, Arc::new(i));
        }
    }

    /// Notes since the last call: unreadable build files, conflicting targets. Each is
    /// given once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    pub(crate) fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// Forgets what was read about `path`'s folder and above (a `.kernaut.toml` or a
    /// build file changed on disk).
    pub fn forget(&mut self) {
        self.config_of_dir.clear();
        self.configs.clear();
        self.db_of_dir.clear();
        self.dbs.clear();
        self.build_of_dir.clear();
        self.makefile_text.clear();
        self.makefile_of_dir.clear();
        self.variants_of_dir.clear();
        self.cmake_includes_of_dir.clear();
        self.make_includes_of_dir.clear();
        self.includers_of_root.clear();
        self.includer_targets_of.clear();
    }

    /// The include folders the `CMakeLists.txt` files from `file`'s folder up to the
    /// project's root name ([`crate::cmake::include_dirs`]), nearest first; used where
    /// neither a compile database nor `.kernaut.toml` names any.
    fn cmake_include_dirs(&mut self, file: &Path) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for d in self.ancestors(&folder_of(file)) {
            let dirs = self
                .cmake_includes_of_dir
                .entry(d.clone())
                .or_insert_with(|| {
                    let Ok(text) = std::fs::read_to_string(d.join("CMakeLists.txt")) else {
                        return Vec::new();
                    };
                    crate::cmake::include_dirs(&text)
                        .into_iter()
                        .map(|rel| d.join(rel))
                        .filter(|p| p.is_dir())
                        .map(|p| normalize_path(&p.display().to_string()))
                        .collect()
                })
                .clone();
            for x in dirs {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
        out
    }

    /// The folders from `dir` up to the project's root: the loader's root, else the
    /// folder holding `.git`, else the widest folder `check` was given that holds `dir`
    /// (a build file above it belongs to no project of the run).
    fn ancestors(&self, dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for d in dir.ancestors() {
            out.push(d.to_path_buf());
            if Some(d) == self.root.as_deref() || d.join(".git").exists() {
                return out;
            }
        }
        if let Some(top) = self
            .scan_roots
            .iter()
            .filter(|r| dir.starts_with(r))
            .min_by_key(|r| r.components().count())
        {
            out.retain(|d| d.starts_with(top));
        }
        out
    }

    /// The `.kernaut.toml` that applies to `file`, as (its folder, its settings). A file
    /// that cannot be read or parsed is an error naming the file and line.
    pub fn dir_config(&mut self, file: &Path) -> anyhow::Result<Option<(PathBuf, KernautConfig)>> {
        let dir = folder_of(file);
        let found = match self.config_of_dir.get(&dir) {
            Some(f) => f.clone(),
            None => {
                let f = dir
                    .ancestors()
                    .map(|d| d.join(CONFIG_FILE_NAME))
                    .find(|p| p.is_file());
                self.config_of_dir.insert(dir.clone(), f.clone());
                f
            }
        };
        let Some(path) = found else {
            return Ok(None);
        };
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if let Some(c) = self.configs.get(&path) {
            return Ok(Some((folder, c.clone())));
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let config = parse_config(&text).map_err(|e| match e.line() {
            Some(line) => anyhow::anyhow!("{}:{line}: {e}", path.display()),
            None => anyhow::anyhow!("{}: {e}", path.display()),
        })?;
        // A misspelled rule id would configure nothing, silently: refuse the file.
        let problems = kernaut_ide::rules::config_problems(&config);
        if !problems.is_empty() {
            anyhow::bail!("{}: {}", path.display(), problems.join("; "));
        }
        for key in &config.ignored_tool_keys {
            self.note(format!(
                "{}: `{key}` is ignored: a workspace file never chooses which compiler runs; set `kernaut.nvcc` in your editor, or CUDA_HOME",
                path.display()
            ));
        }
        self.configs.insert(path, config.clone());
        Ok(Some((folder, config)))
    }

    /// The nearest `compile_commands.json` at or above `file` (also in `build/`).
    pub fn compile_commands(&mut self, file: &Path) -> Option<PathBuf> {
        let dir = folder_of(file);
        if let Some(found) = self.db_of_dir.get(&dir) {
            return found.clone();
        }
        let found =
            kernaut_compiler::find_compile_commands(&dir.join("x.cu"), self.root.as_deref());
        self.db_of_dir.insert(dir, found.clone());
        found
    }

    fn db(&mut self, path: &Path) -> Option<Arc<CompileDb>> {
        if let Some(db) = self.dbs.get(path) {
            return db.clone();
        }
        let parsed = match std::fs::read_to_string(path) {
            Ok(text) => match CompileDb::parse(&text) {
                Ok(db) => Some(Arc::new(db)),
                Err(e) => {
                    self.note(format!("{}: not read: {e}", path.display()));
                    None
                }
            },
            Err(e) => {
                self.note(format!("{}: not read: {e}", path.display()));
                None
            }
        };
        self.dbs.insert(path.to_path_buf(), parsed.clone());
        parsed
    }

    /// The compile database's entries for `file` (one per target the build compiles it
    /// for separately), with the database's path.
    fn entries(&mut self, file: &Path) -> Option<(PathBuf, Vec<CompileEntry>)> {
        let db_path = self.compile_commands(file)?;
        let db = self.db(&db_path)?;
        let key = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        let entries = db.entries.get(&key)?.clone();
        Some((db_path, entries))
    }

    /// The targets the nearest build file names for `file` (CMake, then Python build
    /// scripts, then Makefiles, at the nearest folder that has any), with that file. A
    /// Makefile's rule written for the file decides alone
    /// ([`build_files::makefile_targets_for`]).
    fn build_file_targets(&mut self, file: &Path) -> Option<(Found, PathBuf)> {
        let dir = folder_of(file);
        let primary = self.build_file_targets_of_dir(&dir);
        // A Makefile variant (`make -f Makefile.hopper`) that names the file decides
        // where the nearest Makefile does not name it.
        let primary_names = match (&primary, self.makefile_of_dir.get(&dir).cloned()) {
            (Some(_), Some(makefile)) => self.makefile_names(file, &makefile) == Some(true),
            (Some(_), None) => true,
            (None, _) => false,
        };
        if !primary_names {
            if let Some(variant) = self.variant_makefile_targets(file) {
                return Some(variant);
            }
        }
        let (found, path) = primary?;
        // A torch extension's source is compiled with that extension's flags only; a
        // file no extension lists has the targets of the sources that include it.
        if path.file_name().is_some_and(|n| n == "setup.py") {
            let rel = file
                .canonicalize()
                .unwrap_or_else(|_| file.to_path_buf())
                .strip_prefix(folder_of(&path))
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/"));
            let text = read_build_file(&path).map(|t| t.0);
            if let (Some(rel), Some(text)) = (rel, text) {
                match build_files::python_extension_targets(&text, &rel) {
                    Some(build_files::ExtensionTargets::Of(found)) => {
                        return Some((found, path));
                    }
                    Some(build_files::ExtensionTargets::NotListed) => return None,
                    None => {}
                }
            }
        }
        let Some(makefile) = self.makefile_of_dir.get(&dir).cloned() else {
            return Some((found, path));
        };
        let name = file.file_name()?.to_string_lossy().to_string();
        let (text, segments) = match self.makefile_text.get(&makefile) {
            Some(t) => t.clone(),
            None => {
                let t = read_build_file(&makefile).unwrap_or_default();
                let t = (Arc::<str>::from(t.0), t.1);
                self.makefile_text.insert(makefile.clone(), t.clone());
                t
            }
        };
        let mut found = build_files::makefile_targets_for(&text, Some(&name))?;
        let (path, line) = origin_of(&makefile, &segments, found.line);
        found.line = line;
        Some((found, path))
    }

    /// Why the nearest `CMakeLists.txt` at or above `file`'s folder does not compile it
    /// (a file in `src/` that `add_executable(app src/a.cu)` leaves out): it declares its
    /// targets' sources in full and none is this file ([`crate::cmake::cmake_builds`]),
    /// no `CMakeLists.txt` above names it, and no source or header of the project
    /// includes it that the build may compile (a test `.cu` that no list names does not
    /// count). `None` where it may be compiled; only `.cu` files are judged.
    fn not_in_cmake(&mut self, file: &Path) -> Option<String> {
        self.not_in_cmake_at(file, 0)
    }

    /// [`Self::not_in_cmake`], `depth` includes away from the file first asked about.
    fn not_in_cmake_at(&mut self, file: &Path, depth: usize) -> Option<String> {
        let name = file.file_name()?.to_string_lossy().to_string();
        if !name.ends_with(".cu") {
            return None;
        }
        // The nearest `CMakeLists.txt` at or above the file's folder.
        let (folder, cmake, text) = self.ancestors(&folder_of(file)).into_iter().find_map(|d| {
            let cmake = d.join("CMakeLists.txt");
            std::fs::read_to_string(&cmake).ok().map(|t| (d, cmake, t))
        })?;
        let rel = file
            .strip_prefix(&folder)
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"));
        let unreached = if crate::cmake::cmake_builds(&text, &name, rel.as_deref()) != Some(false) {
            // The list may build it: then whether CMake reads the list at all.
            Some(self.cmake_list_unreached(&folder, &text)?)
        } else {
            None
        };
        // Another build between the file and the list may compile it (a torch
        // extension's `setup.py`, a Makefile of its own).
        for d in self.ancestors(&folder_of(file)) {
            if OTHER_BUILD_FILES.iter().any(|n| d.join(n).is_file())
                || std::fs::read_dir(&d)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|e| {
                        let n = e.file_name().to_string_lossy().to_string();
                        n.ends_with(".vcxproj") || n.starts_with("premake") || n.ends_with(".mk")
                    })
            {
                return None;
            }
            if d == folder {
                break;
            }
        }
        if let Some(why) = unreached {
            let root = self
                .ancestors(&folder)
                .into_iter()
                .rfind(|d| d.join("CMakeLists.txt").is_file())
                .unwrap_or_else(|| folder.clone());
            if included_below(&root, &name) {
                return None;
            }
            return Some(why);
        }
        // The CMake project's top: the highest folder above with a `CMakeLists.txt`.
        let mut root = folder.clone();
        for d in self.ancestors(&folder).iter().skip(1) {
            match std::fs::read_to_string(d.join("CMakeLists.txt")) {
                Ok(t) if crate::cmake::may_name_source(&t, &name) => return None,
                Ok(_) => root = d.clone(),
                Err(_) => {}
            }
        }
        if self.included_by_compiled(&root, &name, depth) || cmake_files_below_name(&root, &name) {
            return None;
        }
        Some(format!(
            "{} lists the sources of its targets, and not this file",
            cmake.display()
        ))
    }

    /// Whether a source or header below `root` that may be compiled `#include`s `name`:
    /// a `.cu` that the CMake build compiles ([`Self::not_in_cmake_at`]), or a header
    /// that such a file includes, followed a few includes deep; beyond that, or where the
    /// walk is cut short, any includer counts.
    fn included_by_compiled(&mut self, root: &Path, name: &str, depth: usize) -> bool {
        let Some(includers) = includers_below(root, name) else {
            return true;
        };
        if depth >= 3 {
            return !includers.is_empty();
        }
        includers.iter().any(|p| {
            if p.extension().is_some_and(|e| e == "cu") {
                self.not_in_cmake_at(p, depth + 1).is_none()
            } else {
                p.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .is_some_and(|n| self.included_by_compiled(root, &n, depth + 1))
            }
        })
    }

    /// Why CMake never reads the `CMakeLists.txt` in `folder` (its text `text`): the list
    /// declares no `project()`, so it is configured only through an `add_subdirectory`
    /// of a list above, and the nearest list above does not name the way down (the line
    /// that would is commented out, `#add_subdirectory(transpose)`), with every folder it
    /// adds spelled out. A list above that is itself reached only so is followed up.
    /// `None` where CMake may read it.
    fn cmake_list_unreached(&mut self, folder: &Path, text: &str) -> Option<String> {
        let mut folder = folder.to_path_buf();
        let mut text = text.to_string();
        loop {
            if crate::cmake::declares_project(&text) {
                return None;
            }
            let (parent, parent_text) =
                self.ancestors(&folder).into_iter().skip(1).find_map(|d| {
                    std::fs::read_to_string(d.join("CMakeLists.txt"))
                        .ok()
                        .map(|t| (d, t))
                })?;
            let rel = folder
                .strip_prefix(&parent)
                .ok()?
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect::<Vec<_>>()
                .join("/");
            if build_files::cmake_mentions(&parent_text, &rel) {
                folder = parent;
                text = parent_text;
                continue;
            }
            if !crate::cmake::subdirectories_spelled_out(&parent_text) {
                return None;
            }
            return Some(format!(
                "{} has no `project()` and {} does not add its folder `{rel}`",
                folder.join("CMakeLists.txt").display(),
                parent.join("CMakeLists.txt").display()
            ));
        }
    }

    /// Why the shell scripts of the nearest folder at or above `file`'s whose scripts
    /// run nvcc (`build.sh`: `nvcc -O2 main.cu -o app`) do not compile it: they spell out
    /// every CUDA source they compile ([`build_files::shell_cuda_sources`]) and none is
    /// this file, no other build file sits in that folder or between, and no source or
    /// header below it includes the file. `None` where they may compile it; only `.cu`
    /// files are judged.
    fn not_in_shell_scripts(&mut self, file: &Path) -> Option<String> {
        let name = file.file_name()?.to_string_lossy().to_string();
        if !name.ends_with(".cu") {
            return None;
        }
        for d in self.ancestors(&folder_of(file)) {
            let other_build = OTHER_BUILD_FILES
                .iter()
                .chain(["CMakeLists.txt"].iter())
                .any(|n| d.join(n).is_file());
            if other_build {
                return None;
            }
            let scripts: Vec<(PathBuf, String)> = shell_scripts(&d)
                .into_iter()
                .filter_map(|p| {
                    let t = std::fs::read_to_string(&p).ok()?;
                    t.contains("nvcc").then_some((p, t))
                })
                .filter(|(_, t)| !build_files::shell_nvcc_commands(t).is_empty())
                .collect();
            if scripts.is_empty() {
                continue;
            }
            for (_, text) in &scripts {
                let sources = build_files::shell_cuda_sources(text)?;
                let same = |s: &String| match (d.join(s).canonicalize(), file.canonicalize()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => d.join(s) == file,
                };
                if sources.iter().any(same) {
                    return None;
                }
            }
            if included_below(&d, &name) {
                return None;
            }
            let names: Vec<String> = scripts
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect();
            return Some(match names.as_slice() {
                [one] => format!("{one} names the CUDA sources it compiles, and not this file"),
                _ => format!(
                    "{} name the CUDA sources they compile, and not this file",
                    names.join(", ")
                ),
            });
        }
        None
    }

    /// Why the Visual Studio projects of the nearest folder at or above `file`'s that
    /// holds any do not compile it: each lists its CUDA sources (`<CudaCompile
    /// Include="…">`) and none lists this file, and no source or header below them
    /// includes it. `None` where one may compile it; only `.cu` files are judged.
    fn not_in_visual_studio_projects(&mut self, file: &Path) -> Option<String> {
        let name = file.file_name()?.to_string_lossy().to_string();
        // A header is compiled where a source includes it: one that no file below the
        // project includes is compiled nowhere (a `ClInclude` entry builds nothing).
        let header = [".cuh", ".h", ".hpp", ".hh", ".inl"]
            .iter()
            .any(|e| name.ends_with(e));
        if !name.ends_with(".cu") && !header {
            return None;
        }
        let dir = folder_of(file);
        for d in self.ancestors(&dir) {
            let mut projects: Vec<PathBuf> = std::fs::read_dir(&d)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "vcxproj"))
                .collect();
            if projects.is_empty() {
                continue;
            }
            projects.sort();
            let rel = dir
                .strip_prefix(&d)
                .ok()?
                .join(&name)
                .to_string_lossy()
                .replace('\\', "/");
            for p in &projects {
                let text = std::fs::read_to_string(p).ok()?;
                if header {
                    // Only a project that lists its CUDA sources decides what is built.
                    if !text.contains("<CudaCompile Include") {
                        return None;
                    }
                } else if build_files::vcxproj_builds(&text, &rel) != Some(false) {
                    return None;
                }
            }
            if included_below(&d, &name) {
                return None;
            }
            let names: Vec<String> = projects.iter().map(|p| p.display().to_string()).collect();
            if header {
                return Some(format!(
                    "no file below {} includes this header, so none of the sources {} compile{} reads it",
                    d.display(),
                    names.join(" and "),
                    if names.len() == 1 { "s" } else { "" },
                ));
            }
            return Some(format!(
                "{} {} the CUDA sources {} compiles, and not this file",
                names.join(" and "),
                if names.len() == 1 { "names" } else { "name" },
                if names.len() == 1 { "it" } else { "they" },
            ));
        }
        None
    }

    /// The text of the Makefile at `path` with its includes, read once.
    fn makefile_text_of(&mut self, path: &Path) -> (Arc<str>, Segments) {
        if let Some(t) = self.makefile_text.get(path) {
            return t.clone();
        }
        let t = read_build_file(path).unwrap_or_default();
        let t = (Arc::<str>::from(t.0), t.1);
        self.makefile_text.insert(path.to_path_buf(), t.clone());
        t
    }

    /// Whether the Makefile at `makefile` (in `file`'s folder or above) names `file`
    /// among what it compiles ([`build_files::makefile_builds_in`]).
    fn makefile_names(&mut self, file: &Path, makefile: &Path) -> Option<bool> {
        let name = file.file_name()?.to_string_lossy().to_string();
        let text = self.makefile_text_of(makefile).0;
        let rel = folder_of(file)
            .strip_prefix(folder_of(makefile))
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .filter(|r| !r.is_empty());
        build_files::makefile_builds_in(&text, &name, rel.as_deref())
    }

    /// The targets of the first Makefile variant at or above `file`'s folder
    /// (`Makefile.blackwell`, `makefile.linux`, `cuda.mk`: builds run with `make -f`)
    /// that names `file` and gives it targets, with that file.
    fn variant_makefile_targets(&mut self, file: &Path) -> Option<(Found, PathBuf)> {
        let name = file.file_name()?.to_string_lossy().to_string();
        for d in self.ancestors(&folder_of(file)) {
            let variants = match self.variants_of_dir.get(&d) {
                Some(v) => v.clone(),
                None => {
                    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| {
                            let n = p.file_name().map(|n| n.to_string_lossy().to_string());
                            n.is_some_and(|n| {
                                ((n.starts_with("Makefile.") || n.starts_with("makefile."))
                                    && !MAKEFILE_NAMES.contains(&n.as_str()))
                                    || n.ends_with(".mk")
                            }) && p.is_file()
                        })
                        .collect();
                    v.sort();
                    self.variants_of_dir.insert(d.clone(), v.clone());
                    v
                }
            };
            for variant in variants {
                if self.makefile_names(file, &variant) != Some(true) {
                    continue;
                }
                let (text, segments) = self.makefile_text_of(&variant);
                if let Some(mut found) = build_files::makefile_targets_for(&text, Some(&name)) {
                    let (path, line) = origin_of(&variant, &segments, found.line);
                    found.line = line;
                    return Some((found, path));
                }
            }
        }
        None
    }

    /// Why the Makefile `makefile`, whose targets `file` has, does not compile it: it
    /// names the CUDA sources it compiles and not this one
    /// ([`build_files::makefile_builds`]), and no source or header below the Makefile's
    /// folder `#include`s it (a kernel file included by the one the rule compiles is
    /// compiled with it). `None` where it may be compiled; only `.cu` files are judged.
    fn not_built(&mut self, file: &Path, makefile: &Path) -> Option<String> {
        let name = file.file_name()?.to_string_lossy().to_string();
        if !name.ends_with(".cu") {
            return None;
        }
        let text = match self.makefile_text.get(makefile) {
            Some(t) => t.0.clone(),
            None => {
                let t = read_build_file(makefile).unwrap_or_default();
                let t = (Arc::<str>::from(t.0), t.1);
                self.makefile_text.insert(makefile.to_path_buf(), t.clone());
                t.0
            }
        };
        // From a Makefile above the file's folder, the folder as the Makefile names it.
        let rel = folder_of(file)
            .strip_prefix(folder_of(makefile))
            .ok()
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .filter(|r| !r.is_empty());
        if build_files::makefile_builds_in(&text, &name, rel.as_deref()) != Some(false) {
            return None;
        }
        let root = folder_of(makefile);
        if included_below(&root, &name) {
            return None;
        }
        Some(format!(
            "{} names the CUDA sources it compiles, and not this file",
            makefile.display()
        ))
    }

    /// The targets the nearest build file at or above `dir` names, with that file.
    fn build_file_targets_of_dir(&mut self, dir: &Path) -> Option<(Found, PathBuf)> {
        let dir = dir.to_path_buf();
        if let Some(found) = self.build_of_dir.get(&dir) {
            return found.clone();
        }
        let mut result = None;
        'dirs: for d in self.ancestors(&dir) {
            // A CMakeLists.txt above the file's folder builds it only if it names the
            // way down (`add_subdirectory(src)`, `src/…` in a source list or a glob).
            let cmake = d.join("CMakeLists.txt");
            let builds_here = d == dir || {
                let rel = dir.strip_prefix(&d).ok().map(|r| {
                    r.components()
                        .map(|c| c.as_os_str().to_string_lossy().to_string())
                        .collect::<Vec<_>>()
                        .join("/")
                });
                match (rel, std::fs::read_to_string(&cmake)) {
                    (Some(rel), Ok(text)) => build_files::cmake_mentions(&text, &rel),
                    _ => false,
                }
            };
            let mut candidates: Vec<(PathBuf, Reader)> = Vec::new();
            if builds_here {
                candidates.push((cmake, build_files::cmake_targets));
            }
            let cmake_dir = d.join("cmake");
            if let Some(read) = builds_here
                .then(|| std::fs::read_dir(&cmake_dir).ok())
                .flatten()
            {
                let mut extra: Vec<PathBuf> = read
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "cmake"))
                    .collect();
                extra.sort();
                candidates.extend(
                    extra
                        .into_iter()
                        .map(|p| (p, build_files::cmake_targets as Reader)),
                );
            }
            candidates.push((d.join("setup.py"), build_files::python_build_targets));
            candidates.push((d.join("pyproject.toml"), build_files::python_build_targets));
            for name in MAKEFILE_NAMES {
                candidates.push((d.join(name), build_files::makefile_targets));
            }
            candidates.push((d.join("xmake.lua"), build_files::xmake_targets));
            candidates.push((d.join("build.rs"), build_files::rust_build_targets));
            // A Visual Studio project compiles the sources below its folder.
            if let Ok(read) = std::fs::read_dir(&d) {
                let mut projects: Vec<PathBuf> = read
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "vcxproj"))
                    .collect();
                projects.sort();
                candidates.extend(
                    projects
                        .into_iter()
                        .map(|p| (p, build_files::vcxproj_targets as Reader)),
                );
            }
            // A Python script that runs nvcc itself (`build.py`, `compile.py`).
            if let Ok(read) = std::fs::read_dir(&d) {
                let mut scripts: Vec<PathBuf> = read
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.extension().is_some_and(|e| e == "py")
                            && p.file_name().is_some_and(|n| n != "setup.py")
                    })
                    .collect();
                scripts.sort();
                candidates.extend(
                    scripts
                        .into_iter()
                        .map(|p| (p, build_files::python_nvcc_words as Reader)),
                );
            }
            // A shell script that runs nvcc (`build.sh`, `run.sh`).
            candidates.extend(
                shell_scripts(&d)
                    .into_iter()
                    .map(|p| (p, build_files::shell_nvcc_targets as Reader)),
            );
            for (path, read) in candidates {
                let Some((text, segments)) = read_build_file(&path) else {
                    continue;
                };
                if let Some(mut found) = read(&text) {
                    // The toolkit's default where the project sets no code generation,
                    // unless a `Directory.Build.props` above may set it for every project.
                    let defaulted = path.extension().is_some_and(|e| e == "vcxproj")
                        && !text.contains("<CodeGeneration>");
                    if defaulted
                        && self
                            .ancestors(&d)
                            .iter()
                            .any(|a| a.join("Directory.Build.props").is_file())
                    {
                        continue;
                    }
                    if is_makefile_name(&path) {
                        self.makefile_of_dir.insert(dir.clone(), path.clone());
                    }
                    // A line of an included Makefile names that file.
                    let (path, line) = origin_of(&path, &segments, found.line);
                    found.line = line;
                    result = Some((found, path));
                    break 'dirs;
                }
            }
            // A torch extension's build reads TORCH_CUDA_ARCH_LIST from the environment.
            if d.join("setup.py").is_file() {
                if let Ok(list) = std::env::var("TORCH_CUDA_ARCH_LIST") {
                    let targets = build_files::torch_arch_list(&list);
                    if !targets.is_empty() {
                        result = Some((
                            Found {
                                targets,
                                line: 0,
                                note: None,
                                conditional: Vec::new(),
                            },
                            PathBuf::from("$TORCH_CUDA_ARCH_LIST"),
                        ));
                        break;
                    }
                }
            }
        }
        self.build_of_dir.insert(dir, result.clone());
        result
    }

    /// What the build says about `file`: its targets (the compile database's entries,
    /// else the nearest build file), the macros each compile defines, and its include
    /// folders (`.kernaut.toml`'s `include_dirs`, then the compile command's `-I` and
    /// `-isystem`).
    pub fn file_build(&mut self, file: &Path) -> FileBuild {
        let mut build = self.file_build_own(file);
        if build.targets.is_none() {
            build.targets = self.includer_targets(file, 0);
        }
        if build.targets.is_none() {
            build.targets = self.listing_vcxproj_targets(file);
        }
        build
    }

    /// The targets of a Visual Studio project in another folder of the project that
    /// lists the file (`win/App/App.vcxproj` with `<CudaCompile
    /// Include="..\..\src\k.cu" />`): the projects within four folders of the
    /// project's top (its `.git` folder, the loader's root or `check`'s widest folder),
    /// at most 20,000 entries looked at.
    fn listing_vcxproj_targets(&mut self, file: &Path) -> Option<TargetSet> {
        let dir = folder_of(file);
        let ancestors = self.ancestors(&dir);
        let top = ancestors.last()?.clone();
        // Without a `.git`, root or `check` folder the walk would start at `/`.
        top.parent()?;
        let projects = match self.vcxprojs.get(&top) {
            Some(p) => p.clone(),
            None => {
                let p = Arc::new(vcxprojs_below(&top));
                self.vcxprojs.insert(top.clone(), p.clone());
                p
            }
        };
        let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        for (path, text) in projects.iter() {
            let folder = folder_of(path);
            if ancestors.contains(&folder) {
                continue;
            }
            let Some(rel) = relative_path(&folder, &file) else {
                continue;
            };
            if build_files::vcxproj_builds(text, &rel) != Some(true) {
                continue;
            }
            let found = build_files::vcxproj_targets(text)?;
            let origin = origin_text(&found, path);
            return TargetSet::named(found.targets, origin);
        }
        None
    }

    /// [`ProjectLoader::file_build`] from the file's own build alone.
    fn file_build_own(&mut self, file: &Path) -> FileBuild {
        let mut build = FileBuild::default();
        if let Ok(Some((folder, config))) = self.dir_config(file) {
            for d in &config.include_dirs {
                let p = Path::new(d);
                let abs = if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    folder.join(p)
                };
                build
                    .include_dirs
                    .push(normalize_path(&abs.display().to_string()));
            }
        }
        let from_db = self.entries(file).map(|(db, entries)| {
            let per_entry: Vec<(Vec<Target>, CompileFlags)> = entries
                .iter()
                .map(|e| {
                    let (args, dropped) =
                        kernaut_compiler::flags::translate(&e.arguments, &e.directory);
                    (
                        build_files::targets_in_command(&e.arguments),
                        CompileFlags {
                            args,
                            dropped,
                            origin: kernaut_compiler::FlagsOrigin::CompileCommands(db.clone()),
                        },
                    )
                })
                .collect();
            (db, per_entry)
        });
        let mut db_targets: Vec<Target> = Vec::new();
        if let Some((db, per_entry)) = &from_db {
            // Macros every compile defines apply to every target; the others to the
            // targets of their own compile.
            let defines: Vec<Vec<(String, String)>> =
                per_entry.iter().map(|(_, f)| defines_of(&f.args)).collect();
            let common: Vec<(String, String)> = defines
                .first()
                .map(|first| {
                    first
                        .iter()
                        .filter(|d| defines.iter().all(|o| o.contains(d)))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            for ((targets, flags), own) in per_entry.iter().zip(&defines) {
                let extra: Vec<(String, String)> = own
                    .iter()
                    .filter(|d| !common.contains(d))
                    .cloned()
                    .collect();
                for t in targets {
                    if !db_targets.contains(t) {
                        db_targets.push(*t);
                    }
                    if !extra.is_empty() {
                        build.target_defines.push((*t, extra.clone()));
                    }
                }
                for dir in include_dirs_of(&flags.args) {
                    if !build.include_dirs.contains(&dir) {
                        build.include_dirs.push(dir);
                    }
                }
            }
            build.defines = common;
            if !db_targets.is_empty() {
                build.targets = TargetSet::named(db_targets.clone(), db.display().to_string());
            }
        }
        let from_file = self.build_file_targets(file);
        match (&build.targets, from_file) {
            (None, Some((found, path))) => {
                let origin = origin_text(&found, &path);
                let not_built = if is_makefile_name(&path) {
                    self.not_built(file, &path)
                } else if path.file_name().is_some_and(|n| n == "CMakeLists.txt") {
                    self.not_in_cmake(file)
                } else if path.extension().is_some_and(|e| e == "sh") {
                    self.not_in_shell_scripts(file)
                } else {
                    self.not_in_visual_studio_projects(file)
                };
                build.targets = TargetSet::named(found.targets, origin).map(|set| TargetSet {
                    not_built,
                    ..set.with_conditional(found.conditional)
                });
            }
            (Some(set), Some((found, path))) => {
                let mut a = set.targets.clone();
                let mut b = found.targets.clone();
                a.sort();
                b.sort();
                if a != b {
                    self.note(format!(
                        "targets differ: {} says {}, {}:{} says {}; kernaut uses {}",
                        set.origin,
                        set.names(),
                        path.display(),
                        found.line,
                        found
                            .targets
                            .iter()
                            .map(Target::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        set.origin
                    ));
                }
            }
            (None, None) => {
                // A Makefile that gives other files their targets and does not name
                // this one: the file is not compiled.
                // The nearest Makefile at or above the file's folder.
                let makefile = self
                    .makefile_of_dir
                    .get(&folder_of(file))
                    .cloned()
                    .or_else(|| {
                        self.ancestors(&folder_of(file)).into_iter().find_map(|d| {
                            MAKEFILE_NAMES
                                .iter()
                                .map(|n| d.join(n))
                                .find(|p| p.is_file())
                        })
                    });
                let why = makefile
                    .and_then(|m| self.not_built(file, &m))
                    .or_else(|| self.not_in_cmake(file))
                    .or_else(|| self.not_in_visual_studio_projects(file))
                    .or_else(|| self.not_in_shell_scripts(file));
                if let Some(why) = why {
                    build.targets = Some(TargetSet {
                        not_built: Some(why),
                        ..TargetSet::assumed()
                    });
                }
            }
            _ => {}
        }
        if build.include_dirs.is_empty() {
            build.include_dirs = self.cmake_include_dirs(file);
        }
        if build.include_dirs.is_empty() {
            build.include_dirs = self.makefile_include_dirs(file);
        }
        build
    }

    /// The include folders (`-I`) of the nearest Makefile at or above `file`'s folder
    /// within the project, resolved from the Makefile's folder (make runs there); those
    /// that exist. Used where nothing else names any.
    fn makefile_include_dirs(&mut self, file: &Path) -> Vec<String> {
        let folder = folder_of(file);
        if let Some(known) = self.make_includes_of_dir.get(&folder) {
            return known.clone();
        }
        let found = self.makefile_include_dirs_uncached(&folder);
        self.make_includes_of_dir.insert(folder, found.clone());
        found
    }

    /// [`ProjectLoader::makefile_include_dirs`] of a folder, worked out.
    fn makefile_include_dirs_uncached(&mut self, folder: &Path) -> Vec<String> {
        for d in self.ancestors(folder) {
            for name in MAKEFILE_NAMES {
                let path = d.join(name);
                let Some((text, _)) = read_build_file(&path) else {
                    continue;
                };
                return build_files::makefile_include_dirs(&text)
                    .into_iter()
                    .map(|i| {
                        let p = Path::new(&i);
                        let abs = if p.is_absolute() {
                            p.to_path_buf()
                        } else {
                            d.join(p)
                        };
                        normalize_path(&abs.display().to_string())
                    })
                    .filter(|p| Path::new(p).is_dir() && !is_system_dir(p))
                    .collect();
            }
        }
        Vec::new()
    }

    /// The targets of the first source file of the project (by path) that includes
    /// `file` and whose own build names targets (or, for a header, its includers', a
    /// few levels up): a header, or a `.cu` kept in an
    /// `include/` folder that no build file sits above, is compiled as part of it. The
    /// project is the loader's root, else the folder holding `.git` above `file`, else
    /// the widest folder given to [`ProjectLoader::add_scan_roots`] that holds it; without
    /// any, none. Its files' includes are read once.
    fn includer_targets(&mut self, file: &Path, depth: usize) -> Option<TargetSet> {
        if depth > 4 {
            return None;
        }
        let memo_key = normalize_path(
            &folder_of(file)
                .join(file.file_name()?)
                .display()
                .to_string(),
        );
        if let Some(known) = self.includer_targets_of.get(&memo_key) {
            return known.clone();
        }
        self.includer_targets_of.insert(memo_key.clone(), None);
        let skipped = self.scans_skipped;
        let found = self.includer_targets_uncached(file, depth);
        if self.scans_skipped == skipped {
            self.includer_targets_of.insert(memo_key, found.clone());
        } else {
            // Asked again once the project's includes are read.
            self.includer_targets_of.remove(&memo_key);
        }
        found
    }

    /// [`ProjectLoader::includer_targets`], worked out.
    fn includer_targets_uncached(&mut self, file: &Path, depth: usize) -> Option<TargetSet> {
        let dir = folder_of(file);
        let name = file.file_name()?.to_string_lossy().to_string();
        let key = normalize_path(&dir.join(&name).display().to_string());
        // The project: the loader's root or the folder holding `.git`; then the widest
        // folder `check` was given that holds the file (a `.gitignore`d corner of an
        // enclosing repository is read only there).
        let mut tops: Vec<PathBuf> = Vec::new();
        if let Some(top) = self.ancestors(&dir).pop() {
            if Some(top.as_path()) == self.root.as_deref() || top.join(".git").exists() {
                tops.push(top);
            }
        }
        if let Some(r) = self
            .scan_roots
            .iter()
            .filter(|r| dir.starts_with(r))
            .min_by_key(|r| r.components().count())
        {
            if !tops.contains(r) {
                tops.push(r.clone());
            }
        }
        for top in tops {
            let includers = match self.includers_of_root.get(&top) {
                Some(i) => i.clone(),
                None if self.defer_scans => {
                    self.scans_skipped += 1;
                    if self.pending_scans.insert(top.clone()) {
                        self.wanted_scans.push(top);
                    }
                    continue;
                }
                None => {
                    let i = Arc::new(scan_includes(&top));
                    self.includers_of_root.insert(top.clone(), i.clone());
                    i
                }
            };
            for (includer, written) in includers.get(&name).into_iter().flatten() {
                if normalize_path(&includer.display().to_string()) == key {
                    continue;
                }
                let build = self.file_build_own(includer);
                // An includer without targets of its own (a header including the file)
                // takes those of its own includers.
                let Some(mut targets) = build
                    .targets
                    .clone()
                    .or_else(|| self.includer_targets(includer, depth + 1))
                else {
                    continue;
                };
                // Resolved next to the includer or in its include folders; where those
                // are not known (a header's build names none), a path ending in what the
                // include writes (`util/reduction/Reduction.h`).
                let beside =
                    kernaut_ide::includes::include_path(&includer.display().to_string(), written);
                let suffix = format!("/{}", written.trim_start_matches("./"));
                let mut found = std::iter::once(beside)
                    .chain(build.include_dirs.iter().map(|d| {
                        normalize_path(&format!("{}/{}", d.trim_end_matches('/'), written))
                    }))
                    .chain(
                        (!written.contains("..") && key.ends_with(&suffix)).then(|| key.clone()),
                    );
                if found.any(|p| p == key) {
                    targets.origin = format!(
                        "{}, for {}, which includes it",
                        targets.origin,
                        includer.display()
                    );
                    return Some(targets);
                }
            }
        }
        None
    }

    /// The flags to compile `file` with: its compile database entry through the
    /// compiler crate's allow-list (the one parser of compile commands), else the
    /// defaults; `arch` is added when the entry names none.
    pub fn compile_flags(&mut self, file: &Path, arch: &str) -> CompileFlags {
        let db = self.compile_commands(file);
        kernaut_compiler::flags_for(file, db.as_deref(), arch)
            .unwrap_or_else(|_| CompileFlags::default_for(arch))
    }
}

/// `-DNAME=value` / `-DNAME` of translated flags.
fn defines_of(args: &[String]) -> Vec<(String, String)> {
    args.iter()
        .filter_map(|a| a.strip_prefix("-D"))
        .map(|d| match d.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (d.to_string(), "1".to_string()),
        })
        .collect()
}

/// Whether an include folder belongs to the toolkit or the system (`/usr/include`,
/// `/usr/local/cuda/include`, a Python environment's NVIDIA wheels): never read.
fn is_system_dir(d: &str) -> bool {
    d.starts_with("/usr/")
        || d.starts_with("/opt/")
        || d.contains("site-packages")
        || d.contains("/cuda/include")
        || d.contains("/cuda-")
}

/// `-I<dir>` and `-isystem <dir>` of translated flags, normalised, without the toolkit's
/// and the system's.
fn include_dirs_of(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if let Some(d) = args[i].strip_prefix("-I") {
            out.push(normalize_path(d));
        } else if args[i] == "-isystem" {
            if let Some(d) = args.get(i + 1) {
                out.push(normalize_path(d));
                i += 1;
            }
        }
        i += 1;
    }
    out.retain(|d| !is_system_dir(d));
    out
}

/// The names a Makefile goes by (automake's `Makefile.am` too), in the order looked for.
/// A `Makefile.in` (autoconf's template) is read where no Makefile was generated yet;
/// what `configure` substitutes (`@NVCCFLAGS@`) names no target.
const MAKEFILE_NAMES: [&str; 5] = [
    "Makefile",
    "makefile",
    "GNUmakefile",
    "Makefile.am",
    "Makefile.in",
];

/// Whether `path` is named as a Makefile.
fn is_makefile_name(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| MAKEFILE_NAMES.iter().any(|m| n == *m))
}

/// A build file's text; for a Makefile, the files it includes (one level, found next to
/// it) come first, as make reads their variables before the rules that use them. The
/// parts in order, with their line counts.
fn read_build_file(path: &Path) -> Option<(String, Segments)> {
    let text = source_text::decode(std::fs::read(path).ok()?).text;
    let mut out = String::new();
    let mut segments = Vec::new();
    let makefile = is_makefile_name(path);
    let text = if makefile {
        build_files::makefile_untab_continuations(&text)
    } else {
        text
    };
    if makefile {
        let dir = path.parent().unwrap_or(Path::new("."));
        for inc in build_files::makefile_includes(&text) {
            let p = dir.join(&inc);
            if let Ok(bytes) = std::fs::read(&p) {
                let t = source_text::decode(bytes).text;
                let mut t = build_files::makefile_untab_continuations(&t);
                if !t.ends_with('\n') {
                    t.push('\n');
                }
                segments.push((p, t.lines().count()));
                out.push_str(&t);
            }
        }
    }
    segments.push((path.to_path_buf(), text.lines().count()));
    out.push_str(&text);
    Some((out, segments))
}

/// The file and 1-based line of line `line` of a text made of `segments` (`path`, the
/// last part, when the line is past them all or 0).
fn origin_of(path: &Path, segments: &[(PathBuf, usize)], line: usize) -> (PathBuf, usize) {
    let mut start = 0;
    for (p, count) in segments {
        if line > start && line <= start + count {
            return (p.clone(), line - start);
        }
        start += count;
    }
    (path.to_path_buf(), line)
}

/// The folder of `file`, absolute where it can be made so.
/// Where targets `found` in the build file at `path` come from, as shown to users:
/// `path:line`, and the reader's note after a `;`.
fn origin_text(found: &Found, path: &Path) -> String {
    let mut origin = if found.line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{}", path.display(), found.line)
    };
    if let Some(note) = &found.note {
        origin.push_str(&format!("; {note}"));
    }
    origin
}

/// A build file's path and text.
type ProjectText = (PathBuf, Arc<str>);

/// The Visual Studio projects within four folders below `top`, with their text (at
/// most 20,000 entries looked at; hidden folders skipped).
fn vcxprojs_below(top: &Path) -> Vec<ProjectText> {
    let mut out = Vec::new();
    let mut stack = vec![(top.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((d, depth)) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<std::fs::DirEntry> = read.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            seen += 1;
            if seen > 20_000 {
                return out;
            }
            let name = e.file_name().to_string_lossy().to_string();
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if depth < 4 && !name.starts_with('.') && name != "node_modules" {
                    stack.push((path, depth + 1));
                }
            } else if name.ends_with(".vcxproj") {
                if let Some((text, _)) = read_build_file(&path) {
                    let path = path.canonicalize().unwrap_or(path);
                    out.push((path, Arc::from(text)));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `to` written relative to the folder `from` (`../../src/k.cu`), both absolute.
fn relative_path(from: &Path, to: &Path) -> Option<String> {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().to_string()),
    );
    Some(parts.join("/"))
}

fn folder_of(file: &Path) -> PathBuf {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.canonicalize().unwrap_or(dir)
}

/// A file whose includes are read: its absolute path, its text and its include folders.
pub type IncludeRoot = (String, Arc<str>, Vec<String>);

/// Headers read from disk, and notes about those that could not be read.
#[derive(Debug, Default)]
pub struct Includes {
    /// (absolute path, text) of each header read, in the order found.
    pub headers: Vec<(String, String)>,
    /// One line per include that named an unreadable (binary) file.
    pub notes: Vec<String>,
}

/// The quoted header at `key` (a normalised absolute path) that `root` includes, with its
/// size on disk: `None` where no file is there (the next include folder may have it) or
/// where it is binary (said in `notes`). Shared by [`read_includes`] and the streamed
/// `check`'s plan.
pub(crate) fn read_header(
    key: &str,
    root: &str,
    notes: &mut Vec<String>,
) -> Option<(String, usize)> {
    let bytes = std::fs::read(key).ok()?;
    if source_text::is_binary(&bytes) {
        notes.push(format!(
            "{key}: included from {root}, a binary file, skipped"
        ));
        return None;
    }
    let size = bytes.len();
    Some((source_text::decode(bytes).text, size))
}

/// The quoted includes of `roots` (absolute path, text, include folders), transitively,
/// that `known` (normalised absolute paths → texts) does not hold, read from disk: next to
/// the including file first, then in each include folder.
pub fn read_includes(roots: &[IncludeRoot], known: &HashMap<String, Arc<str>>) -> Includes {
    let mut read: HashMap<String, Option<Arc<str>>> = HashMap::new();
    let mut loaded = Includes::default();
    for (root, text, dirs) in roots {
        let root_key = normalize_path(root);
        let mut text_of = |p: &str| -> Option<Arc<str>> {
            let key = normalize_path(p);
            if key == root_key {
                return Some(text.clone());
            }
            if let Some(t) = known.get(&key) {
                return Some(t.clone());
            }
            if let Some(t) = read.get(&key) {
                return t.clone();
            }
            let got = read_header(&key, root, &mut loaded.notes).map(|(text, _)| {
                let text: Arc<str> = Arc::from(text);
                loaded.headers.push((key.clone(), text.to_string()));
                text
            });
            read.insert(key, got.clone());
            got
        };
        let found = include_closure_in(root, dirs, &mut text_of);
        // An include found next to no file and in no include folder is said once.
        for (file, text) in std::iter::once((root.clone(), text.clone())).chain(found) {
            for inc in kernaut_ide::syntax::quoted_includes(&text) {
                if inc.angled {
                    // The toolkit's and the system's headers are never read.
                    continue;
                }
                let mut candidates =
                    std::iter::once(kernaut_ide::includes::include_path(&file, &inc.name)).chain(
                        dirs.iter().map(|d| {
                            normalize_path(&format!("{}/{}", d.trim_end_matches('/'), inc.name))
                        }),
                    );
                let there = candidates
                    .any(|c| known.contains_key(&c) || read.get(&c).is_some_and(Option::is_some));
                let note = format!("{}: included from {file}, not found", inc.name);
                if !there && !loaded.notes.contains(&note) {
                    loaded.notes.push(note);
                }
            }
        }
    }
    loaded
}

/// The quoted includes of the source and header files under `root` (as `ignore` walks
/// it, by name: `.gitignore`d and hidden files left out), by the included file's name;
/// at most [`INCLUDER_SCAN_FILES`] source files among the first [`INCLUDER_SCAN_ENTRIES`]
/// entries, so that a huge folder (an editor opened on `/tmp` or a home folder) costs a
/// bounded walk.
fn scan_includes(root: &Path) -> Includers {
    let mut paths: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .take(INCLUDER_SCAN_ENTRIES)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|p| {
            p.extension().is_some_and(|x| {
                matches!(
                    x.to_string_lossy().as_ref(),
                    "cu" | "cuh" | "cpp" | "cc" | "cxx" | "c" | "h" | "hpp" | "hh" | "inl"
                )
            })
        })
        .take(INCLUDER_SCAN_FILES)
        .collect();
    paths.sort();
    let mut out: Includers = HashMap::new();
    for p in paths {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for inc in kernaut_ide::syntax::quoted_includes(&text) {
            if inc.angled {
                continue;
            }
            let name = inc.name.rsplit('/').next().unwrap_or(&inc.name).to_string();
            out.entry(name)
                .or_default()
                .push((p.clone(), inc.name.clone()));
        }
    }
    out
}

/// The most entries [`included_below`] looks at.
const INCLUDER_WALK_LIMIT: usize = 20_000;

/// Whether a source or header below `root` (`.gitignore` honoured, at most
/// [`INCLUDER_WALK_LIMIT`] entries; `true` past it, as nothing can be said) has an
/// `#include` line that names `name`.
/// Build files other than CMake's that may compile a source of their folder or below.
/// The shell scripts of folder `d` (`*.sh`), sorted.
fn shell_scripts(d: &Path) -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(d)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sh") && p.is_file())
        .collect();
    scripts.sort();
    scripts
}

const OTHER_BUILD_FILES: [&str; 11] = [
    "setup.py",
    "pyproject.toml",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "build.rs",
    "meson.build",
    "xmake.lua",
    "BUILD",
    "BUILD.bazel",
    "SConstruct",
];

/// Whether a CMake file below `root` (a `CMakeLists.txt` of a folder the project adds, a
/// `.cmake` file it includes) names `name` or may add sources no text spells out
/// (`file(GLOB`, `aux_source_directory`); also where there are too many files to read.
fn cmake_files_below_name(root: &Path, name: &str) -> bool {
    let mut seen = 0usize;
    for entry in ignore::WalkBuilder::new(root).build().flatten() {
        seen += 1;
        if seen > INCLUDER_WALK_LIMIT {
            return true;
        }
        let path = entry.path();
        let cmake = path.file_name().is_some_and(|n| n == "CMakeLists.txt")
            || path.extension().is_some_and(|e| e == "cmake");
        if !cmake {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if crate::cmake::may_name_source(&text, name) {
            return true;
        }
    }
    false
}

fn included_below(root: &Path, name: &str) -> bool {
    includers_below(root, name).is_none_or(|found| !found.is_empty())
}

/// The sources and headers below `root` that `#include` a file called `name`; `None`
/// where the walk meets more files than it reads.
fn includers_below(root: &Path, name: &str) -> Option<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut seen = 0usize;
    for entry in ignore::WalkBuilder::new(root).build().flatten() {
        seen += 1;
        if seen > INCLUDER_WALK_LIMIT {
            return None;
        }
        let path = entry.path();
        let source = path.extension().is_some_and(|e| {
            [
                "cu", "cuh", "h", "hpp", "hh", "cpp", "cc", "cxx", "c", "inl",
            ]
            .iter()
            .any(|x| e == *x)
        });
        if !source || path.file_name().is_some_and(|n| n == name) {
            continue;
        }
        let Ok(text) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text);
        if text.contains(name)
            && text.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with('#') && l.contains("include") && l.contains(name)
            })
        {
            found.push(path.to_path_buf());
        }
    }
    Some(found)
}
