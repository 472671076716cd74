//! Ranked search over fixture pages written in the KernelWiki format.

use expect_test::{expect, Expect};
use kernaut_index::{SearchOptions, WikiIndex};
use kernaut_wiki::{PageKind, Wiki};

const PITFALLS: &str = "---
id: pitfall-staging
type: pitfall
title: Staging buffer pitfalls
tags: [async-copy]
---
Pitfalls of staging tiles through shared memory.

## P1: Prefetch drained every iteration
**Symptom**: the pipelined version runs no faster than the plain loop; copies and math never overlap.

**Cause**: waiting for zero outstanding groups right after committing the next tile's group.

**Fix**: wait for all but the newest group (`cp.async.wait_group 1`).

**Detection**: the timeline shows copy and compute back to back.

## P2: Readers race the copy
**Symptom**: results are wrong only sometimes, differ from run to run.

**Cause**: threads read the tile before every thread's copy has landed.

**Fix**: put `__syncthreads()` after the wait.

**Detection**: compute-sanitizer --tool racecheck reports a shared-memory hazard.

## P3: Half accumulator saturates
**Symptom**: a long sum turns into inf or stops growing.

**Cause**: fp16 has 11 bits of significand and a maximum of 65504.

**Fix**: accumulate in float.

**Detection**: compare with a float reference.
";

const API: &str = "---
id: api-staging
type: api
title: Async copy wait and commit
symbols: [cp.async.wait_group, cp.async.commit_group, __pipeline_wait_prior]
signatures: ['cp.async.wait_group N;']
header: ptx
requires_sm: '>=8.0'
---
## Semantics
Waits until at most N of the most recent groups are still pending.
";

const SKILL: &str = "---
id: skill-staging
type: skill
title: Staging tiles in shared memory
---
## What
Copy a tile once from global memory, then let every thread of the block reuse it.

## When to use
### S1. Double buffering
Two buffers, one being filled while the other is read.

## When NOT to use
No reuse.
";

fn index() -> WikiIndex {
    let wiki = Wiki::from_files([("p.md", PITFALLS), ("a.md", API), ("s.md", SKILL)]);
    WikiIndex::build(&wiki).unwrap()
}

fn check(query: &str, kind: Option<PageKind>, expect: Expect) {
    let hits = index().search(query, &SearchOptions { limit: 3, kind });
    let shown: String = hits
        .iter()
        .map(|h| format!("{}  {}\n    {}\n", h.target(), h.title, h.snippet))
        .collect();
    expect.assert_eq(&shown);
}

#[test]
fn symptom_query_lands_on_the_pitfall_section() {
    check(
        "my pipelined version is not faster than the plain loop",
        None,
        expect![[r#"
            pitfall-staging#P1  Prefetch drained every iteration
                the **pipelined** **version** runs no **faster** than the **plain** **loop**; copies and math never overlap.
        "#]],
    );
}

#[test]
fn user_wording_finds_the_race() {
    check(
        "results differ between runs",
        None,
        expect![[r#"
            pitfall-staging#P2  Readers race the copy
                **results** are wrong only sometimes, **differ** from **run** to **run**.
            pitfall-staging#P1  Prefetch drained every iteration
                the pipelined version **runs** no faster than the plain loop; copies and math never overlap.
        "#]],
    );
}

#[test]
fn typos_and_half_typed_words_still_match() {
    let idx = index();
    let opts = SearchOptions {
        limit: 1,
        kind: None,
    };
    assert_eq!(
        idx.search("acumulator", &opts)[0].target(),
        "pitfall-staging#P3"
    );
    assert_eq!(idx.search("doubl", &opts)[0].target(), "skill-staging#S1");
    assert_eq!(
        idx.search("racech", &opts)[0].target(),
        "pitfall-staging#P2"
    );
}

#[test]
fn symbols_are_whole_tokens() {
    check(
        "cp.async.wait_group",
        None,
        expect![[r#"
            api-staging  Async copy wait and commit
                **Waits** until at most N of the most recent **groups** are still pending.
            pitfall-staging#P1  Prefetch drained every iteration
                the pipelined version runs no faster than the plain loop; copies and math never overlap.
            pitfall-staging  Staging buffer pitfalls
                Pitfalls of staging tiles through shared memory.
        "#]],
    );
}

#[test]
fn kind_filter_keeps_only_that_kind() {
    check(
        "buffer",
        Some(PageKind::Skill),
        expect![[r#"
            skill-staging#S1  Double buffering
                Two **buffers**, one being filled while the other is read.
            skill-staging  Staging tiles in shared memory
                Copy a tile once from global memory, then let every thread of the block reuse it. No reuse.
        "#]],
    );
}

#[test]
fn odd_queries_never_fail() {
    let idx = index();
    for q in [
        "",
        "   ",
        "\"unclosed",
        "title:",
        "a AND",
        "((",
        "cuda::",
        "*",
        "-",
        "~~~",
        "\u{0}",
    ] {
        let _ = idx.search(q, &SearchOptions::default());
    }
}

// Regression (issue 17): snippets marked `**my**` and `**than**`.
#[test]
fn snippets_never_mark_stop_words() {
    let hits = index().search(
        "my pipelined version is not faster than the plain loop",
        &SearchOptions::default(),
    );
    let snippet = &hits[0].snippet;
    assert!(snippet.contains("**pipelined**"), "{snippet}");
    for stop in ["my", "is", "not", "than", "the", "no"] {
        assert!(
            !snippet.contains(&format!("**{stop}**")),
            "{stop}: {snippet}"
        );
    }
}

// Regression (issue 17): a snippet began with `syncthreads**()` or cut a word at its end.
#[test]
fn snippets_never_cut_words_in_half() {
    let page = "---
id: pitfall-barrier
type: pitfall
title: Barrier pitfalls
---
## P1: Barrier moved into a branch
**Symptom**: the kernel hangs forever on some inputs but not on others, the GPU stays busy at one hundred percent and the watchdog eventually kills the process, right after a `__syncthreads()` was moved inside an `if` that depends on the thread index, which only happens in the reduction kernel that everybody copied from the old code base and nobody reads anymore.

**Cause**: not every thread reaches the barrier.

**Fix**: move it out.

**Detection**: synccheck.
";
    let idx = WikiIndex::build(&Wiki::from_files([("b.md", page)])).unwrap();
    let hits = idx.search("syncthreads moved", &SearchOptions::default());
    let snippet = &hits[0].snippet;
    assert!(
        snippet.contains("`**__syncthreads**()` was **moved**"),
        "{snippet}"
    );
    let source: Vec<&str> = page.split_whitespace().collect();
    let words: Vec<String> = snippet
        .trim_end_matches('…')
        .replace("**", "")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    // Every word of the snippet is a whole word of the page, the first and last included.
    for w in [words.first().unwrap(), words.last().unwrap()] {
        let w = w.trim_end_matches(|c: char| c.is_ascii_punctuation());
        assert!(
            source
                .iter()
                .any(|s| s.trim_end_matches(|c: char| c.is_ascii_punctuation()) == w),
            "`{w}` is not a word of the page: {snippet}"
        );
    }
}

// Regression (issue 17): `--limit 0` returned one hit.
#[test]
fn limit_zero_returns_no_hits() {
    let hits = index().search(
        "pipelined",
        &SearchOptions {
            limit: 0,
            kind: None,
        },
    );
    assert!(hits.is_empty());
}

// Issue 28: a page's own id found a different page first (`skill-occupancy` opened
// `pitfall-occupancy#P7`).
#[test]
fn an_id_or_id_with_anchor_opens_exactly_that_first() {
    let idx = index();
    let first = |q: &str| {
        idx.search(q, &SearchOptions::default())
            .first()
            .map(|h| h.target())
    };
    assert_eq!(first("skill-staging").as_deref(), Some("skill-staging"));
    assert_eq!(
        first("pitfall-staging#P2").as_deref(),
        Some("pitfall-staging#P2")
    );
    assert_eq!(
        first("Pitfall-Staging#p3").as_deref(),
        Some("pitfall-staging#P3")
    );
    // An anchor the page does not have falls back to the page.
    assert_eq!(
        first("pitfall-staging#P9").as_deref(),
        Some("pitfall-staging")
    );
    // The kind filter still applies.
    let api_only = idx.search(
        "pitfall-staging#P2",
        &SearchOptions {
            limit: 3,
            kind: Some(PageKind::Api),
        },
    );
    assert!(
        api_only.iter().all(|h| h.kind == PageKind::Api),
        "{api_only:?}"
    );
}

// Issue 28: "pizza recipe" got seven confident hits.
#[test]
fn nonsense_has_no_good_match_but_closest_pages() {
    let idx = index();
    let found = idx.search_report("pizza recipe", &SearchOptions::default());
    assert!(found.hits.is_empty(), "{:?}", found.hits);
    assert!(idx.search("pizza", &SearchOptions::default()).is_empty());
    assert!(idx
        .search(
            "chocolate cake with strawberries",
            &SearchOptions::default()
        )
        .is_empty());
    // Real questions, typos and half-typed words still answer.
    for q in [
        "copies never overlap",
        "race sometimes",
        "acumulator saturates",
        "doubl",
    ] {
        assert!(
            !idx.search(q, &SearchOptions::default()).is_empty(),
            "{q} found nothing"
        );
    }
    // On the built-in wiki the closest pages are offered, one hit per page.
    let builtin = WikiIndex::build(&Wiki::load(&kernaut_wiki::WikiConfig::builtin())).unwrap();
    let found = builtin.search_report("pizza recipe", &SearchOptions::default());
    assert!(found.hits.is_empty(), "{:?}", found.hits);
    assert!(!found.closest.is_empty() && found.closest.len() <= 3);
    let mut ids: Vec<&str> = found.closest.iter().map(|h| h.id.as_str()).collect();
    ids.dedup();
    assert_eq!(ids.len(), found.closest.len());
}

// Issue 28: a 15,000-word paste took 6.8 s.
#[test]
fn a_long_paste_answers_in_well_under_a_second() {
    let builtin = WikiIndex::build(&Wiki::load(&kernaut_wiki::WikiConfig::builtin())).unwrap();
    let words = [
        "shared",
        "memory",
        "bank",
        "conflict",
        "kernel",
        "slow",
        "0x7f3a00000400",
        "=========",
        "warp",
        "thread",
        "block",
        "register",
        "spill",
        "occupancy",
        "launch",
        "error",
    ];
    let paste: Vec<String> = (0..15_000)
        .map(|i| format!("{}{}", words[i % words.len()], i / 7))
        .collect();
    let paste = paste.join(" ");
    let start = std::time::Instant::now();
    let _ = builtin.search(&paste, &SearchOptions::default());
    let took = start.elapsed();
    // Debug builds are several times slower than release; the bound holds for both.
    assert!(took.as_millis() < 1000, "took {took:?}");
}

// Issue 28: `_op_st` variants of Nsight Compute's shared-memory metrics found nothing
// related, although the pages quote the `_op_ld` one.
#[test]
fn metric_names_match_across_operation_and_rollup() {
    let builtin = WikiIndex::build(&Wiki::load(&kernaut_wiki::WikiConfig::builtin())).unwrap();
    for q in [
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.max",
    ] {
        let hits = builtin.search(
            q,
            &SearchOptions {
                limit: 3,
                kind: None,
            },
        );
        assert!(
            hits.iter().any(|h| h.id.ends_with("bank-conflict")),
            "{q}: {:?}",
            hits.iter().map(|h| h.target()).collect::<Vec<_>>()
        );
    }
}

// Issue 28: a snippet mixed the page's `**Symptom**` bold with the match marks.
#[test]
fn snippets_mark_matches_only() {
    let page = "---
id: pitfall-bold
type: pitfall
title: Bold pitfalls
---
## P1: A gizmo stalls
**Symptom**: the kernel **stalls** whenever a **gizmo** is waited on, and the gizmo never arms.
";
    let idx = WikiIndex::build(&Wiki::from_files([("b.md", page)])).unwrap();
    let hits = idx.search("gizmo never arms", &SearchOptions::default());
    expect![[r#"the kernel stalls whenever a **gizmo** is waited on, and the **gizmo** **never** **arms**."#]]
        .assert_eq(&hits[0].snippet);
}

/// A symptom ("… and it gets slow") asks for the pitfall that explains it, ahead of the
/// technique section that uses the same words.
#[test]
fn a_symptom_puts_the_pitfall_before_the_technique() {
    const SKILL: &str = "---
id: skill-paths
type: skill
title: Keeping the lanes of a warp on one path
---
## What
Lanes of a warp that take different paths run one path after the other.

## When to use
### S1. Threads of the same warp that take different paths: slow, so choose paths per warp
Choose the path from the warp index so that the threads in the same warp take the same
path and no lane waits while the warp runs a path it does not take.
";
    const PITFALLS: &str = "---
id: pitfall-paths
type: pitfall
title: Paths - pitfalls
parent_skill: paths
---
## P1: Branching on the lane index
**Symptom**: threads of one warp take different paths and the kernel is slow.

**Cause**: the warp runs both paths, one after the other.

## P2: Launching the next kernel too late
**Symptom**: the next kernel waits until the one before it finishes.

**Cause**: kernels of a stream run one after the other.
";
    let wiki = Wiki::from_files([("s.md", SKILL), ("p.md", PITFALLS)]);
    let index = WikiIndex::build(&wiki).unwrap();
    let query = "threads in the same warp take different paths and it gets slow";
    let hits = index.search(
        query,
        &SearchOptions {
            limit: 3,
            kind: None,
        },
    );
    let got: Vec<String> = hits.iter().take(2).map(|h| h.target()).collect();
    assert_eq!(got, ["pitfall-paths#P1", "skill-paths#S1"]);
}
