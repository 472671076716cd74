//! Rule ids: look-up by id, the ids an `allow` comment may name, and the closest id to a
//! misspelt one.

use super::*;

/// The rule with this id.
pub fn find_rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The id of the hint for an `allow(...)` comment that names no rule.
pub const UNKNOWN_RULE: &str = "config/unknown-rule";

/// Every rule id a user may name in `.kernaut.toml`: the rules of [`RULES`] and those
/// reported from compiler output ([`crate::compiled::SPILLS_RULE`]), and this hint.
pub fn rule_ids() -> impl Iterator<Item = &'static str> {
    RULES
        .iter()
        .map(|r| r.id)
        .chain([crate::compiled::SPILLS_RULE, UNKNOWN_RULE])
}

/// Whether `.kernaut.toml` may name `id` in `[rules]`: a full rule id.
pub fn is_rule_id(id: &str) -> bool {
    rule_ids().any(|r| r == id)
}

/// Whether an `allow(...)` comment may name `written`: `all`, a full id, a group
/// (`async-copy`) or a last segment (`l1-access-mode`).
pub fn is_allow_id(written: &str) -> bool {
    rule_ids().any(|r| allows(written, r))
}

/// The known rule id nearest to a misspelled one (by edit distance, at most a third of
/// its length or 3 edits), for a "did you mean".
pub fn closest_rule_id(written: &str) -> Option<&'static str> {
    let candidates = rule_ids().flat_map(|r| {
        let mut names = vec![r];
        if let Some((group, name)) = r.split_once('/') {
            names.push(name);
            names.push(group);
        }
        names
    });
    // A truncated id (`warp/legacy-sync-fre`) names the one rule it starts.
    if written.chars().count() >= 4 {
        let mut starting = rule_ids().filter(|r| {
            r.starts_with(written)
                || r.split_once('/')
                    .is_some_and(|(_, n)| n.starts_with(written))
        });
        if let (Some(r), None) = (starting.next(), starting.next()) {
            return Some(r);
        }
    }
    let limit = (written.chars().count() / 3).clamp(1, 3);
    // The last segment alone may be what was meant: `bank-conflit` against
    // `bank-conflict`, `l1-acces-mode` against `async-copy/l1-access-mode`.
    let mut best: Option<(usize, &'static str)> = None;
    for c in candidates {
        let d = edit_distance(written, c);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    // Prefer the full id of the rule whose part matched, so the hint names one rule.
    best.map(|(_, c)| {
        rule_ids()
            .find(|r| *r == c || r.split_once('/').is_some_and(|(_, n)| n == c))
            .unwrap_or(c)
    })
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = if ca == b[j] {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// What is wrong with a configuration that parsed: each `[rules]` key that names no
/// rule (it would silently configure nothing), with the closest id. Front ends show
/// these: `check` as errors, the language server as a message. It lives with the rule
/// ids, so that the configuration (in the semantic layer) needs nothing from the rules.
pub fn config_problems(config: &crate::config::KernautConfig) -> Vec<String> {
    config
        .rules
        .levels
        .keys()
        .filter(|id| !is_rule_id(id))
        .map(|id| match closest_rule_id(id) {
            Some(near) => format!("rules.\"{id}\": no such rule; did you mean \"{near}\"?"),
            None => format!(
                "rules.\"{id}\": no such rule (`kernaut-lsp check --list-rules` lists them)"
            ),
        })
        .collect()
}

#[cfg(test)]
mod config_tests {
    use super::config_problems;
    use crate::config::parse_config;

    #[test]
    fn unknown_rule_ids_are_problems_with_the_closest_id() {
        let c = parse_config(
            "[rules]\nbank-conflit = \"off\"\n\"ilp/over-unroll\" = \"hint\"\nl1-acess-mode = \"off\"\nzzz = \"off\"\n",
        )
        .unwrap();
        assert_eq!(
            config_problems(&c),
            vec![
                "rules.\"bank-conflit\": no such rule; did you mean \"bank-conflict\"?".to_string(),
                "rules.\"l1-acess-mode\": no such rule; did you mean \"async-copy/l1-access-mode\"?"
                    .to_string(),
                "rules.\"zzz\": no such rule (`kernaut-lsp check --list-rules` lists them)"
                    .to_string(),
            ]
        );
        assert!(config_problems(
            &parse_config("[rules]\n\"resources/spills\" = \"off\"\n").unwrap()
        )
        .is_empty());
    }
}
