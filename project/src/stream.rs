//! Loading a whole repository a few files at a time, for a batch run over it
//! (`kernaut-lsp check`) in bounded memory.
//!
//! [`ProjectLoader::load`] hands the host every file and every header at once, so memory
//! follows the repository's size. A [`Plan`] instead reads each file once up front and
//! keeps a compact summary of it: its path, its build and `.kernaut.toml`, the headers it
//! includes (as the loader resolves them) and, once every file has been parsed one at a
//! time with its headers, the kernels it launches or raises a function attribute of
//! (by name, hashed). [`Stream::load`] then gives the host, for one file about to be
//! checked, exactly what that file's analysis reads: the file, its headers, and every
//! file (with its headers) that launches a kernel the file defines or launches, or
//! raises an attribute of it. Files no longer needed leave the host, those needed
//! longest ago first, once what it holds passes a budget; a file with no launch syntax
//! in it, its headers or its build's macros is never parsed for the summary.
//!
//! A file's diagnostics read other files only through the launches and
//! `cudaFuncSetAttribute` calls of the kernels it defines or launches, the calls of the
//! host functions that launch them passing a parameter on (the constants they pass fix
//! the kernels' parameters), both of which the key of its diagnostics cache hashes, and
//! through the headers it includes; every other file the host could hold changes
//! nothing, so the findings are those of [`ProjectLoader::load`] over the whole
//! repository. The files that name such a host function are found by one more read of
//! every file, made only when some launch passes a parameter on.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use kernaut_ide::config::{FileBuild, KernautConfig};
use kernaut_ide::includes::{include_closure_in, normalize_path};
use kernaut_ide::syntax::short_name;
use kernaut_ide::{source_text, AnalysisHost, Change, FileId};
use rustc_hash::FxBuildHasher;

use crate::ProjectLoader;

/// One file of a [`Plan`]: a file to check or a header one of them includes.
#[derive(Debug)]
struct Entry {
    /// The path to read it from (as given for a file to check).
    path: PathBuf,
    /// The path the host names it by.
    key: String,
    /// Its size in bytes.
    bytes: usize,
    /// Whether decoding replaced bytes (the file is not UTF-8).
    lossy: bool,
    /// The kernels (by name without namespaces, hashed, sorted, each once) it launches
    /// or raises a function attribute of, as its facts say ([`Stream::summarize`]).
    launched: Box<[u64]>,
    /// Whether its text holds launch or attribute syntax ([`launch_syntax`]).
    launches: bool,
    /// The kernels it launches from a host function that passes one of its parameters
    /// on, each with that function ((kernel, function) by names without namespaces,
    /// hashed): the calls of the function decide the kernel's argument.
    wrappers: Box<[(u64, u64)]>,
    /// Those functions (of any file) whose names its text holds, hashed, sorted.
    names_wrappers: Box<[u64]>,
    /// Its quoted includes, as `#include` lines (what the include closure reads of it).
    includes: Arc<str>,
    /// The headers it includes, transitively (entries), in include order.
    closure: Box<[u32]>,
    /// What its build says.
    build: FileBuild,
    /// Its `.kernaut.toml`, as (folder, index into `Plan::configs`).
    dir_config: Option<(String, usize)>,
}

/// What a batch run knows of every file before checking any: see the module
/// documentation.
#[derive(Debug, Default)]
pub struct Plan {
    /// The files to check (in the order given), then the headers they include (in the
    /// order found).
    entries: Vec<Entry>,
    /// How many of `entries` are files to check.
    roots: usize,
    configs: Vec<KernautConfig>,
}

impl Plan {
    /// How many files there are to check.
    pub fn len(&self) -> usize {
        self.roots
    }

    /// Whether there is no file to check.
    pub fn is_empty(&self) -> bool {
        self.roots == 0
    }

    /// The path of the `i`th file to check, as given.
    pub fn path(&self, i: usize) -> &std::path::Path {
        &self.entries[i].path
    }

    /// Whether the `i`th file to check is not UTF-8 (read with replacement characters).
    pub fn lossy(&self, i: usize) -> bool {
        self.entries[i].lossy
    }

    /// Adds host sources not to check (`.c`, `.cpp` files of the project): a file to
    /// check whose kernels a host function launches with one of its parameters is
    /// given, with the host, those of them that call that function, so that the
    /// constants they pass are seen ([`Stream::load`]). Nothing else reads them.
    pub fn add_host_sources(&mut self, paths: &[PathBuf]) {
        for path in paths {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            let key = path
                .canonicalize()
                .unwrap_or_else(|_| path.clone())
                .display()
                .to_string();
            if self.entries.iter().any(|e| e.key == key) {
                continue;
            }
            self.entries.push(Entry {
                path: path.clone(),
                key,
                bytes: usize::try_from(meta.len()).unwrap_or(usize::MAX),
                lossy: false,
                launched: Box::default(),
                launches: false,
                wrappers: Box::default(),
                names_wrappers: Box::default(),
                includes: Arc::from(""),
                closure: Box::default(),
                build: FileBuild::default(),
                dir_config: None,
            });
        }
    }

    /// The entries `e` needs in the host: itself and its headers.
    fn with_closure(&self, e: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(e).chain(self.entries[e].closure.iter().map(|&h| h as usize))
    }
}

fn ident_hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// Whether `text` holds what every launch and attribute call the facts find is written
/// with (`<<<`, `cudaLaunchKernelEx`, `cudaFuncSetAttribute`), in code or in a macro. A
/// file whose text, headers and build macros hold none launches nothing.
fn launch_syntax(text: &str) -> bool {
    kernaut_ide::syntax::lex::has_launch_chevrons(text)
        || ["cudaLaunchKernelEx", "cudaFuncSetAttribute"]
            .iter()
            .any(|s| text.contains(s))
}

/// The quoted includes of `text` as `#include` lines: all the include closure reads.
fn include_lines(text: &str) -> Arc<str> {
    Arc::from(kernaut_ide::includes::include_lines(text))
}

impl ProjectLoader {
    /// Reads `paths` and the headers they include once, keeping a summary of each
    /// (see [`Plan`]): what [`ProjectLoader::load`] reads and notes, without holding the
    /// texts. Binary files are skipped with a note, as there.
    pub fn plan(&mut self, paths: &[PathBuf]) -> anyhow::Result<Plan> {
        let mut plan = Plan::default();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        let mut roots: Vec<(String, Vec<String>)> = Vec::new();
        for path in paths {
            let Some(read) = self.read_source(path)? else {
                continue;
            };
            let (size, lossy, absolute) = (read.bytes, read.lossy, read.absolute);
            by_key
                .entry(normalize_path(&absolute))
                .or_insert(plan.entries.len());
            roots.push((absolute.clone(), Vec::new()));
            plan.entries.push(Entry {
                path: path.clone(),
                key: absolute,
                bytes: size,
                lossy,
                launched: Box::default(),
                launches: launch_syntax(&read.text),
                wrappers: Box::default(),
                names_wrappers: Box::default(),
                includes: include_lines(&read.text),
                closure: Box::default(),
                build: FileBuild::default(),
                dir_config: None,
            });
        }
        plan.roots = plan.entries.len();
        // As `ProjectLoader::give`: each file's `.kernaut.toml` and build, in order.
        for i in 0..plan.roots {
            let path = plan.entries[i].path.clone();
            let dir = self.dir_config(&path)?;
            plan.entries[i].dir_config = dir.map(|(d, c)| {
                plan.configs.push(c);
                (d.display().to_string(), plan.configs.len() - 1)
            });
            let build = self.file_build(&path);
            roots[i].1 = build.include_dirs.clone();
            plan.entries[i].build = build;
        }
        // As `read_includes`: the headers of each file, transitively, read once.
        let mut notes: Vec<String> = Vec::new();
        let mut missing: std::collections::HashSet<String> = Default::default();
        for (i, (root, dirs)) in roots.iter().enumerate() {
            let root_key = normalize_path(root);
            let mut text_of = |p: &str| -> Option<Arc<str>> {
                let key = normalize_path(p);
                if key == root_key {
                    return Some(plan.entries[i].includes.clone());
                }
                if let Some(&e) = by_key.get(&key) {
                    return Some(plan.entries[e].includes.clone());
                }
                if missing.contains(&key) {
                    return None;
                }
                if let Some((text, size)) = crate::loader::read_header(&key, root, &mut notes) {
                    let includes = include_lines(&text);
                    by_key.insert(key.clone(), plan.entries.len());
                    plan.entries.push(Entry {
                        path: PathBuf::from(&key),
                        key: key.clone(),
                        bytes: size,
                        lossy: false,
                        launched: Box::default(),
                        launches: launch_syntax(&text),
                        wrappers: Box::default(),
                        names_wrappers: Box::default(),
                        includes: includes.clone(),
                        closure: Box::default(),
                        build: FileBuild::default(),
                        dir_config: None,
                    });
                    return Some(includes);
                }
                missing.insert(key);
                None
            };
            let found = include_closure_in(root, dirs, &mut text_of);
            // An include found next to no file and in no include folder is said once.
            let own = plan.entries[i].includes.clone();
            for (file, text) in std::iter::once((root.clone(), own)).chain(found.iter().cloned()) {
                for inc in kernaut_ide::syntax::quoted_includes(&text) {
                    if inc.angled {
                        continue;
                    }
                    let mut candidates =
                        std::iter::once(kernaut_ide::includes::include_path(&file, &inc.name))
                            .chain(dirs.iter().map(|d| {
                                normalize_path(&format!("{}/{}", d.trim_end_matches('/'), inc.name))
                            }));
                    let there = candidates.any(|c| by_key.contains_key(&c));
                    let note = format!("{}: included from {file}, not found", inc.name);
                    if !there && !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
            plan.entries[i].closure = found
                .iter()
                .filter_map(|(h, _)| by_key.get(h).map(|&e| e as u32))
                .collect();
        }
        for note in notes {
            self.note(note);
        }
        // As `give`: a header's build, with the targets of its first includer when its
        // own build names none; its `.kernaut.toml`.
        let mut includer: Vec<Option<usize>> = vec![None; plan.entries.len()];
        for i in 0..plan.roots {
            for &h in plan.entries[i].closure.iter() {
                includer[h as usize].get_or_insert(i);
            }
        }
        for (h, first) in includer.iter().enumerate().skip(plan.roots) {
            let key = plan.entries[h].key.clone();
            let path = plan.entries[h].path.clone();
            let mut build = self.file_build(&path);
            if build.targets.is_none() {
                build.targets = first.and_then(|i| plan.entries[i].build.targets.clone());
            }
            if let Ok(Some((dir, config))) = self.dir_config(&path) {
                plan.configs.push(config);
                plan.entries[h].dir_config =
                    Some((dir.display().to_string(), plan.configs.len() - 1));
            }
            // Its own closure (with its own include folders, as the host resolves it):
            // the headers it needs in the host for its macros.
            let dirs = build.include_dirs.clone();
            plan.entries[h].build = build;
            let mut text_of = |p: &str| -> Option<Arc<str>> {
                let e = *by_key.get(&normalize_path(p))?;
                Some(plan.entries[e].includes.clone())
            };
            let closure: Box<[u32]> = include_closure_in(&key, &dirs, &mut text_of)
                .iter()
                .filter_map(|(p, _)| by_key.get(p).map(|&e| e as u32))
                .collect();
            plan.entries[h].closure = closure;
        }
        Ok(plan)
    }
}

/// The files of a [`Plan`] the host holds, given to it a few at a time
/// ([`Stream::load`]).
#[derive(Debug)]
pub struct Stream {
    plan: Plan,
    /// The host's id of each entry it holds.
    held: Vec<Option<FileId>>,
    /// The bytes of text the host holds.
    held_bytes: usize,
    /// When each entry was last needed (a count of `give` calls).
    used: Vec<u64>,
    /// The `give` calls so far.
    tick: u64,
    /// Above this many bytes of text held, the files the next one does not need leave.
    budget: usize,
    /// Whether every entry's `launched` is known.
    summarized: bool,
}

impl Stream {
    /// Files of `plan` given to a host, keeping up to `budget` bytes of text there that
    /// the file being checked does not need.
    pub fn new(plan: Plan, budget: usize) -> Stream {
        let held = vec![None; plan.entries.len()];
        let used = vec![0; plan.entries.len()];
        Stream {
            plan,
            held,
            used,
            tick: 0,
            held_bytes: 0,
            budget,
            summarized: false,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Gives `host` the `i`th file to check and what its analysis reads of other files
    /// (see the module documentation), the file keeping its syntax trees; returns its id
    /// and its text.
    pub fn load(
        &mut self,
        host: &mut AnalysisHost,
        i: usize,
    ) -> anyhow::Result<(FileId, Arc<str>)> {
        host.set_keep_trees(false);
        if !self.summarized {
            self.summarize(host)?;
        }
        let key = self.plan.entries[i].key.clone();
        let id = host.file_id(&key);
        host.set_tree_keeper(Some(id));
        let mut need = vec![false; self.plan.entries.len()];
        for e in self.plan.with_closure(i) {
            need[e] = true;
        }
        self.give(host, &need)?;
        // The kernels the file defines and launches, by name without namespaces.
        let names: Vec<u64> = {
            let a = host.analysis();
            let Some(f) = a.file(&key) else {
                anyhow::bail!("{key}: not loaded");
            };
            let facts = f.facts();
            let mut names: Vec<u64> = facts
                .kernels
                .iter()
                .map(|k| short_name(&k.name))
                .chain(facts.launches.iter().map(|l| short_name(&l.kernel)))
                .map(ident_hash)
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        };
        if !names.is_empty() {
            let mut grew = false;
            for e in 0..self.plan.entries.len() {
                let launched = &self.plan.entries[e].launched;
                if names.iter().any(|n| launched.binary_search(n).is_ok()) {
                    for x in self.plan.with_closure(e) {
                        grew |= !need[x];
                        need[x] = true;
                    }
                }
            }
            // The files that call the host functions launching those kernels with their
            // own parameters: their arguments may fix the kernels' parameters.
            let wrappers: Vec<u64> = self
                .plan
                .entries
                .iter()
                .flat_map(|e| e.wrappers.iter())
                .filter(|(k, _)| names.binary_search(k).is_ok())
                .map(|(_, w)| *w)
                .collect();
            if !wrappers.is_empty() {
                for e in 0..self.plan.entries.len() {
                    let named = &self.plan.entries[e].names_wrappers;
                    if wrappers.iter().any(|w| named.binary_search(w).is_ok()) {
                        for x in self.plan.with_closure(e) {
                            grew |= !need[x];
                            need[x] = true;
                        }
                    }
                }
            }
            if grew {
                self.give(host, &need)?;
            }
        }
        let text = host
            .analysis()
            .text(id)
            .map(Arc::from)
            .unwrap_or_else(|_| Arc::from(""));
        Ok((id, text))
    }

    /// Finds, for every entry, the kernels it launches or raises an attribute of: each
    /// given to the host with its headers (its launches may be written in their macros)
    /// and its facts read. One parse of each file with launch syntax in it or its headers,
    /// without trees.
    fn summarize(&mut self, host: &mut AnalysisHost) -> anyhow::Result<()> {
        host.set_tree_keeper(None);
        let count = self.plan.entries.len();
        for e in 0..count {
            let entry = &self.plan.entries[e];
            let defines = entry
                .build
                .defines
                .iter()
                .chain(entry.build.target_defines.iter().flat_map(|(_, d)| d));
            if !self
                .plan
                .with_closure(e)
                .any(|x| self.plan.entries[x].launches)
                && !defines.into_iter().any(|(_, body)| launch_syntax(body))
            {
                continue;
            }
            let mut need = vec![false; count];
            for x in self.plan.with_closure(e) {
                need[x] = true;
            }
            self.give(host, &need)?;
            let a = host.analysis();
            let Some(f) = a.file(&self.plan.entries[e].key) else {
                continue;
            };
            let facts = f.facts();
            let mut launched: Vec<u64> = facts
                .launches
                .iter()
                .map(|l| short_name(&l.kernel))
                .chain(facts.func_attributes.iter().map(|c| short_name(&c.kernel)))
                .map(ident_hash)
                .collect();
            launched.sort_unstable();
            launched.dedup();
            let mut wrappers: Vec<(u64, u64)> = facts
                .launches
                .iter()
                .filter(|l| {
                    l.args.iter().any(|a| {
                        l.caller_value_params
                            .iter()
                            .any(|p| !p.is_empty() && p == a.trim())
                    })
                })
                .filter_map(|l| {
                    let f = l.function.as_deref()?;
                    Some((ident_hash(short_name(&l.kernel)), ident_hash(short_name(f))))
                })
                .collect();
            wrappers.sort_unstable();
            wrappers.dedup();
            drop(a);
            self.plan.entries[e].launched = launched.into_boxed_slice();
            self.plan.entries[e].wrappers = wrappers.into_boxed_slice();
        }
        // The files that name one of those host functions: one more read of each file,
        // only when a launch passes a parameter on.
        let all: rustc_hash::FxHashSet<u64> = self
            .plan
            .entries
            .iter()
            .flat_map(|e| e.wrappers.iter().map(|(_, w)| *w))
            .collect();
        if !all.is_empty() {
            for e in 0..count {
                let Ok(bytes) = std::fs::read(&self.plan.entries[e].path) else {
                    continue;
                };
                let text = source_text::decode(bytes).text;
                let mut named: Vec<u64> = text
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty())
                    .map(ident_hash)
                    .filter(|h| all.contains(h))
                    .collect();
                named.sort_unstable();
                named.dedup();
                self.plan.entries[e].names_wrappers = named.into_boxed_slice();
            }
        }
        self.summarized = true;
        Ok(())
    }

    /// Gives `host` the entries `need` marks that it does not hold; first, when what it
    /// holds would pass the budget, takes back those `need` does not mark.
    fn give(&mut self, host: &mut AnalysisHost, need: &[bool]) -> anyhow::Result<()> {
        let entries = &self.plan.entries;
        let adding: usize = (0..entries.len())
            .filter(|&e| need[e] && self.held[e].is_none())
            .map(|e| entries[e].bytes)
            .sum();
        self.tick += 1;
        for (used, _) in self.used.iter_mut().zip(need).filter(|(_, n)| **n) {
            *used = self.tick;
        }
        let mut change = Change::new();
        if self.held_bytes + adding > self.budget {
            // The files needed longest ago leave first, each with the files that include
            // it (whose macros would change without it); a needed file's headers are
            // needed too, so none of those is needed.
            let mut idle: Vec<usize> = (0..entries.len())
                .filter(|&e| !need[e] && self.held[e].is_some())
                .collect();
            idle.sort_by_key(|&e| self.used[e]);
            let held: Vec<usize> = (0..entries.len())
                .filter(|&e| self.held[e].is_some())
                .collect();
            let mut leaving = vec![false; entries.len()];
            let mut freed = 0;
            for v in idle {
                if self.held_bytes - freed + adding <= self.budget {
                    break;
                }
                if leaving[v] {
                    continue;
                }
                leaving[v] = true;
                freed += entries[v].bytes;
                for &g in &held {
                    if !leaving[g] && entries[g].closure.contains(&(v as u32)) {
                        leaving[g] = true;
                        freed += entries[g].bytes;
                    }
                }
            }
            for e in 0..entries.len() {
                if leaving[e] {
                    if let Some(id) = self.held[e].take() {
                        change.remove_file(id);
                        self.held_bytes -= entries[e].bytes;
                    }
                }
            }
        }
        for e in 0..entries.len() {
            if !need[e] || self.held[e].is_some() {
                continue;
            }
            let entry = &entries[e];
            let bytes = std::fs::read(&entry.path)
                .with_context(|| format!("reading {}", entry.path.display()))?;
            let text = source_text::decode(bytes).text;
            let id = host.file_id(&entry.key);
            if let Some((dir, c)) = &entry.dir_config {
                change.set_dir_config(dir.clone(), Some(self.plan.configs[*c].clone()));
            }
            change.set_file(id, text);
            change.set_build(id, Some(entry.build.clone()));
            self.held[e] = Some(id);
            self.held_bytes += entry.bytes;
        }
        host.apply_change(change);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_lines_read_back_the_same() {
        let text = "#include \"a.h\"\n  #  include <b/c.h> // x\n/* #include \"no.h\" */\nint x;\n";
        let lines = include_lines(text);
        let a = kernaut_ide::syntax::quoted_includes(text);
        let b = kernaut_ide::syntax::quoted_includes(&lines);
        let names = |v: &[kernaut_ide::syntax::Include]| {
            v.iter()
                .map(|i| (i.name.clone(), i.angled))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&a), names(&b));
    }
}
