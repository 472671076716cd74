//! One module per `ktui` subcommand, and what they share: output that ends quietly when
//! the reader closes the pipe (`ktui symbol __half | head -3`).
use std::io::{self, Write};

pub mod banks;
pub mod coalescing;
pub mod explain;
pub mod occupancy;
pub mod render;
pub mod search;
pub mod show;
pub mod symbol;
pub mod wiki;
pub mod wiki_args;

/// Writes `text` to standard output; a closed pipe comes back as an error that `main`
/// ends quietly on, instead of the panic `print!` gives.
pub fn write_out(text: &str) -> io::Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()
}

/// `print!` that returns a closed pipe as an error (use in functions returning
/// `anyhow::Result`).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::write_out(&format!($($arg)*))?
    };
}

/// `println!` that returns a closed pipe as an error.
macro_rules! outln {
    () => {
        $crate::cmd::write_out("\n")?
    };
    ($($arg:tt)*) => {
        $crate::cmd::write_out(&format!("{}\n", format_args!($($arg)*)))?
    };
}
pub(crate) use {out, outln};

/// Whether an error is a write to a pipe whose reader has gone.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// `FILE`, `FILE:LINE` or `FILE:LINE:COL` (1-based), read from the right so that paths
/// with colons keep them.
pub fn split_position(s: &str) -> (String, Option<usize>, Option<usize>) {
    let num = |p: &str| p.parse::<usize>().ok().filter(|v| *v > 0);
    let parts: Vec<&str> = s.rsplitn(3, ':').collect();
    match parts.as_slice() {
        [c, l, f] if num(c).is_some() && num(l).is_some() && !f.is_empty() => {
            (f.to_string(), num(l), num(c))
        }
        [l, rest @ ..] if num(l).is_some() && !rest.is_empty() => {
            let file: Vec<&str> = rest.iter().rev().copied().collect();
            (file.join(":"), num(l), None)
        }
        _ => (s.to_string(), None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_split_from_the_right() {
        assert_eq!(split_position("k.cu"), ("k.cu".into(), None, None));
        assert_eq!(split_position("k.cu:12"), ("k.cu".into(), Some(12), None));
        assert_eq!(
            split_position("a:b.cu:3:7"),
            ("a:b.cu".into(), Some(3), Some(7))
        );
    }
}
