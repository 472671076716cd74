//! kernaut-index: ranked search over the wiki and the exact symbol table.
//!
//! The only crate that names tantivy. One document per page, plus one per pitfall and per
//! sub-skill, so symptom queries land on `pitfall-async-copy#P6` rather than on a page.
//!
//! ```
//! use kernaut_index::{SearchOptions, WikiIndex};
//! use kernaut_wiki::{Wiki, WikiConfig};
//! let index = WikiIndex::build(&Wiki::load(&WikiConfig::builtin())).unwrap();
//! let _hits = index.search("kernel slower after adding async copy", &SearchOptions::default());
//! ```
#![deny(missing_docs)]

pub mod schema;
mod search;
mod store;
mod symbols;
mod topics;

pub use search::{min_covered, Found, Hit, SearchOptions, WikiIndex, MAX_QUERY_WORDS};
pub use store::{index_files, StaticDirectory};
pub use symbols::{
    candidates, normalize, strip_template_args, MatchKind, SymbolMatch, SymbolTable,
};

/// Why the index could not be built.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// tantivy failed (in RAM this means a bug or memory exhaustion).
    #[error("search index: {0}")]
    Tantivy(String),
}

impl From<tantivy::TantivyError> for IndexError {
    fn from(e: tantivy::TantivyError) -> Self {
        IndexError::Tantivy(e.to_string())
    }
}
