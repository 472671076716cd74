//! The server's settings: from `initializationOptions`, from
//! `workspace/didChangeConfiguration` (the `kernaut` section). What the project says
//! (`.kernaut.toml`, the build's targets) comes from `kernaut-project`'s loader.

use std::path::PathBuf;

use kernaut_ide::config::{RuleLevel, RulesConfig};
use kernaut_ide::gpu::Arch;
use serde_json::Value;

/// What the editor configured. Every field is optional in the JSON; unknown keys are
/// ignored and a bad value is reported and left at its default.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The target, when the user set one.
    pub arch: Option<Arch>,
    /// Extra wiki folders.
    pub wiki_paths: Vec<PathBuf>,
    /// Rule levels.
    pub rules: RulesConfig,
    /// The block size assumed where no launch is seen.
    pub default_block: [u32; 3],
    /// Inlay hints on or off.
    pub inlay_hints: bool,
    /// Code lenses on or off.
    pub code_lens: bool,
    /// How long to wait after a change before computing diagnostics.
    pub debounce_ms: u64,
    /// `kernaut.nvcc`: the `nvcc` to compile with (else `CUDA_HOME`, `PATH`, a Python
    /// environment with NVIDIA's wheels).
    pub nvcc: Option<PathBuf>,
    /// Whether to compile open files in the background for real register counts.
    pub compile: bool,
    /// `kernaut.wikiLinks`: how diagnostics and wiki symbols link to a page.
    pub wiki_links: crate::wiki_files::WikiLinks,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            arch: None,
            wiki_paths: Vec::new(),
            rules: RulesConfig::default(),
            default_block: [256, 1, 1],
            inlay_hints: true,
            code_lens: true,
            debounce_ms: 30,
            nvcc: None,
            compile: true,
            wiki_links: crate::wiki_files::WikiLinks::default(),
        }
    }
}

impl Settings {
    /// Lays the keys of `value` over `self` (a `kernaut` section, or an object holding
    /// one); returns the problems found, one line each.
    pub fn merge_json(&mut self, value: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let obj = match value.get("kernaut") {
            Some(inner) if inner.is_object() => inner,
            _ => value,
        };
        let Some(obj) = obj.as_object() else {
            return problems;
        };
        if let Some(v) = obj.get("arch") {
            match v.as_str().map(Arch::parse) {
                Some(Ok(a)) => self.arch = Some(a),
                _ if v.is_null() || v.as_str() == Some("") => self.arch = None,
                Some(Err(e)) => problems.push(format!("kernaut.arch: {e}")),
                None => problems.push(format!(
                    "kernaut.arch: {v} is not an architecture such as \"sm_90\" or a GPU such as \"H200\""
                )),
            }
        }
        if let Some(v) = obj.get("wikiPaths") {
            match v.as_array() {
                Some(a) => {
                    self.wiki_paths = a
                        .iter()
                        .filter_map(Value::as_str)
                        .map(PathBuf::from)
                        .collect();
                }
                None => problems.push("kernaut.wikiPaths: expected a list of folders".into()),
            }
        }
        if let Some(v) = obj.get("rules") {
            match v.as_object() {
                Some(m) => {
                    let mut rules = RulesConfig::default();
                    for (id, level) in m {
                        match level.as_str().and_then(parse_level) {
                            Some(l) => {
                                rules.levels.insert(id.clone(), l);
                            }
                            None => problems.push(format!(
                                "kernaut.rules.{id}: expected \"off\", \"hint\", \"info\", \"warning\" or \"error\""
                            )),
                        }
                    }
                    // An id that names no rule would configure nothing: said, with the
                    // closest id, as `check` says it of `.kernaut.toml`.
                    let named = kernaut_ide::config::KernautConfig {
                        rules: rules.clone(),
                        ..kernaut_ide::config::KernautConfig::default()
                    };
                    problems.extend(
                        kernaut_ide::rules::config_problems(&named)
                            .into_iter()
                            .map(|p| format!("kernaut.{p}")),
                    );
                    self.rules = rules;
                }
                None => {
                    problems.push("kernaut.rules: expected an object of rule id → level".into())
                }
            }
        }
        if let Some(v) = obj.get("defaultBlockSize") {
            match block(v) {
                Some(b) => self.default_block = b,
                None => problems.push(format!(
                    "kernaut.defaultBlockSize: {v} is not a block size (a number such as 256, or [x, y, z])"
                )),
            }
        }
        for (key, slot) in [
            ("inlayHints", &mut self.inlay_hints),
            ("codeLens", &mut self.code_lens),
        ] {
            if let Some(v) = obj.get(key) {
                match v.as_bool() {
                    Some(b) => *slot = b,
                    None => problems.push(format!("kernaut.{key}: expected true or false")),
                }
            }
        }
        if let Some(v) = obj.get("nvcc") {
            match v.as_str() {
                Some("") | None if v.is_null() || v.as_str() == Some("") => self.nvcc = None,
                Some(p) => self.nvcc = Some(PathBuf::from(p)),
                None => problems.push("kernaut.nvcc: expected the path of nvcc".into()),
            }
        }
        if let Some(v) = obj.get("compile") {
            match (v.as_bool(), v.as_str()) {
                (Some(b), _) => self.compile = b,
                (_, Some("off")) => self.compile = false,
                (_, Some("on")) => self.compile = true,
                _ => {
                    problems.push("kernaut.compile: expected \"on\", \"off\", true or false".into())
                }
            }
        }
        if let Some(v) = obj.get("wikiLinks") {
            match v.as_str().and_then(crate::wiki_files::WikiLinks::parse) {
                Some(l) => self.wiki_links = l,
                None => problems.push("kernaut.wikiLinks: expected \"kernaut\" or \"file\"".into()),
            }
        }
        if let Some(v) = obj.get("diagnosticsDelayMs") {
            match v.as_u64() {
                Some(ms) if ms <= 10_000 => self.debounce_ms = ms,
                _ => problems.push("kernaut.diagnosticsDelayMs: expected 0 to 10000".into()),
            }
        }
        problems
    }
}

/// `off`, `hint`, `info` (read as hint), `warning` or `error`.
fn parse_level(s: &str) -> Option<RuleLevel> {
    match s {
        "info" | "information" => RuleLevel::parse("hint"),
        other => RuleLevel::parse(other),
    }
}

fn block(v: &Value) -> Option<[u32; 3]> {
    let dim = |v: &Value| {
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
    };
    if let Some(n) = dim(v) {
        return Some([n, 1, 1]);
    }
    let a = v.as_array()?;
    if a.is_empty() || a.len() > 3 {
        return None;
    }
    let mut out = [1u32; 3];
    for (i, x) in a.iter().enumerate() {
        out[i] = dim(x)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_are_read_and_problems_reported() {
        let mut s = Settings::default();
        let problems = s.merge_json(&json!({
            "arch": "sm_80",
            "rules": {"bank-conflict": "error", "ilp/over-unroll": "off", "x": "loud"},
            "defaultBlockSize": [32, 8],
            "inlayHints": false,
            "codeLens": "yes"
        }));
        assert_eq!(s.arch.unwrap().to_string(), "sm_80");
        assert_eq!(s.default_block, [32, 8, 1]);
        assert!(!s.inlay_hints);
        assert!(s.code_lens);
        assert_eq!(s.rules.level("ilp/over-unroll"), Some(RuleLevel::Off));
        assert_eq!(problems.len(), 2, "{problems:?}");
        let problems = s.merge_json(&json!({"rules": {"bank-conflit": "off"}}));
        assert_eq!(
            problems,
            ["kernaut.rules.\"bank-conflit\": no such rule; did you mean \"bank-conflict\"?"]
        );
        // The `kernaut` section of a settings object.
        let mut s = Settings::default();
        assert!(s
            .merge_json(&json!({"kernaut": {"defaultBlockSize": 128}}))
            .is_empty());
        assert_eq!(s.default_block, [128, 1, 1]);
        assert!(s.merge_json(&json!({"compile": "off"})).is_empty());
        assert!(!s.compile);
    }
}
