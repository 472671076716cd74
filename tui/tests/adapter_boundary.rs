//! The interactive UI asks `kernaut-ide` for everything through one module,
//! `tui/src/app/model.rs`, so that a change of `ide`'s API (files named by a `FileId`,
//! queries returning `Cancellable<T>`) is a change of that one file. This test keeps it
//! so: no other module of `app/` names `kernaut_ide`, and no module of the crate but
//! `model.rs` drives an `AnalysisHost` or an `Analysis`.
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn only_the_model_module_calls_kernaut_ide() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 5);
    let model = src.join("app").join("model.rs");
    for f in files.iter().filter(|f| **f != model) {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        for word in ["AnalysisHost", "AnalysisConfig", ".analysis()", "set_file("] {
            assert!(
                !text.contains(word),
                "{rel} uses `{word}`: go through app/model.rs"
            );
        }
        if f.starts_with(src.join("app")) {
            assert!(
                !text.contains("kernaut_ide"),
                "{rel} names kernaut_ide: go through app/model.rs"
            );
        }
    }
}
