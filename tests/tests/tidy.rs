//! The tidy test: the crate layering of ARCHITECTURE.md, enforced from `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Which kernaut crates each crate may depend on (normal dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("kernaut-gpu", &[]),
    ("kernaut-wiki", &[]),
    ("kernaut-index", &["kernaut-wiki"]),
    // The one index expression form and its valuation live in `kernaut-gpu`, which
    // evaluates them; syntax lowers source to it.
    ("kernaut-syntax", &["kernaut-gpu"]),
    // The semantic layer: the host, snapshots and models, below every feature.
    (
        "kernaut-sema",
        &[
            "kernaut-syntax",
            "kernaut-gpu",
            "kernaut-wiki",
            "kernaut-index",
        ],
    ),
    // The features (rules, hover, editor features, the kernel report) over it.
    (
        "kernaut-ide",
        &[
            "kernaut-sema",
            "kernaut-syntax",
            "kernaut-gpu",
            "kernaut-wiki",
            "kernaut-index",
        ],
    ),
    ("kernaut-compiler", &[]),
    ("kernaut-project", &["kernaut-ide", "kernaut-compiler"]),
    (
        "kernaut-lsp",
        &["kernaut-ide", "kernaut-project", "kernaut-compiler"],
    ),
    (
        "kernaut-tui",
        &["kernaut-ide", "kernaut-project", "kernaut-compiler"],
    ),
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

/// The modules of `kernaut-syntax` each top-level module uses (`crate::module::…` or a
/// name `lib.rs` re-exports from a module), over the module's file and its children.
fn syntax_module_uses() -> BTreeMap<String, BTreeSet<String>> {
    module_uses("syntax")
}

/// For each top-level module of `krate/src` (`x.rs`, or a folder `x/` with a `mod.rs`),
/// the other top-level modules its files name through `crate::`.
fn module_uses(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src");
    let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("a source file reads");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .expect("the crate's src lists")
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            if e.path().join("mod.rs").is_file() {
                return Some(name);
            }
            name.strip_suffix(".rs").map(str::to_string)
        })
        .filter(|n| n != "lib" && n != "main")
        .collect();
    // `pub use module::{A, B};` in lib.rs: `crate::A` is a use of `module`.
    let lib = read(&src.join("lib.rs"));
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for stmt in lib.split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt
            .rfind("pub use ")
            .map(|i| &stmt[i + "pub use ".len()..])
        else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        if modules.contains(module) {
            for name in words(names) {
                reexported.insert(name.to_string(), module.to_string());
            }
        }
    }
    let mut uses = BTreeMap::new();
    for module in &modules {
        let mut files: Vec<_> = Some(src.join(format!("{module}.rs")))
            .filter(|f| f.is_file())
            .into_iter()
            .collect();
        let mut dirs = vec![src.join(module)];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        let mut used = BTreeSet::new();
        for file in &files {
            for line in read(file).lines() {
                let code = line.split("//").next().unwrap_or("");
                for (i, _) in code.match_indices("crate::") {
                    let after = &code[i + "crate::".len()..];
                    // `crate::{a, b::c}` names several; `crate::a::…` one.
                    let named: Vec<&str> = match after.strip_prefix('{') {
                        Some(group) => words(group),
                        None => words(after).into_iter().take(1).collect(),
                    };
                    for name in named {
                        let target = if modules.contains(name) {
                            Some(name.to_string())
                        } else {
                            reexported.get(name).cloned()
                        };
                        if let Some(t) = target.filter(|t| t != module) {
                            used.insert(t);
                        }
                    }
                }
            }
        }
        uses.insert(module.clone(), used);
    }
    uses
}

/// The first segment of each path in a `use` list (`a::b, c::{d, e}, f` gives `a`, `c`,
/// `f`), up to a `}` that closes a brace opened before `s`.
fn words(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut expect = true;
    let mut depth = 0usize;
    let mut start = None;
    for (i, c) in s.char_indices().chain([(s.len(), ' ')]) {
        let ident = c.is_ascii_alphanumeric() || c == '_';
        match (ident, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                if expect && depth == 0 {
                    out.push(&s[st..i]);
                }
                expect = false;
                start = None;
            }
            _ => {}
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => expect = true,
            _ => {}
        }
    }
    out
}

/// The groups of modules that reach each other (strongly connected components with more
/// than one module), each sorted.
fn circles(uses: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in uses.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = uses.keys().map(|m| (m, reach(m))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, r) in &reached {
        let group: Vec<String> = r
            .iter()
            .filter(|n| reached.get(n).is_some_and(|back| back.contains(*m)))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

#[test]
fn syntax_modules_form_no_new_circle() {
    let uses = syntax_module_uses();
    // The parser sees the edges this test is about (a check that it reads anything).
    assert!(uses["consteval"].contains("expr"), "{uses:?}");
    assert!(uses["flow"].contains("declarator"), "{uses:?}");
    // The caches' types live in `data`, below `source`: no module of syntax/src uses
    // another that uses it back ("Module order in `syntax`" in ARCHITECTURE.md).
    assert!(uses["source"].contains("data"), "{uses:?}");
    assert_eq!(
        circles(&uses),
        Vec::<Vec<String>>::new(),
        "circles between the top-level modules of syntax/src; uses: {uses:#?}"
    );
}

/// The top-level modules of `sema` form a line (ARCHITECTURE.md, "Module order"): the
/// host and its snapshots below the models, the models below the reports built on them.
#[test]
fn sema_modules_form_no_circle() {
    let uses = module_uses("sema");
    // The parser sees folder modules and the edges this test is about.
    assert!(uses["model"].contains("analysis"), "{uses:?}");
    assert!(uses["reports"].contains("model"), "{uses:?}");
    // The host and its snapshots sit below every model.
    for model in ["model", "reports", "instances", "races", "signatures"] {
        assert!(
            !uses["analysis"].contains(model),
            "analysis uses {model}: {uses:?}"
        );
    }
    assert_eq!(
        circles(&uses),
        Vec::<Vec<String>>::new(),
        "circles between the top-level modules of sema/src; uses: {uses:#?}"
    );
}

/// The top-level modules of `ide` (the features) form a line too: the rules below the
/// report and the hover that show their findings, the editor features on top. The
/// features are free functions over a snapshot, and the query table in `lib.rs` lists
/// every query.
#[test]
fn ide_modules_form_no_circle() {
    let uses = module_uses("ide");
    assert!(uses["kernel_report"].contains("rules"), "{uses:?}");
    assert!(uses["editor"].contains("hover"), "{uses:?}");
    for feature in ["hover", "editor", "kernel_report"] {
        assert!(
            !uses["rules"].contains(feature),
            "rules use {feature}: {uses:?}"
        );
    }
    assert_eq!(
        circles(&uses),
        Vec::<Vec<String>>::new(),
        "circles between the top-level modules of ide/src; uses: {uses:#?}"
    );
}

/// The semantic layer never names a feature: cargo enforces it through the crate
/// graph (`kernaut-sema` does not depend on `kernaut-ide`); this checks that nothing
/// reaches around it (a path or a doc link to the features' crate).
#[test]
fn sema_names_no_feature() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sema/src");
    let mut offenders = Vec::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("sema/src lists").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("a source file reads");
                if text.contains("kernaut_ide") || text.contains("crate::rules") {
                    offenders.push(p.display().to_string());
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "sema names the features: {offenders:?}"
    );
}

#[test]
fn module_circle_finder_finds_circles() {
    let uses: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"]),
        ("c", &["a", "d"]),
        ("d", &[]),
        ("e", &["f"]),
        ("f", &["e"]),
    ]
    .into_iter()
    .map(|(m, u)| (m.to_string(), u.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(circles(&uses), vec![vec!["a", "b", "c"], vec!["e", "f"]]);
    assert_eq!(words("a::b, c::{d, e}, f"), vec!["a", "c", "f"]);
    assert_eq!(words("a, b::{c}} d"), vec!["a", "b"]);
}
