//! `kernaut-lsp doctor`: what kernaut would use for a folder, and why. The targets of
//! each CUDA file found (a few) and where they came from, the `.kernaut.toml` files, the
//! compile database, the CUDA toolkit (or what its absence costs), the wiki, and whether
//! clangd is there to run beside kernaut. Plain text for a terminal, Markdown for an
//! editor.

use std::path::{Path, PathBuf};

use kernaut_compiler::{Toolkit, ToolkitConfig, ToolkitError};
use kernaut_ide::config::CONFIG_FILE_NAME;
use kernaut_ide::wiki::WikiConfig;

use crate::ProjectLoader;

/// What the doctor found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The folder examined.
    pub folder: PathBuf,
    /// Sections: a title and its lines.
    pub sections: Vec<(String, Vec<String>)>,
}

/// What the doctor reads besides the folder.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The `nvcc` the user configured, if any.
    pub nvcc: Option<PathBuf>,
    /// The wiki to load.
    pub wiki: Option<WikiConfig>,
    /// The position encoding the editor negotiated, when asked from an editor.
    pub encoding: Option<String>,
    /// How many CUDA files to show targets for.
    pub files: usize,
    /// The editor's `kernaut.arch` setting: the target of files the project names none
    /// for (else sm_90 is assumed).
    pub arch_setting: Option<String>,
}

/// Examines `folder`.
pub fn examine(folder: &Path, options: &Options) -> Report {
    let folder = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    let mut sections = Vec::new();
    let mut loader = ProjectLoader::new(Some(folder.clone()));

    // The CUDA files and their targets.
    let mut cuda: Vec<PathBuf> = ignore::WalkBuilder::new(&folder)
        .require_git(false)
        .build()
        .filter_map(|e| e.ok())
        .map(|e| e.into_path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "cu" | "cuh"))
        })
        .collect();
    cuda.sort();
    let shown = options.files.max(1);
    let mut lines = Vec::new();
    let mut configs = Vec::new();
    for file in cuda.iter().take(shown) {
        let rel = file
            .strip_prefix(&folder)
            .unwrap_or(file)
            .display()
            .to_string();
        match loader.dir_config(file) {
            Ok(Some((dir, c))) => {
                let p = dir.join(CONFIG_FILE_NAME).display().to_string();
                if !configs.contains(&p) {
                    configs.push(p);
                }
                if !c.targets.is_empty() {
                    let line = c.arch_line.map(|l| format!(":{l}")).unwrap_or_default();
                    lines.push(format!(
                        "{rel}: {} (from {}{line})",
                        c.targets
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        dir.join(CONFIG_FILE_NAME).display()
                    ));
                    continue;
                }
            }
            Ok(None) => {}
            Err(e) => {
                lines.push(format!("{rel}: {e:#}"));
                continue;
            }
        }
        let build = loader.file_build(file);
        const NONE: &str =
            "no .kernaut.toml, compile_commands.json, CMakeLists.txt, setup.py or Makefile names a target";
        lines.push(match (build.targets, &options.arch_setting) {
            (Some(t), _) => format!("{rel}: {}", t.describe()),
            (None, Some(arch)) => format!("{rel}: {arch} (the kernaut.arch setting: {NONE})"),
            (None, None) => format!(
                "{rel}: sm_90 (assumed: {NONE}; architecture findings are hints until one does)"
            ),
        });
        if !build.defines.is_empty() {
            let d: Vec<String> = build
                .defines
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            lines.push(format!("  macros from the build: {}", d.join(" ")));
        }
        if !build.include_dirs.is_empty() {
            lines.push(format!(
                "  include folders: {}",
                build.include_dirs.join(", ")
            ));
        }
    }
    if cuda.is_empty() {
        lines.push("no .cu or .cuh file in this folder".to_string());
    } else if cuda.len() > shown {
        lines.push(format!("… and {} more CUDA files", cuda.len() - shown));
    }
    lines.extend(
        loader
            .take_notes()
            .into_iter()
            .map(|n| format!("note: {n}")),
    );
    sections.push(("Targets".to_string(), lines));

    sections.push((
        "Configuration".to_string(),
        vec![
            if configs.is_empty() {
                format!("{CONFIG_FILE_NAME}: none found at or above the files shown")
            } else {
                format!("{CONFIG_FILE_NAME}: {}", configs.join(", "))
            },
            match cuda.first().and_then(|f| loader.compile_commands(f)) {
                Some(db) => format!("compile_commands.json: {}", db.display()),
                None => "compile_commands.json: none (CMake writes one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)".to_string(),
            },
        ],
    ));

    let toolkit = Toolkit::discover(&ToolkitConfig {
        nvcc: options.nvcc.clone(),
        ..ToolkitConfig::default()
    });
    sections.push((
        "CUDA toolkit".to_string(),
        match toolkit {
            Ok(t) => {
                let mut l = vec![format!("{}", t.describe())];
                l.push(match &t.ptxas {
                    Some(p) => format!("ptxas: {}", p.display()),
                    None => "ptxas: not found: register counts stay assumed".to_string(),
                });
                l.push(match &t.cuobjdump {
                    Some(p) => format!("cuobjdump: {}", p.display()),
                    None => "cuobjdump: not found: no SASS facts".to_string(),
                });
                l
            }
            Err(e) => vec![
                match e {
                    ToolkitError::NotFound { tried } => {
                        format!("none found; looked at: {}", tried.join("; "))
                    }
                    other => format!("none usable: {other}"),
                },
                "without it, register counts are assumed (32, or `registers` in .kernaut.toml) and there are no SASS facts or spill reports; `pip install nvidia-cuda-nvcc` gives one without a GPU".to_string(),
            ],
        },
    ));

    let wiki = options.wiki.clone().unwrap_or_else(WikiConfig::builtin);
    let loaded = kernaut_ide::wiki::Wiki::load(&wiki);
    let count = loaded.pages().len();
    let mut wl = vec![format!(
        "{count} page{} ({}{})",
        if count == 1 { "" } else { "s" },
        if wiki.no_builtin {
            "no built-in pages"
        } else {
            "the built-in pages"
        },
        match wiki.dirs.len() {
            0 => String::new(),
            1 => " and 1 folder".to_string(),
            n => format!(" and {n} folders"),
        }
    )];
    for d in &wiki.dirs {
        wl.push(format!("folder: {}", d.display()));
    }
    sections.push(("Wiki".to_string(), wl));

    let mut editor = Vec::new();
    if let Some(e) = &options.encoding {
        editor.push(format!("position encoding: {e}"));
    }
    editor.push(match which("clangd").or_else(|| which("clangd-19")) {
        Some(p) => format!(
            "clangd: {} (run it beside kernaut for C++ navigation; `kernaut-lsp setup-clangd` lets it parse CUDA without a local toolkit)",
            p.display()
        ),
        None => "clangd: not found (optional: kernaut gives CUDA facts, clangd C++ navigation)".to_string(),
    });
    sections.push(("Editor".to_string(), editor));
    Report { folder, sections }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl Report {
    /// For a terminal.
    pub fn text(&self) -> String {
        let mut out = format!("kernaut doctor: {}\n", self.folder.display());
        for (title, lines) in &self.sections {
            out.push_str(&format!("\n{title}\n"));
            for l in lines {
                out.push_str(&format!("  {l}\n"));
            }
        }
        out
    }

    /// For an editor (Markdown).
    pub fn markdown(&self) -> String {
        let mut out = format!("# kernaut doctor\n\n`{}`\n", self.folder.display());
        for (title, lines) in &self.sections {
            out.push_str(&format!("\n## {title}\n\n"));
            for l in lines {
                let indent = l.starts_with("  ");
                out.push_str(&format!(
                    "{}- {}\n",
                    if indent { "  " } else { "" },
                    l.trim_start()
                ));
            }
        }
        out
    }
}
