//! Words in source text: identifiers and whole-word search, from the syntax layer's one
//! copy of each.

pub use kernaut_syntax::lex::{find_word, is_identifier};
