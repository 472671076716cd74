//! A kernel's static shared bytes, summed one way: the known sizes added (saturating),
//! the declarations of unknown size named. The model, the template instantiations and
//! every front end read this one sum.

use kernaut_syntax::SharedDecl;

/// A kernel's static shared memory: the declarations in its body that are not
/// `extern`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticShared {
    /// The sizes known, added (saturating at `u64::MAX`).
    pub bytes: u64,
    /// The declarations whose size the file does not fix, by name; left out of `bytes`.
    pub unknown: Vec<String>,
}

impl StaticShared {
    /// The total, when every size is known.
    pub fn exact(&self) -> Option<u64> {
        self.unknown.is_empty().then_some(self.bytes)
    }

    /// `bytes` as a `u32` (saturating), for the occupancy model.
    pub fn bytes_u32(&self) -> u32 {
        u32::try_from(self.bytes).unwrap_or(u32::MAX)
    }

    /// Adds one declaration's bytes.
    pub fn add(&mut self, d: &SharedDecl) {
        if d.is_extern {
            return;
        }
        match d.static_bytes {
            Some(b) => self.bytes = self.bytes.saturating_add(b),
            None => self.unknown.push(d.name.clone()),
        }
    }
}

/// The static shared memory of the kernel whose declarations are `decls` (those of its
/// body; `extern` ones are skipped). Declarations in different arms of one `#if`/`#else`
/// are never compiled together: the arm that declares the most counts (its known bytes),
/// and the unknown sizes of every arm are named.
pub fn static_shared<'d>(decls: impl IntoIterator<Item = &'d SharedDecl>) -> StaticShared {
    let mut s = StaticShared::default();
    // (the `#if`, its arm) → the arm's known bytes.
    let mut arms: Vec<((usize, usize), u64)> = Vec::new();
    for d in decls {
        match d.arm {
            Some(arm) if !d.is_extern => match d.static_bytes {
                Some(b) => match arms.iter_mut().find(|(a, _)| *a == arm) {
                    Some((_, sum)) => *sum = sum.saturating_add(b),
                    None => arms.push((arm, b)),
                },
                None => s.unknown.push(d.name.clone()),
            },
            _ => s.add(d),
        }
    }
    let mut ifs: Vec<usize> = arms.iter().map(|((i, _), _)| *i).collect();
    ifs.sort_unstable();
    ifs.dedup();
    for i in ifs {
        let most = arms
            .iter()
            .filter(|((j, _), _)| *j == i)
            .map(|(_, b)| *b)
            .max()
            .unwrap_or(0);
        s.bytes = s.bytes.saturating_add(most);
    }
    s
}
