//! Writes the built-in wiki's search index, and the parsed built-in pages, while kernaut
//! is built. `src/knowledge.rs` embeds the index's files and opens them in place at
//! start-up (`kernaut_index::StaticDirectory`), and reads the pages back with
//! `Wiki::from_bytes`, so no process parses or tokenises the built-in pages.

use std::fmt::Write as _;
use std::path::PathBuf;

use kernaut_index::{index_files, WikiIndex};
use kernaut_wiki::{stable_hash, Wiki, WikiConfig};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // New pages (modified ones are tracked through the wiki crate's include_bytes!).
    println!("cargo:rerun-if-changed=../wiki/pages");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dir = out.join("builtin-index");
    let wiki = Wiki::load(&WikiConfig::builtin());
    WikiIndex::write_to_dir(&wiki, &dir).expect("indexing the built-in wiki");
    let files = index_files(&dir).expect("listing the built-in index");
    let mut src = String::from(
        "/// The files of the built-in wiki's index (name, bytes), written by `build.rs`.\n\
         pub static FILES: &[(&str, &[u8])] = &[\n",
    );
    let mut index_hash = 0u64;
    for f in &files {
        let name = f.file_name().expect("a file name").to_string_lossy();
        let bytes = std::fs::read(f).expect("reading an index file");
        index_hash = stable_hash(&[&index_hash.to_le_bytes(), name.as_bytes(), &bytes]);
        writeln!(src, "    ({name:?}, include_bytes!({:?})),", f.display()).unwrap();
    }
    src.push_str("];\n");
    writeln!(
        src,
        "/// `Wiki::content_hash` of the pages the index was built from.\n\
         pub const WIKI_HASH: u64 = {};\n\
         /// A hash of the index files: changes with the pages and with how they are indexed.\n\
         pub const INDEX_HASH: u64 = {index_hash};",
        wiki.content_hash()
    )
    .unwrap();
    // The parsed pages themselves, read at start instead of parsing the pages again.
    let wiki_bytes = out.join("builtin_wiki.postcard");
    std::fs::write(&wiki_bytes, wiki.to_bytes()).expect("writing the built-in wiki");
    writeln!(
        src,
        "/// The built-in wiki, parsed (`Wiki::to_bytes`).\n\
         pub static WIKI: &[u8] = include_bytes!({:?});",
        wiki_bytes.display()
    )
    .unwrap();
    std::fs::write(out.join("builtin_index.rs"), src).expect("writing builtin_index.rs");
}
