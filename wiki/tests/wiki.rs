//! Loading, parsing and checking pages written as fixtures in the KernelWiki format.

use expect_test::{expect, Expect};
use kernaut_wiki::{check, CheckConfig, PageKind, Severity, Wiki, WikiConfig};

const SKILL: &str = "---
id: skill-widgets
type: skill
title: Widget tiling
evidence_level: spec
requires_sm: '>=8.0'
related_skills: [gadgets]
related_apis: [__widget_sync]
future_field: {nested: 1}
source_refs:
- source_id: docs
  path: guide.html
  anchor: widgets
---
## What
Widgets tile the work so that each warp owns a strip.

More text.

## When to use
### S1. Strip mining
Use strips of 32.
### S2: Double strips
Two at once.

## When NOT to use
Tiny inputs. See `pitfall-widgets#P2` and `pitfall-widgets#P9` and [gadgets](skill-gadgets).
";

const PITFALLS: &str = "---
id: pitfall-widgets
type: pitfall
title: Widget pitfalls
parent_skill: widgets
---
## P1: Widgets overflow
**Symptom**: results turn into inf after a few iterations.

**Root cause**: the accumulator is 16-bit.

**Example**:
```cuda
__half acc = 0; // ## P7: not a heading
```

**Fix**: accumulate in float.

**Detection**: look for inf in the output.

## Pitfall 2: Widgets stall
**Symptom:** the kernel is slower.
**Cause:** a barrier.
**Fix:** remove it.
";

fn load(files: &[(&str, &str)]) -> Wiki {
    Wiki::from_files(files.iter().copied())
}

fn show_diags(wiki: &Wiki, extra: &[kernaut_wiki::Diagnostic]) -> String {
    wiki.diagnostics
        .iter()
        .chain(extra)
        .map(|d| format!("{d}\n"))
        .collect()
}

fn check_diags(files: &[(&str, &str)], expect: Expect) {
    let wiki = load(files);
    let problems = check(&wiki, CheckConfig { strict: true });
    expect.assert_eq(&show_diags(&wiki, &problems));
}

#[test]
fn skill_page_is_typed() {
    let wiki = load(&[("w/skill.md", SKILL)]);
    let page = wiki.page("skill-widgets").unwrap();
    assert_eq!(page.kind, PageKind::Skill);
    assert_eq!(page.title, "Widget tiling");
    assert_eq!(page.frontmatter.requires_sm.as_deref(), Some(">=8.0"));
    assert_eq!(page.frontmatter.related_apis, ["__widget_sync"]);
    assert_eq!(page.frontmatter.source_refs[0].anchor, "widgets");
    assert_eq!(page.frontmatter.extra["future_field"], "nested: 1");
    let anchors: Vec<_> = page
        .sections
        .iter()
        .map(|s| format!("{}@{}", s.anchor, s.line))
        .collect();
    expect![[r#"["what@15", "when-to-use@20", "S1@21", "S2@23", "when-not-to-use@26"]"#]]
        .assert_eq(&format!("{anchors:?}"));
    assert_eq!(
        page.summary(),
        "Widgets tile the work so that each warp owns a strip."
    );
    assert_eq!(page.section("S2").unwrap().title, "Double strips");
}

#[test]
fn pitfalls_split_into_parts_in_both_styles() {
    let wiki = load(&[("w/p.md", PITFALLS)]);
    let page = wiki.page("pitfall-widgets").unwrap();
    let p: Vec<_> = page
        .pitfalls
        .iter()
        .map(|p| {
            format!(
                "{} {:?} | {:?} | {:?} | {:?} | {:?} | {:?}",
                p.anchor, p.title, p.symptom, p.cause, p.example, p.fix, p.detection
            )
        })
        .collect();
    expect![[r#"
        P1 "Widgets overflow" | Some("results turn into inf after a few iterations.") | Some("the accumulator is 16-bit.") | Some("```cuda\n__half acc = 0; // ## P7: not a heading\n```") | Some("accumulate in float.") | Some("look for inf in the output.")
        P2 "Widgets stall" | Some("the kernel is slower.") | Some("a barrier.") | None | Some("remove it.") | None"#]]
    .assert_eq(&p.join("\n"));
}

#[test]
fn dangling_links_and_missing_parts_are_reported_with_lines() {
    check_diags(
        &[("w/skill.md", SKILL), ("w/p.md", PITFALLS)],
        expect![[r#"
            w/p.md:21:1: warning: pitfall P2 has no Example, Detection; add **Example**:, **Detection**:
            w/p.md:1:1: warning: page has no `source_refs`; every fact needs a source
            w/skill.md:7:1: warning: dangling link: related skill `gadgets` names no page (expected skill-gadgets)
            w/skill.md:27:44: warning: dangling link `pitfall-widgets#P9`: page `pitfall-widgets` has no anchor `P9`
            w/skill.md:27:78: warning: dangling link `skill-gadgets`: no page `skill-gadgets`
        "#]],
    );
}

#[test]
fn bad_input_is_reported_and_skipped() {
    let broken_yaml = "---\nid: pitfall-x\ntitle: [unclosed\n---\n## P1: A\n";
    let no_id = "---\ntitle: No id here\ntype: skill\n---\n## What\nx\n";
    let unclosed = "---\nid: skill-open\n## What\n";
    let dup = SKILL.replace("Widget tiling", "Second copy");
    check_diags(
        &[
            ("w/a.md", broken_yaml),
            ("w/b.md", no_id),
            ("w/c.md", unclosed),
            ("w/skill.md", SKILL),
            ("w/z.md", &dup),
        ],
        expect![[r#"
            w/a.md:4:1: error: malformed YAML frontmatter: did not find expected ',' or ']'; the page was skipped
            w/b.md:2:1: error: page has no `id` in its frontmatter; add `id: <kind>-<topic>`; the page was skipped
            w/c.md:1:1: error: frontmatter starts with `---` but has no closing `---` line; add one after the YAML; the page was skipped
            w/z.md:1:1: error: duplicate id `skill-widgets` (already defined in w/skill.md); this page was skipped
            w/skill.md:7:1: warning: dangling link: related skill `gadgets` names no page (expected skill-gadgets)
            w/skill.md:27:19: warning: dangling link `pitfall-widgets#P2`: no page `pitfall-widgets`
            w/skill.md:27:44: warning: dangling link `pitfall-widgets#P9`: no page `pitfall-widgets`
            w/skill.md:27:78: warning: dangling link `skill-gadgets`: no page `skill-gadgets`
        "#]],
    );
}

#[test]
fn non_utf8_and_missing_folders_are_reported() {
    let dir = std::env::temp_dir().join(format!("kernaut-wiki-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/bad.md"),
        b"---\nid: skill-bad\n\xff\xfe\n---\n",
    )
    .unwrap();
    std::fs::write(dir.join("good.md"), PITFALLS).unwrap();
    std::fs::write(dir.join("README.md"), "# Our wiki\nJust a readme.\n").unwrap();
    let config = WikiConfig {
        no_builtin: true,
        dirs: vec![dir.clone(), dir.join("does-not-exist")],
    };
    let wiki = Wiki::load(&config);
    let shown = show_diags(&wiki, &[]).replace(&dir.display().to_string(), "DIR");
    expect![[r#"
        DIR/sub/bad.md:3:1: error: file is not valid UTF-8 (save it as UTF-8); the page was skipped
        DIR/does-not-exist: error: cannot read wiki folder (No such file or directory (os error 2)); check --wiki and KERNAUT_WIKI
    "#]]
    .assert_eq(&shown);
    assert_eq!(wiki.pages().len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn user_pages_override_builtin_ones_with_a_note() {
    let builtin = Wiki::load(&WikiConfig::builtin());
    let Some(first) = builtin.pages().first() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kernaut-wiki-override-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "---\nid: {}\ntype: skill\ntitle: Our own take\n---\n## What\nOurs.\n",
        first.id
    );
    std::fs::write(dir.join("mine.md"), text).unwrap();
    let wiki = Wiki::load(&WikiConfig {
        no_builtin: false,
        dirs: vec![dir.clone()],
    });
    assert_eq!(wiki.page(&first.id).unwrap().title, "Our own take");
    let notes: Vec<_> = wiki.problems(Severity::Note).collect();
    assert_eq!(notes.len(), 1);
    assert!(notes[0].message.contains("replaces the built-in page"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn skill_card_without_frontmatter_gets_id_from_file_name() {
    let card = "Tile Things\n\n# Skill: Tile Things\n\n## Purpose\nTiles.\n\n## Do not use this when\nNever.\n";
    let wiki = load(&[("cards/tile-things.md", card)]);
    let page = wiki.page("skill-tile-things").unwrap();
    assert_eq!(page.kind, PageKind::SkillCard);
    assert_eq!(page.title, "Tile Things");
}

#[test]
fn builtin_pages_all_parse() {
    let wiki = Wiki::load(&WikiConfig::builtin());
    let errors: Vec<String> = wiki
        .problems(Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn unknown_markers_on_cuda_blocks_are_reported_at_the_fence() {
    let page = "---
id: skill-blocks
type: skill
source_refs: [docs]
---
## What
```cuda fragment
x = 1;
```
```cuda fragmnet sm_90a
x = 2;
```
```cuda fragment deliberately-wrong sm_80 sm_90
x = 3;
```
```bash sudo
ls
```

## When NOT to use
Never.
";
    check_diags(
        &[("w/blocks.md", page)],
        expect![[r#"
            w/blocks.md:7:1: warning: a cuda code block is marked `fragment`, so it is not compiled; give the declarations it needs in hidden `#~` lines instead
            w/blocks.md:10:1: warning: unknown marker `fragmnet` on a cuda code block; known: fragment, deliberately-wrong, rdc, or an architecture such as `sm_90a`
            w/blocks.md:13:1: warning: a cuda code block is marked both `fragment` and `deliberately-wrong`; a deliberately wrong block must be complete, so that it fails for the reason the page gives
            w/blocks.md:13:1: warning: a cuda code block names more than one architecture
        "#]],
    );
}

const HIDDEN: &str = "---
id: pitfall-hidden
type: pitfall
title: Hidden context
source_refs:
- source_id: docs
  path: guide.html
  anchor: hidden
---
## P1: Waiting on an unarmed gizmo
**Symptom**: the warp stalls.

**Cause**: nothing arms the gizmo.

**Example**:
```cuda
#~ #include <gizmo.h>
#~ __device__ void wait_on_it(gizmo_t g) {
__gizmo_sync(g); // waits forever
    #~ arm(g);
#~ }
```

```bash
#~ a shell comment stays
```

**Fix**: see `pitfall-hidden#P2`.

**Detection**: a profiler.

## P2: Second
**Symptom**: s. **Cause**: c. **Example**: e. **Fix**: f. **Detection**: d.
";

#[test]
fn hidden_lines_reach_the_compiler_and_no_reader() {
    let wiki = load(&[("hidden.md", HIDDEN)]);
    let page = wiki.page("pitfall-hidden").expect("page");
    // Readers: the body, the sections and the pitfall's parts never show a hidden line.
    for text in [
        page.body.as_str(),
        page.section("P1").unwrap().content.as_str(),
        page.pitfall("P1").unwrap().example.as_deref().unwrap(),
    ] {
        assert!(!text.contains("wait_on_it"), "{text}");
        assert!(!text.contains("arm(g)"), "{text}");
        assert!(!text.contains("#~ #include"), "{text}");
        assert!(text.contains("__gizmo_sync(g); // waits forever"), "{text}");
    }
    assert!(page.body.contains("#~ a shell comment stays"));
    // Line numbers still point into the file: P2's heading is line 32 of the file.
    assert_eq!(page.section("P2").unwrap().line, 32);
    // The compiler: every line, hidden ones unprefixed, at the fence's file line.
    let blocks = page.code_blocks();
    assert_eq!(blocks[0].line, 16);
    assert_eq!(
        blocks[0].source(),
        "#include <gizmo.h>\n__device__ void wait_on_it(gizmo_t g) {\n__gizmo_sync(g); // waits forever\n    arm(g);\n}\n"
    );
    assert_eq!(blocks[0].shown(), "__gizmo_sync(g); // waits forever\n");
    // The file's own body comes back line for line.
    let file_body = HIDDEN.split_once("---\n## P1").map(|(_, b)| b).unwrap();
    assert_eq!(page.source_body(), format!("## P1{file_body}"));
    // And `wiki check` still reports at file lines: P2 (one line of parts) at its heading.
    let diags = check(&wiki, CheckConfig::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!((diags[0].line, diags[0].message.contains("P2")), (32, true));
}

#[test]
fn builtin_hidden_lines_are_only_in_code_blocks_and_never_in_the_body() {
    let wiki = Wiki::load(&WikiConfig::builtin());
    let mut pages_with_hidden = 0;
    for page in wiki.pages() {
        if page.hidden_lines.is_empty() {
            continue;
        }
        pages_with_hidden += 1;
        let (_, still_hidden) = kernaut_wiki::split_hidden(&page.body);
        assert!(still_hidden.is_empty(), "{}: {still_hidden:?}", page.id);
        for s in &page.sections {
            assert!(
                kernaut_wiki::split_hidden(&s.content).1.is_empty(),
                "{}#{}",
                page.id,
                s.anchor
            );
        }
        let compiled: String = page.code_blocks().iter().map(|b| b.source()).collect();
        for (_, line) in &page.hidden_lines {
            let code = line.trim_start().trim_start_matches("#~").trim();
            assert!(compiled.contains(code), "{}: {line}", page.id);
        }
    }
    assert!(pages_with_hidden > 40, "{pages_with_hidden}");
}
