//! kernaut-wiki: the knowledge behind every hover, diagnostic and search result.
//!
//! Pages are KernelWiki-style Markdown with YAML frontmatter (see `wiki/README.md`).
//! [`Wiki::load`] reads the built-in pages (embedded from `wiki/pages/` at compile
//! time) and any user folders over them; problems never abort loading: a broken page is
//! reported with file:line:col and skipped.
//!
//! ```
//! use kernaut_wiki::{Wiki, WikiConfig};
//! let wiki = Wiki::load(&WikiConfig::builtin());
//! assert!(wiki.pages().len() > 0);
//! ```
#![deny(missing_docs)]

mod blocks;
mod diag;
mod load;
mod model;
mod parse;
mod validate;

pub use blocks::{
    code_blocks, is_arch_marker, is_hidden_line, split_hidden, strip_hidden, CodeBlock,
    CUDA_MARKERS, HIDDEN_PREFIX,
};
pub use diag::{Diagnostic, Severity};
pub use load::{split_link, stable_hash, Wiki, WikiConfig};
pub use model::{
    first_paragraph, ApiEntry, Frontmatter, Origin, Page, PageKind, Pitfall, Section, SourceRef,
};
pub use parse::{heading_anchor, is_pitfall_anchor, parse_page, parse_sections, slug, Parsed};
pub use validate::{
    body_links, check, check_source_refs, github_slug, is_repo_ref, markdown_headings,
    parse_requires_sm, sm_label, CheckConfig, REPO_SOURCE_ID,
};
