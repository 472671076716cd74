//! One compilation: the buffer's text through `nvcc -fatbin -Xptxas -v`, then
//! optionally `cuobjdump -sass`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::flags::{CompileFlags, DroppedFlag};
use crate::messages::{parse_nvcc_messages, CompilerMessage, Severity};
use crate::process::{self, RunError};
use crate::resources::{
    parse_ptxas_resources, DeviceFunctionResources, KernelResources, ModuleResources,
};
use crate::sass::{parse_cuobjdump_sass, SassKernel};
use crate::{CancelFlag, Toolkit};

/// What to compile and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileRequest {
    /// The file's path on disk. Its folder is searched first for `#include "…"`, and
    /// messages about the main file carry this path. Nothing is written there.
    pub source_path: PathBuf,
    /// The text to compile (the editor's buffer, saved or not).
    pub text: String,
    /// The flags, from [`crate::flags_for`] or [`CompileFlags::default_for`].
    pub flags: CompileFlags,
    /// Also disassemble and report [`SassKernel`]s (needs `cuobjdump` and `nvdisasm`).
    pub sass: bool,
    /// The most one run of nvcc (and of cuobjdump) may take.
    pub timeout: Duration,
}

impl CompileRequest {
    /// A request with SASS off and a 60-second limit.
    pub fn new(
        source_path: impl Into<PathBuf>,
        text: impl Into<String>,
        flags: CompileFlags,
    ) -> Self {
        CompileRequest {
            source_path: source_path.into(),
            text: text.into(),
            flags,
            sass: false,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Everything one compilation found. A file that does not compile is not an error:
/// `success` is false and `messages` say why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileOutput {
    /// Per kernel, per template instantiation, per architecture.
    pub kernels: Vec<KernelResources>,
    /// Non-entry device functions ptxas reported on their own.
    pub device_functions: Vec<DeviceFunctionResources>,
    /// Module-wide `__device__` and `__constant__` usage, per architecture.
    pub modules: Vec<ModuleResources>,
    /// nvcc's errors and warnings (and notes kernaut adds, such as "SASS unavailable").
    pub messages: Vec<CompilerMessage>,
    /// SASS facts per kernel and architecture, when asked for and available.
    pub sass: Option<Vec<SassKernel>>,
    /// Whether nvcc exited with success.
    pub success: bool,
    /// The nvcc command line that ran (temporary paths included), for logs.
    pub command: Vec<String>,
    /// [`Toolkit::describe`] of the toolkit used: where the numbers came from.
    pub toolkit: String,
    /// Flags from the compile database that were not passed on.
    pub dropped_flags: Vec<DroppedFlag>,
    /// Whether this came from a [`crate::CompileCache`] rather than a fresh run.
    pub from_cache: bool,
    /// The headers the file included, outside the toolkit and the system folders
    /// (from nvcc's `-MD` dependency list). [`crate::CompileCache`] recompiles when
    /// one of them changes.
    pub includes: Vec<PathBuf>,
}

impl CompileOutput {
    /// The kernels of one architecture.
    pub fn kernels_for<'a>(
        &'a self,
        arch: &'a str,
    ) -> impl Iterator<Item = &'a KernelResources> + 'a {
        self.kernels.iter().filter(move |k| k.arch == arch)
    }

    /// The SASS facts of a kernel (by mangled name) on an architecture.
    pub fn sass_for(&self, mangled: &str, arch: &str) -> Option<&SassKernel> {
        self.sass
            .as_ref()?
            .iter()
            .find(|s| s.mangled == mangled && s.arch == arch)
    }

    /// Whether any message is an error.
    pub fn has_errors(&self) -> bool {
        self.messages.iter().any(|m| m.severity == Severity::Error)
    }
}

/// Why a compilation produced nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The cancel flag was set; the compiler was killed.
    #[error("compilation cancelled")]
    Cancelled,
    /// The compiler ran past the request's limit and was killed.
    #[error("nvcc ran past its limit of {0:?} and was stopped")]
    TimedOut(Duration),
    /// A program could not be started.
    #[error("cannot run {program}: {message}")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// Preparing the temporary folder failed.
    #[error("{what}: {message}")]
    Io {
        /// What was being done.
        what: String,
        /// The operating system's reason.
        message: String,
    },
}

impl Toolkit {
    /// Compiles `request` (no cache: see [`crate::CompileCache`]). The text goes to a
    /// temporary folder, with a `#line` directive naming `source_path`, and nvcc runs
    /// there: `nvcc -fatbin -Xptxas -v -x cu -I<source folder> <flags> <copy>`.
    /// (`-Xptxas -v` rather than `--resource-usage`, which prints nothing under `-rdc=true`.)
    /// Nothing is written into the workspace. When `cancel` is set, the compiler and
    /// everything it started are killed and [`CompileError::Cancelled`] returned.
    pub fn compile(
        &self,
        request: &CompileRequest,
        cancel: &CancelFlag,
    ) -> Result<CompileOutput, CompileError> {
        let tmp = TempDir::new()?;
        let file_name = request
            .source_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "input.cu".to_string());
        let copy = tmp.path.join(&file_name);
        let mut text = format!("#line 1 \"{}\"\n", escape_line_path(&request.source_path));
        // A byte-order mark would land after the `#line` directive, mid-file.
        text.push_str(
            request
                .text
                .strip_prefix('\u{feff}')
                .unwrap_or(&request.text),
        );
        std::fs::write(&copy, text).map_err(|e| io("writing the temporary copy", e))?;
        let fatbin = tmp.path.join("out.fatbin");
        let deps = tmp.path.join("deps.d");

        let mut args: Vec<String> = vec![
            "-fatbin".into(),
            "-Xptxas".into(),
            "-v".into(),
            "-x".into(),
            "cu".into(),
        ];
        if let Some(dir) = request
            .source_path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            args.push(format!("-I{}", dir.display()));
        }
        args.extend(request.flags.args.iter().cloned());
        args.push(copy.display().to_string());
        args.push("-o".into());
        args.push(fatbin.display().to_string());
        args.push("-MD".into());
        args.push("-MF".into());
        args.push(deps.display().to_string());

        let mut cmd = Command::new(&self.nvcc);
        cmd.args(&args)
            .current_dir(&tmp.path)
            .env("TMPDIR", &tmp.path)
            .env("TMP", &tmp.path)
            .env("TEMP", &tmp.path);
        let finished =
            process::run(cmd, request.timeout, cancel).map_err(|e| run_error(e, &self.nvcc))?;

        let all = format!("{}\n{}", finished.stdout, finished.stderr);
        let resources = parse_ptxas_resources(&all);
        let mut messages = parse_nvcc_messages(&finished.stderr);
        messages.extend(parse_nvcc_messages(&finished.stdout));
        for m in &mut messages {
            if m.file.as_deref() == Some(copy.as_path())
                || m.file.as_deref() == Some(Path::new(&file_name))
            {
                m.file = Some(request.source_path.clone());
            }
        }
        let success = finished.status.success();
        if !success && !messages.iter().any(|m| m.severity == Severity::Error) {
            messages.push(note(
                Severity::Error,
                format!(
                    "nvcc failed ({}): {}",
                    finished.status,
                    tail(&finished.stderr, 2000)
                ),
            ));
        }
        if success && request.flags.is_relocatable() {
            messages.push(note(
                Severity::Note,
                "with -rdc=true ptxas reports each function before device linking: \
                 registers and stack of calls into other files are not included"
                    .into(),
            ));
        }
        if success && resources.kernels.is_empty() && !request.flags.has_real_arch() {
            messages.push(note(
                Severity::Note,
                "no resource usage: the flags name only virtual architectures (compute_XX), so ptxas did not run".into(),
            ));
        }

        let sass = if request.sass && success && fatbin.is_file() {
            match self.disassemble(&fatbin, request.timeout, cancel) {
                Ok(kernels) => Some(kernels),
                Err(SassError::Cancelled) => return Err(CompileError::Cancelled),
                Err(SassError::Unavailable(why)) => {
                    messages.push(note(Severity::Note, format!("SASS unavailable: {why}")));
                    None
                }
            }
        } else {
            None
        };

        let mut command = vec![self.nvcc.display().to_string()];
        command.extend(args);
        Ok(CompileOutput {
            kernels: resources.kernels,
            device_functions: resources.device_functions,
            modules: resources.modules,
            messages,
            sass,
            success,
            command,
            toolkit: self.describe(),
            dropped_flags: request.flags.dropped.clone(),
            includes: std::fs::read_to_string(&deps)
                .map(|d| self.user_headers(&d, &copy, &request.source_path))
                .unwrap_or_default(),
            from_cache: false,
        })
    }

    /// `cuobjdump -sass` on a cubin, fatbin or object, with `nvdisasm`'s folder put
    /// first on its `PATH`.
    fn disassemble(
        &self,
        binary: &Path,
        timeout: Duration,
        cancel: &CancelFlag,
    ) -> Result<Vec<SassKernel>, SassError> {
        let (Some(cuobjdump), Some(nvdisasm)) = (&self.cuobjdump, &self.nvdisasm) else {
            return Err(SassError::Unavailable(if self.cuobjdump.is_none() {
                "no cuobjdump (pip install nvidia-cuda-cuobjdump, or a full toolkit)".into()
            } else {
                "no nvdisasm, which cuobjdump -sass needs (pip install nvidia-cuda-nvdisasm)".into()
            }));
        };
        let mut path = vec![nvdisasm.parent().map(Path::to_path_buf).unwrap_or_default()];
        if let Some(old) = std::env::var_os("PATH") {
            path.extend(std::env::split_paths(&old));
        }
        let mut cmd = Command::new(cuobjdump);
        cmd.arg("-sass").arg(binary);
        if let Ok(joined) = std::env::join_paths(path) {
            cmd.env("PATH", joined);
        }
        if let Some(dir) = binary.parent() {
            cmd.current_dir(dir);
        }
        match process::run(cmd, timeout, cancel) {
            Ok(f) if f.status.success() => Ok(parse_cuobjdump_sass(&f.stdout)),
            Ok(f) => Err(SassError::Unavailable(format!(
                "cuobjdump -sass exited with {}: {}",
                f.status,
                tail(&f.stderr, 500)
            ))),
            Err(RunError::Cancelled) => Err(SassError::Cancelled),
            Err(e) => Err(SassError::Unavailable(format!("cuobjdump -sass: {e:?}"))),
        }
    }
}

impl Toolkit {
    /// The headers of a make-style dependency list, less the file itself, the
    /// toolkit's headers and the system's.
    fn user_headers(&self, deps: &str, copy: &Path, source: &Path) -> Vec<PathBuf> {
        let toolkit_root = self.bin_dir().parent().unwrap_or(Path::new("/nonexistent"));
        let mut out: Vec<PathBuf> = parse_make_deps(deps)
            .into_iter()
            .filter(|p| p != copy && p != source)
            .filter(|p| !p.starts_with(toolkit_root) && p.is_absolute())
            .filter(|p| !(cfg!(unix) && p.starts_with("/usr/")))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// The prerequisites of a make rule (`out.fatbin : a.cu b.cuh`, lines continued
/// with a backslash), a backslash-space being a space in a name.
pub(crate) fn parse_make_deps(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let Some((_, prereqs)) = joined.split_once(": ") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = prereqs.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&' ') {
            word.push(' ');
            chars.next();
        } else if c.is_whitespace() {
            if !word.is_empty() {
                out.push(PathBuf::from(std::mem::take(&mut word)));
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        out.push(PathBuf::from(word));
    }
    out
}

enum SassError {
    Cancelled,
    Unavailable(String),
}

impl CompileFlags {
    /// Whether the flags ask for relocatable device code (`-rdc=true`).
    pub fn is_relocatable(&self) -> bool {
        self.args.iter().any(|a| a == "-rdc=true")
    }

    /// Whether some architecture is real (`sm_XX`), so that ptxas runs and reports
    /// resources. Flags without any architecture count as real (nvcc's default is).
    pub fn has_real_arch(&self) -> bool {
        !self.has_arch() || self.args.iter().any(|a| a.contains("sm_"))
    }
}

fn note(severity: Severity, message: String) -> CompilerMessage {
    CompilerMessage {
        file: None,
        line: None,
        column: None,
        severity,
        code: None,
        message,
        tool: "kernaut".to_string(),
    }
}

fn tail(s: &str, max: usize) -> &str {
    let s = s.trim();
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

fn io(what: &str, e: std::io::Error) -> CompileError {
    CompileError::Io {
        what: what.to_string(),
        message: e.to_string(),
    }
}

fn run_error(e: RunError, program: &Path) -> CompileError {
    match e {
        RunError::Cancelled => CompileError::Cancelled,
        RunError::TimedOut(t) => CompileError::TimedOut(t),
        RunError::Spawn(e) | RunError::Wait(e) => CompileError::Spawn {
            program: program.to_path_buf(),
            message: e.to_string(),
        },
    }
}

/// A path inside `#line "…"`: backslashes and quotes escaped.
fn escape_line_path(p: &Path) -> String {
    p.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// A private temporary folder, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir, CompileError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("kernaut-nvcc-{}-{n}-{nanos:x}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io("creating a temporary folder", e)),
            }
        }
        Err(CompileError::Io {
            what: "creating a temporary folder".into(),
            message: "every name tried was taken".into(),
        })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_dependencies_with_continuations_and_escaped_spaces() {
        let deps = "out.fatbin : k.cu \\\n    /usr/include/stdc-predef.h \\\n    /p/my\\ dir/tile.cuh \\\n    /p/src/k.cu\n";
        assert_eq!(
            parse_make_deps(deps),
            [
                PathBuf::from("k.cu"),
                PathBuf::from("/usr/include/stdc-predef.h"),
                PathBuf::from("/p/my dir/tile.cuh"),
                PathBuf::from("/p/src/k.cu"),
            ]
        );
        assert!(parse_make_deps("").is_empty());
    }

    #[test]
    fn line_directive_paths_are_escaped() {
        assert_eq!(
            escape_line_path(Path::new(r#"C:\src\"odd".cu"#)),
            r#"C:\\src\\\"odd\".cu"#
        );
    }
}
