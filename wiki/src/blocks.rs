//! Fenced code blocks of a page body, with the words of their info string.
//!
//! A ```` ```cuda ```` block of the built-in wiki is compiled by a test with the real
//! toolkit (`compiler/tests/wiki_blocks.rs`). Words after `cuda` on the fence line say how:
//! see [`CUDA_MARKERS`] and `docs/WIKI_FORMAT.md` ("Code blocks").

/// One fenced code block of a page body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeBlock {
    /// The first word of the info string (`cuda`, `bash`, …); empty for a bare fence.
    pub lang: String,
    /// The other words of the info string (`fragment`, `sm_90a`, …).
    pub markers: Vec<String>,
    /// The block's text, with the fence's indentation removed, ending in a newline
    /// unless the block is empty.
    pub text: String,
    /// 1-based line in the page file of the fence that opens the block.
    pub line: u32,
}

impl CodeBlock {
    /// Whether the info string carries `marker`.
    pub fn has(&self, marker: &str) -> bool {
        self.markers.iter().any(|m| m == marker)
    }

    /// The architecture marker (`sm_90a`), if any.
    pub fn arch(&self) -> Option<&str> {
        self.markers
            .iter()
            .map(String::as_str)
            .find(|m| is_arch_marker(m))
    }
}

/// The words a ```` ```cuda ```` fence may carry after `cuda`, besides an architecture
/// (`sm_80`, `sm_90a`, `sm_100f`, see [`is_arch_marker`]):
///
/// - `fragment`: an excerpt that does not compile on its own (statements without their
///   declarations); not compiled.
/// - `deliberately-wrong`: code that shows a mistake the compiler rejects; it must fail to
///   compile, and the page must quote one of the errors nvcc reports for it.
/// - `rdc`: compiled with relocatable device code (`-rdc=true`), for device-side launches.
pub const CUDA_MARKERS: &[&str] = &["fragment", "deliberately-wrong", "rdc"];

/// Whether `word` names a target architecture: `sm_` followed by two or three digits and
/// an optional `a` or `f` suffix.
pub fn is_arch_marker(word: &str) -> bool {
    let Some(rest) = word.strip_prefix("sm_") else {
        return false;
    };
    let digits = rest.strip_suffix(['a', 'f']).unwrap_or(rest);
    (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The fenced code blocks of `body`, whose first line is line `first_line` of the file.
/// Fences of three or more backticks or tildes are recognised, indented by up to the
/// indentation of a list item; a block ends at a fence of the same character that is at
/// least as long. An unclosed block runs to the end of the body.
pub fn code_blocks(body: &str, first_line: u32) -> Vec<CodeBlock> {
    let mut out = Vec::new();
    let mut open: Option<(char, usize, usize, CodeBlock)> = None;
    for (i, line) in body.lines().enumerate() {
        let line_no = first_line + i as u32;
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
        match &mut open {
            Some((c, len, _, _))
                if Some(*c) == fence_char && run >= *len && trimmed[run..].trim().is_empty() =>
            {
                let (_, _, _, block) = open.take().expect("open block");
                out.push(block);
            }
            Some((_, _, ind, block)) => {
                let strip = line
                    .char_indices()
                    .take_while(|(n, ch)| *n < *ind && ch.is_whitespace())
                    .count();
                block.text.push_str(&line[strip..]);
                block.text.push('\n');
            }
            None if run >= 3 => {
                let mut words = trimmed[run..].split_whitespace().map(str::to_string);
                let lang = words.next().unwrap_or_default();
                let block = CodeBlock {
                    lang,
                    markers: words.collect(),
                    text: String::new(),
                    line: line_no,
                };
                open = Some((fence_char.expect("fence"), run, indent, block));
            }
            None => {}
        }
    }
    if let Some((_, _, _, block)) = open {
        out.push(block);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_with_markers_lines_and_indentation() {
        let body = "text\n```cuda fragment\nx = 1;\n```\n\n1. item\n   ```cuda sm_90a\n   __global__ void k() {}\n   ```\n~~~\nplain\n~~~\n";
        let blocks = code_blocks(body, 10);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0].lang, "cuda");
        assert!(blocks[0].has("fragment"));
        assert_eq!(blocks[0].text, "x = 1;\n");
        assert_eq!(blocks[0].line, 11);
        assert_eq!(blocks[1].arch(), Some("sm_90a"));
        assert_eq!(blocks[1].text, "__global__ void k() {}\n");
        assert_eq!(blocks[1].line, 16);
        assert_eq!(blocks[2].lang, "");
        assert_eq!(blocks[2].text, "plain\n");
    }

    #[test]
    fn arch_markers() {
        for ok in ["sm_75", "sm_90a", "sm_100f", "sm_120a"] {
            assert!(is_arch_marker(ok), "{ok}");
        }
        for bad in ["sm90", "sm_9", "sm_90x", "compute_90", "sm_1000"] {
            assert!(!is_arch_marker(bad), "{bad}");
        }
    }
}
