//! Rules runs after an edit that recompute only what the edit can reach.
//!
//! A file is a list of top-level items ([`crate::analysis::items`]); an item's
//! diagnostics depend on its own text, on the items it shares a name with (calls, launches,
//! macros expanding to them, global variables: its group), on the context every item sees
//! (macros, types, includes), on the launches of its kernels in other files and on the
//! file's configuration. After an edit that changed only function definitions, the
//! groups of the changed functions (and of the kernels whose launches changed elsewhere)
//! are run again on a copy of the file where every other function is blanked out (same
//! offsets, same lines), and the last run's diagnostics of every other item are kept,
//! moved by the edit. Anything else (an edit to the context, a configuration change,
//! syntax errors, a diagnostic outside a function, the race model's per-file budget
//! coming into play) runs the rules over the whole file, so that the result always
//! equals a run from scratch.

use std::sync::Arc;

use kernaut_syntax::{FxHashSet, SourceFile, TextRange};

use crate::analysis::{
    item_names, items_reusing, names, Analysis, DiagnosticsKey, FileConfig, FileData, Item,
    ItemKind, Macros, RulesRun,
};
use crate::compiled::CompiledFacts;
use crate::diagnostic::RuleDiagnostic;
use crate::knowledge::Knowledge;

/// The name under which a run keeps what every kernel's model reads (the default block):
/// no kernel has an empty name.
pub(super) const ALL_KERNELS: &str = "";

/// The diagnostics of `f` (the file at `path`, with its trees) computed from `prev`, the
/// last run on an earlier version or under other launches, when only functions changed;
/// `None` when the rules must run over the whole file.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    db: &Analysis,
    path: &str,
    f: &FileData,
    k: &Knowledge,
    fc: &FileConfig,
    compiled: Option<&CompiledFacts>,
    key: &DiagnosticsKey,
    names_now: &[(String, u64)],
    prev: &RulesRun,
) -> Option<RulesRun> {
    if !prev.clean
        || prev.key.config != key.config
        || prev.key.knowledge != key.knowledge
        || prev.key.compiled != key.compiled
        || prev.items.is_empty()
        || f.trees_dropped
    {
        return None;
    }
    let all = |names: &[(String, u64)]| names.iter().find(|(n, _)| n == ALL_KERNELS).map(|e| e.1);
    if all(&prev.names) != all(names_now) {
        return None;
    }
    let text = f.source.text();
    let new_items = items_reusing(text, &prev.items, &prev.text);
    let old_items = &prev.items;
    let same = |a: &Item, b: &Item, ta: &str, tb: &str| {
        a.hash == b.hash && ta.get(a.range.clone()) == tb.get(b.range.clone())
    };
    // The items before and after the edit, equal in both versions.
    let mut p = 0;
    while p < old_items.len()
        && p < new_items.len()
        && same(&old_items[p], &new_items[p], &prev.text, text)
    {
        p += 1;
    }
    let mut s = 0;
    while s < old_items.len() - p
        && s < new_items.len() - p
        && same(
            &old_items[old_items.len() - 1 - s],
            &new_items[new_items.len() - 1 - s],
            &prev.text,
            text,
        )
    {
        s += 1;
    }
    let old_changed = p..old_items.len() - s;
    let new_changed = p..new_items.len() - s;
    if old_items[old_changed.clone()]
        .iter()
        .chain(&new_items[new_changed.clone()])
        .any(|i| i.kind != ItemKind::Function)
    {
        return None;
    }
    // Whole files only: a new file with syntax errors may parse differently around them.
    if !f.source.errors().is_empty() {
        return None;
    }
    // Items are cut from the text. Where the tree sees one function across several
    // items (a definition written inside another's body, which the grammar accepts
    // without an error), leaving items out would cut that function: whole file.
    let facts = f.facts();
    for func in facts.kernels.iter().chain(&facts.device_functions) {
        let first = item_at(&new_items, func.range.start);
        let last = item_at(&new_items, func.range.end.saturating_sub(1));
        if first.is_none() || first != last {
            return None;
        }
    }
    let edit = Edit::new(old_items, &new_items, &old_changed, &new_changed);

    let macros = Macros::new(text, &header_macros(&f.source));
    // What the edit reaches: the new changed items, the items that define a name the old
    // ones mentioned or that mention (or define again) a name they defined, and the items
    // naming a kernel whose launches changed.
    let mut defined: FxHashSet<String> = FxHashSet::default();
    let mut mentioned: FxHashSet<String> = FxHashSet::default();
    for i in old_changed.clone() {
        let it = &old_items[i];
        let (d, m) = item_names(
            &prev.text[it.range.clone()],
            it.kind,
            &it.range,
            None,
            &macros,
        );
        defined.extend(d);
        mentioned.extend(m);
    }
    for (name, fp) in names_now {
        if prev.names.iter().find(|(n, _)| n == name).map(|e| e.1) != Some(*fp) {
            defined.insert(name.clone());
        }
    }
    for (name, _) in &prev.names {
        if !names_now.iter().any(|(n, _)| n == name) {
            defined.insert(name.clone());
        }
    }
    let extra: FxHashSet<String> = defined.iter().chain(&mentioned).cloned().collect();
    let names = names(text, &new_items, f.facts(), &macros, &extra);
    let mut groups: FxHashSet<usize> = new_changed.clone().map(|i| names.group[i]).collect();
    for i in 0..new_items.len() {
        let hit = |v: &Vec<String>, set: &FxHashSet<String>| v.iter().any(|n| set.contains(n));
        if hit(&names.defines[i], &defined)
            || hit(&names.defines[i], &mentioned)
            || hit(&names.mentions[i], &defined)
        {
            groups.insert(names.group[i]);
        }
    }
    // The last run's diagnostics, by the item they start in (new numbering); their lines
    // and offsets move with the edit, unless they may name another file's lines.
    let mut kept: Vec<Vec<RuleDiagnostic>> = vec![Vec::new(); new_items.len()];
    let mut other_files: rustc_hash::FxHashMap<usize, bool> = Default::default();
    for d in prev.diagnostics.iter() {
        let old = item_at(old_items, d.range.start)?;
        if old_changed.contains(&old) {
            continue;
        }
        let new = if old < p {
            old
        } else {
            old + new_items.len() - old_items.len()
        };
        if old_items[old].kind == ItemKind::Context {
            return None;
        }
        let group = names.group[new];
        if groups.contains(&group) {
            continue;
        }
        // A line after the edit that may be another file's is not renumbered: run again.
        let moved = edit.moved(d).filter(|_| {
            edit.lines == 0
                || !line_refs(d).any(|n| n >= edit.first_line)
                || !*other_files
                    .entry(group)
                    .or_insert_with(|| launched_elsewhere(db, path, &names, group))
        });
        match moved {
            Some(moved) => kept[new].push(moved),
            None => {
                groups.insert(group);
            }
        }
    }
    let affected: Vec<bool> = (0..new_items.len())
        .map(|i| new_items[i].kind != ItemKind::Context && groups.contains(&names.group[i]))
        .collect();

    // The file with every function outside the affected groups left out: each such
    // function is replaced by its line breaks, so that every line keeps its number.
    let mut slice = String::with_capacity(text.len() / 4);
    let mut at = Vec::with_capacity(new_items.len());
    for (i, it) in new_items.iter().enumerate() {
        at.push(slice.len());
        let t = &text[it.range.clone()];
        if affected[i] || it.kind != ItemKind::Function {
            slice.push_str(t);
        } else {
            slice.extend(std::iter::repeat_n('\n', it.newlines as usize));
        }
    }
    let shift = Shift {
        items: &new_items,
        at: &at,
        kept: &|i| affected[i] || new_items[i].kind != ItemKind::Function,
        end: slice.len(),
    };
    // The race model's steps of the left-out kernels, spent where they stood.
    let map_old = |o: usize, i: usize| {
        if i < p {
            Some(o)
        } else {
            o.checked_add_signed(edit.bytes)
        }
    };
    let map_new = |o: usize, i: usize| {
        if i < p {
            Some(o)
        } else {
            o.checked_add_signed(-edit.bytes)
        }
    };
    let new_index = |old: usize| {
        if old < p {
            old
        } else {
            old + new_items.len() - old_items.len()
        }
    };
    let mut elsewhere = Vec::new();
    for &(start, steps) in &prev.race_steps {
        let old = item_at(old_items, start)?;
        if old_changed.contains(&old) {
            continue;
        }
        let new = new_index(old);
        if !shift.is_kept(new) {
            elsewhere.push((map_old(start, old)?, steps));
        }
    }
    let source = SourceFile::parse(&slice).with_prelude(f.source.prelude().cloned());
    let sliced = db.with_file(path, FileData::new(source, None));
    let data = sliced.file(path)?;
    let elsewhere_there: Vec<(usize, usize)> = elsewhere
        .iter()
        .map(|&(o, s)| Some((shift.there(o)?, s)))
        .collect::<Option<_>>()?;
    let (found, steps) =
        super::host::run_rules(&sliced, path, data, k, fc, compiled, elsewhere_there);
    let mut race_steps = elsewhere;
    for (o, s) in steps {
        race_steps.push((shift.back(o)?, s));
    }
    race_steps.sort_unstable();
    // The budget is per file: each kept kernel's races stand only if the steps before it
    // are the same as in the last run, or if neither run comes near the budget.
    let total = |v: &[(usize, usize)]| v.iter().map(|e| e.1).sum::<usize>();
    let budget = crate::races::FILE_STEPS;
    if total(&prev.race_steps) >= budget || total(&race_steps) >= budget {
        let before = |v: &[(usize, usize)], at: usize| {
            v.iter()
                .take_while(|e| e.0 < at)
                .map(|e| e.1)
                .sum::<usize>()
        };
        for k in &f.facts().kernels {
            let Some(body) = k.body_range.as_ref().filter(|_| k.is_kernel) else {
                continue;
            };
            let i = item_at(&new_items, body.start)?;
            if affected[i] {
                continue;
            }
            let old_at = map_new(body.start, i)?;
            if before(&prev.race_steps, old_at) != before(&race_steps, body.start) {
                return None;
            }
        }
    }
    let mut fresh: Vec<Vec<RuleDiagnostic>> = vec![Vec::new(); new_items.len()];
    for d in found {
        let d = shift.diagnostic_back(d)?;
        let i = item_at(&new_items, d.range.start)?;
        if new_items[i].kind == ItemKind::Context {
            return None;
        }
        if affected[i] {
            fresh[i].push(d);
        }
    }
    let mut out = Vec::new();
    for i in 0..new_items.len() {
        if affected[i] {
            out.append(&mut fresh[i]);
        } else {
            out.append(&mut kept[i]);
        }
    }
    #[cfg(test)]
    tests::RUNS.with(|r| r.set(r.get() + 1));
    Some(RulesRun {
        key: key.clone(),
        diagnostics: Arc::new(out),
        items: new_items.into(),
        names: names_now.to_vec(),
        race_steps,
        clean: true,
        text: Arc::from(text),
    })
}

/// The headers' macros the file sees, as (name, body).
pub(super) fn header_macros(source: &SourceFile) -> Vec<(String, String)> {
    source.prelude().map_or_else(Vec::new, |p| {
        p.macros
            .iter()
            .map(|m| (m.name.clone(), m.body.clone()))
            .collect()
    })
}

/// The item `offset` starts in.
fn item_at(items: &[Item], offset: usize) -> Option<usize> {
    let i = items.partition_point(|it| it.range.end <= offset);
    (i < items.len() && items[i].range.contains(&offset)).then_some(i)
}

/// Whether the group's kernels are launched from another file: the model then reads
/// that launch, and a message's `line N` may be that file's line.
fn launched_elsewhere(
    db: &Analysis,
    path: &str,
    names: &crate::analysis::Names,
    group: usize,
) -> bool {
    let index = db.launch_index();
    names
        .group
        .iter()
        .enumerate()
        .filter(|(_, g)| **g == group)
        .flat_map(|(i, _)| &names.defines[i])
        .any(|n| index.sites(n).iter().any(|(p, _)| p != path))
}

/// The line numbers a diagnostic's words name (`line 12`).
fn line_refs(d: &RuleDiagnostic) -> impl Iterator<Item = u32> + '_ {
    std::iter::once(d.message.as_str())
        .chain(d.fixes.iter().map(|f| f.title.as_str()))
        .flat_map(|s| {
            s.match_indices("line ").filter_map(move |(at, _)| {
                if at > 0 && s.as_bytes()[at - 1].is_ascii_alphanumeric() {
                    return None;
                }
                let rest = &s[at + 5..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                rest[..digits].parse().ok()
            })
        })
}

/// Where the items of the new text are in the shortened copy the rules run on: kept
/// items whole, the others as their line breaks.
struct Shift<'a> {
    items: &'a [Item],
    /// Where each item starts in the copy.
    at: &'a [usize],
    kept: &'a dyn Fn(usize) -> bool,
    /// The copy's length.
    end: usize,
}

impl Shift<'_> {
    fn is_kept(&self, i: usize) -> bool {
        (self.kept)(i)
    }

    /// An offset of the text in the copy: exact in a kept item, the start of a left-out
    /// one.
    fn there(&self, o: usize) -> Option<usize> {
        let i = self.items.partition_point(|it| it.range.end <= o);
        let Some(it) = self.items.get(i) else {
            return Some(self.end);
        };
        if self.is_kept(i) {
            Some(self.at[i] + (o.checked_sub(it.range.start)?))
        } else {
            Some(self.at[i])
        }
    }

    /// An offset of the copy in the text (`None` inside a left-out item).
    fn back(&self, o: usize) -> Option<usize> {
        let i = self.at.partition_point(|&a| a <= o).checked_sub(1)?;
        let it = &self.items[i];
        if self.is_kept(i) {
            Some(it.range.start + (o - self.at[i]))
        } else if o == self.at[i] {
            Some(it.range.start)
        } else {
            None
        }
    }

    fn range_back(&self, r: &TextRange) -> Option<TextRange> {
        Some(self.back(r.start)?..self.back(r.end)?)
    }

    /// A diagnostic of the copy in the text.
    fn diagnostic_back(&self, mut d: RuleDiagnostic) -> Option<RuleDiagnostic> {
        d.range = self.range_back(&d.range)?;
        for fix in &mut d.fixes {
            for e in &mut fix.edits {
                e.range = self.range_back(&e.range)?;
            }
        }
        Some(d)
    }
}

/// How an edit moved the text after it: bytes and lines.
struct Edit {
    /// Where the changed items start (in both versions).
    start: usize,
    /// Where they ended in the old version.
    old_end: usize,
    /// The bytes added (negative: removed).
    bytes: isize,
    /// The 1-based line where the changed items start, and the old line just past them.
    first_line: u32,
    old_end_line: u32,
    /// The lines added (negative: removed).
    lines: i64,
}

impl Edit {
    fn new(
        old: &[Item],
        new: &[Item],
        old_changed: &std::ops::Range<usize>,
        new_changed: &std::ops::Range<usize>,
    ) -> Edit {
        let start = old
            .get(old_changed.start)
            .map_or_else(|| old.last().map_or(0, |i| i.range.end), |i| i.range.start);
        let end = |items: &[Item], r: &std::ops::Range<usize>| {
            if r.is_empty() {
                start
            } else {
                items[r.end - 1].range.end
            }
        };
        let lines = |items: &[Item], r: std::ops::Range<usize>| -> i64 {
            items[r].iter().map(|i| i64::from(i.newlines)).sum()
        };
        let first_line = 1 + lines(old, 0..old_changed.start) as u32;
        let old_lines = lines(old, old_changed.clone());
        Edit {
            start,
            old_end: end(old, old_changed),
            bytes: end(new, new_changed) as isize - end(old, old_changed) as isize,
            first_line,
            old_end_line: first_line + old_lines as u32,
            lines: lines(new, new_changed.clone()) - old_lines,
        }
    }

    /// A byte range of the old version in the new one (`None` when it overlaps the edit).
    fn range(&self, r: &TextRange) -> Option<TextRange> {
        if r.end <= self.start {
            Some(r.clone())
        } else if r.start >= self.old_end {
            let m = |o: usize| o.checked_add_signed(self.bytes);
            Some(m(r.start)?..m(r.end)?)
        } else {
            None
        }
    }

    /// The old text with each `line N` that the edit moved renumbered (`None` when one
    /// falls inside the edit).
    fn text(&self, s: &str) -> Option<String> {
        if self.lines == 0 || !s.contains("line ") {
            return Some(s.to_string());
        }
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(at) = rest.find("line ") {
            let word_start = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
            out.push_str(&rest[..at + 5]);
            rest = &rest[at + 5..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if !word_start || digits == 0 {
                continue;
            }
            let n: u32 = rest[..digits].parse().ok()?;
            let moved = if n < self.first_line {
                n
            } else if n >= self.old_end_line {
                u32::try_from(i64::from(n) + self.lines).ok()?
            } else {
                return None;
            };
            out.push_str(&moved.to_string());
            rest = &rest[digits..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// A diagnostic of the old version where the new version has it (`None` when a part
    /// of it falls inside the edit).
    fn moved(&self, d: &RuleDiagnostic) -> Option<RuleDiagnostic> {
        let mut d = d.clone();
        d.range = self.range(&d.range)?;
        d.message = self.text(&d.message)?;
        for fix in &mut d.fixes {
            fix.title = self.text(&fix.title)?;
            for e in &mut fix.edits {
                e.range = self.range(&e.range)?;
            }
        }
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::Arc;

    use crate::{AnalysisConfig, AnalysisHost};

    thread_local! {
        /// Incremental runs made on this thread.
        pub(super) static RUNS: Cell<usize> = const { Cell::new(0) };
    }

    const TEXT: &str = "#define TILE 32\n\
__global__ void a(float* out) {\n\
    __shared__ float t[TILE][TILE];\n\
    t[threadIdx.y][threadIdx.x] = out[threadIdx.x];\n\
    __syncthreads();\n\
    out[threadIdx.x] = t[threadIdx.x][threadIdx.y];\n\
}\n\
void run_a(float* o) { a<<<1, dim3(32, 32)>>>(o); }\n\
__global__ void b(float* out) {\n\
    __shared__ float s[64];\n\
    s[threadIdx.x] = 1.0f;\n\
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];\n\
}\n\
void run_b(float* o) { b<<<1, 64>>>(o); }\n";

    /// Edits `TEXT` at the first `at` by `insert`, and says whether the diagnostics after
    /// it came from an incremental run, checking them against a fresh host's.
    fn incremental_after(at: &str, insert: &str) -> bool {
        incremental_after_edit(at, insert, false)
    }

    /// [`incremental_after`], with the edit parsed away from the host and handed to it
    /// parsed when `apart` (as the server does: its re-parse runs outside the lock).
    fn incremental_after_edit(at: &str, insert: &str, apart: bool) -> bool {
        let knowledge =
            Arc::new(crate::Knowledge::load(&crate::wiki::WikiConfig::builtin()).unwrap());
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        host.set_knowledge(knowledge.clone());
        let id = host.set_file("/k.cu", TEXT);
        assert!(!host.analysis().diagnostics(id).unwrap().is_empty());
        let offset = TEXT.find(at).unwrap();
        if apart {
            let mut parsed = crate::ParsedFile::of(&host.analysis(), id).unwrap();
            parsed.apply_edit(offset..offset, insert);
            let mut change = crate::analysis::Change::new();
            change.set_parsed_file(id, parsed);
            host.apply_change(change);
        } else {
            host.apply_edit("/k.cu", offset..offset, insert);
        }
        let before = RUNS.with(Cell::get);
        let got = host.analysis().diagnostics(id).unwrap();
        let incremental = RUNS.with(Cell::get) > before;
        let mut fresh = AnalysisHost::new(AnalysisConfig::default());
        fresh.set_knowledge(knowledge);
        let mut text = TEXT.to_string();
        text.insert_str(offset, insert);
        let fid = fresh.set_file("/k.cu", &text);
        assert_eq!(got, fresh.analysis().diagnostics(fid).unwrap());
        incremental
    }

    #[test]
    fn edits_inside_functions_run_only_what_they_reach() {
        assert!(incremental_after("__syncthreads();", "// a comment\n"));
        assert!(incremental_after(
            "s[threadIdx.x] = 1.0f;",
            "__syncthreads();\n"
        ));
        assert!(incremental_after("void run_b", "// launches b\n"));
        // The context every function sees, and broken code: the whole file.
        assert!(!incremental_after("#define TILE", "#define PAD 1\n"));
        assert!(!incremental_after(
            "s[threadIdx.x] = 1.0f;",
            "if (threadIdx.x) {\n"
        ));
    }

    #[test]
    fn edits_parsed_away_from_the_host_run_only_what_they_reach() {
        assert!(incremental_after_edit(
            "__syncthreads();",
            "// a comment\n",
            true
        ));
        assert!(incremental_after_edit(
            "void run_b",
            "// launches b\n",
            true
        ));
        assert!(!incremental_after_edit(
            "#define TILE",
            "#define PAD 1\n",
            true
        ));
    }
}
