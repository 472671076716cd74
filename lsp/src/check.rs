//! `kernaut-lsp check PATH…`: walk the paths for `.cu`/`.cuh` files, run the rules, print
//! what they find like a compiler does.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use kernaut_ide::config::Severity;
use kernaut_ide::gpu::Arch;
use kernaut_ide::source_text;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge};

use crate::config_file::ConfigCache;
use crate::output::{self, FileReport};

/// The architecture checked when neither `--arch` nor `.kernaut.toml` names one.
pub const DEFAULT_ARCH: &str = "sm_90";

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `file:line:col: severity: message [rule-id] (wiki id#anchor)`, one per line.
    Text,
    /// A JSON array of diagnostics with 1-based lines and columns.
    Json,
    /// SARIF 2.1.0, for code-scanning dashboards.
    Sarif,
}

/// The arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files or folders; folders are walked for .cu and .cuh files, honouring .gitignore.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Target architecture (sm_80, sm_90a, …); overrides `arch` in .kernaut.toml
    /// [default: .kernaut.toml's, else sm_90].
    #[arg(long)]
    pub arch: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Extra wiki folders merged over the built-in pages (also read from $KERNAUT_WIKI).
    #[arg(long = "wiki", value_name = "DIR")]
    pub wiki: Vec<PathBuf>,
}

/// Runs `check`: exit 1 when an error-level diagnostic was found.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let arch_flag = args
        .arch
        .as_deref()
        .map(Arch::parse)
        .transpose()
        .context("--arch")?;
    let files = collect_files(&args.paths)?;
    let mut wiki_config =
        WikiConfig::builtin().with_env_paths(std::env::var_os("KERNAUT_WIKI").as_deref());
    wiki_config.dirs.extend(args.wiki.iter().cloned());
    for d in &args.wiki {
        if !d.is_dir() {
            anyhow::bail!("--wiki {}: not a folder", d.display());
        }
    }
    let knowledge = Knowledge::load(&wiki_config).context("loading the wiki")?;
    let default_arch = Arch::parse(DEFAULT_ARCH).context("the default architecture")?;
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: arch_flag.unwrap_or(default_arch),
        arch_configured: arch_flag.is_some(),
        wiki: wiki_config,
        ..AnalysisConfig::default()
    });
    host.set_knowledge(Arc::new(knowledge));
    let mut configs = ConfigCache::default();
    let mut reports = Vec::new();
    let mut change = Change::new();
    let mut ids = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let decoded = source_text::decode(bytes);
        let shown = display_path(path);
        if let Some(note) = decoded.note(&shown) {
            eprintln!("kernaut-lsp: note: {note}");
        }
        // Files are named by their absolute paths, and each `.kernaut.toml` applies to
        // the folder that holds it, as in the editor.
        let absolute = path.canonicalize().unwrap_or_else(|_| path.clone());
        if let Some((dir, config)) = configs.for_file(path)? {
            change.set_dir_config(dir.display().to_string(), Some(config));
        }
        let id = host.file_id(&absolute.display().to_string());
        change.set_file(id, decoded.text.clone());
        ids.push((id, shown, decoded.text));
    }
    host.apply_change(change);
    let analysis = host.analysis();
    for (id, path, text) in ids {
        let diagnostics = match analysis.diagnostics(id) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("kernaut-lsp: warning: the rules failed on {path} ({e}); it is skipped");
                Vec::new()
            }
        };
        reports.push(FileReport {
            path,
            text,
            diagnostics,
        });
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Text => output::text(&mut out, &reports)?,
        Format::Json => output::json(&mut out, &reports)?,
        Format::Sarif => output::sarif(&mut out, &reports)?,
    }
    out.flush()?;
    let errors = count(&reports, Severity::Error);
    if args.format == Format::Text {
        let warnings = count(&reports, Severity::Warning);
        let hints = count(&reports, Severity::Hint);
        eprintln!(
            "checked {} file{}: {errors} error{}, {warnings} warning{}, {hints} hint{}",
            reports.len(),
            plural(reports.len()),
            plural(errors),
            plural(warnings),
            plural(hints)
        );
    }
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn count(reports: &[FileReport], severity: Severity) -> usize {
    reports
        .iter()
        .flat_map(|r| &r.diagnostics)
        .filter(|d| d.severity == severity)
        .count()
}

fn is_cuda(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("cu" | "cuh")
    )
}

/// The files to check: named files as given, folders walked (honouring `.gitignore`,
/// `.ignore` and hidden files) for `.cu`/`.cuh`, sorted.
fn collect_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("reading {}", p.display()))?;
        if meta.is_file() {
            files.push(p.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in ignore::WalkBuilder::new(p).require_git(false).build() {
            let entry = entry.with_context(|| format!("walking {}", p.display()))?;
            if entry.file_type().is_some_and(|t| t.is_file()) && is_cuda(entry.path()) {
                found.push(entry.into_path());
            }
        }
        found.sort();
        files.extend(found);
    }
    files.dedup();
    Ok(files)
}

fn display_path(path: &Path) -> String {
    let s = path.display().to_string();
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}
