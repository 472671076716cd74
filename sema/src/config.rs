//! The project configuration, `.kernaut.toml`: the targets, the register count to assume
//! until ptxas reports one, include folders, macros the build defines, and per-rule
//! levels; and the [`TargetSet`] a file is compiled for, with where it came from.
//!
//! ```toml
//! arch = ["sm_80", "sm_90a"]   # or one name: "sm_90", "H200", "A100"
//! registers = 64
//! include_dirs = ["include", "third_party/cutlass/include"]
//! defines = ["MYLIB_HOPPER", "TILE=128"]
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
//! use kernaut_sema::config::{parse_config, RuleLevel};
//!
//! let config = parse_config("arch = \"sm_80\"\n[rules]\nbank-conflict = \"off\"\n").unwrap();
//! assert_eq!(config.arch().unwrap().to_string(), "sm_80");
//! assert_eq!(config.rules.level("bank-conflict"), Some(RuleLevel::Off));
//! ```

use std::collections::BTreeMap;

use kernaut_gpu::{Arch, Target};

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

/// The targets one file is compiled for, and where they came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetSet {
    /// At least one target, in the order found, without repeats.
    pub targets: Vec<Target>,
    /// Where they came from, as shown to users: `--arch`, `kernaut.arch`,
    /// `/p/.kernaut.toml:1`, `/p/CMakeLists.txt:12`, or `assumed`.
    pub origin: String,
    /// Nothing named a target: [`TargetSet::assumed`] was used.
    pub assumed: bool,
    /// The targets built only under a condition the build file does not decide
    /// (`if(CUDA_VERSION VERSION_LESS 13.0)`): a finding that holds only for them is a
    /// hint.
    pub conditional: Vec<Target>,
    /// Why the build compiles the file for none of them, where it says so (a Makefile
    /// that names the CUDA sources it compiles and not this one): every finding is then
    /// a hint that says so.
    pub not_built: Option<String>,
}

impl TargetSet {
    /// The target assumed where neither a setting nor the build names one: `sm_90`.
    pub fn assumed() -> TargetSet {
        TargetSet {
            targets: vec![Target::new(9, 0)],
            origin: "assumed".to_string(),
            assumed: true,
            conditional: Vec::new(),
            not_built: None,
        }
    }

    /// Targets named by `origin`; repeats dropped. `None` when `targets` is empty.
    pub fn named(targets: Vec<Target>, origin: impl Into<String>) -> Option<TargetSet> {
        let mut unique: Vec<Target> = Vec::new();
        for t in targets {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        (!unique.is_empty()).then(|| TargetSet {
            targets: unique,
            origin: origin.into(),
            assumed: false,
            conditional: Vec::new(),
            not_built: None,
        })
    }

    /// These targets with `conditional` marked as built only under a condition the
    /// build file does not decide.
    pub fn with_conditional(mut self, conditional: Vec<Target>) -> TargetSet {
        self.conditional = conditional;
        self
    }

    /// Whether `target` is built only under a condition the build does not decide.
    pub fn is_conditional(&self, target: &Target) -> bool {
        self.conditional.contains(target)
    }

    /// The target to name where a finding rests on independent thread scheduling (the
    /// lanes of a warp not in lock-step, sm_70 and newer): the first such target the
    /// build names for certain, else one it builds under an undecided condition. `None`
    /// where every target runs a warp's lanes in lock-step (a build for sm_35 or sm_61
    /// only): warp-synchronous code through `volatile` is ordered there.
    pub fn independent_scheduling(&self) -> Option<&Target> {
        let mut its = self
            .targets
            .iter()
            .filter(|t| t.schedules_lanes_independently());
        let first = its.next();
        std::iter::once(first)
            .flatten()
            .chain(its)
            .find(|t| !self.is_conditional(t))
            .or(first)
    }

    /// Whether the occupancy tables model some target (one has a row at or below its
    /// capability). A build for sm_35 alone is older than every row: its occupancy is
    /// not modelled.
    pub fn modelled(&self) -> bool {
        modelled(&self.targets)
    }

    /// The architecture the models (occupancy, banks) use: the newest target whose
    /// limits the tables hold, else the closest older one, else `sm_90`.
    pub fn primary(&self) -> Arch {
        let newest = self
            .targets
            .iter()
            .filter(|t| !t.virtual_only)
            .chain(self.targets.iter())
            .max_by_key(|t| (t.major, t.minor, t.variant));
        let Some(newest) = newest else {
            return crate::AnalysisConfig::default().arch;
        };
        if let Some(arch) = newest.arch() {
            return arch;
        }
        kernaut_gpu::ComputeCapability::ALL
            .iter()
            .rev()
            .find(|cc| (cc.major(), cc.minor()) <= (newest.major, newest.minor))
            .map(|cc| Arch {
                cc: *cc,
                arch_specific: newest.variant != kernaut_gpu::Variant::Generic,
            })
            .unwrap_or_else(|| crate::AnalysisConfig::default().arch)
    }

    /// `sm_80, sm_90a`.
    pub fn names(&self) -> String {
        self.targets
            .iter()
            .map(Target::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `sm_80, sm_90a (from /p/CMakeLists.txt:12)` or `sm_90 (assumed)`.
    pub fn describe(&self) -> String {
        if self.assumed {
            format!("{} (assumed)", self.names())
        } else {
            format!("{} (from {})", self.names(), self.origin)
        }
    }
}

/// Whether the occupancy tables model one of `targets` (see [`TargetSet::modelled`]).
pub fn modelled(targets: &[Target]) -> bool {
    targets.iter().any(|t| {
        kernaut_gpu::ComputeCapability::ALL
            .iter()
            .any(|cc| (cc.major(), cc.minor()) <= (t.major, t.minor))
    })
}

/// What the build says about one file, found by the project loader: its targets, the
/// macros its compile command defines, and its include folders.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FileBuild {
    /// The targets the build compiles the file for, when it says.
    pub targets: Option<TargetSet>,
    /// `-D` macros of every compile of the file, as (name, value; `1` when none is
    /// given).
    pub defines: Vec<(String, String)>,
    /// `-D` macros of the compiles for one target only (a build that compiles the file
    /// once per target with its own macros, as `-DMYLIB_HOPPER` beside `-arch=sm_90a`).
    pub target_defines: Vec<(Target, Vec<(String, String)>)>,
    /// Include folders (absolute, `/`-separated), searched after the including file's
    /// own folder for quoted includes.
    pub include_dirs: Vec<String>,
}

/// A parsed `.kernaut.toml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernautConfig {
    /// The targets, when the file names any (`arch = "sm_90"` or a list).
    pub targets: Vec<Target>,
    /// The line of `arch`, for messages.
    pub arch_line: Option<usize>,
    /// Registers per thread to assume where the compiler has not reported a count.
    pub registers: Option<u32>,
    /// The `[rules]` table.
    pub rules: RulesConfig,
    /// `include_dirs`, as written (relative to the file's folder, or absolute).
    pub include_dirs: Vec<String>,
    /// `defines`: macros the build defines, as (name, value; `1` when none is given).
    pub defines: Vec<(String, String)>,
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
    Toml(String),
    /// A key has the wrong type or value.
    #[error("{message}")]
    Value {
        /// The 1-based line of the key, when found.
        line: Option<usize>,
        /// What is wrong and what to write instead.
        message: String,
    },
}

impl ConfigError {
    /// The 1-based line the error is about, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            ConfigError::Toml(_) => None,
            ConfigError::Value { line, .. } => *line,
        }
    }
}

impl KernautConfig {
    /// The architecture the models use: see [`TargetSet::primary`].
    pub fn arch(&self) -> Option<Arch> {
        TargetSet::named(self.targets.clone(), "").map(|t| t.primary())
    }
}

/// The 1-based line where `key = …` is written at the start of a line.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches('"');
            t.strip_prefix(key).is_some_and(|r| {
                r.trim_start()
                    .trim_start_matches('"')
                    .trim_start()
                    .starts_with('=')
            })
        })
        .map(|i| i + 1)
}

/// Parses the text of a `.kernaut.toml`. Unknown top-level keys are ignored, so that
/// later versions can add settings; a `[rules]` value that is not a level is an error.
pub fn parse_config(text: &str) -> Result<KernautConfig, ConfigError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Toml(e.message().to_string()))?;
    let value = |key: &str, message: String| ConfigError::Value {
        line: line_of_key(text, key),
        message,
    };
    let mut config = KernautConfig {
        ignored_tool_keys: TOOL_KEYS
            .iter()
            .filter(|k| table.contains_key(**k))
            .map(|k| k.to_string())
            .collect(),
        ..KernautConfig::default()
    };
    if let Some(arch) = table.get("arch") {
        let names: Vec<&str> = match arch {
            toml::Value::String(s) => vec![s.as_str()],
            toml::Value::Array(a) if !a.is_empty() && a.iter().all(toml::Value::is_str) => {
                a.iter().filter_map(toml::Value::as_str).collect()
            }
            _ => {
                return Err(value(
                    "arch",
                    "`arch` must be a target such as \"sm_90\" or \"H200\", or a list of them"
                        .into(),
                ))
            }
        };
        for name in names {
            let t = Target::parse(name).map_err(|e| value("arch", format!("`arch`: {e}")))?;
            config.targets.push(t);
        }
        config.arch_line = line_of_key(text, "arch");
    }
    if let Some(r) = table.get("registers") {
        let r = r
            .as_integer()
            .and_then(|r| u32::try_from(r).ok())
            .filter(|r| (1..=255).contains(r))
            .ok_or_else(|| {
                value(
                    "registers",
                    "`registers` must be a whole number from 1 to 255".into(),
                )
            })?;
        config.registers = Some(r);
    }
    for (key, out) in [
        ("include_dirs", &mut config.include_dirs),
        ("defines", &mut Vec::new()),
    ] {
        let Some(v) = table.get(key) else { continue };
        let list = v
            .as_array()
            .filter(|a| a.iter().all(toml::Value::is_str))
            .ok_or_else(|| value(key, format!("`{key}` must be a list of strings")))?;
        out.extend(
            list.iter()
                .filter_map(toml::Value::as_str)
                .map(str::to_string),
        );
    }
    if let Some(list) = table.get("defines").and_then(toml::Value::as_array) {
        config.defines = list
            .iter()
            .filter_map(toml::Value::as_str)
            .map(|d| match d.split_once('=') {
                Some((n, v)) => (n.trim().to_string(), v.trim().to_string()),
                None => (d.trim().to_string(), "1".to_string()),
            })
            .collect();
    }
    if let Some(rules) = table.get("rules") {
        let rules = rules
            .as_table()
            .ok_or_else(|| value("rules", "`rules` must be a table".into()))?;
        for (id, v) in rules {
            let level =
                v.as_str()
                    .and_then(RuleLevel::parse)
                    .ok_or_else(|| ConfigError::Value {
                        line: line_of_key(text, id),
                        message: format!(
                            "rules.{id}: expected \"off\", \"hint\", \"warning\" or \"error\""
                        ),
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
        assert_eq!(c.arch().unwrap().to_string(), "sm_90a");
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

    #[test]
    fn targets_lists_gpu_names_and_lines() {
        let c = parse_config("# project\narch = [\"sm_80\", \"H200\", \"90a\"]\ndefines = [\"MYLIB_HOPPER\", \"TILE=128\"]\n").unwrap();
        let names: Vec<String> = c.targets.iter().map(|t| t.to_string()).collect();
        assert_eq!(names, ["sm_80", "sm_90", "sm_90a"]);
        assert_eq!(c.arch_line, Some(2));
        assert_eq!(c.arch().unwrap().to_string(), "sm_90a");
        assert_eq!(
            c.defines,
            [
                ("MYLIB_HOPPER".to_string(), "1".to_string()),
                ("TILE".into(), "128".into())
            ]
        );
        let e = parse_config("registers = 64\narch = \"H2000\"\n").unwrap_err();
        assert_eq!(e.line(), Some(2));
        assert_eq!(
            e.to_string(),
            "`arch`: `H2000` is not an architecture (sm_90, sm_90a, compute_90, 9.0, 90) or a known GPU (H200, A100, 4090); did you mean `H200`?"
        );
        assert_eq!(
            parse_config("arch = \"A100\"")
                .unwrap()
                .arch()
                .unwrap()
                .to_string(),
            "sm_80"
        );
    }
}
