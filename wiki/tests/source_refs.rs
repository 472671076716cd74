//! `source_refs` that name a file of this repository must resolve: the file exists and
//! the anchor is one of its headings (Markdown) or text of it (any other file).

use std::path::{Path, PathBuf};

use expect_test::expect;
use kernaut_wiki::{
    check, check_source_refs, github_slug, is_repo_ref, markdown_headings, CheckConfig, Wiki,
    WikiConfig,
};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the wiki crate sits inside the repository")
        .to_path_buf()
}

#[test]
fn builtin_pages_cite_repository_files_that_exist_with_anchors_they_hold() {
    let wiki = Wiki::load(&WikiConfig::builtin());
    let cited: usize = wiki
        .pages()
        .iter()
        .map(|p| {
            p.frontmatter
                .source_refs
                .iter()
                .filter(|r| is_repo_ref(r))
                .count()
        })
        .sum();
    // The probes back the measured pages; if none were cited, this test would check nothing.
    assert!(
        cited >= 30,
        "only {cited} source_refs name repository files"
    );
    let problems = check_source_refs(&wiki, &repo_root());
    let listed: String = problems.iter().map(|d| format!("{d}\n")).collect();
    assert!(
        problems.is_empty(),
        "{} stale source_refs:\n{listed}",
        problems.len()
    );
    // `wiki check` runs the same check on the built-in pages from a checkout.
    let from_check: Vec<String> = check(&wiki, CheckConfig::default())
        .iter()
        .filter(|d| d.message.starts_with("source_ref"))
        .map(|d| d.to_string())
        .collect();
    assert_eq!(from_check, Vec::<String>::new());
}

/// A throwaway repository with one Markdown write-up and one CSV (one per test, so
/// that tests running in parallel do not rewrite each other's files).
fn fixture_repo(test: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("kernaut-wiki-refs-{}-{test}", std::process::id()));
    let probe = root.join("wiki/probes/widgets");
    std::fs::create_dir_all(&probe).unwrap();
    std::fs::write(
        probe.join("README.md"),
        "# Widget probe (H200)\n\n## Results (run2, median GB/s)\n\n| a | b |\n\n```\n## not a heading\n```\n\n### Results (run2, median GB/s)\n\n## Co-residency: 1 extra block\n",
    )
    .unwrap();
    std::fs::write(
        probe.join("widgets.csv"),
        "kernel,num_regs,local_bytes\nw16,24,1608\n",
    )
    .unwrap();
    root
}

fn page(refs: &str) -> String {
    format!("---\nid: skill-widgets\ntype: skill\nsource_refs:\n{refs}---\n## When NOT to use\nNever.\n")
}

#[test]
fn repository_refs_resolve_by_heading_text_slug_or_file_text() {
    let root = fixture_repo("good");
    let good = page(
        "- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/README.md, anchor: 'Results (run2, median GB/s)'}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/README.md, anchor: results-run2-median-gbs-1}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/README.md, anchor: co-residency-1-extra-block}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/widgets.csv, anchor: local_bytes}
- {source_id: cuda-programming-guide, path: 'https://docs.nvidia.com/cuda/', anchor: no-such-section}
- {source_id: cuda-headers, path: include/cuda_fp16.h, anchor: __hfma2}
",
    );
    let wiki = Wiki::from_files([("good/skill.md", good.as_str())]);
    let problems: String = check_source_refs(&wiki, &root)
        .iter()
        .map(|d| format!("{d}\n"))
        .collect();
    expect![[r#""#]].assert_eq(&problems);
}

#[test]
fn stale_repository_refs_name_the_page_the_path_the_anchor_and_the_headings() {
    let root = fixture_repo("bad");
    let bad = page(
        "- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/README.md, anchor: 'Claim 3 (widgets.md)'}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/README.md, anchor: results-run2-median-gb-s}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/README.md, anchor: not-a-heading}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/widgets.csv, anchor: all-rows}
- {source_id: kernaut-groundtruth, path: wiki/probes/widgets/widgets.csv, anchor: ''}
- {source_id: kernaut-groundtruth, path: wiki/probes/gadgets/README.md, anchor: results}
- {source_id: kernaut-groundtruth, path: ../outside/README.md, anchor: results}
- {source_id: kernelwiki, path: wiki/probes/widgets, anchor: results}
",
    );
    let wiki = Wiki::from_files([("bad/skill.md", bad.as_str())]);
    let problems: String = check_source_refs(&wiki, &root)
        .iter()
        .map(|d| format!("{d}\n"))
        .collect();
    expect![[r#"
        bad/skill.md:4:1: warning: source_ref `wiki/probes/widgets/README.md` has no heading `Claim 3 (widgets.md)`; its headings: `Widget probe (H200)` (widget-probe-h200), `Results (run2, median GB/s)` (results-run2-median-gbs), `Results (run2, median GB/s)` (results-run2-median-gbs-1), `Co-residency: 1 extra block` (co-residency-1-extra-block)
        bad/skill.md:4:1: warning: source_ref `wiki/probes/widgets/README.md` has no heading `results-run2-median-gb-s`; its headings: `Widget probe (H200)` (widget-probe-h200), `Results (run2, median GB/s)` (results-run2-median-gbs), `Results (run2, median GB/s)` (results-run2-median-gbs-1), `Co-residency: 1 extra block` (co-residency-1-extra-block)
        bad/skill.md:4:1: warning: source_ref `wiki/probes/widgets/README.md` has no heading `not-a-heading`; its headings: `Widget probe (H200)` (widget-probe-h200), `Results (run2, median GB/s)` (results-run2-median-gbs), `Results (run2, median GB/s)` (results-run2-median-gbs-1), `Co-residency: 1 extra block` (co-residency-1-extra-block)
        bad/skill.md:4:1: warning: source_ref `wiki/probes/widgets/widgets.csv` does not contain `all-rows`; the anchor of a file that is not Markdown is text of the file (a column, key or name)
        bad/skill.md:4:1: warning: source_ref `wiki/probes/widgets/widgets.csv` has no anchor; name a heading or a key of the file
        bad/skill.md:4:1: warning: source_ref `wiki/probes/gadgets/README.md` (anchor `results`) names no file of the repository; give a path relative to the repository root
        bad/skill.md:4:1: warning: source_ref `../outside/README.md` (anchor `results`) names no file of the repository; give a path relative to the repository root
        bad/skill.md:4:1: warning: source_ref `wiki/probes/widgets` (anchor `results`) names no file of the repository; give a path relative to the repository root
    "#]].assert_eq(&problems);
}

#[test]
fn headings_and_slugs_follow_github() {
    let text = "# Title\n## Results (run2, median GB/s)\n```\n# fenced\n```\n#not-a-heading\n    # indented code\n### Results (run2, median GB/s)\n## Claim_3: a — b ##\n";
    let shown: String = markdown_headings(text)
        .iter()
        .map(|(h, s)| format!("{h} => {s}\n"))
        .collect();
    expect![[r#"
        Title => title
        Results (run2, median GB/s) => results-run2-median-gbs
        Results (run2, median GB/s) => results-run2-median-gbs-1
        Claim_3: a — b => claim_3-a--b
    "#]]
    .assert_eq(&shown);
    assert_eq!(
        github_slug("Co-residency  (B x 132)"),
        "co-residency--b-x-132"
    );
}
