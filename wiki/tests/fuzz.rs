//! Fuzzing the page parser and the checks with proptest (bounded: 256 cases per target
//! by default, `PROPTEST_CASES` for longer runs). Inputs are real built-in pages cut,
//! spliced and sprinkled with the tokens the parser keys on, plus arbitrary text. Every
//! input must parse without a panic into a page or a diagnostic, and the diagnostics
//! must point inside the file. Failures proptest finds are kept in
//! `proptest-regressions/fuzz.txt` and replayed first on every run.

use kernaut_wiki::{check, parse_page, CheckConfig, Origin, Wiki};
use proptest::prelude::*;

/// A few real pages of each kind, as the parser sees them.
const PAGES: &[&str] = &[
    include_str!("../pages/pitfalls/bank-conflict.md"),
    include_str!("../pages/pitfalls/async-copy.md"),
    include_str!("../pages/skills/bank-conflict.md"),
];

/// What the parser keys on.
const TOKENS: &[&str] = &[
    "---\n",
    "---",
    "\n",
    "\r\n",
    "## P1: ",
    "## S2: ",
    "### ",
    "# ",
    "**Symptom**: ",
    "**Cause**:",
    "**Fix**: ",
    "id: ",
    "type: api\n",
    "type: pitfall\n",
    "symbols: [",
    "]",
    "source_refs:\n  - source_id: x\n",
    "related_apis: [__hfma2, \"cp.async\"]\n",
    "requires_sm: \">=9.0\"\n",
    ": ",
    "- ",
    "[[",
    "](",
    "`",
    "```\n",
    "\t",
    "\u{feff}",
    "é",
    "🙂",
    "\0",
    "{",
    "&anchor ",
    "*anchor",
    "!!binary ",
];

/// Edits applied to a page: (position per mille, bytes removed, token inserted).
fn edits() -> impl Strategy<Value = Vec<(usize, usize, usize)>> {
    proptest::collection::vec((0..=1000usize, 0..64usize, 0..TOKENS.len()), 0..24)
}

fn mutate(page: &str, edits: &[(usize, usize, usize)]) -> String {
    let mut text = page.to_string();
    for &(at, remove, token) in edits {
        let mut start = text.len() * at / 1000;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + remove).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        text.replace_range(start..end, TOKENS[token]);
    }
    text
}

/// Parses `text` as a page and checks what comes back.
fn parse_and_check(text: &str) {
    let parsed = parse_page("fuzz.md", Origin::External, text, "fuzz");
    let lines = text.lines().count() as u32 + 1;
    for d in &parsed.diagnostics {
        assert!(
            d.line <= lines,
            "line {} of a {lines}-line file: {d}",
            d.line
        );
    }
    if let Some(page) = &parsed.page {
        assert!(!page.id.is_empty());
        for s in &page.sections {
            let _ = page.section(&s.anchor);
        }
        let _ = page.summary();
    }
    // The whole-wiki checks over the page.
    let wiki = Wiki::from_files([("fuzz.md", text)]);
    let _ = check(&wiki, CheckConfig::default());
}

/// `PROPTEST_CASES` when set (longer local runs), else `default` (CI).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn mutated_pages_parse_or_are_reported(page in 0..PAGES.len(), edits in edits()) {
        parse_and_check(&mutate(PAGES[page], &edits));
    }

    #[test]
    fn arbitrary_text_parses_or_is_reported(text in "(---\n)?[ -~\n\t:é#*\\[\\]]{0,400}") {
        parse_and_check(&text);
    }

    #[test]
    fn token_soup_parses_or_is_reported(tokens in proptest::collection::vec(0..TOKENS.len(), 0..80)) {
        let text: String = tokens.iter().map(|&t| TOKENS[t]).collect();
        parse_and_check(&text);
    }
}
