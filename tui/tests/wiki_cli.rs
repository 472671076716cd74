//! `ktui search`, `show`, `symbol` and `wiki check`, run as a user runs them.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ktui(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args(args)
        .env_remove("KERNAUT_WIKI")
        .output()
        .expect("ktui runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small wiki of our own in a temp folder.
fn fixture_wiki(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ktui-wiki-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("api")).unwrap();
    std::fs::write(
        dir.join("p.md"),
        "---
id: pitfall-gizmo
type: pitfall
title: Gizmo pitfalls
related_apis: [__gizmo_sync]
---
## P1: Gizmo stalls the warp
**Symptom**: the kernel stalls whenever a gizmo is waited on.

**Cause**: the wait is issued before the gizmo was armed.

**Example**:
```cuda
#~ #include <gizmo.h>
#~ __device__ void hidden_context(gizmo_t g) {
__gizmo_sync(g); // waits forever
#~ }
```

**Fix**: arm it first.

**Detection**: the profiler shows the warp stalled on the gizmo.
",
    )
    .unwrap();
    std::fs::write(
        dir.join("api/gizmo.md"),
        "---
id: api-gizmo
type: api
title: Gizmo sync
symbols: [__gizmo_sync, gizmo.wait]
signatures: ['void __gizmo_sync(gizmo_t g);']
header: gizmo.h
requires_sm: '>=8.0'
related_pitfalls: [pitfall-gizmo#P1]
source_refs:
- source_id: gizmo-docs
  path: gizmo.html
  anchor: sync
---
## Semantics
Blocks until the gizmo fires.
",
    )
    .unwrap();
    dir
}

#[test]
fn search_prints_ranked_hits_and_json() {
    let dir = fixture_wiki("search");
    let d = dir.to_str().unwrap();
    let out = ktui(&[
        "search",
        "--no-builtin",
        "--wiki",
        d,
        "--",
        "warp is stalled waiting",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("pitfall-gizmo#P1  Gizmo stalls the warp\n"),
        "{text}"
    );
    // Piped, the snippet is plain text: no Markdown marks.
    assert!(text.contains("    the kernel stalls whenever"), "{text}");
    assert!(!text.contains("**"), "{text}");

    let out = ktui(&["search", "--json", "--no-builtin", "--wiki", d, "gizmo"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &v[0];
    for key in ["id", "anchor", "title", "kind", "score", "snippet"] {
        assert!(first.get(key).is_some(), "missing {key} in {first}");
    }

    let out = ktui(&[
        "search",
        "--no-builtin",
        "--wiki",
        d,
        "--kind",
        "api",
        "gizmo",
    ]);
    assert!(stdout(&out).starts_with("api-gizmo  Gizmo sync"));

    let out = ktui(&["search", "--no-builtin", "--wiki", d, "zzzqqq"]);
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 28: on a terminal (`--color always` stands in for one) the matched words are in
/// the UI's match style (bold yellow, not the plain bold a page uses) and inline code in
/// its code style without backticks; `--color never` and a pipe print plain text.
#[test]
fn search_styles_a_terminal_and_prints_plain_text_into_a_pipe() {
    let dir = fixture_wiki("search-color");
    let d = dir.to_str().unwrap();
    let base = ["search", "--no-builtin", "--wiki", d];
    let styled = stdout(&ktui(
        &[&base[..], &["--color", "always", "gizmo waited"]].concat(),
    ));
    assert!(styled.contains("\u{1b}[1;93mgizmo\u{1b}[0m"), "{styled:?}");
    assert!(!styled.contains("**"), "{styled:?}");
    let never = stdout(&ktui(
        &[&base[..], &["--color", "never", "gizmo waited"]].concat(),
    ));
    let piped = stdout(&ktui(&[&base[..], &["gizmo waited"]].concat()));
    assert_eq!(never, piped);
    assert!(!piped.contains('\u{1b}'), "{piped:?}");
    assert!(!piped.contains("**"), "{piped:?}");
    // `NO_COLOR` does not override an explicit `--color always`, as in ripgrep.
    let forced = Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args([&base[..], &["--color", "always", "gizmo waited"]].concat())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(stdout(&forced), styled);
    let _ = std::fs::remove_dir_all(&dir);
}

// Issue 28: nonsense got confident answers; an id opened another page first; an empty
// query searched for nothing.
#[test]
fn search_says_no_good_match_opens_ids_and_rejects_an_empty_query() {
    let out = ktui(&["search", "pizza", "recipe"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "no good match for `pizza recipe`; the closest pages, in case one is meant:\n  "
        ),
        "{err}"
    );
    assert!(
        err.lines().count() >= 2 && err.lines().count() <= 4,
        "{err}"
    );

    let out = ktui(&["search", "skill-occupancy"]);
    assert!(out.status.success());
    assert!(
        stdout(&out).starts_with("skill-occupancy  Occupancy"),
        "{}",
        stdout(&out)
    );
    let out = ktui(&["search", "pitfall-bank-conflict#P1"]);
    assert!(stdout(&out).starts_with("pitfall-bank-conflict#P1  "));

    for q in ["", "   "] {
        let out = ktui(&["search", q]);
        assert_eq!(out.status.code(), Some(2), "{q:?}");
        assert_eq!(
            stderr(&out),
            "ktui: error: the query is empty: give a symptom, a symbol or a page id to look for\n"
        );
    }
}

#[test]
fn show_renders_a_section_without_yaml() {
    let dir = fixture_wiki("show");
    let d = dir.to_str().unwrap();
    let out = ktui(&["show", "--no-builtin", "--wiki", d, "pitfall-gizmo#P1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("pitfall-gizmo#P1  Gizmo stalls the warp\n"));
    assert!(text.contains("    __gizmo_sync(g); // waits forever"));
    assert!(!text.contains("related_apis:"));

    let out = ktui(&["show", "--no-builtin", "--wiki", d, "api-gizmo"]);
    let text = stdout(&out);
    assert!(text.contains("header: gizmo.h"), "{text}");
    assert!(!text.contains("---"), "{text}");

    let out = ktui(&["show", "--no-builtin", "--wiki", d, "pitfall-gizmo#P9"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("its anchors are: P1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn symbol_resolves_names_as_written() {
    let dir = fixture_wiki("symbol");
    let d = dir.to_str().unwrap();
    let out = ktui(&[
        "symbol",
        "--json",
        "--no-builtin",
        "--wiki",
        d,
        "gizmo.wait.shared::cta",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["symbol"], "gizmo.wait");
    assert_eq!(v["api"], "api-gizmo");
    assert_eq!(v["matched"], "normalized");

    let out = ktui(&["symbol", "--no-builtin", "--wiki", d, "__gizmo_sync"]);
    let text = stdout(&out);
    assert!(text.contains("related pages: pitfall-gizmo"), "{text}");
    assert!(text.contains("void __gizmo_sync(gizmo_t g);"), "{text}");

    let out = ktui(&["symbol", "--no-builtin", "--wiki", d, "__nothing"]);
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wiki_check_reports_problems_and_exit_codes() {
    let dir = fixture_wiki("check");
    let d = dir.to_str().unwrap();
    let out = ktui(&["wiki", "check", "--no-builtin", "--wiki", d]);
    assert!(out.status.success(), "{}", stdout(&out));
    // Issue 28: "1 api pages", "1 warnings".
    assert!(
        stdout(&out).contains("2 pages loaded (1 api page, 2 symbols, 3 search documents)"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains(": 0 errors, 0 warnings"));

    std::fs::write(dir.join("broken.md"), "---\nid: [oops\n---\n").unwrap();
    let out = ktui(&["wiki", "check", "--no-builtin", "--wiki", d]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("broken.md:3:1: error: malformed YAML"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains(": 1 error, 0 warnings"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("2 pages loaded"));

    let out = ktui(&[
        "wiki",
        "check",
        "--no-builtin",
        "--wiki",
        "/definitely/not/here",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("/definitely/not/here: error"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn builtin_wiki_passes_its_own_check() {
    let out = ktui(&["wiki", "check"]);
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn usage_errors_exit_2() {
    let out = ktui(&["search"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ktui(&["show", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn env_wiki_paths_are_loaded() {
    let dir = fixture_wiki("env");
    let out = Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args(["symbol", "--no-builtin", "__gizmo_sync"])
        .env("KERNAUT_WIKI", &dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hidden_lines_of_code_blocks_are_never_shown() {
    let dir = fixture_wiki("hidden");
    let d = dir.to_str().unwrap();
    for args in [
        &["show", "--no-builtin", "--wiki", d, "pitfall-gizmo"][..],
        &["show", "--no-builtin", "--wiki", d, "pitfall-gizmo#P1"],
        &[
            "search",
            "--no-builtin",
            "--wiki",
            d,
            "--color",
            "always",
            "gizmo waits forever",
        ],
        &["search", "--no-builtin", "--wiki", d, "gizmo waits forever"],
        &[
            "search",
            "--no-builtin",
            "--wiki",
            d,
            "--json",
            "gizmo waits forever",
        ],
    ] {
        let out = ktui(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.contains("hidden_context"), "{args:?}: {text}");
        assert!(!text.contains("#~"), "{args:?}: {text}");
        assert!(!text.contains("gizmo.h>"), "{args:?}: {text}");
    }
    // Words that only a hidden line has are not searchable either.
    let out = ktui(&["search", "--no-builtin", "--wiki", d, "hidden_context"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    // `wiki check` reads the hidden lines as code, not as a problem.
    let out = ktui(&["wiki", "check", "--no-builtin", "--wiki", d]);
    assert!(!stdout(&out).contains("#~"), "{}", stdout(&out));
    let _ = std::fs::remove_dir_all(&dir);

    // The built-in pages: an excerpt whose kernel and declarations are hidden.
    let out = ktui(&["show", "pitfall-async-copy#P3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("__pipeline_wait_prior(stages - 1);"),
        "{text}"
    );
    assert!(!text.contains("pick_stages(int n) {"), "{text}");
    assert!(!text.contains("#~"), "{text}");
}

#[test]
fn minimum_architectures_and_headers_are_written_one_way() {
    // `__hfma2`: the half overload needs sm_53 and is declared in cuda_fp16.h, the bf16 one
    // needs sm_80 and is declared in cuda_bf16.h; the hover writes `sm_53` too.
    let out = ktui(&["symbol", "__hfma2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("header: cuda_fp16.h, cuda_bf16.h\n"),
        "{text}"
    );
    assert!(text.contains("requires: sm_53\n"), "{text}");

    let out = ktui(&["show", "api-fp16-arithmetic"]);
    let text = stdout(&out);
    let head: String = text.lines().take(5).collect::<Vec<_>>().join("\n");
    assert!(
        head.contains("requires sm_50 (some symbols and overloads: sm_53, sm_80)"),
        "{head}"
    );
    assert!(
        head.contains("header for `__nv_bfloat162` overloads: cuda_bf16.h"),
        "{head}"
    );
    assert!(!head.contains(">="), "{head}");
}
