//! The held-out set (issue 16): about fifty realistic CUDA files under
//! `tests/data/heldout/`, written and labelled by hand before any rule was run on them
//! (see that folder's README). This test runs every rule over the set the way
//! `kernaut-lsp check` does (built-in wiki, each folder's `.kernaut.toml`, sm_90 by
//! default), matches the findings against `labels.toml`, prints the table per rule and
//! fails when precision or recall falls below the figures measured when the set was
//! made: a change that loses a true finding, or adds a false one, shows up here.
//!
//! Matching: a finding matches an `expect` label of the same rule within one line of
//! the label's `line` or of one of its `alt` lines; each finding matches at most one
//! label and each label at most one finding. Findings that match no `expect` label but
//! an `optional` one count neither way; every other finding is a false positive.
//! Hints count like warnings and errors.
//!
//! Run `cargo test -p kernaut-ide --test heldout -- --nocapture` to see the table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kernaut_ide::config::{parse_config, Severity};
use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge, PositionEncoding};

/// Precision measured on 2026-12-02 on branch h-heldfix, after the fixes for the set's
/// misses (over-unroll, dynamic-over-48k, over-capacity): 38 true of 40 findings (35 of
/// 38 at c79772e, before). The set has been tuned against since: a development set. On
/// 2026-12-06 one label (`pipeline_tail_commit.cu`'s commit under a tail guard, whose only
/// wait drains every group) moved to `optional`: 37 of 39, the same two false positives.
const PRECISION_FLOOR: (usize, usize) = (37, 39);
/// Recall measured on 2026-12-02 on branch h-heldfix: 38 of 38 labelled findings (35 of
/// 38 at c79772e, before); 37 of 37 since the label above moved.
const RECALL_FLOOR: (usize, usize) = (37, 37);

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/heldout")
}

/// One expected (or optional) finding.
#[derive(Clone, Debug)]
struct Label {
    rule: String,
    lines: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
struct FileLabels {
    expect: Vec<Label>,
    optional: Vec<Label>,
}

/// One finding: its rule, 1-based line and severity.
#[derive(Clone, Debug)]
struct Finding {
    rule: String,
    line: u32,
    severity: Severity,
    message: String,
}

fn parse_labels(text: &str) -> BTreeMap<String, FileLabels> {
    let value: toml::Value = toml::from_str(text).expect("labels.toml parses");
    let files = value["file"].as_array().expect("[[file]] tables");
    let label = |v: &toml::Value| {
        let mut lines = vec![v["line"].as_integer().expect("line") as u32];
        if let Some(alt) = v.get("alt").and_then(|a| a.as_array()) {
            lines.extend(alt.iter().map(|l| l.as_integer().expect("alt line") as u32));
        }
        Label {
            rule: v["rule"].as_str().expect("rule").to_string(),
            lines,
        }
    };
    let list = |f: &toml::Value, key: &str| -> Vec<Label> {
        f.get(key)
            .and_then(|l| l.as_array())
            .map(|l| l.iter().map(label).collect())
            .unwrap_or_default()
    };
    let mut out = BTreeMap::new();
    for f in files {
        let path = f["path"].as_str().expect("path").to_string();
        let labels = FileLabels {
            expect: list(f, "expect"),
            optional: list(f, "optional"),
        };
        assert!(
            out.insert(path.clone(), labels).is_none(),
            "{path} is labelled twice"
        );
    }
    out
}

fn near(label: &Label, finding: &Finding) -> bool {
    label.rule == finding.rule && label.lines.iter().any(|&l| l.abs_diff(finding.line) <= 1)
}

/// The outcome for one file: matched labels, missed labels, optional and false findings.
#[derive(Debug, Default)]
struct Outcome {
    tp: Vec<String>,
    fn_: Vec<Label>,
    optional: Vec<Finding>,
    fp: Vec<Finding>,
}

fn score(labels: &FileLabels, findings: &[Finding]) -> Outcome {
    let mut used = vec![false; findings.len()];
    let mut out = Outcome::default();
    for label in &labels.expect {
        match (0..findings.len()).find(|&i| !used[i] && near(label, &findings[i])) {
            Some(i) => {
                used[i] = true;
                out.tp.push(label.rule.clone());
            }
            None => out.fn_.push(label.clone()),
        }
    }
    for (i, f) in findings.iter().enumerate() {
        if used[i] {
            continue;
        }
        if labels.optional.iter().any(|o| near(o, f)) {
            out.optional.push(f.clone());
        } else {
            out.fp.push(f.clone());
        }
    }
    out
}

fn cuda_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cuda_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "cu" || e == "cuh") {
            out.push(p);
        }
    }
}

/// Runs the rules over the set like `kernaut-lsp check DIR` and returns the findings
/// of each file, keyed by its path relative to the set.
fn run_rules() -> BTreeMap<String, Vec<Finding>> {
    let root = data_dir().canonicalize().unwrap();
    let mut files = Vec::new();
    cuda_files(&root, &mut files);
    let mut host = AnalysisHost::new(AnalysisConfig {
        arch: Arch::parse("sm_90").unwrap(),
        arch_configured: false,
        ..AnalysisConfig::default()
    });
    host.set_knowledge(Arc::new(
        Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads"),
    ));
    let mut change = Change::new();
    let mut dirs: Vec<PathBuf> = files
        .iter()
        .map(|f| f.parent().unwrap().to_path_buf())
        .collect();
    dirs.dedup();
    for dir in dirs {
        let toml = dir.join(".kernaut.toml");
        if let Ok(text) = std::fs::read_to_string(&toml) {
            let config = parse_config(&text).expect("a valid .kernaut.toml");
            change.set_dir_config(dir.display().to_string(), Some(config));
        }
    }
    let mut ids = Vec::new();
    for path in &files {
        let id = host.file_id(&path.display().to_string());
        change.set_file(id, std::fs::read_to_string(path).unwrap());
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        ids.push((rel, id));
    }
    host.apply_change(change);
    let analysis = host.analysis();
    ids.into_iter()
        .map(|(rel, id)| {
            let index = analysis.line_index(id).unwrap();
            let findings = analysis
                .diagnostics(id)
                .unwrap()
                .into_iter()
                .map(|d| Finding {
                    rule: d.rule.to_string(),
                    line: index.line_col(d.range.start, PositionEncoding::Utf8).line + 1,
                    severity: d.severity,
                    message: d.message,
                })
                .collect();
            (rel, findings)
        })
        .collect()
}

#[test]
fn every_file_of_the_set_is_labelled_and_every_label_has_a_file() {
    let labels = parse_labels(&std::fs::read_to_string(data_dir().join("labels.toml")).unwrap());
    let root = data_dir();
    let mut files = Vec::new();
    cuda_files(&root, &mut files);
    let on_disk: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let labelled: Vec<String> = labels.keys().cloned().collect();
    let mut sorted = on_disk.clone();
    sorted.sort();
    assert_eq!(sorted, labelled);
    assert!(on_disk.len() >= 40, "the set has {} files", on_disk.len());
}

#[test]
fn matching_takes_each_finding_once_within_one_line() {
    let labels = parse_labels(
        r#"
[[file]]
path = "x.cu"
expect = [
  { rule = "a", line = 10 },
  { rule = "a", line = 11 },
  { rule = "b", line = 20, alt = [30] },
]
optional = [ { rule = "c", line = 40 } ]
"#,
    );
    let f = |rule: &str, line| Finding {
        rule: rule.into(),
        line,
        severity: Severity::Warning,
        message: String::new(),
    };
    // One `a` finding cannot satisfy both `a` labels; `b` matches through its alt line;
    // `c` is optional; `b` at 25 is two lines from anything.
    let out = score(
        &labels["x.cu"],
        &[f("a", 11), f("b", 31), f("c", 41), f("b", 25)],
    );
    assert_eq!(out.tp, ["a", "b"]);
    assert_eq!(out.fn_.len(), 1);
    assert_eq!(out.fn_[0].lines, [11]);
    assert_eq!(out.optional.len(), 1);
    assert_eq!(out.fp.len(), 1);
    assert_eq!(out.fp[0].line, 25);
}

#[test]
fn heldout_precision_and_recall_stay_at_least_where_they_were_measured() {
    let labels = parse_labels(&std::fs::read_to_string(data_dir().join("labels.toml")).unwrap());
    let findings = run_rules();
    // rule -> (tp, fp, fn, optional)
    let mut table: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut hints = 0;
    let mut details = String::new();
    for (path, labels) in &labels {
        let found = findings.get(path).cloned().unwrap_or_default();
        hints += found
            .iter()
            .filter(|f| f.severity == Severity::Hint)
            .count();
        let out = score(labels, &found);
        for r in &out.tp {
            table.entry(r.clone()).or_default()[0] += 1;
        }
        for f in &out.fp {
            table.entry(f.rule.clone()).or_default()[1] += 1;
            details.push_str(&format!(
                "FP {path}:{} [{}] {}\n",
                f.line, f.rule, f.message
            ));
        }
        for l in &out.fn_ {
            table.entry(l.rule.clone()).or_default()[2] += 1;
            details.push_str(&format!("FN {path}:{:?} [{}]\n", l.lines, l.rule));
        }
        for f in &out.optional {
            table.entry(f.rule.clone()).or_default()[3] += 1;
        }
    }
    let total = table.values().fold([0; 4], |mut acc, row| {
        (0..4).for_each(|i| acc[i] += row[i]);
        acc
    });
    let [tp, fp, fn_, optional] = total;
    println!(
        "{:<42} {:>3} {:>3} {:>3} {:>4}",
        "rule", "TP", "FP", "FN", "opt"
    );
    for (rule, [t, f, n, o]) in &table {
        println!("{rule:<42} {t:>3} {f:>3} {n:>3} {o:>4}");
    }
    println!("{:<42} {tp:>3} {fp:>3} {fn_:>3} {optional:>4}", "total");
    println!(
        "precision {tp}/{} = {:.3}, recall {tp}/{} = {:.3}; {hints} of the findings are hints",
        tp + fp,
        tp as f64 / (tp + fp).max(1) as f64,
        tp + fn_,
        tp as f64 / (tp + fn_).max(1) as f64,
    );
    print!("{details}");

    // Integer comparison of tp / (tp + fp) >= floor.0 / floor.1, so no rounding.
    let (pn, pd) = PRECISION_FLOOR;
    let (rn, rd) = RECALL_FLOOR;
    assert!(
        tp * pd >= pn * (tp + fp),
        "precision fell below {pn}/{pd}:\n{details}"
    );
    assert!(
        tp * rd >= rn * (tp + fn_),
        "recall fell below {rn}/{rd}:\n{details}"
    );
}
