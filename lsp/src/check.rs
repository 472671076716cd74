//! `kernaut-lsp check PATH…`: walk the paths for `.cu`/`.cuh` files, run the rules, print
//! what they find like a compiler does.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use kernaut_ide::config::Severity;
use kernaut_ide::gpu::Target;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge};
use kernaut_project::ProjectLoader;

use crate::fix;
use crate::output::{self, FileReport};

/// Checked files of fewer bytes than this in all keep their syntax trees: about 40
/// bytes of memory per byte of text then, under 100 MB with the wiki.
const KEEP_TREES_BELOW: u64 = 2 * 1024 * 1024;

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
    /// Target architectures, comma-separated (sm_80, sm_90a, compute_90, or GPU names such
    /// as H200 or A100); overrides `.kernaut.toml` and the build [default: `arch` of the
    /// nearest .kernaut.toml, else the targets of the build: compile_commands.json,
    /// CMakeLists.txt, setup.py, a Makefile, xmake.lua, a Visual Studio project, or a
    /// Python, Rust or shell script that runs nvcc; else sm_90, assumed].
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
    let flag_targets = args
        .arch
        .as_deref()
        .map(Target::parse_list)
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
    let mut config = AnalysisConfig {
        wiki: wiki_config,
        ..AnalysisConfig::default()
    };
    if let Some(targets) = flag_targets {
        anyhow::ensure!(
            config.choose_targets(targets, "--arch"),
            "--arch names no target"
        );
    }
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(Arc::new(knowledge));
    let mut loader = ProjectLoader::new(None);
    loader.add_scan_roots(&args.paths);
    if !args.fix && !args.resources {
        let host_sources = collect_host_sources(&args.paths)?;
        return streamed(args, host, &mut loader, &files, &host_sources);
    }
    // `--fix` writes files and checks them again, and `--resources` compiles every file:
    // both hold the whole repository. Over a large one, files are kept as text and facts
    // (what other files' rules read of them: launches, attribute calls, definitions),
    // and each is parsed again when its rules run, then dropped. Below
    // `KEEP_TREES_BELOW` bytes the trees stay (one parse). `--resources` asks the models
    // for more than the rules do and keeps them too.
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    host.set_keep_trees(args.resources || bytes < KEEP_TREES_BELOW);
    // Every file with its `.kernaut.toml`, its build's targets and macros, and the
    // headers it includes: the project loader, as in the editor and `ktui`.
    let mut loaded = loader.load(&mut host, &files)?;
    // The project's host C/C++ sources, not checked: their calls of the host functions
    // that launch the kernels may fix the kernels' arguments (as the streamed run reads
    // them).
    let host_sources = collect_host_sources(&args.paths)?;
    if !host_sources.is_empty() {
        loader.load(&mut host, &host_sources)?;
    }
    for note in loader.take_notes() {
        if args.verbose || !note.contains("included from") {
            eprintln!("kernaut-lsp: note: {note}");
        }
    }
    let lossy: std::collections::HashSet<String> = loaded
        .iter()
        .filter(|f| f.lossy)
        .map(|f| display_path(&f.path))
        .collect();
    let checked_files: Vec<PathBuf> = loaded.iter().map(|f| f.path.clone()).collect();
    // The host holds the texts; each is borrowed back when its file is printed.
    let ids: Vec<(kernaut_ide::FileId, String)> = loaded
        .iter_mut()
        .map(|f| {
            f.text = String::new();
            (f.id, display_path(&f.path))
        })
        .collect();
    drop(loaded);
    let text_of = |host: &AnalysisHost, id| host.analysis().text(id).unwrap_or("").to_string();
    let mut reports = Vec::new();
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
        for (i, (id, shown)) in ids.iter().enumerate() {
            let path = &checked_files[i];
            let arch = arch_of(&host, *id);
            let flags = loader.compile_flags(path, &arch);
            let mut request =
                kernaut_compiler::CompileRequest::new(path.clone(), text_of(&host, *id), flags);
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
                    change.set_compiled(
                        *id,
                        Some(kernaut_project::compiled::to_compiled(&out, path)),
                    );
                }
                Err(e) => eprintln!("kernaut-lsp: warning: compiling {shown} failed: {e}"),
            }
        }
        host.apply_change(change);
        let analysis = host.analysis();
        for (id, shown) in &ids {
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
    // The text format is printed file by file as the rules finish (and only counts are
    // kept); the others are one document, written at the end.
    let streamed = args.format == Format::Text && !args.fix;
    let mut totals = Totals::default();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    for (id, path) in &ids {
        let report = FileReport {
            path: path.clone(),
            text: text_of(&host, *id),
            diagnostics: diagnostics_of(&host, *id, path),
        };
        if streamed {
            totals.add(&report);
            output::text(&mut out, std::slice::from_ref(&report))?;
            out.flush()?;
        } else {
            reports.push(report);
        }
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
            out.write_all(diff.as_bytes())?;
            out.flush()?;
            if diff.is_empty() {
                eprintln!("kernaut-lsp: nothing to fix: no safe fixes to apply");
            }
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
                let (id, path) = &ids[i];
                reports[i].diagnostics = diagnostics_of(&host, *id, path);
                reports[i].text = text;
            }
        }
    }
    for r in &reports {
        totals.add(r);
    }
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
    let errors = totals.errors;
    if args.format == Format::Text {
        // The targets the files were checked against, and where they came from.
        let analysis = host.analysis();
        let mut sets: Vec<kernaut_ide::config::TargetSet> = Vec::new();
        for (id, _) in &ids {
            let t = analysis.file_config(*id).targets;
            if !sets.contains(&t) {
                sets.push(t);
            }
        }
        print_summary(&sets, &totals);
    }
    Ok(if errors + budget_failures > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Bytes of text the host may hold, beyond what the file being checked needs, while
/// `check` streams a repository: about 8 bytes of memory each (text, facts, tables).
const HELD_TEXT_BUDGET: usize = 4 * 1024 * 1024;

/// `check` without `--fix` or `--resources`: files are loaded a few at a time
/// ([`kernaut_project::Stream`]), each with what its rules read of other files, checked,
/// printed and let go, so memory stays bounded whatever the repository's size. The text
/// format is printed file by file; the others are one document, written at the end.
fn streamed(
    args: &Args,
    mut host: AnalysisHost,
    loader: &mut ProjectLoader,
    files: &[PathBuf],
    host_sources: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let mut plan = loader.plan(files)?;
    plan.add_host_sources(host_sources);
    for note in loader.take_notes() {
        if args.verbose || !note.contains("included from") {
            eprintln!("kernaut-lsp: note: {note}");
        }
    }
    let mut stream = kernaut_project::Stream::new(plan, HELD_TEXT_BUDGET);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut totals = Totals::default();
    let mut reports = Vec::new();
    let mut sets: Vec<kernaut_ide::config::TargetSet> = Vec::new();
    for i in 0..stream.plan().len() {
        let path = display_path(stream.plan().path(i));
        let (id, text) = stream.load(&mut host, i)?;
        let analysis = host.analysis();
        let diagnostics = match analysis.diagnostics(id) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("kernaut-lsp: warning: the rules failed on {path} ({e}); it is skipped");
                Vec::new()
            }
        };
        let targets = analysis.file_config(id).targets;
        if !sets.contains(&targets) {
            sets.push(targets);
        }
        drop(analysis);
        let report = FileReport {
            path,
            text: text.to_string(),
            diagnostics,
        };
        totals.add(&report);
        if args.format == Format::Text {
            output::text(&mut out, std::slice::from_ref(&report))?;
            out.flush()?;
        } else {
            reports.push(report);
        }
    }
    match args.format {
        Format::Text => {}
        Format::Json => output::json(&mut out, &reports)?,
        Format::Sarif => output::sarif(&mut out, &reports)?,
    }
    out.flush()?;
    let errors = totals.errors;
    if args.format == Format::Text {
        print_summary(&sets, &totals);
    }
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The targets the files were checked against (and where they came from), and the
/// counts.
fn print_summary(sets: &[kernaut_ide::config::TargetSet], totals: &Totals) {
    for set in sets {
        if let Some(why) = &set.not_built {
            eprintln!("targets: none, the build does not compile the file ({why})");
        } else if set.assumed {
            eprintln!(
                "targets: {} (assumed: no setting or build file names them; set `arch` in .kernaut.toml or pass --arch)",
                set.names()
            );
        } else {
            eprintln!("targets: {}", set.describe());
        }
    }
    let (errors, warnings, hints) = (totals.errors, totals.warnings, totals.hints);
    eprintln!(
        "checked {} file{}: {errors} error{}, {warnings} warning{}, {hints} hint{}",
        totals.files,
        plural(totals.files),
        plural(errors),
        plural(warnings),
        plural(hints)
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// What the summary line counts, kept while reports are printed and dropped.
#[derive(Default)]
struct Totals {
    files: usize,
    errors: usize,
    warnings: usize,
    hints: usize,
}

impl Totals {
    fn add(&mut self, r: &FileReport) {
        self.files += 1;
        for d in &r.diagnostics {
            match d.severity {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                Severity::Hint => self.hints += 1,
            }
        }
    }
}

fn is_cuda(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("cu" | "cuh")
    )
}

/// The C and C++ sources of the folders given (walked as [`collect_files`] walks them):
/// not checked, but their calls of the host functions that launch the kernels may fix
/// the kernels' arguments.
fn collect_host_sources(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for p in paths.iter().filter(|p| p.is_dir()) {
        for entry in ignore::WalkBuilder::new(p).require_git(false).build() {
            let entry = entry.with_context(|| format!("walking {}", p.display()))?;
            let host = entry
                .path()
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "c" | "cc" | "cpp" | "cxx" | "c++" | "C"));
            if host && entry.file_type().is_some_and(|t| t.is_file()) {
                found.push(entry.into_path());
            }
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
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
