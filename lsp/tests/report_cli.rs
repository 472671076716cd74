//! `kernaut-lsp report`: the Markdown, JSON and HTML of the kernel report show the numbers
//! of the one `kernel_report` query, which the kernel hover and the report lens show too;
//! the HTML page renders in headless Chromium (skipped with a printed reason where
//! Chromium is not installed).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use kernaut_ide::kernel_report::ReportConfig;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use serde_json::Value;

fn naive() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ide/tests/data/report/naive_transpose.cu")
}

fn report(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
        .arg("report")
        .args(args)
        .output()
        .expect("kernaut-lsp runs");
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn hover_lens_markdown_json_and_html_show_the_same_numbers() {
    let path = naive();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()));
    let id = host.set_file(&path.canonicalize().unwrap().display().to_string(), &text);
    let a = host.analysis();
    let r = a
        .kernel_report(id, "transpose_naive", ReportConfig { what_ifs: true })
        .unwrap()
        .unwrap();
    let top = r.top_costs(3);
    assert_eq!(top.len(), 2);

    // The hover and the lens.
    let hover = a
        .hover(id, text.find("transpose_naive(float").unwrap() + 2)
        .unwrap()
        .unwrap();
    for line in &top {
        assert!(hover.markdown.contains(line.as_str()), "{line}");
    }
    assert_eq!(a.report_lenses(id).unwrap()[0].title, r.lens_title());

    let target = format!("{}:transpose_naive", path.display());
    // Markdown: the report's own rendering, the same lines.
    let (code, md, err) = report(&[&target]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(md, r.markdown());
    for line in &top {
        assert!(md.contains(line.as_str()));
    }
    // JSON: the same figures.
    let (code, json, err) = report(&[&target, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["total_transactions"], r.total_transactions);
    for (c, j) in r.costs.iter().zip(v["costs"].as_array().unwrap()) {
        assert_eq!(j["rule"], c.rule.as_str());
        assert_eq!(j["share"].as_f64(), c.share);
        assert_eq!(j["extra_transactions"].as_u64(), c.extra_transactions);
    }
    assert_eq!(v["shared"][1]["wavefronts"], 32);
    assert_eq!(v["global"][1]["sectors"], 32);
    assert_eq!(
        v["what_ifs"][0]["transactions_after"],
        r.what_ifs[0].transactions_after
    );
    // HTML: the same lines (code spans as <code>), the cost bars, bank maps and curves.
    let (code, html, err) = report(&[&target, "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    for c in &r.costs {
        let share = format!("{:.0}%", c.share.unwrap() * 100.0);
        assert!(html.contains(&format!(">{share}</text>")), "bar {share}");
        assert!(html.contains(&c.summary), "{}", c.summary);
    }
    assert!(html.contains(&r.what_ifs[0].summary));
    assert_eq!(
        html.matches("aria-label=\"bank map\"").count(),
        r.shared.len()
    );
    assert_eq!(html.matches("aria-label=\"occupancy against").count(), 3);
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
}

#[test]
fn report_of_every_kernel_and_errors() {
    let path = naive();
    let (code, md, _) = report(&[&path.display().to_string()]);
    assert_eq!(code, 0);
    assert!(md.starts_with("# Kernel report: `transpose_naive` on sm_90\n"));
    // A line inside the kernel, or the line of its launch, names it.
    for line in [14, 25] {
        let (code, by_line, err) = report(&[&format!("{}:{line}", path.display())]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(by_line, md, "line {line}");
    }
    let (code, _, err) = report(&[&format!("{}:3", path.display())]);
    assert_eq!(code, 1);
    assert!(err.contains("line 3 of"), "{err}");
    let (code, _, err) = report(&[&format!("{}:no_such_kernel", path.display())]);
    assert_eq!(code, 1);
    assert!(err.contains("defines no kernel `no_such_kernel`"), "{err}");
}

#[test]
fn html_renders_in_headless_chromium() {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let Some(chromium) = chromium else {
        println!("skipped: no chromium on PATH (Debian: apt-get install chromium)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("kernaut-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, html, err) = report(&[
        &format!("{}:transpose_naive", naive().display()),
        "--format",
        "html",
    ]);
    assert_eq!(code, 0, "{err}");
    let page = dir.join("report.html");
    std::fs::write(&page, html).unwrap();
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
    ];
    let dom = Command::new(chromium)
        .args(flags)
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("Kernel report: <code>transpose_naive</code>"),
        "{dom}"
    );
    assert!(dom.matches("<svg").count() >= 6, "{dom}");
    let png = dir.join("report.png");
    let shot = Command::new(chromium)
        .args(flags)
        .arg("--window-size=1200,1700")
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let bytes = std::fs::read(&png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&shot.stderr)
        )
    });
    assert_eq!(&bytes[1..4], b"PNG");
    assert!(
        bytes.len() > 20_000,
        "a blank page is smaller: {} bytes",
        bytes.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// With a CUDA toolkit (found as the server finds it: `CUDA_HOME`, `PATH` or a Python
/// environment with NVIDIA's wheels), `--resources` compiles the spilling known case and
/// the report ranks its spills first.
#[test]
fn a_spilling_kernel_with_a_toolkit_ranks_its_spills_first() {
    if let Err(e) = kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig::default())
    {
        println!("skipped: no CUDA toolkit here ({e})");
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ide/tests/data/report/spilling.cu");
    let (code, json, err) = report(&[
        &format!("{}:spill_heavy", path.display()),
        "--resources",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["costs"][0]["rule"], "resources/spills", "{json}");
    assert_eq!(v["costs"][0]["kind"], "spills");
    assert!(
        v["compiled"]["spill_store_bytes"].as_u64().unwrap() > 0,
        "{json}"
    );
}
