//! The project configuration, `.kernaut.toml`: the target architecture, the register
//! count to assume until ptxas reports one, and per-rule levels.
//!
//! ```toml
//! arch = "sm_90"
//! registers = 64
//!
//! [rules]
//! bank-conflict = "hint"
//! "async-copy/l1-access-mode" = "off"
//! ```
//!
//! `ide` does no I/O: front ends find the file (from the checked file upwards) and hand
//! its text to [`parse_config`].
//!
//! ```
//! use kernaut_ide::config::{parse_config, RuleLevel};
//!
//! let config = parse_config("arch = \"sm_80\"\n[rules]\nbank-conflict = \"off\"\n").unwrap();
//! assert_eq!(config.arch.unwrap().to_string(), "sm_80");
//! assert_eq!(config.rules.level("bank-conflict"), Some(RuleLevel::Off));
//! ```

use std::collections::BTreeMap;

use kernaut_gpu::Arch;

/// The name of the configuration file.
pub const CONFIG_FILE_NAME: &str = ".kernaut.toml";

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A suggestion.
    Hint,
    /// Likely slow or wrong.
    Warning,
    /// Wrong: it does not compile, fails at launch, or deadlocks.
    Error,
}

impl Severity {
    /// The lowercase name (`hint`, `warning`, `error`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Hint => "hint",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What the configuration asks of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleLevel {
    /// The rule does not run.
    Off,
    /// Its diagnostics are reported at this severity.
    Level(Severity),
}

impl RuleLevel {
    /// Parses `off`, `hint`, `warning` or `error`.
    pub fn parse(text: &str) -> Option<RuleLevel> {
        Some(match text.trim() {
            "off" => RuleLevel::Off,
            "hint" => RuleLevel::Level(Severity::Hint),
            "warning" => RuleLevel::Level(Severity::Warning),
            "error" => RuleLevel::Level(Severity::Error),
            _ => return None,
        })
    }
}

/// Per-rule levels, keyed by rule id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RulesConfig {
    /// Rule id → level. Rules not listed keep their own severities.
    pub levels: BTreeMap<String, RuleLevel>,
}

impl RulesConfig {
    /// The configured level of a rule, if the configuration names it.
    pub fn level(&self, rule: &str) -> Option<RuleLevel> {
        self.levels.get(rule).copied()
    }
}

/// A parsed `.kernaut.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernautConfig {
    /// The target architecture, when the file names one.
    pub arch: Option<Arch>,
    /// Registers per thread to assume where the compiler has not reported a count.
    pub registers: Option<u32>,
    /// The `[rules]` table.
    pub rules: RulesConfig,
    /// Keys that would choose which compiler runs (`nvcc`, `ccbin`, …), read and ignored:
    /// a workspace file never picks an executable; the toolkit comes from the user's own
    /// settings and environment.
    pub ignored_tool_keys: Vec<String>,
}

/// Keys a `.kernaut.toml` may not set, because they would choose an executable.
const TOOL_KEYS: [&str; 6] = [
    "nvcc",
    "ccbin",
    "compiler",
    "compiler-bindir",
    "cuda_home",
    "toolkit",
];

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The text is not TOML.
    #[error("invalid TOML: {0}")]
    Toml(#[from] toml::de::Error),
    /// `arch` is not an architecture name.
    #[error("`arch`: {0}")]
    Arch(#[from] kernaut_gpu::ArchError),
    /// A key has the wrong type or value.
    #[error("{0}")]
    Value(String),
}

/// Parses the text of a `.kernaut.toml`. Unknown top-level keys are ignored, so that
/// later versions can add settings; a `[rules]` value that is not a level is an error.
pub fn parse_config(text: &str) -> Result<KernautConfig, ConfigError> {
    let table: toml::Table = text.parse()?;
    let mut config = KernautConfig {
        ignored_tool_keys: TOOL_KEYS
            .iter()
            .filter(|k| table.contains_key(**k))
            .map(|k| k.to_string())
            .collect(),
        ..KernautConfig::default()
    };
    if let Some(arch) = table.get("arch") {
        let arch = arch.as_str().ok_or_else(|| {
            ConfigError::Value("`arch` must be a string such as \"sm_90\"".into())
        })?;
        config.arch = Some(Arch::parse(arch)?);
    }
    if let Some(r) = table.get("registers") {
        let r = r
            .as_integer()
            .and_then(|r| u32::try_from(r).ok())
            .filter(|r| (1..=255).contains(r))
            .ok_or_else(|| {
                ConfigError::Value("`registers` must be a whole number from 1 to 255".into())
            })?;
        config.registers = Some(r);
    }
    if let Some(rules) = table.get("rules") {
        let rules = rules
            .as_table()
            .ok_or_else(|| ConfigError::Value("`rules` must be a table".into()))?;
        for (id, value) in rules {
            let level = value.as_str().and_then(RuleLevel::parse).ok_or_else(|| {
                ConfigError::Value(format!(
                    "rules.{id}: expected \"off\", \"hint\", \"warning\" or \"error\""
                ))
            })?;
            config.rules.levels.insert(id.clone(), level);
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_arch_and_levels() {
        let c = parse_config(
            "arch = \"sm_90a\"\nunknown = 1\n[rules]\n\"async-copy/l1-access-mode\" = \"off\"\nbank-conflict = \"error\"\n",
        )
        .unwrap();
        assert_eq!(c.arch.unwrap().to_string(), "sm_90a");
        assert_eq!(
            c.rules.level("async-copy/l1-access-mode"),
            Some(RuleLevel::Off)
        );
        assert_eq!(
            c.rules.level("bank-conflict"),
            Some(RuleLevel::Level(Severity::Error))
        );
        assert_eq!(c.rules.level("ilp/over-unroll"), None);
        assert_eq!(c.registers, None);
        assert_eq!(parse_config("registers = 64").unwrap().registers, Some(64));
    }

    #[test]
    fn rejects_bad_values() {
        assert!(parse_config("arch = \"sm_1\"").is_err());
        assert!(parse_config("[rules]\nbank-conflict = \"loud\"").is_err());
        assert!(parse_config("arch = 90").is_err());
        assert!(parse_config("arch = ").is_err());
        assert!(parse_config("registers = 0").is_err());
        assert!(parse_config("registers = \"64\"").is_err());
        assert!(parse_config("registers = 300").is_err());
    }
}
