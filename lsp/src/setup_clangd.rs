//! `kernaut-lsp setup-clangd`: a `.clangd` that lets clangd parse CUDA without a local
//! toolkit, so that the two servers can run side by side (kernaut for CUDA facts, clangd
//! for C++ navigation).
//!
//! Without it, clangd-19 on a `.cu` file says "cannot find CUDA installation", cannot
//! find `cuda_fp16.h`, and then reports `__global__`, `__half2`, `threadIdx` as unknown.
//! The fragment written here adds `-xcuda`, `--cuda-path` at NVIDIA's headers (the
//! `nvidia-cuda-*` Python wheels, found the way `kernaut-compiler` finds `nvcc`, or an
//! installed toolkit), `--cuda-gpu-arch` for the project's targets and `-nocudalib`
//! (clangd only parses; it needs no libdevice). The file is written only after the diff
//! is shown and the user agrees (`--yes`, or `y` at the prompt).

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};

/// The first line of the fragment kernaut writes, to find it again.
const MARKER: &str = "# kernaut-lsp setup-clangd:";

/// The arguments of `setup-clangd`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project folder where `.clangd` goes.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Write the file without asking.
    #[arg(long)]
    yes: bool,
    /// A CUDA toolkit folder, or NVIDIA's wheel folder (`.../site-packages/nvidia/cu13`),
    /// with `include/cuda_runtime.h`. Default: found as `kernaut-lsp` finds nvcc
    /// (`CUDA_HOME`, `PATH`, a Python environment with the `nvidia-cuda-*` wheels).
    #[arg(long)]
    cuda_path: Option<PathBuf>,
}

/// The GPU targets clangd should compile the project's device code for.
///
/// The targets the project loader finds for the folder's CUDA files (their
/// `.kernaut.toml`, else their build), the real ones, as clang spells them (`sm_90a`;
/// a family target as its base); `sm_90` when nothing names one.
pub fn targets_for(dir: &Path) -> Vec<String> {
    let mut loader = kernaut_project::ProjectLoader::new(Some(dir.to_path_buf()));
    let mut out: Vec<String> = Vec::new();
    let files = ignore::WalkBuilder::new(dir)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .take(64);
    for file in files {
        let from_config = loader
            .dir_config(&file)
            .ok()
            .flatten()
            .map(|(_, c)| c.targets)
            .filter(|t| !t.is_empty());
        let targets = from_config
            .or_else(|| loader.file_build(&file).targets.map(|t| t.targets))
            .unwrap_or_default();
        for t in targets.into_iter().filter(|t| !t.virtual_only) {
            let name = if t.variant == kernaut_ide::gpu::Variant::FamilySpecific {
                kernaut_ide::gpu::Target::new(t.major, t.minor).to_string()
            } else {
                t.to_string()
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    if out.is_empty() {
        out.push("sm_90".to_string());
    }
    out
}

/// The folder with `include/cuda_runtime.h` that clangd's `--cuda-path` should name.
fn find_cuda_path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let has_headers = |p: &Path| p.join("include").join("cuda_runtime.h").is_file();
    if let Some(p) = explicit {
        if has_headers(p) {
            return Ok(p.to_path_buf());
        }
        bail!(
            "{} has no include/cuda_runtime.h; --cuda-path takes a CUDA toolkit folder or NVIDIA's wheel folder (site-packages/nvidia/cu13)",
            p.display()
        );
    }
    let toolkit = kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig::default())
        .map_err(|e| {
            anyhow::anyhow!(
                "no CUDA headers found ({e}). Install NVIDIA's wheels in a Python environment \
                 (`pip install nvidia-cuda-runtime nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-cccl`) \
                 or a CUDA toolkit, or pass --cuda-path"
            )
        })?;
    let root = toolkit
        .bin_dir()
        .parent()
        .map(Path::to_path_buf)
        .context("the toolkit's bin folder has no parent")?;
    if !has_headers(&root) {
        bail!(
            "{} has nvcc but no include/cuda_runtime.h (install the nvidia-cuda-runtime wheel next to nvidia-cuda-nvcc), or pass --cuda-path",
            toolkit.describe()
        );
    }
    Ok(root)
}

/// The `.clangd` fragment for `cuda_path` and `archs`.
pub fn fragment(cuda_path: &Path, archs: &[String]) -> String {
    let mut out = format!(
        "{MARKER} clangd parses .cu/.cuh files as CUDA with NVIDIA's headers.\n\
         If:\n  PathMatch: .*\\.(cu|cuh)$\nCompileFlags:\n  Add:\n    - -xcuda\n    - --cuda-path={}\n",
        cuda_path.display()
    );
    for a in archs {
        out.push_str(&format!("    - --cuda-gpu-arch={a}\n"));
    }
    out.push_str("    - -nocudalib\n");
    out
}

/// `old` (the current `.clangd`, if any) with kernaut's fragment replaced or appended
/// as a new YAML document (clangd reads every `---`-separated fragment).
pub fn updated(old: Option<&str>, fragment: &str) -> String {
    let Some(old) = old.filter(|o| !o.trim().is_empty()) else {
        return fragment.to_string();
    };
    let docs: Vec<&str> = old.split("\n---\n").collect();
    let mut out: Vec<String> = Vec::new();
    let mut replaced = false;
    for d in docs {
        if d.trim_start().starts_with(MARKER) {
            if !replaced {
                out.push(fragment.trim_end().to_string());
                replaced = true;
            }
        } else {
            out.push(d.trim_end().to_string());
        }
    }
    if !replaced {
        out.push(fragment.trim_end().to_string());
    }
    out.join("\n---\n") + "\n"
}

/// Runs `setup-clangd`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let file = args.dir.join(".clangd");
    let cuda = find_cuda_path(args.cuda_path.as_deref())?;
    let old = match std::fs::read_to_string(&file) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    let new = updated(old.as_deref(), &fragment(&cuda, &targets_for(&args.dir)));
    let mut stdout = io::stdout().lock();
    if old.as_deref() == Some(new.as_str()) {
        writeln!(stdout, "{} is up to date", file.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    let diff = similar::TextDiff::from_lines(old.as_deref().unwrap_or(""), &new);
    let shown = file.display().to_string();
    write!(
        stdout,
        "{}",
        diff.unified_diff().header(&shown, &shown).context_radius(3)
    )?;
    stdout.flush()?;
    let consent = if args.yes {
        true
    } else if io::stdin().is_terminal() {
        write!(stdout, "Write {}? [y/N] ", file.display())?;
        stdout.flush()?;
        let mut answer = String::new();
        io::stdin().lock().read_line(&mut answer)?;
        matches!(answer.trim(), "y" | "Y" | "yes")
    } else {
        false
    };
    if !consent {
        writeln!(
            stdout,
            "{} was not written (run `kernaut-lsp setup-clangd --yes` to write it)",
            file.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    std::fs::write(&file, &new).with_context(|| format!("writing {}", file.display()))?;
    writeln!(stdout, "wrote {}", file.display())?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fragment_is_appended_once_and_replaced_after() {
        let f = fragment(Path::new("/w/nvidia/cu13"), &["sm_90".into()]);
        assert_eq!(
            f,
            "# kernaut-lsp setup-clangd: clangd parses .cu/.cuh files as CUDA with NVIDIA's headers.\n\
             If:\n  PathMatch: .*\\.(cu|cuh)$\nCompileFlags:\n  Add:\n    - -xcuda\n    - --cuda-path=/w/nvidia/cu13\n    - --cuda-gpu-arch=sm_90\n    - -nocudalib\n"
        );
        assert_eq!(updated(None, &f), f);
        let user = "CompileFlags:\n  Add: [-Wall]\n";
        let once = updated(Some(user), &f);
        assert_eq!(once, format!("CompileFlags:\n  Add: [-Wall]\n---\n{f}"));
        let g = fragment(Path::new("/opt/cuda"), &["sm_80".into()]);
        let twice = updated(Some(&once), &g);
        assert_eq!(twice, format!("CompileFlags:\n  Add: [-Wall]\n---\n{g}"));
        assert_eq!(updated(Some(&twice), &g), twice);
    }
}
