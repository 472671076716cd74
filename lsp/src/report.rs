//! `kernaut-lsp report FILE[:KERNEL] [--format md|json|html]`: the kernel report of one
//! kernel (or of every kernel of the file), as `kernaut_ide`'s `kernel_report` query
//! computes it. Markdown is the report's own rendering, JSON its data, HTML one
//! self-contained page with inline SVG (bank maps, occupancy curves, cost bars) drawn
//! here from the same data.
//!
//! With one kernel the JSON is its report; for every kernel of a file, an array of them.
//!
//! Exit codes: 0 with a report, 1 when the file defines no such kernel, 2 for errors.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use kernaut_ide::gpu::Target;
use kernaut_ide::kernel_report::{KernelReport, ReportConfig};
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge};

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Markdown, as the editor command returns it.
    Md,
    /// The report's data.
    Json,
    /// One self-contained HTML page with inline SVG.
    Html,
}

/// The arguments of `report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file, and optionally the kernel: `FILE` (every kernel), `FILE:KERNEL`, or
    /// `FILE:LINE` (the kernel defined or launched on that 1-based line).
    #[arg(value_name = "FILE[:KERNEL|:LINE]")]
    pub target: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
    /// Target architectures, comma-separated, or GPU names [default: the project's, as
    /// `check` finds them; else sm_90, assumed].
    #[arg(long)]
    pub arch: Option<String>,
    /// Leave out the what-ifs (each quick fix applied to a scratch copy).
    #[arg(long)]
    pub no_what_ifs: bool,
    /// Compile the file with a CUDA toolkit first, for registers, spills and SASS facts.
    #[arg(long)]
    pub resources: bool,
    /// The nvcc to use with `--resources`.
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
}

/// `FILE:KERNEL` (or `FILE:LINE`) split from the right when the part after the colon is
/// an identifier (or a line number) and `FILE` exists.
fn split_target(target: &str) -> (PathBuf, Option<String>) {
    if let Some((file, kernel)) = target.rsplit_once(':') {
        let ident = !kernel.is_empty()
            && kernel
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        if ident && std::path::Path::new(file).is_file() {
            return (PathBuf::from(file), Some(kernel.to_string()));
        }
    }
    (PathBuf::from(target), None)
}

/// Runs `report`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (path, kernel) = split_target(&args.target);
    let flag_targets = args
        .arch
        .as_deref()
        .map(Target::parse_list)
        .transpose()
        .context("--arch")?;
    let wiki_config =
        WikiConfig::builtin().with_env_paths(std::env::var_os("KERNAUT_WIKI").as_deref());
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
    // The file with its `.kernaut.toml`, its build's targets and its headers: the
    // project loader, as `check` and the editor load it.
    let mut loader = kernaut_project::ProjectLoader::new(None);
    // Where no `.git` bounds the project, the folder the command runs in does (as
    // `check .` there reads it).
    loader.add_scan_roots(&[std::path::PathBuf::from(".")]);
    let loaded = loader.load(&mut host, std::slice::from_ref(&path))?;
    for note in loader.take_notes() {
        eprintln!("kernaut-lsp: note: {note}");
    }
    let Some(file) = loaded.into_iter().next() else {
        anyhow::bail!("{}: nothing to report on", path.display());
    };
    let id = file.id;
    let text = file.text.clone();
    if args.resources {
        let arch = host.analysis().file_config(id).arch.to_string();
        let toolkit = kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig {
            nvcc: args.nvcc.clone(),
            ..kernaut_compiler::ToolkitConfig::default()
        })
        .context("--resources needs a CUDA toolkit")?;
        eprintln!("kernaut-lsp: compiling with {}", toolkit.describe());
        let flags = loader.compile_flags(&path, &arch);
        let mut request = kernaut_compiler::CompileRequest::new(path.clone(), text.clone(), flags);
        request.sass = toolkit.has_sass_tools();
        match toolkit.compile(&request, &Arc::default()) {
            Ok(out) => {
                let mut change = Change::new();
                change.set_compiled(
                    id,
                    Some(kernaut_project::compiled::to_compiled(&out, &path)),
                );
                host.apply_change(change);
            }
            Err(e) => eprintln!(
                "kernaut-lsp: warning: compiling {} failed: {e}",
                path.display()
            ),
        }
    }
    let analysis = host.analysis();
    let names: Vec<String> = match &kernel {
        Some(line) if line.chars().all(|c| c.is_ascii_digit()) => {
            let lines = analysis
                .line_index(id)
                .map_err(|e| anyhow::anyhow!("{e:?}"))?;
            let n: u32 = line.parse().unwrap_or(0);
            // The line's first character that is not blank.
            let start = lines.line_start(n.saturating_sub(1));
            let offset = start
                + text[start..]
                    .find(|c: char| !c.is_whitespace() || c == '\n')
                    .unwrap_or(0);
            match analysis
                .kernel_at(id, offset)
                .map_err(|e| anyhow::anyhow!("{e:?}"))?
            {
                Some(k) => vec![k],
                None => {
                    eprintln!(
                        "kernaut-lsp: line {line} of {} is in no kernel and launches none",
                        path.display()
                    );
                    return Ok(ExitCode::from(1));
                }
            }
        }
        Some(k) => vec![k.clone()],
        None => analysis
            .kernel_facts(id)
            .map_err(|e| anyhow::anyhow!("{e:?}"))?
            .iter()
            .map(|k| k.function.name.clone())
            .collect(),
    };
    let config = ReportConfig {
        what_ifs: !args.no_what_ifs,
    };
    let mut reports = Vec::new();
    for name in &names {
        match analysis
            .kernel_report(id, name, config)
            .map_err(|e| anyhow::anyhow!("{e:?}"))?
        {
            Some(r) => reports.push(r),
            None => {
                eprintln!("kernaut-lsp: {} defines no kernel `{name}`", path.display());
                return Ok(ExitCode::from(1));
            }
        }
    }
    if reports.is_empty() {
        eprintln!("kernaut-lsp: {} defines no kernel", path.display());
        return Ok(ExitCode::from(1));
    }
    let text = match args.format {
        Format::Md => reports
            .iter()
            .map(KernelReport::markdown)
            .collect::<Vec<_>>()
            .join("\n---\n\n"),
        Format::Json => {
            let v = if reports.len() == 1 {
                serde_json::to_value(&reports[0])?
            } else {
                serde_json::to_value(&reports)?
            };
            format!("{}\n", serde_json::to_string_pretty(&v)?)
        }
        Format::Html => html(&path.display().to_string(), &reports),
    };
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Escapes `s` and shows its `code` spans as `<code>`.
fn inline(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in esc(s).split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(part);
            out.push_str("</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

fn pct(v: f64) -> String {
    let p = v * 100.0;
    if p > 0.0 && p < 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1b1f24;max-width:1100px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #d0d7de;padding-bottom:4px}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 7px;text-align:left}\
code{background:#f3f4f6;padding:1px 4px;border-radius:3px}.muted{color:#57606a;font-size:13px}\
.bad{color:#b42318;font-weight:600}.ok{color:#1a7f37}svg text{font-family:inherit}";

/// One page for all the reports.
pub fn html(file: &str, reports: &[KernelReport]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kernaut report: {}</title><style>{STYLE}</style></head><body>\n",
        esc(file)
    );
    for r in reports {
        kernel_html(&mut h, r);
    }
    h.push_str("</body></html>\n");
    h
}

fn kernel_html(h: &mut String, r: &KernelReport) {
    let _ = writeln!(
        h,
        "<h1>Kernel report: <code>{}</code> on {}</h1>\n<p class=\"muted\">Costs are modelled memory transactions (shared-memory wavefronts and 32-byte global sectors of one warp request, times the executions the loops' trip counts give), not run times. Modelled total: <b>{}</b> transactions.</p>",
        esc(&r.kernel),
        esc(&r.arch),
        r.total_transactions
    );
    h.push_str("<h2>Costs, ranked</h2>\n");
    if r.costs.is_empty() {
        h.push_str("<p class=\"ok\">No finding in this kernel.</p>\n");
    } else {
        cost_bars(h, r);
        h.push_str("<ol>\n");
        for c in &r.costs {
            let _ = writeln!(
                h,
                "<li>{}<br><span class=\"muted\">{} [{}]</span></li>",
                inline(&c.line_text()),
                inline(&c.message),
                esc(&c.wiki)
            );
        }
        h.push_str("</ol>\n");
    }
    if !r.what_ifs.is_empty() {
        h.push_str("<h2>What if</h2>\n<ul>\n");
        for w in &r.what_ifs {
            let _ = writeln!(
                h,
                "<li><b>{}</b> (line {}, <code>{}</code>): {}</li>",
                inline(&w.title),
                w.line,
                esc(&w.rule),
                inline(&w.summary)
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("<h2>Launch and occupancy</h2>\n");
    for l in &r.launches {
        let at = match &l.file_name {
            Some(f) => format!("{}:{}", esc(f), l.line),
            None => format!("line {}", l.line),
        };
        let _ = writeln!(
            h,
            "<p>{at}: <code>&lt;&lt;&lt;{}, {}{}&gt;&gt;&gt;</code>{}</p>",
            esc(&l.grid),
            esc(&l.block_text),
            l.dynamic_smem_text
                .as_ref()
                .map_or(String::new(), |d| format!(", {}", esc(d))),
            l.occupancy
                .map_or(String::new(), |o| format!(": occupancy {}", pct(o)))
        );
    }
    if let Some(o) = &r.occupancy {
        let _ = writeln!(
            h,
            "<p>Block {}×{}×{} ({}), {} registers per thread ({}), {} B static + {} B dynamic shared memory.</p>",
            o.block[0],
            o.block[1],
            o.block[2],
            esc(&o.block_source),
            o.registers,
            esc(&o.registers_source),
            o.static_smem,
            o.dynamic_smem
        );
        if let Some(v) = o.occupancy {
            let _ = writeln!(
                h,
                "<p><b>Occupancy {}</b>: {} blocks/SM, {} of {} warps, limited by {}.</p>",
                pct(v),
                o.blocks_per_sm,
                o.active_warps,
                o.max_warps,
                esc(&o.limiters.join(" and "))
            );
        }
        if !o.at_registers.is_empty() {
            let cells: Vec<String> = o
                .at_registers
                .iter()
                .map(|(r, v)| format!("{r}: {}", v.map_or("cannot launch".into(), pct)))
                .collect();
            let _ = writeln!(
                h,
                "<p class=\"muted\">The register count is assumed; occupancy at other counts: {}.</p>",
                cells.join(" · ")
            );
        }
        let threads: u32 = o.block.iter().product();
        h.push_str("<div>");
        curve(h, "threads per block", &o.curve_threads, threads);
        curve(h, "registers per thread", &o.curve_registers, o.registers);
        curve(
            h,
            "shared memory per block (bytes)",
            &o.curve_shared,
            o.static_smem + o.dynamic_smem,
        );
        h.push_str("</div>\n");
    }
    if !r.shared.is_empty() {
        h.push_str("<h2>Shared-memory accesses</h2>\n<table><tr><th>line</th><th>access</th><th>op</th><th>runs</th><th>wavefronts</th><th>ideal</th><th>conflict</th><th>bank map (distinct words per bank, warp 0)</th></tr>\n");
        for s in &r.shared {
            let conflict =
                s.conflict_degree
                    .map_or(esc(s.unknown.as_deref().unwrap_or("?")), |d| {
                        if d > 1 {
                            format!("<span class=\"bad\">{d}-way</span>")
                        } else {
                            "1-way".into()
                        }
                    });
            let _ = write!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{conflict}</td><td>",
                esc(&kernaut_ide::kernel_report_md::place(s.line, s.callee.as_ref())),
                esc(&s.text),
                s.op,
                s.executions.count,
                s.wavefronts.map_or("?".into(), |w| w.to_string()),
                s.ideal_wavefronts.map_or("?".into(), |w| w.to_string()),
            );
            bank_map(h, &s.words_per_bank);
            h.push_str("</td></tr>\n");
        }
        h.push_str("</table>\n");
    }
    if !r.global.is_empty() {
        h.push_str("<h2>Global accesses</h2>\n<table><tr><th>line</th><th>access</th><th>op</th><th>runs</th><th>sectors</th><th>ideal</th><th>bytes used per sector</th><th>lanes</th></tr>\n");
        for g in &r.global {
            let bad = matches!((g.sectors, g.ideal_sectors), (Some(s), Some(i)) if s > i);
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&kernaut_ide::kernel_report_md::place(g.line, g.callee.as_ref())),
                esc(&g.text),
                g.op,
                g.executions.count,
                if bad { " class=\"bad\"" } else { "" },
                g.sectors.map_or("?".into(), |s| s.to_string()),
                g.ideal_sectors.map_or("?".into(), |s| s.to_string()),
                g.bytes_per_sector.map_or(
                    esc(g.unknown.as_deref().unwrap_or("?")),
                    |b| format!("{b:.1} of 32")
                ),
                g.active_lanes
            );
        }
        h.push_str("</table>\n");
    }
    if !r.pipelines.is_empty() {
        h.push_str("<h2>Async-copy pipelines</h2>\n<ul>\n");
        for p in &r.pipelines {
            let _ = writeln!(
                h,
                "<li>loop at line {}: {} stage(s), the wait leaves {} group(s) pending, {} copy call(s) per iteration: {}</li>",
                p.line,
                p.stages.map_or("1".into(), |s| s.to_string()),
                p.wait_depth.map_or("?".into(), |d| d.to_string()),
                p.copies_per_iteration,
                if p.overlap { "copy and compute can overlap" } else { "<span class=\"bad\">copy and compute do not overlap</span>" }
            );
        }
        h.push_str("</ul>\n");
    }
    if !r.loops.is_empty() {
        h.push_str("<h2>Loops and barriers</h2>\n<ul>\n");
        for l in &r.loops {
            let _ = writeln!(
                h,
                "<li>line {}: <code>{}</code>: {} iteration(s), {} block barrier(s) per iteration</li>",
                l.line,
                esc(&l.header),
                l.trip_count.map_or("unknown".into(), |t| t.to_string()),
                l.barriers_per_iteration
            );
        }
        h.push_str("</ul>\n");
    }
    if let Some(c) = &r.compiled {
        let _ = writeln!(
            h,
            "<h2>Compiled</h2>\n<p>{}: <code>{}</code>, {} registers, {} B spill stores, {} B spill loads, {} B stack per thread.</p>",
            esc(&c.toolkit),
            esc(&c.name),
            c.registers,
            c.spill_store_bytes,
            c.spill_load_bytes,
            c.stack_frame_bytes
        );
    }
}

/// Horizontal bars: each costed finding's share.
fn cost_bars(h: &mut String, r: &KernelReport) {
    let costed: Vec<_> = r.costs.iter().filter(|c| c.share.is_some()).collect();
    if costed.is_empty() {
        return;
    }
    let row = 26;
    let height = costed.len() * row + 8;
    let _ = write!(
        h,
        "<svg width=\"760\" height=\"{height}\" role=\"img\" aria-label=\"cost bars\">"
    );
    for (i, c) in costed.iter().enumerate() {
        let share = c.share.unwrap_or(0.0).clamp(0.0, 1.0);
        let y = i * row + 4;
        let w = (share * 420.0).max(1.0);
        let _ = write!(
            h,
            "<text x=\"0\" y=\"{}\" font-size=\"12\">{} (line {})</text><rect x=\"300\" y=\"{y}\" width=\"{w:.1}\" height=\"18\" fill=\"#cf222e\"/><rect x=\"300\" y=\"{y}\" width=\"420\" height=\"18\" fill=\"none\" stroke=\"#d0d7de\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"12\">{}</text>",
            y + 13,
            esc(&c.rule),
            c.line,
            300.0 + w + 4.0,
            y + 13,
            pct(share)
        );
    }
    h.push_str("</svg>\n");
}

/// 32 columns, one per bank, as tall as the distinct words the warp touches there.
fn bank_map(h: &mut String, words: &[u32]) {
    if words.is_empty() {
        return;
    }
    let max = words.iter().copied().max().unwrap_or(1).max(1);
    let _ = write!(
        h,
        "<svg width=\"260\" height=\"44\" role=\"img\" aria-label=\"bank map\">"
    );
    for (b, &n) in words.iter().enumerate() {
        let bar = f64::from(n) / f64::from(max) * 32.0;
        let color = if n > 1 { "#cf222e" } else { "#2da44e" };
        let _ = write!(
            h,
            "<rect x=\"{}\" y=\"{:.1}\" width=\"6\" height=\"{bar:.1}\" fill=\"{color}\"><title>bank {b}: {n}</title></rect>",
            b * 8,
            34.0 - bar
        );
    }
    let _ = write!(
        h,
        "<text x=\"0\" y=\"43\" font-size=\"9\">bank 0</text><text x=\"236\" y=\"43\" font-size=\"9\">31</text><title>distinct words per bank, at most {max}</title></svg>"
    );
}

/// An occupancy curve with the current value marked.
fn curve(h: &mut String, label: &str, points: &[(u32, f64)], current: u32) {
    if points.len() < 2 {
        return;
    }
    let (w, ht, left, bottom) = (320.0, 150.0, 34.0, 24.0);
    let xmax = f64::from(points.iter().map(|p| p.0).max().unwrap_or(1).max(1));
    let xmin = f64::from(points.iter().map(|p| p.0).min().unwrap_or(0));
    let sx = |x: f64| left + (x - xmin) / (xmax - xmin).max(1.0) * (w - left - 8.0);
    let sy = |y: f64| 8.0 + (1.0 - y) * (ht - bottom - 8.0);
    let path: Vec<String> = points
        .iter()
        .map(|(x, y)| format!("{:.1},{:.1}", sx(f64::from(*x)), sy(*y)))
        .collect();
    let _ = write!(
        h,
        "<svg width=\"{w}\" height=\"{ht}\" role=\"img\" aria-label=\"occupancy against {label}\" style=\"margin-right:12px\">\
<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#8c959f\"/><line x1=\"{left}\" y1=\"8\" x2=\"{left}\" y2=\"{:.1}\" stroke=\"#8c959f\"/>\
<text x=\"0\" y=\"14\" font-size=\"10\">100%</text><text x=\"8\" y=\"{:.1}\" font-size=\"10\">0%</text>\
<polyline fill=\"none\" stroke=\"#0969da\" stroke-width=\"2\" points=\"{}\"/>",
        sy(0.0),
        w - 8.0,
        sy(0.0),
        sy(0.0),
        sy(0.0),
        path.join(" ")
    );
    if let Some((x, y)) = points
        .iter()
        .min_by_key(|(x, _)| x.abs_diff(current))
        .copied()
    {
        let _ = write!(
            h,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#cf222e\"><title>{current}: {}</title></circle>",
            sx(f64::from(x)),
            sy(y),
            pct(y)
        );
    }
    let _ = write!(
        h,
        "<text x=\"{left}\" y=\"{:.1}\" font-size=\"11\">{} ({}–{})</text></svg>",
        ht - 6.0,
        esc(label),
        xmin,
        xmax
    );
}
