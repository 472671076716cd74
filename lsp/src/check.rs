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
use crate::fix;
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
    #[arg(required_unless_present_any = ["list_rules", "explain"], value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// List every rule (id, default severity, wiki anchor, what it finds) and exit.
    #[arg(long, conflicts_with = "explain")]
    pub list_rules: bool,
    /// Print a rule's documentation (what it finds, a before/after example) and exit.
    #[arg(long, value_name = "RULE")]
    pub explain: Option<String>,
    /// Apply the fixes marked safe (mechanical edits that cannot change what the code
    /// computes), write the files, and report what changed and what remains.
    #[arg(long)]
    pub fix: bool,
    /// With --fix: print the changes as a unified diff, write nothing, and exit 1 while a fix
    /// is pending (0 when there is none).
    #[arg(long, requires = "fix")]
    pub dry_run: bool,
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
    /// Compile each file with nvcc and print, per kernel, the registers, spills, stack,
    /// shared memory and the occupancy at its launch (to stderr with the text format,
    /// as `resources` in the JSON format); kernels that spill get `resources/spills`.
    #[arg(long)]
    pub resources: bool,
    /// With --resources: exit 1 when a kernel uses more registers per thread than this.
    #[arg(long, value_name = "N", requires = "resources")]
    pub max_registers: Option<u32>,
    /// With --resources: exit 1 when a kernel spills.
    #[arg(long, requires = "resources")]
    pub fail_on_spills: bool,
    /// The nvcc to compile with [default: $CUDA_HOME, PATH, or a Python environment
    /// with NVIDIA's nvidia-cuda-nvcc wheel].
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// Print notes about quoted includes that could not be read (missing or binary).
    #[arg(long, short)]
    pub verbose: bool,
}

/// Runs `check`: exit 1 when an error-level diagnostic was found.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.list_rules {
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        match args.format {
            Format::Json => output::rules_json(&mut out)?,
            _ => output::rules_text(&mut out)?,
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(id) = &args.explain {
        let Some(rule) = kernaut_ide::rules::find_rule(id) else {
            match kernaut_ide::rules::closest_rule_id(id) {
                Some(near) => anyhow::bail!("no rule `{id}`; did you mean `{near}`?"),
                None => anyhow::bail!("no rule `{id}` (--list-rules lists them)"),
            }
        };
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        output::explain(&mut out, rule)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
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
    let mut lossy = std::collections::HashSet::new();
    let mut checked_files = Vec::new();
    let mut roots: Vec<(String, Arc<str>)> = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let shown = display_path(path);
        if kernaut_ide::source_text::is_binary(&bytes) {
            eprintln!("kernaut-lsp: note: {shown}: a binary file (it holds NUL bytes), skipped");
            continue;
        }
        let decoded = source_text::decode(bytes);
        if let Some(note) = decoded.note(&shown) {
            eprintln!("kernaut-lsp: note: {note}");
            lossy.insert(shown.clone());
        }
        checked_files.push(path.clone());
        // Files are named by their absolute paths, and each `.kernaut.toml` applies to
        // the folder that holds it, as in the editor.
        let absolute = path.canonicalize().unwrap_or_else(|_| path.clone());
        if let Some((dir, config)) = configs.for_file(path)? {
            change.set_dir_config(dir.display().to_string(), Some(config));
        }
        let id = host.file_id(&absolute.display().to_string());
        change.set_file(id, decoded.text.clone());
        roots.push((
            absolute.display().to_string(),
            Arc::from(decoded.text.as_str()),
        ));
        ids.push((id, shown, decoded.text));
    }
    // The quoted includes of the checked files that are not checked themselves (a `.h`
    // next to the `.cu`, a header outside the folder), read from disk: the host gives
    // their macros to the files that include them; they are not reported on.
    let known: std::collections::HashMap<String, Arc<str>> = roots
        .iter()
        .map(|(p, t)| (kernaut_ide::includes::normalize_path(p), t.clone()))
        .collect();
    let loaded = crate::includes::load(&roots, &known);
    for (path, text) in loaded.headers {
        let id = host.file_id(&path);
        change.set_file(id, text);
    }
    if args.verbose {
        for note in &loaded.notes {
            eprintln!("kernaut-lsp: note: {note}");
        }
    }
    host.apply_change(change);
    let mut budget_failures = 0;
    let mut resource_rows = Vec::new();
    if args.resources {
        let arch_of = |host: &AnalysisHost, id| host.analysis().file_config(id).arch.to_string();
        let toolkit = kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig {
            nvcc: args.nvcc.clone(),
            ..kernaut_compiler::ToolkitConfig::default()
        })
        .context("--resources needs a CUDA toolkit")?;
        eprintln!("kernaut-lsp: compiling with {}", toolkit.describe());
        let mut change = Change::new();
        for (i, (id, shown, text)) in ids.iter().enumerate() {
            let path = &checked_files[i];
            let arch = arch_of(&host, *id);
            let db = kernaut_compiler::find_compile_commands(path, None);
            let flags = kernaut_compiler::flags_for(path, db.as_deref(), &arch)
                .unwrap_or_else(|_| kernaut_compiler::CompileFlags::default_for(&arch));
            let mut request =
                kernaut_compiler::CompileRequest::new(path.clone(), text.clone(), flags);
            request.sass = toolkit.has_sass_tools();
            match toolkit.compile(&request, &std::sync::Arc::default()) {
                Ok(out) => {
                    for m in &out.messages {
                        if m.severity == kernaut_compiler::Severity::Error {
                            eprintln!(
                                "{shown}:{}:{}: error: {} [{}]",
                                m.line.unwrap_or(1),
                                m.column.unwrap_or(1),
                                m.message,
                                m.tool
                            );
                        }
                    }
                    change.set_compiled(*id, Some(crate::compile::to_compiled(&out)));
                }
                Err(e) => eprintln!("kernaut-lsp: warning: compiling {shown} failed: {e}"),
            }
        }
        host.apply_change(change);
        let analysis = host.analysis();
        for (id, shown, _) in &ids {
            let Some(compiled) = analysis.compiled(*id) else {
                continue;
            };
            for k in &compiled.kernels {
                let occupancy = analysis
                    .occupancy(*id, &k.base_name)
                    .ok()
                    .flatten()
                    .and_then(|o| o.result.ok().map(|r| (r.occupancy, r.blocks_per_sm)));
                let over = args.max_registers.is_some_and(|m| k.registers > m);
                let spills = k.spill_store_bytes + k.spill_load_bytes > 0;
                if over || (args.fail_on_spills && spills) {
                    budget_failures += 1;
                }
                resource_rows.push(output::ResourceRow {
                    file: shown.clone(),
                    kernel: k.name.clone(),
                    arch: k.arch.clone(),
                    registers: k.registers,
                    spill_store_bytes: k.spill_store_bytes,
                    spill_load_bytes: k.spill_load_bytes,
                    stack_bytes: k.stack_frame_bytes,
                    shared_bytes: k.static_shared_bytes,
                    occupancy,
                    over_budget: over || (args.fail_on_spills && spills),
                });
            }
        }
    }
    let diagnostics_of = |host: &AnalysisHost, id, path: &str| match host.analysis().diagnostics(id)
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("kernaut-lsp: warning: the rules failed on {path} ({e}); it is skipped");
            Vec::new()
        }
    };
    for (id, path, text) in &ids {
        reports.push(FileReport {
            path: path.clone(),
            text: text.clone(),
            diagnostics: diagnostics_of(&host, *id, path),
        });
    }
    if args.fix {
        let mut change = Change::new();
        let mut fixed = Vec::new();
        let mut diff = String::new();
        for (i, r) in reports.iter().enumerate() {
            let Some(plan) = fix::plan(&r.text, &r.diagnostics) else {
                continue;
            };
            if lossy.contains(&r.path) {
                eprintln!(
                    "kernaut-lsp: note: {}: not fixed: the file is not UTF-8 and writing it back would lose bytes",
                    r.path
                );
                continue;
            }
            eprintln!(
                "kernaut-lsp: {}{}: {}",
                if args.dry_run { "would fix " } else { "fixed " },
                r.path,
                plan.summary()
            );
            if args.dry_run {
                diff.push_str(&fix::unified_diff(&r.path, &r.text, &plan.edits));
                continue;
            }
            let path = &checked_files[i];
            std::fs::write(path, &plan.text)
                .with_context(|| format!("writing {}", path.display()))?;
            change.set_file(ids[i].0, plan.text.clone());
            fixed.push((i, plan.text));
        }
        if args.dry_run {
            let stdout = io::stdout();
            let mut out = stdout.lock();
            out.write_all(diff.as_bytes())?;
            out.flush()?;
            // Like `cargo fmt --check`: a CI step fails while a safe fix is pending.
            return Ok(if diff.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        if fixed.is_empty() {
            eprintln!("kernaut-lsp: no safe fixes to apply");
        } else {
            // What remains is what the rules find in the files as now written.
            host.apply_change(change);
            for (i, text) in fixed {
                let (id, path, _) = &ids[i];
                reports[i].diagnostics = diagnostics_of(&host, *id, path);
                reports[i].text = text;
            }
        }
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Text => output::text(&mut out, &reports)?,
        Format::Json => output::json(&mut out, &reports)?,
        Format::Sarif => output::sarif(&mut out, &reports)?,
    }
    if args.resources {
        match args.format {
            Format::Json => output::resources_json(&mut out, &resource_rows)?,
            _ => output::resources_table(&mut io::stderr().lock(), &resource_rows)?,
        }
    }
    out.flush()?;
    if budget_failures > 0 {
        eprintln!("kernaut-lsp: {budget_failures} kernel(s) over the resource budget");
    }
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
    Ok(if errors + budget_failures > 0 {
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
