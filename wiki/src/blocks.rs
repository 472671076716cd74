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
    /// The block's text as written, hidden lines included (see [`HIDDEN_PREFIX`]), with
    /// the fence's indentation removed, ending in a newline unless the block is empty.
    pub text: String,
    /// 1-based line in the page file of the fence that opens the block.
    pub line: u32,
}

impl CodeBlock {
    /// Whether the info string carries `marker`.
    pub fn has(&self, marker: &str) -> bool {
        self.markers.iter().any(|m| m == marker)
    }

    /// The text a reader sees: the hidden lines left out.
    pub fn shown(&self) -> String {
        self.text
            .lines()
            .filter(|l| !is_hidden_line(l))
            .flat_map(|l| [l, "\n"])
            .collect()
    }

    /// The text the compile test compiles: every line, hidden ones without their
    /// [`HIDDEN_PREFIX`] (and the one space after it).
    pub fn source(&self) -> String {
        self.text
            .lines()
            .map(unhide)
            .flat_map(|l| [l, "\n".into()])
            .collect()
    }

    /// The architecture marker (`sm_90a`), if any.
    pub fn arch(&self) -> Option<&str> {
        self.markers
            .iter()
            .map(String::as_str)
            .find(|m| is_arch_marker(m))
    }
}

/// The prefix of a hidden line of a ```` ```cuda ```` block, as rustdoc's `# `: context
/// (declarations, the kernel around a few statements, a closing brace) that the compile
/// test needs but readers do not. `#~ int n;` is compiled as `int n;` (the prefix and one
/// space after it go); a bare `#~` is an empty line. Indentation before the prefix is kept. Hidden lines are removed from
/// [`Page::body`](crate::Page::body) and every section when a page is parsed, so no
/// renderer ever shows them; [`Page::code_blocks`](crate::Page::code_blocks) gives them
/// back. Only ```` ```cuda ```` blocks have hidden lines.
pub const HIDDEN_PREFIX: &str = "#~";

/// Whether `line` (of a cuda block) is hidden: it starts with `#~` after any indentation
/// (`#~` is never valid C++ or a preprocessor directive).
pub fn is_hidden_line(line: &str) -> bool {
    line.trim_start().starts_with(HIDDEN_PREFIX)
}

/// A hidden line without its prefix; other lines as they are.
fn unhide(line: &str) -> std::borrow::Cow<'_, str> {
    if !is_hidden_line(line) {
        return line.into();
    }
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent + HIDDEN_PREFIX.len()..];
    format!(
        "{}{}",
        &line[..indent],
        rest.strip_prefix(' ').unwrap_or(rest)
    )
    .into()
}

/// Removes the hidden lines of the cuda blocks of `markdown`. Returns the visible text and
/// the removed lines as (0-based line index in `markdown`, the line as written).
pub fn split_hidden(markdown: &str) -> (String, Vec<(usize, String)>) {
    if !markdown.contains(HIDDEN_PREFIX) {
        return (markdown.to_string(), Vec::new());
    }
    let mut shown = String::with_capacity(markdown.len());
    let mut hidden = Vec::new();
    let mut fence = Fence::default();
    for (i, raw) in markdown.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        if fence.step(line) == Step::Content && fence.cuda && is_hidden_line(line) {
            hidden.push((i, line.to_string()));
        } else {
            shown.push_str(raw);
        }
    }
    (shown, hidden)
}

/// `markdown` without the hidden lines of its cuda blocks.
pub fn strip_hidden(markdown: &str) -> String {
    split_hidden(markdown).0
}

/// Where a line stands with respect to fenced code blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Outside,
    Open,
    Content,
    Close,
}

/// The fence state while walking a body line by line (see [`code_blocks`]).
#[derive(Default)]
struct Fence {
    /// The open fence's character, length and indentation.
    open: Option<(char, usize, usize)>,
    /// Whether the open block is a ```` ```cuda ```` block.
    cuda: bool,
}

impl Fence {
    fn step(&mut self, line: &str) -> Step {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
        match self.open {
            Some((c, len, _))
                if Some(c) == fence_char && run >= len && trimmed[run..].trim().is_empty() =>
            {
                self.open = None;
                Step::Close
            }
            Some(_) => Step::Content,
            None if run >= 3 => {
                self.open = Some((fence_char.expect("fence"), run, indent));
                self.cuda = trimmed[run..].split_whitespace().next() == Some("cuda");
                Step::Open
            }
            None => Step::Outside,
        }
    }
}

/// The words a ```` ```cuda ```` fence may carry after `cuda`, besides an architecture
/// (`sm_80`, `sm_90a`, `sm_100f`, see [`is_arch_marker`]):
///
/// - `fragment`: an excerpt that is not compiled (a warning on checked pages: hidden lines,
///   [`HIDDEN_PREFIX`], give an excerpt the context it needs instead).
/// - `deliberately-wrong`: code that shows a mistake the compiler rejects; it must fail to
///   compile, and the page must quote one of the errors nvcc reports for it.
/// - `rdc`: the example needs relocatable device code (`-rdc=true`), for device-side
///   launches; it decides how a deliberately wrong block is compiled.
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
    let mut fence = Fence::default();
    let mut open: Option<CodeBlock> = None;
    for (i, line) in body.lines().enumerate() {
        match fence.step(line) {
            Step::Open => {
                let trimmed = line.trim_start().trim_start_matches(['`', '~']);
                let mut words = trimmed.split_whitespace().map(str::to_string);
                open = Some(CodeBlock {
                    lang: words.next().unwrap_or_default(),
                    markers: words.collect(),
                    text: String::new(),
                    line: first_line + i as u32,
                });
            }
            Step::Content => {
                let ind = fence.open.map_or(0, |(_, _, ind)| ind);
                let strip = line
                    .char_indices()
                    .take_while(|(n, ch)| *n < ind && ch.is_whitespace())
                    .count();
                if let Some(block) = &mut open {
                    block.text.push_str(&line[strip..]);
                    block.text.push('\n');
                }
            }
            Step::Close => out.extend(open.take()),
            Step::Outside => {}
        }
    }
    out.extend(open);
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
    fn hidden_lines_are_shown_to_the_compiler_only() {
        let body = "```cuda\n#~ __global__ void k(float* x) {\n    x[0] = 1.f;\n    #~ x[1] = 2.f;\n#~\n#~}\n```\n```bash\n#~ not hidden\n```\n#~ prose\n";
        let (shown, hidden) = split_hidden(body);
        assert_eq!(
            shown,
            "```cuda\n    x[0] = 1.f;\n```\n```bash\n#~ not hidden\n```\n#~ prose\n"
        );
        assert_eq!(
            hidden.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            vec![1, 3, 4, 5]
        );
        let blocks = code_blocks(body, 1);
        assert_eq!(blocks[0].shown(), "    x[0] = 1.f;\n");
        assert_eq!(
            blocks[0].source(),
            "__global__ void k(float* x) {\n    x[0] = 1.f;\n    x[1] = 2.f;\n\n}\n"
        );
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
