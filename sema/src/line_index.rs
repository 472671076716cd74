//! Byte offsets ↔ (line, column), with columns counted in UTF-8 bytes, UTF-16 code units or
//! Unicode scalar values (UTF-32), as the language-server protocol's position encodings
//! count them.
//!
//! Built on the `line-index` crate (the one rust-analyzer publishes), which keeps, per line,
//! where its non-ASCII characters are, so a conversion on an ASCII line costs a binary
//! search and nothing more. Every front end converts through this one type.
//!
//! ```
//! use kernaut_sema::{LineCol, LineIndex, PositionEncoding};
//!
//! let text = "// é😀\nint x;";
//! let lines = LineIndex::new(text);
//! let x = text.find('x').unwrap();
//! assert_eq!(lines.line_col(x, PositionEncoding::Utf16), LineCol { line: 1, col: 4 });
//! let end = text.find('\n').unwrap();
//! // "// " is 3 units, 'é' is 1 UTF-16 unit, '😀' is a surrogate pair of 2.
//! assert_eq!(lines.line_col(end, PositionEncoding::Utf16), LineCol { line: 0, col: 6 });
//! assert_eq!(lines.line_col(end, PositionEncoding::Utf8), LineCol { line: 0, col: 9 });
//! assert_eq!(lines.line_col(end, PositionEncoding::Utf32), LineCol { line: 0, col: 5 });
//! assert_eq!(lines.offset(LineCol { line: 0, col: 6 }, PositionEncoding::Utf16), end);
//! ```

use line_index::{TextSize, WideEncoding, WideLineCol};

/// How the columns of a position are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the protocol's default; an emoji counts 2).
    #[default]
    Utf16,
    /// Unicode scalar values.
    Utf32,
}

/// A zero-based line and column, the column counted in some [`PositionEncoding`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based column, in the encoding's units.
    pub col: u32,
}

/// The line starts of one text and where its lines hold non-ASCII characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    inner: line_index::LineIndex,
    /// The byte length of the text.
    len: usize,
    /// Whether the text ends with a newline (its last line is then empty).
    lines: u32,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> LineIndex {
        // `line-index` counts in u32: a text of 4 GiB or more is indexed up to that point.
        let text = &text[..floor_char_boundary(text, u32::MAX as usize - 1)];
        let inner = line_index::LineIndex::new(text);
        let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u32 + 1;
        LineIndex {
            inner,
            len: text.len(),
            lines,
        }
    }

    /// The byte length of the indexed text.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the indexed text is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of lines (a text ending with a newline has an empty last line).
    pub fn line_count(&self) -> u32 {
        self.lines
    }

    /// The zero-based line of a byte offset (offsets past the end are on the last line).
    pub fn line(&self, offset: usize) -> u32 {
        self.utf8_line_col(offset).line
    }

    /// The byte offset where a zero-based line starts (past the last line: the end).
    pub fn line_start(&self, line: u32) -> usize {
        self.inner
            .line(line)
            .map_or(self.len, |r| usize::from(r.start()))
    }

    /// The byte offset where a zero-based line ends, before its newline.
    pub fn line_end(&self, line: u32) -> usize {
        match self.inner.line(line) {
            Some(r) => {
                let end = usize::from(r.end());
                if line + 1 < self.lines {
                    end.saturating_sub(1)
                } else {
                    end
                }
            }
            None => self.len,
        }
    }

    /// The line and column of a byte offset. An offset past the end is taken as the end,
    /// and one inside a multi-byte character as that character's start.
    pub fn line_col(&self, offset: usize, encoding: PositionEncoding) -> LineCol {
        let utf8 = self.utf8_line_col(offset);
        let Some(enc) = wide(encoding) else {
            return utf8;
        };
        let lc = line_index::LineCol {
            line: utf8.line,
            col: utf8.col,
        };
        match self.inner.to_wide(enc, lc) {
            Some(w) => LineCol {
                line: w.line,
                col: w.col,
            },
            None => utf8,
        }
    }

    /// The byte offset of a line and column. As the protocol asks, a column past the end
    /// of its line means the line's end, and a line past the last means the text's end.
    pub fn offset(&self, pos: LineCol, encoding: PositionEncoding) -> usize {
        if pos.line >= self.lines {
            return self.len;
        }
        let start = self.line_start(pos.line);
        let end = self.line_end(pos.line);
        let col = match wide(encoding) {
            None => pos.col,
            Some(enc) => {
                let w = WideLineCol {
                    line: pos.line,
                    col: pos.col,
                };
                match self.inner.to_utf8(enc, w) {
                    Some(lc) => lc.col,
                    None => return end,
                }
            }
        };
        let offset = start.saturating_add(col as usize).min(end);
        // A UTF-8 column inside a character: back to the character's start.
        let mut o = offset;
        while o > start {
            let lc = line_index::LineCol {
                line: pos.line,
                col: (o - start) as u32,
            };
            if self.inner.offset(lc).is_some()
                && self.inner.try_line_col(TextSize::from(o as u32)).is_some()
            {
                break;
            }
            o -= 1;
        }
        o
    }

    fn utf8_line_col(&self, offset: usize) -> LineCol {
        let mut o = offset.min(self.len);
        loop {
            if let Some(lc) = self.inner.try_line_col(TextSize::from(o as u32)) {
                return LineCol {
                    line: lc.line,
                    col: lc.col,
                };
            }
            if o == 0 {
                return LineCol::default();
            }
            o -= 1;
        }
    }
}

fn wide(encoding: PositionEncoding) -> Option<WideEncoding> {
    match encoding {
        PositionEncoding::Utf8 => None,
        PositionEncoding::Utf16 => Some(WideEncoding::Utf16),
        PositionEncoding::Utf32 => Some(WideEncoding::Utf32),
    }
}

/// The largest char boundary of `text` at or before `i` (the text's length past its end).
pub fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::{Utf16, Utf32, Utf8};

    /// Every char boundary of `text` goes to a position and back, in every encoding,
    /// and the columns agree with counting the line's prefix by hand.
    fn round_trips(text: &str) {
        let lines = LineIndex::new(text);
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let prefix = &text[line_start..offset];
            let line = text[..offset].matches('\n').count() as u32;
            for (enc, col) in [
                (Utf8, prefix.len()),
                (Utf16, prefix.encode_utf16().count()),
                (Utf32, prefix.chars().count()),
            ] {
                let lc = lines.line_col(offset, enc);
                assert_eq!(
                    lc,
                    LineCol {
                        line,
                        col: col as u32
                    },
                    "{offset} {enc:?} in {text:?}"
                );
                assert_eq!(lines.offset(lc, enc), offset, "{lc:?} {enc:?} in {text:?}");
            }
        }
    }

    #[test]
    fn accented_letters_cjk_and_emoji_in_comments_and_strings() {
        round_trips("// café: naïve résumé\n__global__ void k() {}\n");
        round_trips("const char* s = \"行列の転置\"; // 共有メモリ\nint x;");
        round_trips("// 🚀 fast path 😀😀\nprintf(\"done 👍 %d\\n\", x);\n\n");
        round_trips("");
        round_trips("\n\n");
        round_trips("a\r\nb");
    }

    #[test]
    fn columns_past_the_line_end_clamp_to_it() {
        let text = "ab😀\ncd";
        let lines = LineIndex::new(text);
        assert_eq!(lines.offset(LineCol { line: 0, col: 99 }, Utf16), 6);
        assert_eq!(lines.offset(LineCol { line: 7, col: 0 }, Utf16), text.len());
        // The middle of a surrogate pair goes to the emoji's start.
        assert_eq!(lines.offset(LineCol { line: 0, col: 3 }, Utf16), 2);
        // The middle of a UTF-8 sequence too.
        assert_eq!(lines.offset(LineCol { line: 0, col: 4 }, Utf8), 2);
        // An offset inside a character is reported at its start.
        assert_eq!(lines.line_col(3, Utf16), LineCol { line: 0, col: 2 });
        assert_eq!(lines.line_col(99, Utf8), LineCol { line: 1, col: 2 });
    }
}
