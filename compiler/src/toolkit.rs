//! Finding NVIDIA's toolkit: the user's setting, `CUDA_HOME`/`CUDA_PATH`, `PATH`, or
//! a Python environment with NVIDIA's nvcc wheel.
//!
//! Only the user's own settings and environment are consulted, never a file of the
//! workspace: opening a cloned repository must not choose which program runs.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::process::{self, RunError};

/// Where to look for the toolkit. Every field comes from the user (editor settings,
/// `initializationOptions`, user-level config), never from the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolkitConfig {
    /// `kernaut.nvcc`: an `nvcc` executable, or a toolkit folder (with `bin/nvcc`).
    /// When set, nothing else is tried: a wrong setting is reported, not papered over.
    pub nvcc: Option<PathBuf>,
    /// Look at `CUDA_HOME` and `CUDA_PATH`.
    pub use_cuda_home: bool,
    /// Look for `nvcc` on `PATH`.
    pub use_path: bool,
    /// Look for NVIDIA's wheels (`nvidia-cuda-nvcc`) in a Python environment.
    pub use_python: bool,
    /// The Python interpreter to ask for its `sys.path`. `None`: `$VIRTUAL_ENV`'s
    /// and `$CONDA_PREFIX`'s site-packages are scanned, then `python3` on `PATH`
    /// is asked.
    pub python: Option<PathBuf>,
}

impl Default for ToolkitConfig {
    fn default() -> Self {
        ToolkitConfig {
            nvcc: None,
            use_cuda_home: true,
            use_path: true,
            use_python: true,
            python: None,
        }
    }
}

/// The environment discovery reads; [`Environment::from_process`] takes the real one,
/// tests build their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    /// `CUDA_HOME`.
    pub cuda_home: Option<OsString>,
    /// `CUDA_PATH`.
    pub cuda_path: Option<OsString>,
    /// `PATH`.
    pub path: Option<OsString>,
    /// `VIRTUAL_ENV`.
    pub virtual_env: Option<OsString>,
    /// `CONDA_PREFIX`.
    pub conda_prefix: Option<OsString>,
}

impl Environment {
    /// The environment of this process.
    pub fn from_process() -> Environment {
        Environment {
            cuda_home: std::env::var_os("CUDA_HOME"),
            cuda_path: std::env::var_os("CUDA_PATH"),
            path: std::env::var_os("PATH"),
            virtual_env: std::env::var_os("VIRTUAL_ENV"),
            conda_prefix: std::env::var_os("CONDA_PREFIX"),
        }
    }
}

/// Where the toolkit came from, for the "which toolkit" line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolkitSource {
    /// The `kernaut.nvcc` setting.
    Config,
    /// An environment variable (`CUDA_HOME` or `CUDA_PATH`).
    EnvVar(String),
    /// `PATH`.
    Path,
    /// A Python environment's `site-packages` (the folder is given).
    PythonWheel(PathBuf),
}

impl fmt::Display for ToolkitSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolkitSource::Config => f.write_str("the kernaut.nvcc setting"),
            ToolkitSource::EnvVar(var) => write!(f, "${var}"),
            ToolkitSource::Path => f.write_str("PATH"),
            ToolkitSource::PythonWheel(dir) => {
                write!(f, "NVIDIA's Python wheel in {}", dir.display())
            }
        }
    }
}

/// A toolkit version from `--version` (`Cuda compilation tools, release 13.5, V13.5.37`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolkitVersion {
    /// `13.5`.
    pub release: String,
    /// `13.5.37`; equal to `release` when the build number was not printed.
    pub full: String,
    /// The whole `--version` text.
    pub text: String,
}

impl ToolkitVersion {
    /// Parses `nvcc --version` / `ptxas --version` output.
    pub fn parse(text: &str) -> Option<ToolkitVersion> {
        let line = text.lines().find(|l| l.contains("release "))?;
        let (_, after) = line.split_once("release ")?;
        let release = after
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()?
            .to_string();
        let full = after
            .split_once(", V")
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| release.clone());
        Some(ToolkitVersion {
            release,
            full,
            text: text.trim().to_string(),
        })
    }

    /// `(major, minor)` of the release.
    pub fn major_minor(&self) -> Option<(u32, u32)> {
        let (major, minor) = self.release.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    }
}

/// A usable toolkit: `nvcc` and whichever helpers sit beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolkit {
    /// The `nvcc` executable.
    pub nvcc: PathBuf,
    /// `ptxas` beside `nvcc`, if present.
    pub ptxas: Option<PathBuf>,
    /// `cuobjdump` (beside `nvcc`, else on `PATH`), for SASS facts.
    pub cuobjdump: Option<PathBuf>,
    /// `nvdisasm` (beside `nvcc`, else on `PATH`); `cuobjdump -sass` needs it.
    pub nvdisasm: Option<PathBuf>,
    /// Where it was found.
    pub source: ToolkitSource,
    /// `nvcc --version`.
    pub version: ToolkitVersion,
}

/// Why no toolkit could be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolkitError {
    /// Nothing was found; each place tried says what it held.
    #[error("no CUDA toolkit found (compiling is off); tried: {}", .tried.join("; "))]
    NotFound {
        /// One line per place looked at.
        tried: Vec<String>,
    },
    /// The `kernaut.nvcc` setting does not name a working nvcc.
    #[error("kernaut.nvcc = {}: {reason}", .path.display())]
    BadSetting {
        /// The setting.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

const EXE: &str = std::env::consts::EXE_SUFFIX;

fn exe(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}{EXE}"))
}

impl Toolkit {
    /// Finds a toolkit as `config` says, in the environment of this process. Tries,
    /// in order: the `nvcc` setting (alone, when set); `CUDA_HOME`, `CUDA_PATH`;
    /// `PATH`; a Python environment with NVIDIA's nvcc wheel. Runs `nvcc --version`
    /// on the first candidate found to make sure it works.
    pub fn discover(config: &ToolkitConfig) -> Result<Toolkit, ToolkitError> {
        Toolkit::discover_in(config, &Environment::from_process())
    }

    /// [`Toolkit::discover`] in a given environment.
    pub fn discover_in(config: &ToolkitConfig, env: &Environment) -> Result<Toolkit, ToolkitError> {
        if let Some(setting) = &config.nvcc {
            let nvcc = if setting.is_dir() {
                exe(&setting.join("bin"), "nvcc")
            } else {
                setting.clone()
            };
            if !nvcc.is_file() {
                return Err(ToolkitError::BadSetting {
                    path: setting.clone(),
                    reason: format!("{} is not a file", nvcc.display()),
                });
            }
            return Toolkit::from_nvcc(nvcc, ToolkitSource::Config, env).map_err(|reason| {
                ToolkitError::BadSetting {
                    path: setting.clone(),
                    reason,
                }
            });
        }

        let mut tried = vec!["kernaut.nvcc is not set".to_string()];
        let mut candidates: Vec<(PathBuf, ToolkitSource)> = Vec::new();
        if config.use_cuda_home {
            for (var, value) in [("CUDA_HOME", &env.cuda_home), ("CUDA_PATH", &env.cuda_path)] {
                match value {
                    Some(dir) if !dir.is_empty() => {
                        let nvcc = exe(&Path::new(dir).join("bin"), "nvcc");
                        if nvcc.is_file() {
                            candidates.push((nvcc, ToolkitSource::EnvVar(var.to_string())));
                        } else {
                            tried.push(format!("${var} has no {}", nvcc.display()));
                        }
                    }
                    _ => tried.push(format!("${var} is not set")),
                }
            }
        }
        if config.use_path {
            match find_on_path("nvcc", env) {
                Some(nvcc) => candidates.push((nvcc, ToolkitSource::Path)),
                None => tried.push("no nvcc on PATH".to_string()),
            }
        }
        if config.use_python {
            let (found, notes) = find_in_python(config, env);
            tried.extend(notes);
            candidates.extend(found);
        }
        for (nvcc, source) in candidates {
            match Toolkit::from_nvcc(nvcc.clone(), source.clone(), env) {
                Ok(toolkit) => return Ok(toolkit),
                Err(reason) => tried.push(format!("{} (from {source}): {reason}", nvcc.display())),
            }
        }
        Err(ToolkitError::NotFound { tried })
    }

    /// Builds a toolkit around a known `nvcc`, running `nvcc --version`.
    fn from_nvcc(
        nvcc: PathBuf,
        source: ToolkitSource,
        env: &Environment,
    ) -> Result<Toolkit, String> {
        let cancel: Arc<AtomicBool> = Arc::default();
        let text = process::version_text(&nvcc, &cancel)?;
        let version = ToolkitVersion::parse(&text)
            .ok_or_else(|| format!("`--version` printed no release: {}", text.trim()))?;
        let bin = nvcc.parent().map(Path::to_path_buf).unwrap_or_default();
        let beside = |name: &str| Some(exe(&bin, name)).filter(|p| p.is_file());
        let ptxas = beside("ptxas");
        let cuobjdump = beside("cuobjdump").or_else(|| find_on_path("cuobjdump", env));
        let nvdisasm = beside("nvdisasm").or_else(|| find_on_path("nvdisasm", env));
        Ok(Toolkit {
            nvcc,
            ptxas,
            cuobjdump,
            nvdisasm,
            source,
            version,
        })
    }

    /// `nvcc --version`, parsed.
    pub fn version(&self) -> &ToolkitVersion {
        &self.version
    }

    /// One line for logs and status bars:
    /// `nvcc 13.5 (V13.5.37) at /…/bin/nvcc, from PATH; SASS via cuobjdump`.
    pub fn describe(&self) -> String {
        let sass = match (&self.cuobjdump, &self.nvdisasm) {
            (Some(_), Some(_)) => "SASS via cuobjdump",
            (Some(_), None) => "no SASS (cuobjdump without nvdisasm)",
            _ => "no SASS (no cuobjdump)",
        };
        format!(
            "nvcc {} (V{}) at {}, from {}; {sass}",
            self.version.release,
            self.version.full,
            self.nvcc.display(),
            self.source
        )
    }

    /// Whether [`crate::CompileRequest::sass`] can be honoured.
    pub fn has_sass_tools(&self) -> bool {
        self.cuobjdump.is_some() && self.nvdisasm.is_some()
    }

    /// The folder holding `nvcc`.
    pub fn bin_dir(&self) -> &Path {
        self.nvcc.parent().unwrap_or(Path::new(""))
    }
}

fn find_on_path(name: &str, env: &Environment) -> Option<PathBuf> {
    let path = env.path.as_ref()?;
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| exe(&dir, name))
        .find(|p| p.is_file())
}

/// Looks in a `site-packages` folder for NVIDIA's wheels: `nvidia/cu13/bin/nvcc`
/// (`nvidia-cuda-nvcc`, CUDA 13) and `nvidia/cuda_nvcc/bin/nvcc`
/// (`nvidia-cuda-nvcc-cu12`). Returns the nvcc, or a note when only `ptxas` is there.
pub(crate) fn scan_site_packages(dir: &Path) -> Result<PathBuf, Option<String>> {
    let nvidia = dir.join("nvidia");
    let Ok(entries) = std::fs::read_dir(&nvidia) else {
        return Err(None);
    };
    let mut bins: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|b| b.is_dir())
        .collect();
    // A fixed order; the first folder with an nvcc wins.
    bins.sort();
    let mut ptxas_only = None;
    for bin in bins {
        let nvcc = exe(&bin, "nvcc");
        if nvcc.is_file() {
            return Ok(nvcc);
        }
        if exe(&bin, "ptxas").is_file() {
            ptxas_only = Some(bin);
        }
    }
    Err(ptxas_only.map(|bin| {
        format!(
            "{} has ptxas but no nvcc (the nvidia-cuda-nvcc-cu12 wheel ships ptxas alone; \
             `pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-runtime` brings nvcc)",
            bin.display()
        )
    }))
}

type Found = Vec<(PathBuf, ToolkitSource)>;

fn find_in_python(config: &ToolkitConfig, env: &Environment) -> (Found, Vec<String>) {
    let mut notes = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut interpreter = config.python.clone();
    if interpreter.is_none() {
        for prefix in [&env.virtual_env, &env.conda_prefix].into_iter().flatten() {
            dirs.extend(site_packages_under(Path::new(prefix)));
        }
    }
    if interpreter.is_none() && dirs.is_empty() {
        interpreter = find_on_path("python3", env).or_else(|| find_on_path("python", env));
    }
    if let Some(python) = &interpreter {
        match python_sys_path(python) {
            Ok(paths) => dirs.extend(paths),
            Err(e) => notes.push(format!("asking {} for sys.path: {e}", python.display())),
        }
    }
    if interpreter.is_none() && dirs.is_empty() {
        notes.push("no Python environment (no $VIRTUAL_ENV, $CONDA_PREFIX or python3)".into());
        return (Vec::new(), notes);
    }
    let mut found = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for dir in dirs {
        if !seen.insert(dir.clone()) {
            continue;
        }
        match scan_site_packages(&dir) {
            Ok(nvcc) => found.push((nvcc, ToolkitSource::PythonWheel(dir))),
            Err(Some(note)) => notes.push(note),
            Err(None) => {}
        }
    }
    if found.is_empty() {
        let who = interpreter
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the active Python environment".to_string());
        notes.push(format!("no nvidia-cuda-nvcc wheel for {who}"));
    }
    (found, notes)
}

/// `<prefix>/lib/python3.*/site-packages` and `<prefix>/Lib/site-packages`.
fn site_packages_under(prefix: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(prefix.join("lib")) {
        for e in entries.filter_map(Result::ok) {
            let sp = e.path().join("site-packages");
            if e.file_name().to_string_lossy().starts_with("python") && sp.is_dir() {
                out.push(sp);
            }
        }
    }
    let windows = prefix.join("Lib").join("site-packages");
    if windows.is_dir() {
        out.push(windows);
    }
    out.sort();
    out
}

fn python_sys_path(python: &Path) -> Result<Vec<PathBuf>, String> {
    let mut cmd = Command::new(python);
    // `-E`: no PYTHON* variables; the temporary folder as the working directory,
    // so nothing of the workspace is importable.
    cmd.args(["-E", "-c", "import sys\nfor p in sys.path:\n    print(p)"])
        .current_dir(std::env::temp_dir());
    let cancel: Arc<AtomicBool> = Arc::default();
    match process::run(cmd, Duration::from_secs(20), &cancel) {
        Ok(f) if f.status.success() => Ok(f
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect()),
        Ok(f) => Err(format!("exited with {}: {}", f.status, f.stderr.trim())),
        Err(RunError::Spawn(e)) => Err(e.to_string()),
        Err(RunError::TimedOut(t)) => Err(format!("no answer within {t:?}")),
        Err(RunError::Cancelled) => Err("cancelled".into()),
        Err(RunError::Wait(e)) => Err(e.to_string()),
    }
}
