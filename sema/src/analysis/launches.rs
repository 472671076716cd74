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

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use kernaut_syntax::{CallSite, FileFacts, Function, LaunchSite};
use rustc_hash::{FxHashMap, FxHasher};

use super::file_data::FileData;
use super::Analysis;

/// Every launch of the host, by the kernel's name without namespaces.
#[derive(Debug, Default)]
pub struct LaunchIndex {
    /// For each name: (path, position in that file's `facts().launches`), by path and
    /// then in document order.
    by_name: FxHashMap<String, Vec<(String, usize)>>,
    /// For each name: a hash of what the model reads from those launches.
    fingerprints: FxHashMap<String, u64>,
    /// [`Analysis::fixed_kernel_args`] by kernel (name and parameter types), worked out
    /// on first use in the revision.
    fixed: Mutex<FxHashMap<String, FixedArgs>>,
    /// The calls, in every file, of the host functions whose launches pass one of their
    /// parameters on, by the function's short name (with the path of each call's file).
    wrapper_calls: OnceLock<FxHashMap<String, CallsOf>>,
    /// For each launched name that more than one file defines a kernel of (two programs
    /// of one project, each with its own `step` kernel): the files that define one (as
    /// the host spells their paths).
    definers: FxHashMap<String, Vec<String>>,
    /// The headers each file includes (normalised paths), worked out on first use for
    /// the files that launch a name of [`LaunchIndex::definers`].
    headers: Mutex<FxHashMap<String, Arc<[String]>>>,
}

/// The scalar parameters of a kernel that every launch passes the same constant, with
/// that constant.
pub type FixedArgs = Arc<[(String, i64)]>;

/// Calls of a host function, each with the path of its file; `None` for a use of the
/// function's address.
pub type CallsOf = Vec<(String, Option<HostCall>)>;

/// A call of a host function that may pass values on to a launch.
#[derive(Clone, Debug)]
pub struct HostCall {
    /// The call.
    pub site: CallSite,
    /// The name of the function around the call, as written.
    pub caller: Option<String>,
    /// The parameters of the function around the call, each by name where that function
    /// never writes it ([`kernaut_syntax::SourceFile::value_params_at`]): an argument
    /// that is one of them is what every call of that function passes.
    pub caller_value_params: Arc<[String]>,
}

/// How many host functions deep a kernel argument is followed to the constant its
/// callers pass: the function around the launch, and two more above it.
const PASS_DEPTH: usize = 3;

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
        let mut definers: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (path, f) in &files {
            for k in &f.facts().kernels {
                let short = kernaut_syntax::short_name(&k.name);
                if by_name.contains_key(short) {
                    let paths = definers.entry(short.to_string()).or_default();
                    if !paths.iter().any(|p| p == path) {
                        paths.push((*path).to_string());
                    }
                }
            }
        }
        definers.retain(|_, paths| paths.len() > 1);
        let data: FxHashMap<&str, &FileData> = files.iter().copied().collect();
        let fingerprints = by_name
            .iter()
            .map(|(name, sites)| {
                let mut h = FxHasher::default();
                let defined_twice = definers.contains_key(name);
                for (path, i) in sites {
                    let l = &data[path.as_str()].facts().launches[*i];
                    path.hash(&mut h);
                    // Which definition a launch reaches depends on its file's includes.
                    if defined_twice {
                        data[path.as_str()].header_facts().includes.hash(&mut h);
                    }
                    (&l.kernel, &l.template_args, l.block.value, &l.block.text).hash(&mut h);
                    (&l.shared_bytes_text, l.shared_bytes).hash(&mut h);
                }
                (name.clone(), h.finish())
            })
            .collect();
        LaunchIndex {
            by_name,
            fingerprints,
            fixed: Mutex::default(),
            wrapper_calls: OnceLock::new(),
            definers,
            headers: Mutex::default(),
        }
    }

    /// The files that define a kernel named `short`, where more than one does.
    pub fn definers(&self, short: &str) -> &[String] {
        self.definers.get(short).map_or(&[], Vec::as_slice)
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

impl Analysis {
    /// Whether a launch of a kernel named `short` in the file at `site` can launch the
    /// definition in the file at `first`: a launch reaches the kernel its own translation
    /// unit defines. Where the file or a header it includes defines a kernel of that name
    /// and `first` is neither, the launch is of that other kernel (two programs of one
    /// project, each with a `step` kernel of its own). A file that sees no definition
    /// (a declaration, separate compilation) may launch any.
    pub(super) fn launch_reaches(&self, first: &str, site: &str, short: &str) -> bool {
        let index = self.launch_index();
        let definers = index.definers(short);
        if definers.is_empty() || site == first {
            return true;
        }
        let site_norm = super::includes::normalize_path(site);
        let headers = self.headers_of(site);
        let sees = |p: &str| {
            let p = super::includes::normalize_path(p);
            p == site_norm || headers.contains(&p)
        };
        sees(first) || !definers.iter().any(|d| sees(d))
    }

    /// The headers the file at `path` includes, transitively (normalised paths), kept
    /// in the revision's launch index.
    fn headers_of(&self, path: &str) -> Arc<[String]> {
        let index = self.launch_index();
        if let Some(h) = index.headers.lock().ok().and_then(|m| m.get(path).cloned()) {
            return h;
        }
        let by_norm: FxHashMap<String, &FileData> = self
            .files
            .iter()
            .map(|(p, f)| (super::includes::normalize_path(p), &**f))
            .collect();
        let mut text_of = |p: &str| -> Option<Arc<str>> {
            let norm = super::includes::normalize_path(p);
            Some(by_norm.get(&norm)?.header_facts().includes.clone())
        };
        let dirs = self
            .builds
            .get(path)
            .map(|b| b.include_dirs.as_slice())
            .unwrap_or_default();
        let headers: Arc<[String]> = super::includes::include_closure_in(path, dirs, &mut text_of)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        if let Ok(mut m) = index.headers.lock() {
            m.insert(path.to_string(), headers.clone());
        }
        headers
    }

    /// The scalar parameters of `kernel` that every launch of it in the host passes the
    /// same constant: an argument that folds (`1`, `TILE / 2`), or a parameter of the
    /// host function around the launch (`axpy_gpu(n, a, x, incx, …)` launching
    /// `axpy_kernel<<<…>>>(n, a, x, incx, …)`) that the function never writes and that
    /// every call of it in the host passes as one constant. A parameter one launch or
    /// call leaves unknown, or where they disagree, is not fixed; nor is any without a
    /// launch in sight. Worked out once per revision.
    pub fn fixed_kernel_args(&self, kernel: &Function) -> FixedArgs {
        // The file that defines `kernel`, where several define a kernel of its name: its
        // launches are those that reach it ([`Analysis::launch_reaches`]).
        let home = self
            .launch_index()
            .definers(kernaut_syntax::short_name(&kernel.name))
            .iter()
            .find(|p| {
                self.files.get(p.as_str()).is_some_and(|f| {
                    f.facts().kernels.iter().any(|k| {
                        k.name == kernel.name
                            && k.range == kernel.range
                            && k.params == kernel.params
                    })
                })
            })
            .cloned()
            .unwrap_or_default();
        let key = format!(
            "{home}|{}({})",
            kernel.name,
            kernel
                .params
                .iter()
                .map(|p| p.ty.as_str())
                .collect::<Vec<_>>()
                .join(",")
        );
        let index = self.launch_index();
        if let Some(v) = index
            .fixed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
        {
            return v.clone();
        }
        let sites: Vec<(&str, &LaunchSite)> = self.launches_of_ref(&home, &kernel.name).collect();
        let facts_of = |path: &str| self.files.get(path).map(|f| f.facts());
        let calls_of = |short: &str| -> CallsOf {
            self.wrapper_calls().get(short).cloned().unwrap_or_default()
        };
        let v: FixedArgs = fixed_args(kernel, &sites, &facts_of, &calls_of).into();
        index
            .fixed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, v.clone());
        v
    }
}

impl Analysis {
    /// The calls of every host function of the host that passes one of its parameters
    /// to a kernel it launches, by its short name: one pass over the words of every
    /// file, then the calls of the files that name one. Once per revision.
    fn wrapper_calls(&self) -> &FxHashMap<String, CallsOf> {
        self.launch_index().wrapper_calls.get_or_init(|| {
            let mut names: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
            for data in self.files.values() {
                for l in &data.facts().launches {
                    let passes = passes_own_param(&l.args, &l.caller_value_params);
                    if let Some(f) = l.function.as_deref().filter(|_| passes) {
                        names.insert(kernaut_syntax::short_name(f).to_string());
                    }
                }
            }
            let mut out: FxHashMap<String, CallsOf> = FxHashMap::default();
            // The functions of one level, then those of their callers that pass one of
            // their own parameters on to them.
            let mut level = names.clone();
            for _ in 0..PASS_DEPTH {
                if level.is_empty() {
                    break;
                }
                let asked: rustc_hash::FxHashSet<&str> = level.iter().map(String::as_str).collect();
                let mut next = rustc_hash::FxHashSet::default();
                for (path, data) in self.sorted_files("") {
                    let Some(calls) = file_calls(data, &asked) else {
                        continue;
                    };
                    for (n, c) in calls.iter() {
                        if let Some(f) = c.as_ref().and_then(|c| passed_on_by(c)) {
                            if !names.contains(f) {
                                next.insert(f.to_string());
                            }
                        }
                        out.entry(n.clone())
                            .or_default()
                            .push((path.to_string(), c.clone()));
                    }
                }
                names.extend(next.iter().cloned());
                level = next;
            }
            out
        })
    }
}

impl Analysis {
    /// Whether a file of the host other than `path` names one of `names` as a whole
    /// word outside its comments (a use of a header's template or macro).
    pub fn named_elsewhere(&self, path: &str, names: &rustc_hash::FxHashSet<&str>) -> bool {
        self.files.iter().any(|(p, data)| {
            p != path
                && !words_at(data.source.text(), names).is_empty()
                && !words_at(
                    &kernaut_syntax::lex::blank_comments(data.source.text()),
                    names,
                )
                .is_empty()
        })
    }
}

/// Whether one of `args` is one of `params` (the unwritten value parameters of the
/// function around a launch or call, `""` for the others): a value passed on.
fn passes_own_param(args: &[String], params: &[String]) -> bool {
    args.iter()
        .any(|a| params.iter().any(|p| !p.is_empty() && p == a.trim()))
}

/// The short name of the function around call `c` where `c` passes one of that
/// function's own parameters on.
fn passed_on_by(c: &HostCall) -> Option<&str> {
    passes_own_param(&c.site.args, &c.caller_value_params)
        .then_some(c.caller.as_deref())
        .flatten()
        .map(kernaut_syntax::short_name)
}

/// The calls of `names` in `data` (none where its text names none), from the file's
/// cache where the same names were asked of it in an earlier revision.
fn file_calls(
    data: &FileData,
    names: &rustc_hash::FxHashSet<&str>,
) -> Option<super::file_data::NamedCalls> {
    let at = words_at(data.source.text(), names);
    if at.is_empty() {
        return None;
    }
    let mut key: Vec<&str> = at.iter().map(|&o| word_at(data.source.text(), o)).collect();
    key.sort_unstable();
    key.dedup();
    let key = rustc_hash::FxBuildHasher.hash_one(&key);
    let mut slot = data
        .calls_by_name
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, calls)) = slot.iter().find(|(k, _)| *k == key) {
        return Some(calls.clone());
    }
    // Parsed again (trees dropped) only where a call may be.
    let calls = Arc::new(named_calls_in(data.source.text(), names, |at| {
        calls_at(&data.with_trees().source, at, names)
    }));
    // One entry per level of callers asked about.
    if slot.len() >= PASS_DEPTH {
        slot.remove(0);
    }
    slot.push((key, calls.clone()));
    Some(calls)
}

/// [`Analysis::fixed_kernel_args`] over the launches `sites` (path, launch), reading
/// each path's facts through `facts_of` and the calls of a host function by its short
/// name through `calls_of` (every call of the name in the files in sight; `None` for a
/// use of its address, through which calls are not seen).
pub fn fixed_args<'a>(
    kernel: &Function,
    sites: &[(&'a str, &'a LaunchSite)],
    facts_of: &dyn Fn(&str) -> Option<&'a FileFacts>,
    calls_of: &dyn Fn(&str) -> CallsOf,
) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    if sites.is_empty() {
        return out;
    }
    // The calls of each host function around a launch, looked up once.
    let calls: std::cell::RefCell<FxHashMap<String, CallsOf>> = Default::default();
    'params: for (k, p) in kernel.params.iter().enumerate() {
        if p.name.is_empty() || p.ty.contains(['*', '&', '[']) {
            continue;
        }
        // Two parameters of one name (a kernel nvcc rejects): neither has a value.
        if kernel.params.iter().filter(|q| q.name == p.name).count() > 1 {
            continue;
        }
        let mut value: Option<i64> = None;
        for (path, site) in sites {
            if site.args.len() != kernel.params.len() {
                continue 'params;
            }
            let Some(facts) = facts_of(path) else {
                continue 'params;
            };
            let arg = site.args[k].trim();
            let local = site.arg_locals.get(k).copied().flatten();
            let v = match facts.fold_text(arg, site.range.start).or(local) {
                Some(v) => Some(v),
                None => {
                    // A parameter of the host function around the launch: what every
                    // call of that function passes.
                    let Some(j) = site
                        .caller_value_params
                        .iter()
                        .position(|q| !q.is_empty() && q == arg)
                    else {
                        continue 'params;
                    };
                    let Some(function) = site.function.as_deref() else {
                        continue 'params;
                    };
                    let mut chain = vec![kernaut_syntax::short_name(function).to_string()];
                    let calls_of = |short: &str| -> CallsOf {
                        calls
                            .borrow_mut()
                            .entry(short.to_string())
                            .or_insert_with(|| calls_of(short))
                            .clone()
                    };
                    passed_by_calls(
                        &mut chain,
                        j,
                        site.caller_value_params.len(),
                        facts_of,
                        &calls_of,
                    )
                }
            };
            let Some(v) = v else { continue 'params };
            if value.is_some_and(|x| x != v) {
                continue 'params;
            }
            value = Some(v);
        }
        if let Some(v) = value {
            out.push((p.name.clone(), v));
        }
    }
    out
}

/// The constant every call of the host function `chain.last()` passes as its parameter
/// `j` (of `n`): folded where the call is, or, where the call passes a parameter of the
/// function around it on, what every call of that function passes, up to
/// [`PASS_DEPTH`] functions deep. `None` where a call passes something else, a call is
/// not seen (the function's address is taken), or there is no call.
fn passed_by_calls<'a>(
    chain: &mut Vec<String>,
    j: usize,
    n: usize,
    facts_of: &dyn Fn(&str) -> Option<&'a FileFacts>,
    calls_of: &dyn Fn(&str) -> CallsOf,
) -> Option<i64> {
    let found = calls_of(chain.last()?);
    let mut passed: Option<i64> = None;
    for (cpath, c) in &found {
        // Its address taken: calls through it are not seen.
        let (cfacts, c) = (facts_of(cpath)?, c.as_ref()?);
        if c.site.args.len() != n {
            return None;
        }
        let arg = c.site.args[j].trim();
        let v = match cfacts.fold_text(arg, c.site.range.start) {
            Some(v) => v,
            None => {
                let k = c
                    .caller_value_params
                    .iter()
                    .position(|q| !q.is_empty() && q == arg)?;
                let caller = kernaut_syntax::short_name(c.caller.as_deref()?);
                // A recursive call, or the chain at its depth: not followed.
                if chain.len() >= PASS_DEPTH || chain.iter().any(|f| f == caller) {
                    return None;
                }
                chain.push(caller.to_string());
                let v = passed_by_calls(chain, k, c.caller_value_params.len(), facts_of, calls_of);
                chain.pop();
                v?
            }
        };
        if passed.is_some_and(|x| x != v) {
            return None;
        }
        passed = Some(v);
    }
    passed
}

/// The identifier that starts at `at`.
fn word_at(text: &str, at: usize) -> &str {
    let end = text[at..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(text.len(), |e| at + e);
    &text[at..end]
}

/// Where `text` may call one of `names`: the name as a whole word, followed by `(`, and
/// not right after another word (`void name(` declares or defines it; `return name(`
/// calls it).
fn call_candidates(text: &str, names: &rustc_hash::FxHashSet<&str>) -> Vec<usize> {
    words_at(text, names)
        .into_iter()
        .filter(|&at| {
            let after = text[at + word_at(text, at).len()..].trim_start();
            if !after.starts_with('(') {
                return false;
            }
            let before = text[..at].trim_end();
            let prev = before
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            !before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                || matches!(prev, "return" | "else" | "do" | "case")
        })
        .collect()
}

/// Where `text` holds one of `names` as a whole word.
fn words_at(text: &str, names: &rustc_hash::FxHashSet<&str>) -> Vec<usize> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if names.contains(&text[start..i]) {
                out.push(start);
            }
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The calls in `source` of the functions named `names` (by name without namespaces,
/// as [`kernaut_syntax::SourceFile::find_calls`] matches them), each with the name: only
/// the functions whose text names one are looked into. A use of a name as a value
/// (`&name`, `f(name)`, `p = name;`: its address, through which calls are not seen) is
/// `None`. Calls outside every function (a file-scope initialiser) are not seen.
pub fn calls_named(
    source: &kernaut_syntax::SourceFile,
    names: &rustc_hash::FxHashSet<&str>,
) -> CallsOf {
    named_calls_in(source.text(), names, |at| calls_at(source, at, names))
}

/// The uses of `names` as values in `text` and, through `calls_at`, their calls at the
/// offsets where a call may be (asked only where there is one); comments blanked first,
/// since a name in a comment is no call and no use.
fn named_calls_in(
    text: &str,
    names: &rustc_hash::FxHashSet<&str>,
    calls_at: impl FnOnce(&[usize]) -> CallsOf,
) -> CallsOf {
    let text = kernaut_syntax::lex::blank_comments(text);
    let mut out = escapes(&text, names);
    let at = call_candidates(&text, names);
    if !at.is_empty() {
        out.extend(calls_at(&at));
    }
    out
}

/// The names of `names` that `text` uses as values (their address): each as
/// `(name, None)`.
fn escapes(text: &str, names: &rustc_hash::FxHashSet<&str>) -> CallsOf {
    words_at(text, names)
        .into_iter()
        .filter(|&at| {
            let before = text[..at].trim_end();
            let after = text[at + word_at(text, at).len()..].trim_start();
            (before.ends_with('&') && !before.ends_with("&&"))
                || (before.ends_with(['=', '(', ',', '{'])
                    && after.starts_with([')', ',', ';', '}']))
        })
        .map(|at| (word_at(text, at).to_string(), None))
        .collect()
}

/// The calls of `names` in the functions around the offsets `at`.
fn calls_at(
    source: &kernaut_syntax::SourceFile,
    at: &[usize],
    names: &rustc_hash::FxHashSet<&str>,
) -> CallsOf {
    if at.is_empty() {
        return Vec::new();
    }
    source
        .calls_in_functions_at(at)
        .into_iter()
        .filter(|c| c.kind != kernaut_syntax::SymbolKind::Ptx)
        .filter_map(|c| {
            let n = [c.callee.as_str(), c.callee_text.as_str()]
                .into_iter()
                .map(kernaut_syntax::short_name)
                .find(|n| names.contains(n))?
                .to_string();
            let (caller, params) = source.value_params_at(c.range.start).unzip();
            Some((
                n,
                Some(HostCall {
                    site: c,
                    caller,
                    caller_value_params: params.unwrap_or_default().into(),
                }),
            ))
        })
        .collect()
}
