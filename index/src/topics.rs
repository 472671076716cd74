//! Topics: what a query is about, so that the words naming a topic outweigh the words a
//! page merely happens to contain.
//!
//! Each skill page is a topic (`skill-bank-conflict` is `bank-conflict`); its pitfall page
//! (`parent_skill: bank-conflict`, or `pitfall-bank-conflict`) belongs to the same topic.
//! A topic's words come from the skill page's `search_terms` frontmatter field (our own
//! extension: the words and names users say when they mean the topic), or, for pages that
//! lack it, from the words of the topic's name. A word shared by several topics counts for
//! each of them in proportion (1 / number of topics), so `memory` says little and `bank`
//! says a lot.

use std::collections::HashMap;

use kernaut_wiki::{Page, PageKind, Wiki};

use crate::schema;

/// The frontmatter field with a skill page's topic words.
const SEARCH_TERMS: &str = "search_terms";

/// Every topic of a wiki and the words that name it.
#[derive(Debug, Default)]
pub(crate) struct Topics {
    /// Topic names (`bank-conflict`), in page order.
    names: Vec<String>,
    /// For each topic word, the topics it names.
    words: HashMap<String, Vec<usize>>,
    /// Per topic, the analysed words of its name (`bank-conflict`: bank, conflict).
    name_words: Vec<Vec<String>>,
}

/// What one query says about the topics.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueryTopics {
    /// Per topic, the summed weight of the query's words that name it.
    pub weights: Vec<f32>,
    /// The topic whose skill page should come first: set when the query is one topic word,
    /// or a short query whose every word names this topic and one of which is a word of
    /// the topic's name (`bank conflicts`, `constant memory`, not `l2 persistence`), and no
    /// other topic is named as strongly.
    pub page_first: Option<usize>,
    /// How many meaningful words the query has.
    pub words: usize,
}

impl Topics {
    /// The topics of a wiki: one per skill page with frontmatter.
    pub(crate) fn build(wiki: &Wiki) -> Topics {
        let mut analyzer = schema::topic_analyzer();
        let mut topics = Topics::default();
        for page in wiki.pages() {
            let Some(name) = page.id.strip_prefix("skill-") else {
                continue;
            };
            if page.kind != PageKind::Skill || topics.index_of(name).is_some() {
                continue;
            }
            let ix = topics.names.len();
            topics.names.push(name.to_string());
            topics
                .name_words
                .push(analyze(&mut analyzer, &name.replace('-', " ")));
            let text = match page.frontmatter.extra.get(SEARCH_TERMS) {
                Some(terms) => yaml_list_text(terms),
                None => name.replace('-', " "),
            };
            for word in analyze(&mut analyzer, &text) {
                let entry = topics.words.entry(word).or_default();
                if !entry.contains(&ix) {
                    entry.push(ix);
                }
            }
        }
        topics
    }

    /// How many topics there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The topic a page belongs to: a skill page its own, a pitfall page its parent
    /// skill's; api pages and skill cards belong to none.
    pub(crate) fn of_page(&self, page: &Page) -> Option<usize> {
        match page.kind {
            PageKind::Skill => self.index_of(page.id.strip_prefix("skill-")?),
            PageKind::Pitfall => page
                .frontmatter
                .parent_skill
                .as_deref()
                .and_then(|p| self.index_of(p.strip_prefix("skill-").unwrap_or(p)))
                .or_else(|| self.index_of(page.id.strip_prefix("pitfall-")?)),
            _ => None,
        }
    }

    /// The skill page id of a topic.
    pub(crate) fn skill_page(&self, topic: usize) -> String {
        format!("skill-{}", self.names[topic])
    }

    /// Weighs the topics a query names.
    pub(crate) fn weigh(&self, query: &str) -> QueryTopics {
        let mut analyzer = schema::topic_analyzer();
        let mut words = analyze(&mut analyzer, query);
        words.dedup();
        let mut weights = vec![0.0f32; self.names.len()];
        let mut covered = vec![0usize; self.names.len()];
        for w in &words {
            if let Some(topics) = self.words.get(w) {
                let share = 1.0 / topics.len() as f32;
                for &t in topics {
                    weights[t] += share;
                    covered[t] += 1;
                }
            }
        }
        let mut page_first = None;
        if !words.is_empty() && words.len() <= PAGE_FIRST_MAX_WORDS && !negates(query) {
            let best = (0..weights.len()).max_by(|&a, &b| weights[a].total_cmp(&weights[b]));
            if let Some(b) = best {
                let unique = weights
                    .iter()
                    .enumerate()
                    .all(|(i, &w)| i == b || w < weights[b]);
                let named =
                    words.len() == 1 || words.iter().any(|w| self.name_words[b].contains(w));
                if unique && covered[b] == words.len() && named {
                    page_first = Some(b);
                }
            }
        }
        QueryTopics {
            weights,
            page_first,
            words: words.len(),
        }
    }
}

/// Whether a query says something does not happen ("streams do not overlap"): that is a
/// symptom, even when its other words only name a topic.
fn negates(query: &str) -> bool {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| {
            let w = w.to_lowercase();
            matches!(
                w.as_str(),
                "no" | "not" | "never" | "nothing" | "without" | "cannot"
            ) || w.ends_with("n't")
        })
}

/// Queries of at most this many meaningful words may put a skill page first.
const PAGE_FIRST_MAX_WORDS: usize = 3;

/// The distinct analysed words of a text, in order.
fn analyze(analyzer: &mut tantivy::tokenizer::TextAnalyzer, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        if !out.contains(&t.text) {
            out.push(t.text.clone());
        }
    }
    out
}

/// The items of a YAML list kept as text (`- a\n- b`, or `[a, b]`), or a plain string,
/// joined with newlines.
fn yaml_list_text(text: &str) -> String {
    let flow = text.trim();
    let flow = flow
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(flow);
    flow.split(['\n', ','])
        .map(|item| {
            item.trim()
                .trim_start_matches("- ")
                .trim_matches(|c| c == '\'' || c == '"')
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---
id: skill-bank-conflict
type: skill
title: Banks
search_terms: [bank, padding, swizzle, shared memory]
---
## What
Banks.
";

    const OTHER: &str = "---
id: skill-unified-memory
type: skill
title: Unified memory
---
## What
Pages.
";

    const PITFALL: &str = "---
id: pitfall-banks
type: pitfall
title: Bank pitfalls
parent_skill: bank-conflict
---
## P1: Column access
**Symptom**: slow.
";

    fn topics() -> (Wiki, Topics) {
        let wiki = Wiki::from_files([("s.md", SKILL), ("o.md", OTHER), ("p.md", PITFALL)]);
        let topics = Topics::build(&wiki);
        (wiki, topics)
    }

    #[test]
    fn search_terms_name_the_topic_and_the_name_is_the_fallback() {
        let (_, t) = topics();
        assert_eq!(t.len(), 2);
        let banks = t.index_of("bank-conflict").unwrap();
        let unified = t.index_of("unified-memory").unwrap();
        let q = t.weigh("bank");
        assert_eq!((q.weights[banks], q.weights[unified]), (1.0, 0.0));
        assert_eq!(q.page_first, Some(banks));
        // `memory` names both topics: half a word each, and neither page goes first.
        let q = t.weigh("memory");
        assert_eq!((q.weights[banks], q.weights[unified]), (0.5, 0.5));
        assert_eq!(q.page_first, None);
        assert_eq!(t.weigh("unified memory").page_first, Some(unified));
    }

    #[test]
    fn a_pitfall_page_belongs_to_its_parent_skill() {
        let (wiki, t) = topics();
        let pitfall = wiki.page("pitfall-banks").unwrap();
        let banks = t.of_page(pitfall).unwrap();
        assert_eq!(t.skill_page(banks), "skill-bank-conflict");
    }

    #[test]
    fn long_queries_and_stray_words_never_put_a_page_first() {
        let (_, t) = topics();
        assert_eq!(
            t.weigh("bank padding").page_first,
            t.index_of("bank-conflict")
        );
        // Sub-topic words alone: the sections that explain them, not the page.
        assert_eq!(t.weigh("padding swizzle").page_first, None);
        assert_eq!(t.weigh("padding").page_first, t.index_of("bank-conflict"));
        assert_eq!(t.weigh("padding does not help bank").page_first, None);
        assert_eq!(t.weigh("padding doesn't help").page_first, None);
        assert_eq!(t.weigh("my transpose has bank conflicts").page_first, None);
        assert_eq!(t.weigh("padding the tile").page_first, None);
        assert_eq!(t.weigh("").page_first, None);
    }
}
