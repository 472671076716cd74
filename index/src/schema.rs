//! The tantivy schema, defined once: fields, their tokenizers and boosts.

use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, STORED,
    STRING,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RegexTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer,
    StopWordFilter, TextAnalyzer, TokenizerManager,
};

/// The tokenizer for prose fields: lowercase, English stop words out, stemmed.
pub const PROSE: &str = "kernaut_prose";
/// The tokenizer for symbol fields: keeps `_`, `.` and `::` inside a token
/// (`__hfma2`, `cp.async.wait_group`, `cuda::memcpy_async` stay whole).
pub const SYMBOL: &str = "kernaut_symbol";

/// Typed handles to every field. Nothing outside this module names a field by string.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// Page id (`pitfall-async-copy`), exact.
    pub id: Field,
    /// Anchor (`P6`), exact; empty for page documents.
    pub anchor: Field,
    /// `skill`, `pitfall`, `api` or `skill-card`, exact (for `--kind`).
    pub kind: Field,
    /// Title (page title, or the pitfall's / sub-skill's title).
    pub title: Field,
    /// What the user sees.
    pub symptom: Field,
    /// Why it happens.
    pub cause: Field,
    /// What to do.
    pub fix: Field,
    /// How to detect it.
    pub detection: Field,
    /// Everything else.
    pub body: Field,
    /// Tags, plus the page title for section documents.
    pub tags: Field,
    /// Symbols and related APIs, tokenised whole.
    pub symbols: Field,
    /// Symbols exactly as written, one term per symbol.
    pub symbols_raw: Field,
    /// `id` for a page document, `id#anchor` for a section, exact.
    pub target: Field,
    /// The document's topic as `1 + index` into the index's topic list, 0 for none (fast).
    pub topic: Field,
    /// 1 for a document of a skill page or skill card, else 0 (fast).
    pub skill: Field,
}

/// Name of the [`Fields::topic`] fast field, for reading it back per segment.
pub const TOPIC_FAST: &str = "topic";
/// Name of the [`Fields::skill`] fast field.
pub const SKILL_FAST: &str = "skill";

/// Words of a query that carry no meaning: English function words, plus the filler of
/// questions ("how do I", "should I use"). They are dropped from queries (so snippets never
/// mark them) and from topic words. Pages are indexed with Lucene's shorter list, which
/// tantivy uses; dropping more from pages changes field lengths and, measured on the
/// symptom sets, ranks worse.
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing",
    "done", "each", "either", "else", "for", "from", "get", "gets", "getting", "got", "had", "has",
    "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "im", "in", "into",
    "is", "it", "its", "itself", "just", "let", "many", "me", "might", "mine", "much", "must",
    "my", "myself", "no", "not", "of", "on", "or", "our", "ours", "per", "please", "really", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "too", "us", "use", "used", "uses", "using", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours",
];

/// Boost of each prose field in ranked search.
pub const BOOSTS: [(FieldName, f32); 8] = [
    (FieldName::Title, 2.5),
    (FieldName::Symptom, 3.0),
    (FieldName::Cause, 1.2),
    (FieldName::Fix, 1.0),
    (FieldName::Detection, 0.8),
    (FieldName::Body, 0.7),
    (FieldName::Tags, 1.0),
    (FieldName::Symbols, 2.0),
];

/// A prose-or-symbol field, for the boost table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldName {
    /// [`Fields::title`]
    Title,
    /// [`Fields::symptom`]
    Symptom,
    /// [`Fields::cause`]
    Cause,
    /// [`Fields::fix`]
    Fix,
    /// [`Fields::detection`]
    Detection,
    /// [`Fields::body`]
    Body,
    /// [`Fields::tags`]
    Tags,
    /// [`Fields::symbols`]
    Symbols,
}

impl Fields {
    /// The field handle for a name of the boost table.
    pub fn get(&self, name: FieldName) -> Field {
        match name {
            FieldName::Title => self.title,
            FieldName::Symptom => self.symptom,
            FieldName::Cause => self.cause,
            FieldName::Fix => self.fix,
            FieldName::Detection => self.detection,
            FieldName::Body => self.body,
            FieldName::Tags => self.tags,
            FieldName::Symbols => self.symbols,
        }
    }
}

/// Builds the schema and its field handles.
pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let prose = |stored: bool| {
        let idx = TextFieldIndexing::default()
            .set_tokenizer(PROSE)
            // Positions: a word such as `wait_group` is two tokens, which the query
            // parser matches as a phrase.
            .set_index_option(IndexRecordOption::WithFreqsAndPositions);
        let opts = TextOptions::default().set_indexing_options(idx);
        if stored {
            opts.set_stored()
        } else {
            opts
        }
    };
    let symbol = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(SYMBOL)
                .set_index_option(IndexRecordOption::WithFreqs),
        )
        .set_stored();
    let fields = Fields {
        id: b.add_text_field("id", STRING | STORED),
        anchor: b.add_text_field("anchor", STRING | STORED),
        kind: b.add_text_field("kind", STRING | STORED),
        title: b.add_text_field("title", prose(true)),
        symptom: b.add_text_field("symptom", prose(true)),
        cause: b.add_text_field("cause", prose(true)),
        fix: b.add_text_field("fix", prose(true)),
        detection: b.add_text_field("detection", prose(true)),
        body: b.add_text_field("body", prose(true)),
        tags: b.add_text_field("tags", prose(true)),
        symbols: b.add_text_field("symbols", symbol),
        symbols_raw: b.add_text_field("symbols_raw", STRING),
        target: b.add_text_field("target", STRING),
        topic: b.add_u64_field(TOPIC_FAST, NumericOptions::default().set_fast()),
        skill: b.add_u64_field(SKILL_FAST, NumericOptions::default().set_fast()),
    };
    (b.build(), fields)
}

/// The query stop-word filter.
fn stop_words() -> StopWordFilter {
    StopWordFilter::remove(STOP_WORDS.iter().map(|w| w.to_string()))
}

/// Whether a whole query word is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word.to_lowercase().as_str())
}

/// The pattern of a code-shaped token: keeps `_`, `.` and `::` inside it.
const SYMBOL_PATTERN: &str = r"[A-Za-z0-9_]+(?:(?:\.|::)[A-Za-z0-9_]+)*";

/// The prose analyzer.
pub fn prose_analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(48))
        .filter(LowerCaser);
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder
            .filter(stop)
            .filter(Stemmer::new(Language::English))
            .build(),
        None => builder.filter(Stemmer::new(Language::English)).build(),
    }
}

/// The analyzer for topic words: like the symbol analyzer, a code-shaped word stays whole
/// (`cuda_launch_blocking`, `cp.async`, `__syncthreads`), and like the prose analyzer, stop
/// words go and plain words are stemmed (`spilled` and `spills` are `spill`).
pub fn topic_analyzer() -> TextAnalyzer {
    match RegexTokenizer::new(SYMBOL_PATTERN) {
        Ok(tok) => TextAnalyzer::builder(tok)
            .filter(RemoveLongFilter::limit(96))
            .filter(LowerCaser)
            .filter(stop_words())
            .filter(Stemmer::new(Language::English))
            .build(),
        Err(_) => prose_analyzer(),
    }
}

/// The symbol analyzer.
pub fn symbol_analyzer() -> TextAnalyzer {
    // The pattern is a constant that compiles; the fallback keeps this infallible.
    match RegexTokenizer::new(SYMBOL_PATTERN) {
        Ok(tok) => TextAnalyzer::builder(tok)
            .filter(RemoveLongFilter::limit(96))
            .filter(LowerCaser)
            .build(),
        Err(_) => TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .build(),
    }
}

/// Registers both analyzers.
pub fn register(manager: &TokenizerManager) {
    manager.register(PROSE, prose_analyzer());
    manager.register(SYMBOL, symbol_analyzer());
}

/// The field handles of an index whose schema is [`schema`]'s; `None` for an index
/// written with another schema (a cache from another version of kernaut).
pub fn fields_of(index_schema: &Schema) -> Option<Fields> {
    let (current, fields) = schema();
    (*index_schema == current).then_some(fields)
}
