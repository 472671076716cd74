//! One way for every front end to turn a file's bytes into text.
//!
//! CUDA sources are UTF-8 nearly always; a file in another encoding (Latin-1 comments are
//! the usual case) is decoded lossily, each invalid byte becoming U+FFFD, and the caller
//! gets a note to show the user. Nothing is refused: the rules and hovers work on the
//! rest of the file.
//!
//! ```
//! use kernaut_sema::source_text::decode;
//!
//! let d = decode(b"// caf\xe9\n__global__ void k() {}\n".to_vec());
//! assert!(d.text.contains("__global__ void k()"));
//! assert_eq!(d.invalid_bytes, 1);
//! assert!(d.note("k.cu").unwrap().contains("not valid UTF-8"));
//! ```

/// A file's text and how it was decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text (with U+FFFD where a byte was not UTF-8).
    pub text: String,
    /// How many bytes were not valid UTF-8 (0 for a UTF-8 file).
    pub invalid_bytes: usize,
}

impl Decoded {
    /// A one-line note for the user when the file was not UTF-8.
    pub fn note(&self, path: &str) -> Option<String> {
        (self.invalid_bytes > 0).then(|| {
            format!(
                "{path}: not valid UTF-8 ({} byte{} replaced by U+FFFD); columns on those lines may be off by a few characters. Save the file as UTF-8 to silence this note",
                self.invalid_bytes,
                if self.invalid_bytes == 1 { "" } else { "s" }
            )
        })
    }
}

/// Whether a file is binary rather than text in some encoding: a NUL byte in its first
/// 8 KiB, as git and grep decide (no C source holds one). Front ends skip such files.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// Decodes `bytes` as UTF-8, lossily where they are not (a leading byte-order mark is
/// dropped).
pub fn decode(bytes: Vec<u8>) -> Decoded {
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    match String::from_utf8(bytes) {
        Ok(text) => Decoded {
            text,
            invalid_bytes: 0,
        },
        Err(e) => {
            let bytes = e.into_bytes();
            let mut invalid = 0;
            for chunk in bytes.utf8_chunks() {
                invalid += chunk.invalid().len();
            }
            Decoded {
                text: String::from_utf8_lossy(&bytes).into_owned(),
                invalid_bytes: invalid,
            }
        }
    }
}

/// The largest text the analysis takes: 8 MiB, twice a generated 100,000-line file. The
/// syntax trees and facts of a file take tens of times its text, so a larger file (a
/// generated table, a concatenated build) is left out rather than taking gigabytes.
pub const MAX_ANALYSED_BYTES: usize = 8 << 20;

/// The note for a file too large to analyse (see [`MAX_ANALYSED_BYTES`]); `None` when it
/// is not.
///
/// ```
/// use kernaut_sema::source_text::too_large_note;
///
/// assert!(too_large_note("k.cu", 1000).is_none());
/// assert_eq!(
///     too_large_note("big.cu", 50_000_000).unwrap(),
///     "big.cu: 50.0 MB is over the 8 MB kernaut analyses; no hovers or diagnostics for this file"
/// );
/// ```
pub fn too_large_note(path: &str, len: usize) -> Option<String> {
    (len > MAX_ANALYSED_BYTES).then(|| {
        format!(
            "{path}: {:.1} MB is over the {} MB kernaut analyses; no hovers or diagnostics for this file",
            len as f64 / 1e6,
            MAX_ANALYSED_BYTES >> 20
        )
    })
}
