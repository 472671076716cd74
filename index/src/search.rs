//! Building the index and ranked search with snippets.

use std::collections::HashSet;

use kernaut_wiki::{Page, PageKind, Wiki};
use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, Occur, PhraseQuery, Query,
    QueryParser, TermQuery,
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

/// What a search found: the hits, or, when no hit is a good match for the query, nothing
/// but the closest topics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// The ranked hits; empty when nothing matches well enough (see
    /// [`WikiIndex::search_report`]).
    pub hits: Vec<Hit>,
    /// When `hits` is empty because no hit was a good match: the closest pages (at most
    /// three, one hit per page), to offer as suggestions, not as answers.
    pub closest: Vec<Hit>,
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
                if let Some(base) = metric_base(s) {
                    doc.add_text(fields.symbols_raw, base);
                }
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

    /// Ranked search. Half-typed and odd queries never fail: they return fewer hits, and
    /// a query that nothing matches well returns none ([`WikiIndex::search_report`] says
    /// which pages came closest).
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Vec<Hit> {
        self.search_report(query, opts).hits
    }

    /// Ranked search, with the closest pages when nothing matches well.
    ///
    /// - A query that is a page id or `id#anchor` (`skill-occupancy`,
    ///   `pitfall-bank-conflict#P1`) puts exactly that page or section first; an unknown
    ///   anchor falls back to the page.
    /// - Only the first [`MAX_QUERY_WORDS`] distinct words count, so a pasted log of
    ///   thousands of words answers as fast as a sentence.
    /// - A good match needs two things of the query's distinct meaningful words (stop
    ///   words, numbers and hex addresses do not count): more than half of them are words
    ///   the wiki uses (as typed, stemmed, as a synonym, or within one typo of a word of a
    ///   top hit), and one of the first three hits contains [`min_covered`] of them.
    ///   "pizza recipe" fails the first (the wiki never says "pizza"), a query whose hits
    ///   share one incidental word with it fails the second. Otherwise the query has no
    ///   good match: `hits` is empty and `closest` holds the hits that came nearest.
    pub fn search_report(&self, query: &str, opts: &SearchOptions) -> Found {
        if opts.limit == 0 {
            return Found::default();
        }
        let query = &reduce_query(query);
        let pinned = self.exact_target(query, opts.kind);
        let mut hits = self.ranked(query, opts);
        if let Some(first) = pinned {
            hits.retain(|h| h.target() != first.target());
            hits.insert(0, first);
            hits.truncate(opts.limit);
            return Found {
                hits,
                closest: Vec::new(),
            };
        }
        if hits.is_empty() || self.covers(query, &hits) {
            return Found {
                hits,
                closest: Vec::new(),
            };
        }
        let mut closest: Vec<Hit> = Vec::new();
        for h in hits {
            if closest.len() < 3 && !closest.iter().any(|c| c.id == h.id) {
                closest.push(h);
            }
        }
        Found {
            hits: Vec::new(),
            closest,
        }
    }

    /// The page or section a query names by its id (`skill-occupancy`,
    /// `pitfall-bank-conflict#P1`, case as the user typed it), as a hit.
    fn exact_target(&self, query: &str, kind: Option<PageKind>) -> Option<Hit> {
        let word = query.trim();
        if word.is_empty() || word.contains(char::is_whitespace) {
            return None;
        }
        let (id, anchor) = match word.split_once('#') {
            Some((i, a)) => (i.to_ascii_lowercase(), Some(a.to_ascii_uppercase())),
            None => (word.to_ascii_lowercase(), None),
        };
        let searcher = self.reader.searcher();
        let find = |target: &str| -> Option<Hit> {
            let term = Term::from_field_text(self.fields.target, target);
            let q = TermQuery::new(term, IndexRecordOption::Basic);
            let (_, addr) = searcher
                .search(&q, &TopDocs::with_limit(1).order_by_score())
                .ok()?
                .into_iter()
                .next()?;
            let doc = searcher.doc::<TantivyDocument>(addr).ok()?;
            let get = |f| {
                doc.get_first(f)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            let body = get(self.fields.symptom);
            let body = if body.is_empty() {
                get(self.fields.body)
            } else {
                body
            };
            let anchor = get(self.fields.anchor);
            Some(Hit {
                id: get(self.fields.id),
                anchor: (!anchor.is_empty()).then_some(anchor),
                title: get(self.fields.title),
                kind: PageKind::parse(&get(self.fields.kind)).unwrap_or(PageKind::Skill),
                score: PAGE_FIRST_BOOST,
                snippet: one_line(&kernaut_wiki::first_paragraph(&body).replace("**", ""), 200),
            })
        };
        let hit = anchor
            .and_then(|a| find(&format!("{id}#{a}")))
            .or_else(|| find(&id))?;
        kind.is_none_or(|k| k == hit.kind).then_some(hit)
    }

    /// Whether one of the first three hits covers enough of the query's words (see
    /// [`WikiIndex::search_report`]).
    fn covers(&self, query: &str, hits: &[Hit]) -> bool {
        let mut prose = self.prose.clone();
        let mut words: Vec<String> = Vec::new();
        let text = sanitize(query);
        let mut stream = prose.token_stream(&text);
        while let Some(t) = stream.next() {
            let w = &t.text;
            let numeric = w.bytes().all(|b| b.is_ascii_digit())
                || (w.starts_with("0x")
                    && w.len() > 2
                    && w[2..].bytes().all(|b| b.is_ascii_hexdigit()));
            if !numeric && !words.contains(w) {
                words.push(w.clone());
            }
        }
        if words.is_empty() {
            return true;
        }
        let need = min_covered(words.len());
        let typing_last = !query.ends_with(char::is_whitespace);
        let searcher = self.reader.searcher();
        let f = &self.fields;
        // The word being typed, as typed: a prefix of some word of a hit ("stagin").
        let last_raw = query
            .split_whitespace()
            .next_back()
            .unwrap_or_default()
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        let mut known: Vec<bool> = words
            .iter()
            .map(|w| self.known_word(&searcher, f, w))
            .collect();
        let mut best = 0;
        for hit in hits.iter().take(3) {
            let Some(text) = self.hit_text(&searcher, hit) else {
                continue;
            };
            let mut stems: HashSet<String> = HashSet::new();
            let mut prose = self.prose.clone();
            let mut stream = prose.token_stream(&text);
            while let Some(t) = stream.next() {
                stems.insert(t.text.clone());
            }
            let lower = text.to_lowercase();
            let mut covered = 0;
            for (i, w) in words.iter().enumerate() {
                let hit_has = stems.contains(w)
                    || synonyms(w).iter().any(|s| stems.contains(s))
                    || (i + 1 == words.len()
                        && typing_last
                        && w.len() >= 2
                        && (stems.iter().any(|s| s.starts_with(w.as_str()))
                            || (last_raw.len() >= 2 && lower.contains(last_raw.as_str()))))
                    || (!known[i]
                        && w.chars().count() >= 5
                        && stems.iter().any(|s| within_one_edit(s, w)));
                if hit_has {
                    covered += 1;
                    known[i] = true;
                }
            }
            best = best.max(covered);
        }
        let known = known.iter().filter(|k| **k).count();
        let names_topic = || self.topics.weigh(query).weights.iter().any(|w| *w > 0.0);
        best >= need && (2 * known > words.len() || (2 * known == words.len() && names_topic()))
    }

    /// Whether the wiki contains a (stemmed) word in a title, symptom or body.
    fn known_word(&self, searcher: &tantivy::Searcher, f: &Fields, word: &str) -> bool {
        [
            f.title,
            f.symptom,
            f.cause,
            f.fix,
            f.detection,
            f.body,
            f.tags,
        ]
        .into_iter()
        .any(|field| {
            searcher
                .doc_freq(&Term::from_field_text(field, word))
                .is_ok_and(|n| n > 0)
        })
    }

    /// The stored text of a hit's document, every prose field and its symbols.
    fn hit_text(&self, searcher: &tantivy::Searcher, hit: &Hit) -> Option<String> {
        let term = Term::from_field_text(self.fields.target, &hit.target());
        let q = TermQuery::new(term, IndexRecordOption::Basic);
        let (_, addr) = searcher
            .search(&q, &TopDocs::with_limit(1).order_by_score())
            .ok()?
            .into_iter()
            .next()?;
        let doc = searcher.doc::<TantivyDocument>(addr).ok()?;
        let f = &self.fields;
        let mut text = String::new();
        for field in [
            f.title,
            f.symptom,
            f.cause,
            f.fix,
            f.detection,
            f.body,
            f.tags,
            f.symbols,
        ] {
            for v in doc.get_all(field) {
                if let Some(s) = v.as_str() {
                    text.push_str(s);
                    text.push('\n');
                }
            }
        }
        Some(text)
    }

    /// The ranked hits of the text search.
    fn ranked(&self, query: &str, opts: &SearchOptions) -> Vec<Hit> {
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
        // Questions and short noun phrases ask for a technique, symptoms for a pitfall (a
        // technique section that shares the symptom's words comes after it); a
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
        } else if describes_symptom(query) {
            SYMPTOM_SKILL_GAIN
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
                    snippet = s.fragment().replace("**", "");
                }
            }
            if snippet.is_empty() {
                let body = get(self.fields.symptom);
                let body = if body.is_empty() {
                    get(self.fields.body)
                } else {
                    body
                };
                snippet = kernaut_wiki::first_paragraph(&body).replace("**", "");
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
        let mut positions = Vec::new();
        while let Some(t) = stream.next() {
            terms.push(t.text.clone());
            positions.push(t.position);
        }
        // Words next to each other in the query that stand next to each other in a page
        // ("too much shared data", "illegal memory access", "bank conflicts"): a pasted
        // message or a phrase the page quotes outranks pages that only share its words.
        let mut seen_pairs = HashSet::new();
        for i in 1..terms.len() {
            let gap = positions[i].saturating_sub(positions[i - 1]);
            if gap == 0 || gap > MAX_PHRASE_GAP || !seen_pairs.insert((&terms[i - 1], &terms[i])) {
                continue;
            }
            for (field, boost) in [
                (f.title, PHRASE_BOOST * 0.5),
                (f.symptom, PHRASE_BOOST),
                (f.body, PHRASE_BOOST * 0.5),
            ] {
                let pair = vec![
                    (0, Term::from_field_text(field, &terms[i - 1])),
                    (gap, Term::from_field_text(field, &terms[i])),
                ];
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(PhraseQuery::new_with_offset(pair)),
                        boost,
                    )),
                ));
            }
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
                            SYNONYM_WEIGHT,
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
            let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
            for w in std::iter::once(word).chain(metric_base(word)) {
                let term = Term::from_field_text(f.symbols_raw, w);
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
                        6.0,
                    )),
                ));
            }
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

/// The most distinct words of a query that count: a pasted log or source file of
/// thousands of words is cut to its first words (after dropping repeats), which keeps a
/// query well under a second however long the paste.
pub const MAX_QUERY_WORDS: usize = 64;

/// The query as searched: its first [`MAX_QUERY_WORDS`] distinct words (compared without
/// case), in their order, without hex addresses (`0x7f3a00000400`) and the rule lines of
/// tool output (`=========`), which match nothing and only cost time.
fn reduce_query(query: &str) -> String {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<&str> = Vec::new();
    for w in query.split_whitespace() {
        let bare = w.trim_matches(|c: char| !c.is_alphanumeric());
        let hex = bare.len() > 2
            && (bare.starts_with("0x") || bare.starts_with("0X"))
            && bare[2..].bytes().all(|b| b.is_ascii_hexdigit());
        if bare.is_empty() || hex || !seen.insert(w.to_lowercase()) {
            continue;
        }
        // compute-sanitizer's "Invalid __global__ read of size 4 bytes" names a memory
        // space, not the kernel qualifier: the plain word, as the pages say it.
        let after_invalid = out
            .last()
            .is_some_and(|p| p.eq_ignore_ascii_case("invalid"));
        let w = match w {
            "__global__" | "__shared__" | "__local__" if after_invalid => w.trim_matches('_'),
            _ => w,
        };
        out.push(w);
        if out.len() == MAX_QUERY_WORDS {
            break;
        }
    }
    let mut reduced = out.join(" ");
    // A query being typed keeps its state: the last word is still a prefix.
    if query.ends_with(char::is_whitespace) && !reduced.is_empty() {
        reduced.push(' ');
    }
    reduced
}

/// The most positions between two query words (stop words between them count) for
/// them to count as a phrase.
const MAX_PHRASE_GAP: usize = 2;
/// The weight of a phrase of two query words found as such in a title or symptom (half
/// that in a body).
const PHRASE_BOOST: f32 = 1.5;

/// How many of a query's `n` distinct meaningful words one of the first hits must
/// contain for a good match: a third of them, rounded up, and never more than three (a
/// long question or a pasted log names more than any one section says).
pub fn min_covered(n: usize) -> usize {
    n.div_ceil(3).min(3)
}

/// Whether two words differ by at most one inserted, deleted or replaced character.
fn within_one_edit(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    if prefix == long.len() {
        true
    } else if short.len() == long.len() {
        short[prefix + 1..] == long[prefix + 1..]
    } else {
        short[prefix..] == long[prefix + 1..]
    }
}

/// The counter an Nsight Compute metric name measures, without its operation and roll-up
/// (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared` for
/// `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum`), so that the `_op_ld` and
/// `_op_st` variants, and `.sum`, `.avg` or `.ratio`, find the same pages.
pub(crate) fn metric_base(word: &str) -> Option<&str> {
    let (unit, rest) = word.split_once("__")?;
    if unit.is_empty()
        || !unit
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        || rest.is_empty()
    {
        return None;
    }
    let name = word.split('.').next().unwrap_or(word);
    let name = [
        "_op_ld",
        "_op_st",
        "_op_atom",
        "_op_red",
        "_op_ldsm",
        "_op_ldgsts",
    ]
    .iter()
    .find_map(|op| name.strip_suffix(op))
    .unwrap_or(name);
    (name.len() > unit.len() + 2).then_some(name)
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

/// The factor on skill pages for a query that describes a symptom ("threads in the same
/// warp take different paths and it gets slow"): what goes wrong, and why, is a pitfall's
/// section; the skill section that shares its words (the technique that avoids it) is the
/// next step, not the answer.
const SYMPTOM_SKILL_GAIN: f32 = 0.8;

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

/// The weight of a word's synonym (per field, without the field's boost) next to the word
/// as typed: a fifth to a sixth of a title or symptom match, enough to decide between
/// sections that match the other words alike.
const SYNONYM_WEIGHT: f32 = 0.5;

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
    // "The second kernel" of a user is the next (secondary) kernel of the launch pages.
    &["second", "next", "secondary", "subsequent"],
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

/// The fragment with each range marked `**like this**`. The page's own bold markers
/// (`**Symptom**:`) are dropped first, so that in a snippet `**` marks a match and
/// nothing else.
fn mark(fragment: &str, ranges: &[std::ops::Range<usize>]) -> String {
    let mut out = String::with_capacity(fragment.len() + ranges.len() * 4);
    let mut last = 0;
    for r in ranges {
        if r.start < last || r.end > fragment.len() {
            continue;
        }
        out.push_str(&fragment[last..r.start].replace("**", ""));
        out.push_str("**");
        out.push_str(&fragment[r.clone()].replace("**", ""));
        out.push_str("**");
        last = r.end;
    }
    out.push_str(&fragment[last..].replace("**", ""));
    out
}

fn one_line(s: &str, max_chars: usize) -> String {
    // Markdown heading markers and fences (with the markers of a cuda fence, such as
    // `fragment`) say nothing on one line.
    let mut words: Vec<&str> = Vec::new();
    let mut after_fence = false;
    // A heading's words ("What", "When to use") are no part of the sentence after it.
    let is_heading = |l: &str| {
        let t = l.trim_start();
        let hashes = t.bytes().take_while(|b| *b == b'#').count();
        (1..=6).contains(&hashes) && t[hashes..].starts_with(' ')
    };
    for w in s
        .lines()
        .filter(|l| !is_heading(l))
        .flat_map(str::split_whitespace)
    {
        if w.starts_with("```") {
            after_fence = true;
            continue;
        }
        if after_fence
            && (kernaut_wiki::CUDA_MARKERS.contains(&w) || kernaut_wiki::is_arch_marker(w))
        {
            continue;
        }
        after_fence = false;
        if !w.bytes().all(|b| b == b'#') {
            words.push(w);
        }
    }
    let joined = words.join(" ");
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
    // An api page says what its calls are for in the lead of `## Semantics`: that is what
    // a user describes ("start the next kernel before the previous one finishes"), so it
    // stands where a pitfall's symptom stands.
    let purpose = match page.kind {
        PageKind::Api => page
            .section("semantics")
            .map(|s| kernaut_wiki::first_paragraph(&s.content))
            .unwrap_or_default(),
        _ => String::new(),
    };
    out.insert(
        0,
        DocText {
            anchor: String::new(),
            title: page.title.clone(),
            symptom: purpose,
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

#[cfg(test)]
mod one_line_tests {
    use super::one_line;

    #[test]
    fn fence_markers_do_not_reach_a_snippet() {
        let text = "**Example**:\n```cuda fragment sm_90a\nfloat x = a[i];\n```\n## Fix\nthe fragment of text";
        assert_eq!(
            one_line(text, 200),
            "**Example**: float x = a[i]; the fragment of text"
        );
    }

    #[test]
    fn a_sanitizer_memory_space_is_a_word_and_a_qualifier_stays_a_symbol() {
        assert_eq!(
            super::reduce_query("========= Invalid __shared__ write of size 4 bytes"),
            "Invalid shared write of size 4 bytes"
        );
        assert_eq!(
            super::reduce_query("__global__ void k()"),
            "__global__ void k()"
        );
    }

    #[test]
    fn heading_words_do_not_reach_a_snippet() {
        let text = "## What\nShared memory is split into 32 banks.\n#include <x.h>";
        assert_eq!(
            one_line(text, 200),
            "Shared memory is split into 32 banks. #include <x.h>"
        );
    }
}
