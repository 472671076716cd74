//! Finding and reading `.kernaut.toml` from a checked file upwards (`ide` does no I/O).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kernaut_ide::config::{parse_config, KernautConfig, CONFIG_FILE_NAME};

/// The nearest `.kernaut.toml` in `dir` or one of its ancestors.
pub fn find_config(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join(CONFIG_FILE_NAME))
        .find(|p| p.is_file())
}

/// Reads and caches configurations by the folder of the checked file.
#[derive(Debug, Default)]
pub struct ConfigCache {
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
    parsed: HashMap<PathBuf, KernautConfig>,
}

impl ConfigCache {
    /// The `.kernaut.toml` that applies to `file`, as (its folder, its settings), or
    /// `None` when there is none.
    pub fn for_file(&mut self, file: &Path) -> anyhow::Result<Option<(PathBuf, KernautConfig)>> {
        let dir = file
            .parent()
            .map(|p| {
                if p.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    p.to_path_buf()
                }
            })
            .unwrap_or_else(|| PathBuf::from("."));
        let dir = dir.canonicalize().unwrap_or(dir);
        let found = self
            .by_dir
            .entry(dir.clone())
            .or_insert_with(|| find_config(&dir))
            .clone();
        let Some(path) = found else {
            return Ok(None);
        };
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        if let Some(c) = self.parsed.get(&path) {
            return Ok(Some((folder, c.clone())));
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let config = parse_config(&text).with_context(|| format!("in {}", path.display()))?;
        // A misspelled rule id would configure nothing, silently: refuse the file.
        let problems = config.problems();
        if !problems.is_empty() {
            anyhow::bail!("in {}: {}", path.display(), problems.join("; "));
        }
        self.parsed.insert(path, config.clone());
        Ok(Some((folder, config)))
    }
}
