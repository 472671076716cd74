//! Allow comments: which lines each `// kernaut: allow(...)` silences, and the ids in them
//! that name no rule.

use super::*;

/// A hint for each id of an `allow(...)` comment that names no rule (a misspelling
/// silences nothing), with the closest id.
pub(crate) fn unknown_allow_ids(
    text: &str,
    comments: &[kernaut_syntax::AllowComment],
    severity: Severity,
) -> Vec<RuleDiagnostic> {
    let mut out = Vec::new();
    for c in comments {
        let comment = text.get(c.range.clone()).unwrap_or("");
        for id in &c.rule_ids {
            if is_allow_id(id) {
                continue;
            }
            let near = closest_rule_id(id);
            // The id as written in the list, after `(` or `,`: the fix replaces it with
            // the closest id (for a person to confirm: it changes what is silenced).
            let written = comment
                .match_indices(id.as_str())
                .find(|(i, _)| comment[..*i].trim_end().ends_with(['(', ',']));
            let fixes = match (near, written) {
                (Some(near), Some((i, _))) => vec![Fix {
                    title: format!("Change `{id}` to `{near}`"),
                    safe: false,
                    edits: vec![TextEdit::replace(
                        c.range.start + i..c.range.start + i + id.len(),
                        near,
                    )],
                }],
                _ => Vec::new(),
            };
            let message = match near {
                Some(near) => format!(
                    "`allow({id})` names no rule and silences nothing; did you mean `{near}`?"
                ),
                None => format!(
                    "`allow({id})` names no rule and silences nothing (`kernaut-lsp check --list-rules` lists them)"
                ),
            };
            out.push(RuleDiagnostic {
                rule: UNKNOWN_RULE,
                severity,
                range: c.range.clone(),
                message,
                wiki: String::new(),
                fixes,
            });
        }
    }
    out
}

/// Whether an id written in an `allow(...)` comment names `rule`: the full id, its group
/// (`async-copy`), or its last segment.
pub(crate) fn allows(written: &str, rule: &str) -> bool {
    written == rule
        || written == "all"
        || rule
            .split_once('/')
            .is_some_and(|(group, name)| written == group || written == name)
}

/// The lines each `allow` comment silences: a trailing comment its own line, a comment on
/// its own line the next line of code.
pub(crate) fn allowed_lines(
    file: &SourceFile,
    comments: &[kernaut_syntax::AllowComment],
) -> Vec<(usize, Vec<String>)> {
    if comments.is_empty() {
        return Vec::new();
    }
    let text = file.text();
    let lines: Vec<&str> = text.split('\n').collect();
    comments
        .iter()
        .map(|c| {
            let mut line = c.line;
            if !c.trailing {
                line += 1;
                while lines.get(line).is_some_and(|l| {
                    let t = l.trim();
                    t.is_empty() || t.starts_with("//")
                }) {
                    line += 1;
                }
            }
            (line, c.rule_ids.clone())
        })
        .collect()
}
