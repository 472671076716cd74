//! The launches of every file of the host by kernel name, built once per revision.
//!
//! The rules' model reads the launches of a file's kernels in every file of the host, so
//! a file's diagnostics depend on other files. Scanning every file per request made a
//! diagnostics request linear in the number of files and `kernaut-lsp check` over `N`
//! files quadratic. [`LaunchIndex`] is built on first use by any snapshot of a revision
//! (the host hands every snapshot of that revision the same slot) and answers both the
//! look-up of a kernel's launches and the part of a file's diagnostics key that depends on
//! other files ([`LaunchIndex::fingerprint`]) in time proportional to the launches of the
//! kernels asked about.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::file_data::FileData;

/// Every launch of the host, by the kernel's name without namespaces.
#[derive(Debug, Default)]
pub struct LaunchIndex {
    /// For each name: (path, position in that file's `facts().launches`), by path and
    /// then in document order.
    by_name: FxHashMap<String, Vec<(String, usize)>>,
    /// For each name: a hash of what the model reads from those launches.
    fingerprints: FxHashMap<String, u64>,
}

impl LaunchIndex {
    /// Indexes the launches of `files`.
    pub fn build<'a>(files: impl Iterator<Item = (&'a str, &'a FileData)>) -> LaunchIndex {
        let mut by_name: FxHashMap<String, Vec<(String, usize)>> = FxHashMap::default();
        let mut files: Vec<(&str, &FileData)> = files.collect();
        files.sort_unstable_by_key(|(p, _)| *p);
        for (path, f) in &files {
            for (i, l) in f.facts().launches.iter().enumerate() {
                let short = kernaut_syntax::short_name(&l.kernel);
                match by_name.get_mut(short) {
                    Some(v) => v.push(((*path).to_string(), i)),
                    None => {
                        by_name.insert(short.to_string(), vec![((*path).to_string(), i)]);
                    }
                }
            }
        }
        let data: FxHashMap<&str, &FileData> = files.iter().copied().collect();
        let fingerprints = by_name
            .iter()
            .map(|(name, sites)| {
                let mut h = FxHasher::default();
                for (path, i) in sites {
                    let l = &data[path.as_str()].facts().launches[*i];
                    path.hash(&mut h);
                    (&l.kernel, &l.template_args, l.block.value, &l.block.text).hash(&mut h);
                    (&l.shared_bytes_text, l.shared_bytes).hash(&mut h);
                }
                (name.clone(), h.finish())
            })
            .collect();
        LaunchIndex {
            by_name,
            fingerprints,
        }
    }

    /// The launches of kernels named `short` (without namespaces), as (path, position in
    /// the file's launches), by path and then in document order.
    pub fn sites(&self, short: &str) -> &[(String, usize)] {
        self.by_name.get(short).map_or(&[], Vec::as_slice)
    }

    /// A hash of the launches (in every file) of the kernels named `shorts`: their
    /// files, kernels, template arguments, blocks and dynamic shared memory. It changes
    /// when a launch of one of those kernels changes in any file, and only then.
    pub fn fingerprint<'a>(&self, shorts: impl Iterator<Item = &'a str>) -> u64 {
        let mut names: Vec<&str> = shorts.collect();
        names.sort_unstable();
        names.dedup();
        let mut h = FxHasher::default();
        for n in names {
            n.hash(&mut h);
            self.fingerprints.get(n).copied().unwrap_or(0).hash(&mut h);
        }
        h.finish()
    }
}
