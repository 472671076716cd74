//! How the text subcommands (`ktui explain`, `ktui search`) print Markdown: rendered as
//! the interactive UI renders it (the same [`markdown::render`]), with ANSI styles on a
//! terminal and as plain text into a pipe. `--color=always|never|auto` chooses, as
//! ripgrep's flag does; `auto` styles only a terminal, and not with `NO_COLOR` set.
use std::io::IsTerminal;

use kernaut_tui::app::markdown;
use kernaut_tui::app::theme::{Role, Theme};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// When to style the output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never: plain text.
    Never,
}

impl ColorChoice {
    /// Whether to print ANSI styles.
    pub fn styled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// The width to wrap styled output at: the terminal's, else `$COLUMNS`, else 100.
fn terminal_width() -> u16 {
    if std::io::stdout().is_terminal() {
        if let Ok((w, _)) = crossterm::terminal::size() {
            if w >= 20 {
                return w;
            }
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(100)
}

/// `md` as printed: styled and wrapped to the terminal, or plain text with one paragraph
/// a line (no Markdown syntax, no escape codes) for `grep` and scripts.
pub fn markdown(md: &str, styled: bool) -> String {
    if styled {
        let r = markdown::render(md, terminal_width(), &Theme { color: true }, &|_| false);
        lines_to_ansi(&r.lines)
    } else {
        // Wide enough that no paragraph wraps.
        let r = markdown::render(md, 10_000, &Theme { color: false }, &|_| false);
        lines_to_plain(&r.lines)
    }
}

/// Lines as text, trailing blanks trimmed, at most one empty line in a row.
pub fn lines_to_plain(lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    let mut blank = true;
    for l in lines {
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        let text = text.trim_end();
        if text.is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        out.push_str(text);
        out.push('\n');
        blank = false;
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// Lines with their styles as ANSI escape codes.
pub fn lines_to_ansi(lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    let mut blank = true;
    for l in lines {
        let plain: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        if plain.trim().is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        let mut text = String::new();
        for s in &l.spans {
            text.push_str(&styled(&s.content, l.style.patch(s.style)));
        }
        out.push_str(text.trim_end());
        out.push('\n');
        blank = false;
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// `text` in `style` (nothing added for the default style).
pub fn styled(text: &str, style: Style) -> String {
    let mut codes: Vec<String> = Vec::new();
    let m = style.add_modifier;
    for (flag, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::REVERSED, "7"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if m.contains(flag) {
            codes.push(code.to_string());
        }
    }
    if let Some(c) = style.fg.and_then(|c| color_code(c, 30)) {
        codes.push(c);
    }
    if let Some(c) = style.bg.and_then(|c| color_code(c, 40)) {
        codes.push(c);
    }
    if codes.is_empty() || text.is_empty() {
        return text.to_string();
    }
    format!("\u{1b}[{}m{text}\u{1b}[0m", codes.join(";"))
}

/// The SGR parameter of a colour; `base` is 30 for the foreground, 40 for the background.
fn color_code(c: Color, base: u8) -> Option<String> {
    let bright = base + 60;
    Some(match c {
        Color::Reset => return None,
        Color::Black => base.to_string(),
        Color::Red => (base + 1).to_string(),
        Color::Green => (base + 2).to_string(),
        Color::Yellow => (base + 3).to_string(),
        Color::Blue => (base + 4).to_string(),
        Color::Magenta => (base + 5).to_string(),
        Color::Cyan => (base + 6).to_string(),
        Color::Gray => (base + 7).to_string(),
        Color::DarkGray => bright.to_string(),
        Color::LightRed => (bright + 1).to_string(),
        Color::LightGreen => (bright + 2).to_string(),
        Color::LightYellow => (bright + 3).to_string(),
        Color::LightBlue => (bright + 4).to_string(),
        Color::LightMagenta => (bright + 5).to_string(),
        Color::LightCyan => (bright + 6).to_string(),
        Color::White => (bright + 7).to_string(),
        Color::Indexed(i) => format!("{};5;{i}", base + 8),
        Color::Rgb(r, g, b) => format!("{};2;{r};{g};{b}", base + 8),
    })
}

/// A search snippet, whose matched words the index marks `**word**` (the page's own bold
/// is taken out of snippets, so `**` means a match and nothing else): on a terminal the
/// matches in the UI's match style and inline code in its code style, without the
/// backticks; plain, the text without the marks.
pub fn snippet(snippet: &str, styled_out: bool) -> String {
    let flat = snippet.replace(['\n', '\r'], " ");
    let theme = Theme { color: true };
    let mut out = String::with_capacity(flat.len());
    for (i, part) in flat.split("**").enumerate() {
        let matched = i % 2 == 1;
        if !styled_out {
            out.push_str(part);
            continue;
        }
        if matched {
            out.push_str(&styled(part, theme.s(Role::Match)));
            continue;
        }
        // Inline code outside matches: `x` in the code style (an unpaired backtick, cut
        // by the snippet's edge, stays as written).
        let pieces: Vec<&str> = part.split('`').collect();
        for (j, p) in pieces.iter().enumerate() {
            let code = j % 2 == 1 && j + 1 < pieces.len();
            if code {
                out.push_str(&styled(p, theme.s(Role::Code)));
            } else {
                if j % 2 == 1 {
                    out.push('`');
                }
                out.push_str(&styled(p, theme.s(Role::Dim)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_markdown_has_no_syntax_and_no_escapes() {
        let md = "# `__hfma2`\n\nRequires **sm_53**; see `pitfall-x`.\n\n- one\n- two\n";
        let plain = markdown(md, false);
        assert_eq!(
            plain,
            "█ __hfma2\n\nRequires sm_53; see pitfall-x.\n\n• one\n• two\n"
        );
        let styled_text = markdown(md, true);
        assert!(styled_text.contains("\u{1b}["), "{styled_text:?}");
        assert!(styled_text.contains("__hfma2"), "{styled_text:?}");
        assert!(!styled_text.contains("**"), "{styled_text:?}");
    }

    #[test]
    fn snippets_mark_matches_in_the_match_style_and_code_in_the_code_style() {
        let s = "the **gizmo** stalls on `__syncthreads()` and **never** arms";
        assert_eq!(
            snippet(s, false),
            "the gizmo stalls on `__syncthreads()` and never arms"
        );
        let t = snippet(s, true);
        assert_eq!(
            t,
            "\u{1b}[90mthe \u{1b}[0m\u{1b}[1;93mgizmo\u{1b}[0m\u{1b}[90m stalls on \u{1b}[0m\
             \u{1b}[92m__syncthreads()\u{1b}[0m\u{1b}[90m and \u{1b}[0m\u{1b}[1;93mnever\u{1b}[0m\
             \u{1b}[90m arms\u{1b}[0m"
        );
    }
}
