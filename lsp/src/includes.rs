//! Reading a file's quoted includes from disk for the host (`check` and the server):
//! the traversal (relative to the including file, [`kernaut_ide::includes::MAX_DEPTH`] levels, cycles safe) is
//! `kernaut_ide::includes::include_closure`; this module only reads the files.

use std::collections::HashMap;
use std::sync::Arc;

use kernaut_ide::includes::{include_closure, normalize_path};
use kernaut_ide::source_text;

/// Headers read from disk, and notes about those that could not be read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// (absolute path, text) of each header read, in the order found.
    pub headers: Vec<(String, String)>,
    /// One line per include that named an unreadable (missing, binary) file.
    pub notes: Vec<String>,
}

/// The quoted includes of the files `roots` (absolute path, text), transitively, that
/// `known` (absolute paths, normalised, to texts) does not hold, read from disk.
pub fn load(roots: &[(String, Arc<str>)], known: &HashMap<String, Arc<str>>) -> Loaded {
    let mut read: HashMap<String, Option<Arc<str>>> = HashMap::new();
    let mut loaded = Loaded::default();
    for (root, text) in roots {
        let root_key = normalize_path(root);
        let mut text_of = |p: &str| -> Option<Arc<str>> {
            let key = normalize_path(p);
            if key == root_key {
                return Some(text.clone());
            }
            if let Some(t) = known.get(&key) {
                return Some(t.clone());
            }
            if let Some(t) = read.get(&key) {
                return t.clone();
            }
            let got = match std::fs::read(&key) {
                Ok(bytes) if source_text::is_binary(&bytes) => {
                    loaded.notes.push(format!(
                        "{key}: included from {root}, a binary file, skipped"
                    ));
                    None
                }
                Ok(bytes) => {
                    let text: Arc<str> = Arc::from(source_text::decode(bytes).text);
                    loaded.headers.push((key.clone(), text.to_string()));
                    Some(text)
                }
                Err(e) => {
                    loaded
                        .notes
                        .push(format!("{key}: included from {root}, not read: {e}"));
                    None
                }
            };
            read.insert(key, got.clone());
            got
        };
        include_closure(root, &mut text_of);
    }
    loaded
}
