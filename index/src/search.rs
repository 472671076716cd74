//! Building the index and ranked search with snippets.

use std::collections::HashSet;

use kernaut_wiki::{Page, PageKind, Wiki};
use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, Query, QueryParser, TermQuery,
};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{doc, Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

use crate::schema::{self, FieldName, Fields, BOOSTS};
use crate::symbols::SymbolTable;
use crate::topics::{QueryTopics, Topics};
use crate::IndexError;

/// Options of one search.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The most hits to return; 0 returns none (a count of zero means zero, as in
    /// `head -n 0`, not "unlimited").
    pub limit: usize,
    /// Only hits of this kind.
    pub kind: Option<PageKind>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            kind: None,
        }
    }
}

/// One ranked hit: a page, or one pitfall / sub-skill of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The page id.
    pub id: String,
    /// `P6`, `S2`, or `None` for the page itself.
    pub anchor: Option<String>,
    /// The hit's title (the pitfall's title for a section hit).
    pub title: String,
    /// The kind of page.
    pub kind: PageKind,
    /// The relevance score (higher is better).
    pub score: f32,
    /// One line of context with matched terms marked as `**term**`.
    pub snippet: String,
}

impl Hit {
    /// `id#anchor`, or `id` for a page hit.
    pub fn target(&self) -> String {
        match &self.anchor {
            Some(a) => format!("{}#{}", self.id, a),
            None => self.id.clone(),
        }
    }
}

/// The search index over a wiki: tantivy for ranked search, plus the symbol table.
pub struct WikiIndex {
    reader: IndexReader,
    fields: Fields,
    symbols: SymbolTable,
    topics: Topics,
    docs: usize,
    parser: QueryParser,
    prose: tantivy::tokenizer::TextAnalyzer,
    symbol: tantivy::tokenizer::TextAnalyzer,
}

impl std::fmt::Debug for WikiIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WikiIndex")
            .field("docs", &self.docs)
            .field("symbols", &self.symbols.len())
            .finish()
    }
}

/// A new, empty index with the schema in `dir`.
pub(crate) fn new_index(dir: impl Into<Box<dyn tantivy::Directory>>) -> Result<Index, IndexError> {
    let (schema, _) = schema::schema();
    // Stored fields are read a few at a time: compressing them on a separate thread
    // costs more than it saves.
    let settings = tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::None,
        docstore_compress_dedicated_thread: false,
        ..tantivy::IndexSettings::default()
    };
    let index = Index::builder()
        .schema(schema)
        .settings(settings)
        .open_or_create(dir)?;
    schema::register(index.tokenizers());
    Ok(index)
}

/// Writes one document per page of `wiki`, plus one per pitfall and sub-skill, into
/// `index` as a single segment; returns how many.
pub(crate) fn write_documents(index: &Index, wiki: &Wiki) -> Result<usize, IndexError> {
    let (_, fields) = schema::schema();
    let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
    writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
    let mut docs = 0;
    let topics = Topics::build(wiki);
    for page in wiki.pages() {
        let topic = topics.of_page(page).map_or(0, |t| t as u64 + 1);
        for d in documents(page) {
            let target = if d.anchor.is_empty() {
                page.id.clone()
            } else {
                format!("{}#{}", page.id, d.anchor)
            };
            let mut doc = doc!(
                fields.id => page.id.as_str(),
                fields.anchor => d.anchor.as_str(),
                fields.kind => page.kind.as_str(),
                fields.title => d.title.as_str(),
                fields.symptom => d.symptom.as_str(),
                fields.cause => d.cause.as_str(),
                fields.fix => d.fix.as_str(),
                fields.detection => d.detection.as_str(),
                fields.body => d.body.as_str(),
                fields.tags => d.tags.as_str(),
                fields.symbols => d.symbols.as_str(),
                fields.target => target.as_str(),
                fields.topic => topic,
                fields.skill => u64::from(matches!(page.kind, PageKind::Skill | PageKind::SkillCard)),
            );
            for s in d.symbols.split_whitespace() {
                doc.add_text(fields.symbols_raw, s);
            }
            writer.add_document(doc)?;
            docs += 1;
        }
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    Ok(docs)
}

/// A document before it goes into tantivy.
#[derive(Default)]
struct DocText {
    anchor: String,
    title: String,
    symptom: String,
    cause: String,
    fix: String,
    detection: String,
    body: String,
    tags: String,
    symbols: String,
}

impl WikiIndex {
    /// Builds the index in RAM for every page of `wiki`.
    pub fn build(wiki: &Wiki) -> Result<WikiIndex, IndexError> {
        let index = new_index(tantivy::directory::RamDirectory::create())?;
        write_documents(&index, wiki)?;
        WikiIndex::open_index(index, wiki)
    }

    /// The search index over `index`, which holds the documents of `wiki` (written by
    /// [`write_documents`], now or when the binary was built).
    pub(crate) fn open_index(index: Index, wiki: &Wiki) -> Result<WikiIndex, IndexError> {
        schema::register(index.tokenizers());
        let fields = schema::fields_of(&index.schema()).ok_or_else(|| {
            IndexError::Tantivy("the index was written with another schema".into())
        })?;
        let reader: IndexReader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let docs = reader.searcher().num_docs() as usize;
        let mut parser = QueryParser::for_index(
            &index,
            vec![
                fields.title,
                fields.symptom,
                fields.cause,
                fields.fix,
                fields.detection,
                fields.body,
                fields.tags,
            ],
        );
        for (name, boost) in BOOSTS {
            parser.set_field_boost(fields.get(name), boost);
        }
        Ok(WikiIndex {
            prose: schema::prose_analyzer(),
            symbol: schema::symbol_analyzer(),
            parser,
            reader,
            fields,
            symbols: SymbolTable::build(wiki),
            topics: Topics::build(wiki),
            docs,
        })
    }

    /// The symbol table.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    /// How many documents (pages plus sections) are indexed.
    pub fn num_docs(&self) -> usize {
        self.docs
    }

    /// Ranked search. Half-typed and odd queries never fail: they return fewer hits.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Vec<Hit> {
        if opts.limit == 0 {
            return Vec::new();
        }
        let mut topics = self.topics.weigh(query);
        // A single word that is a documented symbol (`dp4a`, `wgmma`) answers with its api
        // page, not with a topic's skill page.
        if !query.trim().contains(char::is_whitespace)
            && self
                .symbol_named(query.trim())
                .is_some_and(|m| m.api.is_some() && m.matched == crate::MatchKind::Exact)
        {
            topics.page_first = None;
        }
        let Some(q) = self.build_query(query, opts.kind, &topics) else {
            return Vec::new();
        };
        let searcher = self.reader.searcher();
        // Questions and short noun phrases ask for a technique, symptoms for a pitfall; a
        // phrase around a name from code (`__constant__ array indexed by threadIdx`) is
        // about that use, not the technique.
        let skill_gain = if asks_quantity(query) {
            QUANTITY_GAIN
        } else if asks_how(query) {
            HOW_TO_GAIN
        } else if topics.words <= TECHNIQUE_MAX_WORDS
            && !describes_symptom(query)
            && !(topics.words > 1 && query.split_whitespace().any(is_identifier_shaped))
        {
            TECHNIQUE_GAIN
        } else {
            1.0
        };
        let collector =
            TopDocs::with_limit(opts.limit).tweak_score(topic_scorer(topics, skill_gain));
        let Ok(top) = searcher.search(&q, &collector) else {
            return Vec::new();
        };
        // Snippets come from the symptom field when it matched, else from the body.
        let text_query = self.text_query(query);
        let gens: Vec<_> = [self.fields.symptom, self.fields.body]
            .into_iter()
            .filter_map(|f| {
                let mut g = SnippetGenerator::create(&searcher, text_query.as_ref(), f).ok()?;
                g.set_max_num_chars(160);
                Some((f, g))
            })
            .collect();
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let Ok(doc) = searcher.doc::<TantivyDocument>(addr) else {
                continue;
            };
            let get = |f| {
                doc.get_first(f)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            let id = get(self.fields.id);
            let anchor = get(self.fields.anchor);
            let kind = PageKind::parse(&get(self.fields.kind)).unwrap_or(PageKind::Skill);
            let mut snippet = String::new();
            for (f, g) in &gens {
                // Snippets come from the first few KB: tokenising a whole long page for
                // each hit is the costliest part of a query.
                let text = get(*f);
                let source = prefix_chars(&text, SNIPPET_SOURCE_CHARS);
                let s = g.snippet(source);
                if !s.highlighted().is_empty() {
                    let (fragment, ranges) = whole_words(source, s.fragment(), s.highlighted());
                    snippet = mark(&fragment, &ranges);
                    break;
                }
                if snippet.is_empty() && *f == self.fields.symptom {
                    snippet = s.fragment().to_string();
                }
            }
            if snippet.is_empty() {
                let body = get(self.fields.symptom);
                let body = if body.is_empty() {
                    get(self.fields.body)
                } else {
                    body
                };
                snippet = kernaut_wiki::first_paragraph(&body);
            }
            hits.push(Hit {
                id,
                anchor: (!anchor.is_empty()).then_some(anchor),
                title: get(self.fields.title),
                kind,
                score,
                snippet: one_line(&snippet, 200),
            });
        }
        hits
    }

    /// The symbol a one-word query names: as typed, or with the `__` that people leave out
    /// when they search (`ballot_sync` for `__ballot_sync`, `launch_bounds` for
    /// `__launch_bounds__`). Only
    /// search is this lenient; the symbol table itself (which hover uses) is not.
    fn symbol_named(&self, word: &str) -> Option<crate::SymbolMatch> {
        self.symbols.lookup(word).or_else(|| {
            let bare = word.trim_matches('_');
            [format!("__{bare}"), format!("__{bare}__")]
                .iter()
                .filter_map(|w| self.symbols.lookup(w))
                .find(|m| m.matched == crate::MatchKind::Exact)
        })
    }

    /// The prose part of a query, through tantivy's lenient parser (so that quotes,
    /// colons and half-typed words never fail).
    fn text_query(&self, query: &str) -> Box<dyn Query> {
        let (q, _errors) = self.parser.parse_query_lenient(&sanitize(query));
        q
    }

    fn build_query(
        &self,
        query: &str,
        kind: Option<PageKind>,
        topics: &QueryTopics,
    ) -> Option<Box<dyn Query>> {
        let f = &self.fields;
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let text = sanitize(query);
        if !text.trim().is_empty() {
            should.push((Occur::Should, self.text_query(query)));
        }
        // Typo tolerance and prefix matching, term by term, on the prose fields.
        let mut prose = self.prose.clone();
        let mut stream = prose.token_stream(&text);
        let mut terms = Vec::new();
        while let Some(t) = stream.next() {
            terms.push(t.text.clone());
        }
        let typing_last = !query.ends_with(char::is_whitespace);
        let n = terms.len();
        let searcher = self.reader.searcher();
        for (i, t) in terms.iter().enumerate() {
            let len = t.chars().count();
            // A word the wiki already contains is no typo: fuzzy matching is only for
            // words that match nothing as typed (and it is the costly part of a query).
            let known = [f.title, f.symptom, f.body].into_iter().any(|field| {
                searcher
                    .doc_freq(&Term::from_field_text(field, t))
                    .is_ok_and(|n| n > 0)
            });
            for (name, boost) in BOOSTS {
                if name == FieldName::Symbols {
                    continue;
                }
                let field = f.get(name);
                let term = Term::from_field_text(field, t);
                if len >= 5
                    && !known
                    && matches!(
                        name,
                        FieldName::Title | FieldName::Symptom | FieldName::Body
                    )
                {
                    let fuzzy = FuzzyTermQuery::new(term.clone(), 1, true);
                    should.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(fuzzy), boost * 0.15)),
                    ));
                }
                if i + 1 == n && typing_last && len >= 2 {
                    let prefix = FuzzyTermQuery::new_prefix(term, 0, false);
                    should.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(prefix), boost * 0.2)),
                    ));
                }
            }
        }
        // Words users say for what the pages call otherwise, at a lower weight.
        for t in &terms {
            for syn in synonyms(t) {
                for field in [f.title, f.symptom, f.body] {
                    let term = Term::from_field_text(field, &syn);
                    should.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(
                            Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                            0.3,
                        )),
                    ));
                }
            }
        }
        // Symbols, whole: `__hfma2`, `cp.async.wait_group`, `cuda::memcpy_async`.
        let mut sym = self.symbol.clone();
        let mut stream = sym.token_stream(query);
        let mut seen = HashSet::new();
        // In a sentence only code-shaped words are symbols ("all", "size" and "sync" are
        // English there); a single word may be a bare name.
        let single = query.split_whitespace().count() == 1;
        while let Some(t) = stream.next() {
            let original = query.get(t.offset_from..t.offset_to).unwrap_or_default();
            if !(single || is_identifier_shaped(original)) || !seen.insert(t.text.clone()) {
                continue;
            }
            let term = Term::from_field_text(f.symbols, &t.text);
            should.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                    4.0,
                )),
            ));
            if t.text.len() >= 3 {
                let term = Term::from_field_text(f.symbols, &t.text);
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(FuzzyTermQuery::new_prefix(term, 0, false)),
                        1.0,
                    )),
                ));
            }
        }
        // A short query that names one topic and nothing else puts the topic's skill page
        // first (the page document, not one of its sections).
        if let Some(t) = topics.page_first {
            let term = Term::from_field_text(f.target, &self.topics.skill_page(t));
            should.push((
                Occur::Should,
                Box::new(ConstScoreQuery::new(
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                    PAGE_FIRST_BOOST,
                )),
            ));
        }
        // A query that names a documented symbol puts its api page first.
        if let Some(m) = single.then(|| self.symbol_named(query.trim())).flatten() {
            if let Some(api) = m.api {
                let term = Term::from_field_text(f.id, &api);
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                        20.0,
                    )),
                ));
            }
        }
        for word in query
            .split_whitespace()
            .filter(|w| single || is_identifier_shaped(w))
        {
            let term = Term::from_field_text(f.symbols_raw, word);
            should.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                    6.0,
                )),
            ));
        }
        if should.is_empty() {
            return None;
        }
        let any: Box<dyn Query> = Box::new(BooleanQuery::new(should));
        Some(match kind {
            None => any,
            Some(k) => {
                let term = Term::from_field_text(f.kind, k.as_str());
                Box::new(BooleanQuery::new(vec![
                    (Occur::Must, any),
                    (
                        Occur::Must,
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                    ),
                ]))
            }
        })
    }
}

// The topic weights below were tuned on `tests/data/user_queries.tsv` and checked against
// both symptom sets of `tests/data/` (which they must not lower).

/// How much more a document of a long query's topic scores per unit of topic weight (one
/// query word that names its topic and no other). In a sentence the topic words are a
/// hint among many words.
const TOPIC_GAIN: f32 = 0.3;
/// Queries of at most this many meaningful words are short: their topic words decide.
const SHORT_QUERY_WORDS: usize = 3;
/// [`TOPIC_GAIN`] for short queries.
const TOPIC_GAIN_SHORT: f32 = 1.5;
/// The most topic weight that counts, however many topic words the query has.
const TOPIC_WEIGHT_CAP: f32 = 1.0;
/// The score added to a topic's skill page on a short one-topic query: more than any text
/// score reaches, so the page comes first.
const PAGE_FIRST_BOOST: f32 = 100.0;

/// The factor on skill pages for a question about how to do something ("how do I choose a
/// block size", "when to use constant memory"): the answer is a technique, not a failure.
const HOW_TO_GAIN: f32 = 2.0;

/// The factor on skill pages for a question about a figure ("how many stages", "how much
/// shared memory can a block use", "max dynamic shared memory per block"): limits, sizes
/// and counts live in the skill pages' tables and sections, while the pitfalls that quote
/// the same numbers are about what goes wrong at them.
const QUANTITY_GAIN: f32 = 3.0;

/// GPU product names: incidental in a question that says more ("how many warps per SM on
/// H200" asks about warps per SM; every page that measured on an H200 names it).
const GPU_NAMES: &[&str] = &[
    "h100", "h200", "h800", "a100", "a800", "a10", "a30", "a40", "l4", "l40", "l40s", "v100", "t4",
    "b100", "b200", "gb200", "gh200", "rtx",
];

/// Words that describe something going wrong (before stemming). A short query without
/// any of them names a technique ("vector loads", "occupancy calculator").
const SYMPTOM_WORDS: &[&str] = &[
    "slow",
    "slower",
    "slowdown",
    "hang",
    "hangs",
    "deadlock",
    "stuck",
    "crash",
    "crashes",
    "fault",
    "illegal",
    "misaligned",
    "wrong",
    "incorrect",
    "garbage",
    "nan",
    "inf",
    "overflow",
    "error",
    "errors",
    "fail",
    "fails",
    "failed",
    "race",
    "differ",
    "different",
    "no",
    "not",
    "never",
    "zero",
    "zeros",
    "invalid",
];

/// Whether a query describes a symptom rather than naming a technique.
fn describes_symptom(query: &str) -> bool {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| {
            let w = w.to_lowercase();
            SYMPTOM_WORDS.contains(&w.as_str()) || w.ends_with("n't")
        })
}

/// The factor on skill pages for a short query that names no symptom ("vector loads",
/// "occupancy calculator"): it asks for the technique.
const TECHNIQUE_GAIN: f32 = 1.6;
/// Queries of at most this many meaningful words may be such a noun phrase.
const TECHNIQUE_MAX_WORDS: usize = 4;

/// Whether a query asks for a figure: "how many …", "how much …", or a limit or maximum
/// ("what is the per-block shared memory limit", "max registers per thread"), and names
/// no symptom.
fn asks_quantity(query: &str) -> bool {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let how_much = words
        .windows(2)
        .any(|w| w[0] == "how" && matches!(w[1].as_str(), "many" | "much" | "big" | "large"));
    let limit = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "limit" | "max" | "maximum" | "per-block" | "per-sm"
        )
    });
    (how_much || limit) && !describes_symptom(query)
}

/// Whether a query asks how (or when, or which) rather than describing a symptom.
fn asks_how(query: &str) -> bool {
    let first = query
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    matches!(first.as_str(), "how" | "when" | "which" | "what" | "should")
}

/// The score of a document under the query's topics: its text score, multiplied by how
/// strongly the query names the document's topic, and by `skill_gain` on skill pages.
fn topic_scorer(
    topics: QueryTopics,
    skill_gain: f32,
) -> impl Fn(&tantivy::SegmentReader) -> Box<dyn Fn(tantivy::DocId, f32) -> f32> + Send + Sync {
    let gain = if topics.words <= SHORT_QUERY_WORDS {
        TOPIC_GAIN_SHORT
    } else {
        TOPIC_GAIN
    };
    // Index 0 is "no topic".
    let gains: std::sync::Arc<Vec<f32>> = std::sync::Arc::new(
        std::iter::once(1.0)
            .chain(
                topics
                    .weights
                    .iter()
                    .map(|w| 1.0 + gain * w.min(TOPIC_WEIGHT_CAP)),
            )
            .collect(),
    );
    move |segment: &tantivy::SegmentReader| {
        let gains = gains.clone();
        let fast = segment.fast_fields();
        match (fast.u64(schema::TOPIC_FAST), fast.u64(schema::SKILL_FAST)) {
            (Ok(topic), Ok(skill)) => {
                let topic = topic.first_or_default_col(0);
                let skill = skill.first_or_default_col(0);
                Box::new(move |doc, score| {
                    let t = gains
                        .get(topic.get_val(doc) as usize)
                        .copied()
                        .unwrap_or(1.0);
                    let s = if skill.get_val(doc) == 1 {
                        skill_gain
                    } else {
                        1.0
                    };
                    score * t * s
                })
            }
            _ => Box::new(|_, score| score),
        }
    }
}

/// Groups of words CUDA authors use for the same thing (before stemming).
const SYNONYMS: &[&[&str]] = &[
    &["hang", "hangs", "deadlock", "stuck", "freezes", "forever"],
    &["slow", "slower", "slowdown", "slowly"],
    &["crash", "crashes", "fault", "illegal", "misaligned"],
    &["wrong", "incorrect", "corrupt", "garbage", "mismatch"],
    &["nan", "inf", "overflow", "overflows"],
    &["fp16", "half"],
    &["bf16", "bfloat16"],
    &["smem", "shared"],
    &["gmem", "global"],
    &["lmem", "local", "spill", "spills"],
    &["regs", "registers", "register"],
    &["sum", "sums", "accumulator", "accumulators", "accumulate"],
    &["race", "races", "racecheck", "nondeterministic"],
    &["barrier", "syncthreads"],
    &["struct", "structs", "structure", "structures"],
];

/// The stemmed synonym groups, computed once.
fn synonym_stems() -> &'static [Vec<String>] {
    static STEMS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    STEMS.get_or_init(|| {
        let mut analyzer = schema::prose_analyzer();
        SYNONYMS
            .iter()
            .map(|group| {
                group
                    .iter()
                    .filter_map(|w| {
                        let mut st = analyzer.token_stream(w);
                        let mut last = None;
                        while let Some(t) = st.next() {
                            last = Some(t.text.clone());
                        }
                        last
                    })
                    .collect()
            })
            .collect()
    })
}

/// The stemmed synonyms of a stemmed query term.
fn synonyms(term: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for stems in synonym_stems() {
        if stems.iter().any(|s| s == term) {
            for s in stems {
                if s != term && !out.contains(s) {
                    out.push(s.clone());
                }
            }
        }
    }
    out
}

/// Query-syntax characters become spaces, so user text is always plain words, and stop
/// words go ([`schema::STOP_WORDS`]).
fn sanitize(query: &str) -> String {
    let plain: String = query
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c.is_whitespace() {
                c
            } else {
                ' '
            }
        })
        .collect();
    let words = plain.split_whitespace().count();
    plain
        .split_whitespace()
        .filter(|w| !schema::is_stop_word(w))
        .filter(|w| words < 3 || !GPU_NAMES.contains(&w.to_lowercase().as_str()))
        .map(split_size)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `48KB` as the pages write it, `48 KB` (a number glued to a size unit is one token that
/// matches nothing).
fn split_size(word: &str) -> String {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let unit = word[digits..].to_ascii_lowercase();
    if digits > 0
        && matches!(
            unit.as_str(),
            "b" | "kb" | "kib" | "mb" | "mib" | "gb" | "gib"
        )
    {
        format!("{} {}", &word[..digits], &word[digits..])
    } else {
        word.to_string()
    }
}

/// How much of a field the snippet is taken from.
const SNIPPET_SOURCE_CHARS: usize = 3000;

/// The first `n` characters of `s`, cut at a character boundary.
fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Widens a snippet fragment to whole words of its source text (a fragment may start or
/// end inside `__syncthreads()` or `float4*`), and each marked range to the whole
/// identifier around it (`__syncthreads`, `wait_group`, not `__**syncthreads**`), merging
/// ranges that touch.
fn whole_words(
    source: &str,
    fragment: &str,
    ranges: &[std::ops::Range<usize>],
) -> (String, Vec<std::ops::Range<usize>>) {
    let Some(start) = fragment_offset(source, fragment) else {
        // The fragment is always a slice of the source; if not, keep it as it is.
        return (fragment.to_string(), ranges.to_vec());
    };
    let end = start + fragment.len();
    let is_space = |c: char| c.is_whitespace();
    let from = source[..start].rfind(is_space).map_or(0, |i| {
        i + source[i..].chars().next().map_or(1, char::len_utf8)
    });
    let to = source[end..]
        .find(is_space)
        .map_or(source.len(), |i| end + i);
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out: Vec<std::ops::Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        let (mut a, mut b) = (start + r.start, start + r.end);
        if b > source.len() || a > b {
            continue;
        }
        while let Some(c) = source[from..a].chars().next_back().filter(|&c| is_word(c)) {
            a -= c.len_utf8();
        }
        while let Some(c) = source[b..to].chars().next().filter(|&c| is_word(c)) {
            b += c.len_utf8();
        }
        // Ranges that touch, or that only a `.` or `::` separates (`cp` and `async` of
        // `cp.async`), become one.
        match out.last_mut() {
            Some(last)
                if a <= last.end || source[last.end..a].chars().all(|c| c == '.' || c == ':') =>
            {
                last.end = last.end.max(b)
            }
            _ => out.push(a..b),
        }
    }
    let shifted = out
        .into_iter()
        .map(|r| (r.start - from)..(r.end - from))
        .collect();
    (source[from..to].to_string(), shifted)
}

/// Where a fragment returned by the snippet generator starts in its source text.
fn fragment_offset(source: &str, fragment: &str) -> Option<usize> {
    let base = source.as_ptr() as usize;
    let ptr = fragment.as_ptr() as usize;
    // tantivy slices the fragment out of the text it was given; fall back to a search.
    if ptr >= base && ptr + fragment.len() <= base + source.len() {
        return Some(ptr - base);
    }
    source.find(fragment)
}

fn mark(fragment: &str, ranges: &[std::ops::Range<usize>]) -> String {
    let mut out = String::with_capacity(fragment.len() + ranges.len() * 4);
    let mut last = 0;
    for r in ranges {
        if r.start < last || r.end > fragment.len() {
            continue;
        }
        out.push_str(&fragment[last..r.start]);
        out.push_str("**");
        out.push_str(&fragment[r.clone()]);
        out.push_str("**");
        last = r.end;
    }
    out.push_str(&fragment[last..]);
    out
}

fn one_line(s: &str, max_chars: usize) -> String {
    // Markdown heading markers and fences say nothing on one line.
    let joined = s
        .split_whitespace()
        .filter(|w| !w.bytes().all(|b| b == b'#') && !w.starts_with("```"))
        .collect::<Vec<_>>()
        .join(" ");
    if joined.chars().count() <= max_chars {
        joined
    } else {
        // Cut at the last space before the limit, never inside a word (or a `**` mark).
        let cut: String = joined.chars().take(max_chars).collect();
        let cut = match cut.rfind(' ') {
            Some(i) if i > 0 => &cut[..i],
            _ => cut.as_str(),
        };
        let cut = cut.trim_end_matches(|c: char| c.is_ascii_punctuation() && c != '*');
        format!("{cut}…")
    }
}

/// The documents of one page: the page itself, plus one per pitfall and one per
/// sub-skill (`### S1.`) section. The page document keeps only what no section
/// document holds, so a symptom query lands on `pitfall-x#P6`, not on the page.
fn documents(page: &Page) -> Vec<DocText> {
    let fm = &page.frontmatter;
    let tags = fm.tags.join(" ");
    let mut page_symbols: Vec<String> = if page.pitfalls.is_empty() {
        fm.related_apis.clone()
    } else {
        Vec::new()
    };
    if let Some(api) = &page.api {
        page_symbols.extend(api.symbols.iter().cloned());
        page_symbols.extend(api.ptx.iter().cloned());
    }
    let mut out = Vec::new();
    let mut carved: Vec<&str> = Vec::new();
    for p in &page.pitfalls {
        let section = page.section(&p.anchor);
        carved.extend(section.map(|s| s.content.as_str()));
        out.push(DocText {
            anchor: p.anchor.clone(),
            title: p.title.clone(),
            symptom: p.symptom.clone().unwrap_or_default(),
            cause: p.cause.clone().unwrap_or_default(),
            fix: p.fix.clone().unwrap_or_default(),
            detection: p.detection.clone().unwrap_or_default(),
            body: format!("{}\n{}", p.example.as_deref().unwrap_or(""), p.other),
            tags: format!("{} {}", page.title, tags),
            symbols: format!(
                "{} {}",
                title_symbols(&p.title),
                code_symbols(section.map_or("", |s| s.content.as_str()))
            ),
        });
    }
    for s in page.sections.iter().filter(|s| {
        s.anchor.len() > 1
            && s.anchor.starts_with('S')
            && s.anchor[1..].bytes().all(|b| b.is_ascii_digit())
    }) {
        carved.push(s.content.as_str());
        out.push(DocText {
            anchor: s.anchor.clone(),
            title: s.title.clone(),
            body: s.content.clone(),
            tags: format!("{} {}", page.title, tags),
            symbols: format!("{} {}", title_symbols(&s.title), code_symbols(&s.content)),
            ..DocText::default()
        });
    }
    let mut body = page.body.clone();
    for c in carved {
        if !c.is_empty() {
            body = body.replacen(c, "", 1);
        }
    }
    let mut symbols = page_symbols.join(" ");
    symbols.push(' ');
    symbols.push_str(&code_symbols(&body));
    out.insert(
        0,
        DocText {
            anchor: String::new(),
            title: page.title.clone(),
            body,
            tags,
            symbols,
            ..DocText::default()
        },
    );
    out
}

/// Identifier-like words inside inline code spans that look like CUDA or PTX names
/// (`__syncthreads`, `cp.async.wait_group`, `cuda::pipeline`).
fn code_symbols(markdown: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let spans: Vec<&str> = if in_block {
            vec![line]
        } else {
            line.split('`').skip(1).step_by(2).collect()
        };
        for span in spans {
            for w in
                span.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
            {
                let w = w.trim_matches(['.', ':']);
                if is_identifier_shaped(w) && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out.join(" ")
}

/// Code-shaped words of a title, which often names APIs without backticks.
fn title_symbols(title: &str) -> String {
    title
        .split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ')' || c == ',')
        .filter(|w| is_identifier_shaped(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a word looks like a name from code rather than English: `__half`,
/// `cuda::pipeline`, `cp.async`, `atomicAdd`, `float4`, `sm_90`.
pub(crate) fn is_identifier_shaped(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
    if w.len() < 3
        || !w
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    {
        return false;
    }
    let bytes = w.as_bytes();
    w.contains('_')
        || w.contains("::")
        || (w.contains('.') && w.split('.').all(|p| p.len() >= 2))
        || (bytes.iter().any(u8::is_ascii_digit) && bytes.iter().any(u8::is_ascii_alphabetic))
        || bytes
            .windows(2)
            .any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
}
