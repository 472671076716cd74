//! Quoted includes resolved in the host: the macros a file sees from the headers it
//! includes.
//!
//! `ide` does no I/O, so a header counts only when a front end gave the host its text
//! (`check` and `ktui explain` read a file's quoted includes from disk, the server reads
//! those of an opened document; see [`include_closure`]). After every change the host
//! resolves each file's `#include "…"` lines against the including file's directory, to
//! files it holds, transitively ([`MAX_DEPTH`] levels, each header once, cycles safe),
//! and gives the file the headers' `#define`s as its prelude
//! ([`kernaut_syntax::SourceFile::with_prelude`]). The file's own definitions win. A
//! file whose prelude changed (a header edited, added or removed) gets a fresh
//! `FileData`, so its facts, accesses and diagnostics cache start over; a file whose
//! prelude did not change keeps everything. Only the files a change reaches are looked
//! at again: each file's `#include` lines and `#define`s are found once per version, and
//! a file keeps the paths its prelude read (its headers, the last segments of its and
//! their include names), so a change of any other path passes it by.
//!
//! Angle-bracket includes (`#include <cuda.h>`) are never resolved.

use std::sync::Arc;

use std::hash::{Hash, Hasher};

use kernaut_syntax::{quoted_includes, MacroDef, Prelude};
use rustc_hash::{FxHashMap, FxHashSet};

use super::FileData;

/// How many levels of includes are followed (a header of a header is level 2).
pub const MAX_DEPTH: usize = 8;

/// `path` with `.` and `..` segments folded and separators written `/`
/// (`/a/b/../c.h` → `/a/c.h`).
pub fn normalize_path(path: &str) -> String {
    let path = path.replace('\\', "/");
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The quoted and angled includes of `text` written as `#include` lines, one each, in
/// order: [`quoted_includes`] reads them back the same, and they are all that
/// [`include_closure`] reads of a file.
pub fn include_lines(text: &str) -> String {
    let mut out = String::new();
    for inc in quoted_includes(text) {
        let (open, close) = if inc.angled { ('<', '>') } else { ('"', '"') };
        out.push_str("#include ");
        out.push(open);
        out.push_str(&inc.name);
        out.push(close);
        out.push('\n');
    }
    out
}

/// The directory of a file's path (`/a/b/k.cu` → `/a/b`), `""` for a bare name.
fn dir_of(path: &str) -> &str {
    path.rfind(['/', '\\']).map_or("", |i| &path[..i])
}

/// The path `name`, included from the file at `from`, names: relative to the including
/// file's directory (an absolute `name` stays as it is).
pub fn include_path(from: &str, name: &str) -> String {
    if name.starts_with('/') {
        return normalize_path(name);
    }
    let dir = dir_of(from);
    if dir.is_empty() && !from.starts_with('/') {
        normalize_path(name)
    } else {
        normalize_path(&format!("{dir}/{name}"))
    }
}

/// The headers `path` includes, transitively, that `exists` says are there, in the
/// order their macros count (each header's own includes before the header itself, as
/// the preprocessor sees them), each once, `path` itself never. `text_of` gives a file's
/// text. Front ends use this to decide which files to read from disk (with `exists`
/// reading them), and the host to build a prelude.
pub fn include_closure(
    path: &str,
    text_of: &mut dyn FnMut(&str) -> Option<Arc<str>>,
) -> Vec<(String, Arc<str>)> {
    include_closure_in(path, &[], text_of)
}

/// [`include_closure`] with include folders: a quoted include is looked up next to the
/// including file first, then in each of `dirs` in order (as `-I` folders are), and the
/// first that `text_of` finds is taken.
pub fn include_closure_in(
    path: &str,
    dirs: &[String],
    text_of: &mut dyn FnMut(&str) -> Option<Arc<str>>,
) -> Vec<(String, Arc<str>)> {
    fn visit(
        path: &str,
        text: &str,
        depth: usize,
        dirs: &[String],
        seen: &mut FxHashSet<String>,
        text_of: &mut dyn FnMut(&str) -> Option<Arc<str>>,
        out: &mut Vec<(String, Arc<str>)>,
    ) {
        if depth >= MAX_DEPTH {
            return;
        }
        for inc in quoted_includes(text) {
            // `<…>` only in the include folders; `"…"` next to the file first.
            let beside = (!inc.angled).then(|| include_path(path, &inc.name));
            let candidates = beside.into_iter().chain(
                dirs.iter()
                    .filter(|_| !inc.name.starts_with('/'))
                    .map(|d| normalize_path(&format!("{}/{}", d.trim_end_matches('/'), inc.name))),
            );
            for target in candidates {
                if seen.contains(&target) {
                    break;
                }
                let Some(header) = text_of(&target) else {
                    continue;
                };
                seen.insert(target.clone());
                visit(&target, &header, depth + 1, dirs, seen, text_of, out);
                out.push((target, header));
                break;
            }
        }
    }
    let Some(text) = text_of(path) else {
        return Vec::new();
    };
    let mut seen = FxHashSet::default();
    seen.insert(normalize_path(path));
    let mut out = Vec::new();
    visit(path, &text, 0, dirs, &mut seen, text_of, &mut out);
    out
}

/// Gives every file of `files` the prelude of the headers it includes (see the module
/// documentation). Called by the host after each change.
///
/// `changed`: the normalised paths the change set, edited or removed, or whose build it
/// changed (`None`: anything may have changed). A file that got its prelude before and
/// whose headers and include names reach none of them keeps it without a look.
pub fn refresh_preludes(
    files: &mut Arc<FxHashMap<String, Arc<FileData>>>,
    builds: &FxHashMap<String, Arc<crate::config::FileBuild>>,
    changed: Option<&FxHashSet<String>>,
) {
    let changed_hashes: Option<Vec<u64>> = changed.map(|c| {
        let mut v: Vec<u64> = c
            .iter()
            .flat_map(|p| [path_hash(p), path_hash(last_segment(p))])
            .collect();
        v.sort_unstable();
        v
    });
    // Paths normalised, for include look-ups; the table keeps the front end's spelling.
    let by_norm: FxHashMap<String, &str> = files
        .keys()
        .map(|p| (normalize_path(p), p.as_str()))
        .collect();
    type Key = Option<(u64, Box<[u64]>)>;
    let mut updates: Vec<(String, Option<Arc<Prelude>>, Key)> = Vec::new();
    // Include resolution reads only each file's `#include` lines, and the prelude only
    // the headers' `#define`s: both are found once per file version.
    let data_at = |p: &str| -> Option<&FileData> {
        let key = by_norm.get(&normalize_path(p))?;
        files.get(*key).map(|d| &**d)
    };
    for (path, data) in files.iter() {
        if let (Some((_, deps)), Some(changed)) = (data.prelude_key.get(), &changed_hashes) {
            if !deps.iter().any(|d| changed.binary_search(d).is_ok()) {
                continue;
            }
        }
        let own = data.header_facts();
        let build = builds.get(path);
        let defines: &[(String, String)] = build.map_or(&[], |b| b.defines.as_slice());
        let dirs_of = builds.get(path).map(|b| !b.include_dirs.is_empty());
        let has_includes = !own.includes.is_empty()
            && quoted_includes(&own.includes)
                .iter()
                .any(|i| !i.angled || dirs_of == Some(true));
        if !has_includes && defines.is_empty() {
            if data.source.prelude().is_some() {
                updates.push((path.clone(), None, None));
            }
            continue;
        }
        let mut text_of =
            |p: &str| -> Option<Arc<str>> { Some(data_at(p)?.header_facts().includes.clone()) };
        let dirs = build.map(|b| b.include_dirs.as_slice()).unwrap_or_default();
        let headers = if has_includes {
            include_closure_in(path, dirs, &mut text_of)
        } else {
            Vec::new()
        };
        // What the prelude is made of: unchanged since the file last got it, nothing to do.
        let mut h = rustc_hash::FxHasher::default();
        defines.hash(&mut h);
        for (header, _) in &headers {
            header.hash(&mut h);
            data_at(header)
                .map(|d| d.header_facts().macros_hash)
                .hash(&mut h);
            data_at(header).map(|d| d.helper_summaries()).hash(&mut h);
        }
        let key = h.finish();
        if data.prelude_key.get().map(|k| k.0) == Some(key) {
            continue;
        }
        let deps = prelude_deps(&normalize_path(path), &own.includes, &headers);
        // Macros the build defines come first: the command line is read before the file.
        let mut macros: Vec<MacroDef> = defines
            .iter()
            .map(|(name, body)| MacroDef {
                name: name.clone(),
                params: None,
                body: body.clone(),
            })
            .collect();
        let mut constants: Vec<(String, String)> = Vec::new();
        let mut helpers = Vec::new();
        for (header, _) in &headers {
            if let Some(d) = data_at(header) {
                macros.extend(d.header_facts().macros.iter().cloned());
                constants.extend(d.header_facts().constants.iter().cloned());
                helpers.extend(d.helper_summaries().iter().cloned());
            }
        }
        let prelude = (!(macros.is_empty() && constants.is_empty() && helpers.is_empty()))
            .then_some(Prelude {
                macros,
                constants,
                helpers,
            });
        if data.source.prelude().map(|p| &**p) != prelude.as_ref() {
            updates.push((path.clone(), prelude.map(Arc::new), Some((key, deps))));
        } else {
            let _ = data.prelude_key.set((key, deps));
        }
    }
    if updates.is_empty() {
        return;
    }
    let table = Arc::make_mut(files);
    for (path, prelude, key) in updates {
        if let Some(data) = table.get(&path) {
            let fresh = data.with_prelude(prelude);
            if let Some(key) = key {
                let _ = fresh.prelude_key.set(key);
            }
            table.insert(path, Arc::new(fresh));
        }
    }
}

fn path_hash(p: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(p)
}

fn last_segment(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The hashes of the file's own path, of the header paths of its prelude and of the last segments of the include
/// names of the file (`own`: its `#include` lines) and of those headers: a change to a
/// path that none of them names leaves the prelude as it is.
fn prelude_deps(path: &str, own: &str, headers: &[(String, Arc<str>)]) -> Box<[u64]> {
    let mut out: Vec<u64> = vec![path_hash(path)];
    for lines in std::iter::once(own).chain(headers.iter().map(|(_, t)| &**t)) {
        for inc in quoted_includes(lines) {
            out.push(path_hash(last_segment(&normalize_path(&inc.name))));
        }
    }
    out.extend(headers.iter().map(|(p, _)| path_hash(p)));
    out.sort_unstable();
    out.dedup();
    out.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_against_the_including_directory() {
        assert_eq!(include_path("/p/src/k.cu", "ptx.h"), "/p/src/ptx.h");
        assert_eq!(
            include_path("/p/src/k.cu", "../common/x.cuh"),
            "/p/common/x.cuh"
        );
        assert_eq!(include_path("k.cu", "./a/b.h"), "a/b.h");
        assert_eq!(include_path("/p/k.cu", "/abs/h.h"), "/abs/h.h");
        assert_eq!(normalize_path("a\\b\\..\\c.h"), "a/c.h");
    }

    #[test]
    fn closure_is_depth_limited_and_cycle_safe() {
        let mut files: FxHashMap<String, Arc<str>> = FxHashMap::default();
        files.insert("/p/k.cu".into(), Arc::from("#include \"a.h\"\n"));
        files.insert(
            "/p/a.h".into(),
            Arc::from("#include \"b.h\"\n#define A 1\n"),
        );
        files.insert(
            "/p/b.h".into(),
            Arc::from("#include \"a.h\"\n#include \"k.cu\"\n#define B 2\n"),
        );
        let mut text_of = |p: &str| files.get(p).cloned();
        let got: Vec<String> = include_closure("/p/k.cu", &mut text_of)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(got, ["/p/b.h", "/p/a.h"]);

        // A chain longer than the limit stops at it.
        let mut chain: FxHashMap<String, Arc<str>> = FxHashMap::default();
        for i in 0..20 {
            chain.insert(
                format!("/c/h{i}.h"),
                Arc::from(format!("#include \"h{}.h\"\n", i + 1)),
            );
        }
        let mut text_of = |p: &str| chain.get(p).cloned();
        assert_eq!(include_closure("/c/h0.h", &mut text_of).len(), MAX_DEPTH);
    }
}
