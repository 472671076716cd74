//! The tidy test: the crate layering of ARCHITECTURE.md, enforced from `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Which kernaut crates each crate may depend on (normal dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("kernaut-gpu", &[]),
    ("kernaut-wiki", &[]),
    ("kernaut-index", &["kernaut-wiki"]),
    ("kernaut-syntax", &[]),
    (
        "kernaut-ide",
        &[
            "kernaut-syntax",
            "kernaut-gpu",
            "kernaut-wiki",
            "kernaut-index",
        ],
    ),
    ("kernaut-compiler", &[]),
    ("kernaut-lsp", &["kernaut-ide", "kernaut-compiler"]),
    ("kernaut-tui", &["kernaut-ide", "kernaut-compiler"]),
    ("kernaut-test-utils", &[]),
];

/// Heavy dependencies and the one crate allowed to name each.
const HEAVY: &[(&str, &str)] = &[
    ("tantivy", "kernaut-index"),
    ("tree-sitter", "kernaut-syntax"),
    ("tree-sitter-cuda", "kernaut-syntax"),
    ("tower-lsp-server", "kernaut-lsp"),
    ("lsp-types", "kernaut-lsp"),
    ("ls-types", "kernaut-lsp"),
    ("ratatui", "kernaut-tui"),
    ("crossterm", "kernaut-tui"),
];

fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// (package name → (normal dependency names, all dependency names)).
fn dependencies() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let meta = metadata();
    let mut out = BTreeMap::new();
    for pkg in meta["packages"].as_array().expect("packages") {
        let name = pkg["name"].as_str().unwrap_or_default().to_string();
        let mut normal = BTreeSet::new();
        let mut all = BTreeSet::new();
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default().to_string();
            if dep["kind"].is_null() {
                normal.insert(dep_name.clone());
            }
            all.insert(dep_name);
        }
        out.insert(name, (normal, all));
    }
    out
}

#[test]
fn crates_follow_the_layering() {
    let deps = dependencies();
    for (krate, allowed) in ALLOWED {
        let (normal, _) = deps
            .get(*krate)
            .unwrap_or_else(|| panic!("the workspace has no crate `{krate}`"));
        for d in normal.iter().filter(|d| d.starts_with("kernaut-")) {
            assert!(
                allowed.contains(&d.as_str()),
                "`{krate}` depends on `{d}`, which ARCHITECTURE.md does not allow"
            );
        }
    }
}

#[test]
fn heavy_dependencies_live_in_one_crate() {
    let deps = dependencies();
    for (heavy, owner) in HEAVY {
        for (krate, (_, all)) in &deps {
            if all.contains(*heavy) {
                assert_eq!(
                    krate, owner,
                    "`{krate}` names `{heavy}`, which belongs to `{owner}` alone"
                );
            }
        }
    }
}

#[test]
fn front_ends_do_not_depend_on_each_other() {
    let deps = dependencies();
    let (lsp, _) = &deps["kernaut-lsp"];
    let (tui, _) = &deps["kernaut-tui"];
    assert!(!lsp.contains("kernaut-tui"));
    assert!(!tui.contains("kernaut-lsp"));
}
