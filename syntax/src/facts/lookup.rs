//! Declaration look-up: the name tables of [`FileFacts`] and the queries that use them
//! (a kernel, a function at an offset, a `__shared__` declaration or a constant by name).

use super::*;

/// [`FxHasher`](rustc_hash::FxHasher) of a name, for the look-up tables (no copy of the
/// name is kept).
pub(crate) fn name_hash(name: &str) -> u64 {
    scoped_hash(name, None)
}

/// [`name_hash`] of a name declared in `function` (`None`: at file scope).
pub(crate) fn scoped_hash(name: &str, function: Option<&str>) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    name.hash(&mut h);
    if let Some(f) = function {
        f.hash(&mut h);
    }
    h.finish()
}

/// A look-up table of `names` (in list order): (hash of the name, position), sorted.
pub(crate) fn name_table<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(u64, usize)> {
    let mut table: Vec<(u64, usize)> = names.enumerate().map(|(i, n)| (name_hash(n), i)).collect();
    table.sort_unstable();
    table
}

/// The positions listed under `name` in a table sorted by (hash, position), in order,
/// including those of other names with the same hash (callers compare the names).
pub(crate) fn positions_of<'a>(
    table: &'a [(u64, usize)],
    name: &str,
) -> impl Iterator<Item = usize> + 'a {
    table_positions(table, name_hash(name))
}

/// The positions listed under hash `h` in a table sorted by (hash, position), in order.
pub(crate) fn table_positions(table: &[(u64, usize)], h: u64) -> impl Iterator<Item = usize> + '_ {
    let from = table.partition_point(|&(k, _)| k < h);
    table[from..]
        .iter()
        .take_while(move |&&(k, _)| k == h)
        .map(|&(_, i)| i)
}

/// The table of `ranges` (sorted as [`FactsIndex::functions`] says) with each one's
/// innermost enclosing range, or `None` when two ranges overlap without nesting.
fn nesting(ranges: Vec<(usize, usize, bool, usize)>) -> Option<crate::data::FunctionTable> {
    let mut parents = vec![usize::MAX; ranges.len()];
    // The ranges that contain the current one, innermost last.
    let mut open: Vec<usize> = Vec::new();
    for (k, &(start, end, _, _)) in ranges.iter().enumerate() {
        while open
            .last()
            .is_some_and(|&o| ranges[o].1 <= start && ranges[o].0 < start)
        {
            open.pop();
        }
        if let Some(&o) = open.last() {
            if end > ranges[o].1 {
                return None;
            }
            parents[k] = o;
        }
        open.push(k);
    }
    Some(crate::data::FunctionTable { ranges, parents })
}

impl FileFacts {
    /// The look-up tables, when they describe the lists as they are now.
    pub(crate) fn index(&self) -> Option<&FactsIndex> {
        let lens = (
            self.kernels.len(),
            self.device_functions.len(),
            self.shared.len(),
            self.macros.len(),
            self.launches.len(),
        );
        let index = self.index.get_or_init(|| self.build_index());
        (index.lens == lens).then_some(index)
    }

    pub(crate) fn build_index(&self) -> FactsIndex {
        let mut functions: Vec<(usize, usize, bool, usize)> = self
            .kernels
            .iter()
            .enumerate()
            .map(|(i, f)| (f.range.start, f.range.end, true, i))
            .chain(
                self.device_functions
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (f.range.start, f.range.end, false, i)),
            )
            .collect();
        // By start, the longest first among equal starts; among equal ranges the one
        // listed first (kernels before device functions) last, as the innermost.
        functions.sort_unstable_by_key(|&(start, end, kernel, i)| {
            (
                start,
                std::cmp::Reverse(end),
                std::cmp::Reverse((!kernel, i)),
            )
        });
        let kernels = name_table(self.kernels.iter().map(|k| k.name.as_str()));
        let mut shared: Vec<(u64, usize)> = self
            .shared
            .iter()
            .enumerate()
            .map(|(i, d)| (scoped_hash(&d.name, d.function.as_deref()), i))
            .collect();
        shared.sort_unstable();
        FactsIndex {
            lens: (
                self.kernels.len(),
                self.device_functions.len(),
                self.shared.len(),
                self.macros.len(),
                self.launches.len(),
            ),
            functions: nesting(functions),
            kernels,
            shared,
            macros: name_table(self.macros.iter().map(String::as_str)),
            launches: name_table(self.launches.iter().map(|l| crate::short_name(&l.kernel))),
        }
    }

    /// The launches of the kernels whose name without namespaces is `short`, in document
    /// order: those of `launches` with `short_name(&l.kernel) == short`.
    pub fn launches_by_short_name(&self, short: &str) -> Vec<&LaunchSite> {
        match self.index() {
            Some(index) => positions_of(&index.launches, short)
                .map(|i| &self.launches[i])
                .filter(|l| crate::short_name(&l.kernel) == short)
                .collect(),
            None => self
                .launches
                .iter()
                .filter(|l| crate::short_name(&l.kernel) == short)
                .collect(),
        }
    }

    /// Whether the file `#define`s a macro called `name`, or sees one from a header it
    /// includes (its prelude).
    pub fn defines_macro(&self, name: &str) -> bool {
        self.defines_own_macro(name) || self.header_macro(name).is_some()
    }

    /// The definition of `name` from the headers the file includes, unless the file
    /// defines `name` itself (its own definition wins).
    pub fn header_macro(&self, name: &str) -> Option<&crate::MacroDef> {
        let def = self.prelude.as_ref()?.get(name)?;
        (!self.defines_own_macro(name)).then_some(def)
    }

    /// The headers' macros the file sees, when the host gave it any.
    pub fn prelude(&self) -> Option<&crate::Prelude> {
        self.prelude.as_deref()
    }

    /// Whether the file itself `#define`s a macro called `name` (`macros.contains(name)`).
    pub fn defines_own_macro(&self, name: &str) -> bool {
        match self.index() {
            Some(index) => positions_of(&index.macros, name).any(|i| self.macros[i] == name),
            None => self.macros.iter().any(|m| m == name),
        }
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&Function> {
        match self.index() {
            Some(index) => positions_of(&index.kernels, name)
                .map(|i| &self.kernels[i])
                .find(|k| k.name == name),
            None => self.kernels.iter().find(|k| k.name == name),
        }
    }

    /// The function (kernel or device function) whose range contains `offset` (the
    /// innermost, where a broken brace left one inside another).
    pub fn function_at(&self, offset: usize) -> Option<&Function> {
        if let Some(table) = self.index().and_then(|i| i.functions.as_ref()) {
            // Ranges nest or are disjoint, so every function containing `offset`
            // contains the last one starting at or before it: the innermost is the first
            // of that one and its outer functions that contains `offset`.
            let after = table.ranges.partition_point(|f| f.0 <= offset);
            let mut at = after.checked_sub(1)?;
            loop {
                let &(start, end, is_kernel, i) = table.ranges.get(at)?;
                if (start..end).contains(&offset) {
                    return Some(if is_kernel {
                        &self.kernels[i]
                    } else {
                        &self.device_functions[i]
                    });
                }
                at = table.parents[at];
            }
        }
        self.kernels
            .iter()
            .chain(&self.device_functions)
            .filter(|f| f.range.contains(&offset))
            .min_by_key(|f| f.range.len())
    }

    /// The constant named `name` visible at `offset`, folded.
    pub fn constant_value(&self, name: &str, offset: usize) -> Option<i64> {
        self.env.fold(&Expr::Name(name.to_string()), offset)
    }

    /// The `__shared__` declaration named `name` visible at `offset`.
    pub fn shared_named(&self, name: &str, offset: usize) -> Option<&SharedDecl> {
        let in_function = self.function_at(offset).map(|f| f.name.as_str());
        let visible =
            |d: &&SharedDecl| d.function.is_none() || d.function.as_deref() == in_function;
        match self.index() {
            // The first visible one in document order: the first at file scope or the
            // first in the function, whichever comes first.
            Some(index) => {
                let first = |function: Option<&str>| {
                    table_positions(&index.shared, scoped_hash(name, function)).find(|&i| {
                        let d = &self.shared[i];
                        d.name == name && d.function.as_deref() == function
                    })
                };
                let global = first(None);
                let local = in_function.and_then(|f| first(Some(f)));
                global
                    .into_iter()
                    .chain(local)
                    .min()
                    .map(|i| &self.shared[i])
            }
            None => self.shared.iter().filter(|d| d.name == name).find(visible),
        }
    }

    /// Folds the text of an integer expression (`TILE_DIM + 1`) with the file's constants
    /// visible at `offset`.
    pub fn fold_text(&self, text: &str, offset: usize) -> Option<i64> {
        self.env.fold(&from_text(text), offset)
    }

    /// [`FileFacts::fold_text`] with the names in `bound` taking the given values: the
    /// template arguments of one instantiation of a kernel.
    pub fn fold_text_with(
        &self,
        text: &str,
        offset: usize,
        bound: &[(String, i64)],
    ) -> Option<i64> {
        self.env.fold_with(&from_text(text), offset, bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The innermost function containing `offset`, by scanning every function.
    fn scanned(facts: &FileFacts, offset: usize) -> Option<&Function> {
        facts
            .kernels
            .iter()
            .chain(&facts.device_functions)
            .filter(|f| f.range.contains(&offset))
            .min_by_key(|f| f.range.len())
    }

    #[test]
    fn a_missing_brace_keeps_the_function_table_and_its_answers() {
        let mut text = String::new();
        for i in 0..6 {
            text.push_str(&kernaut_test_utils::gen::kernel(i));
        }
        // The closing brace of the second kernel, lost: what follows nests inside it.
        let second = text.find("kernel_1(").unwrap();
        let brace = second + text[second..].find("\n}\n").unwrap() + 1;
        text.replace_range(brace..brace + 1, "");
        // One tree for the whole file (a chunked parse would cut at the lost brace).
        let file = crate::SourceFile::parse_with_target(&text, 0);
        let facts = file.facts();
        let ranges: Vec<_> = facts
            .kernels
            .iter()
            .chain(&facts.device_functions)
            .map(|f| f.range.clone())
            .collect();
        assert!(
            ranges.iter().any(|a| ranges
                .iter()
                .any(|b| a != b && a.start <= b.start && b.end <= a.end)),
            "the broken brace nests functions: {ranges:?}"
        );
        assert!(facts.index().and_then(|i| i.functions.as_ref()).is_some());
        for offset in 0..=text.len() {
            assert_eq!(
                facts.function_at(offset).map(|f| (&f.name, &f.range)),
                scanned(facts, offset).map(|f| (&f.name, &f.range)),
                "at {offset}"
            );
        }
    }

    #[test]
    fn ranges_that_overlap_without_nesting_have_no_table() {
        assert!(nesting(vec![(0, 10, true, 0), (5, 15, true, 1)]).is_none());
        let t = nesting(vec![
            (0, 20, true, 0),
            (2, 5, true, 1),
            (5, 5, false, 0),
            (8, 9, true, 2),
        ])
        .unwrap();
        assert_eq!(t.parents, [usize::MAX, 0, 0, 0]);
    }
}
