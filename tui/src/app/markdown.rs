//! Markdown (pulldown-cmark events) to wrapped, styled terminal lines: headings, lists,
//! tables, bold, inline code, code blocks with CUDA colouring. Inline code and links that
//! name a wiki page become links the page screen can follow.
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::highlight;
use super::theme::{Role, Theme};

/// A link's place on screen: line, columns, and the wiki target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpot {
    /// Which link of the page (a link wrapped over two lines has two spots).
    pub id: usize,
    /// Rendered line.
    pub line: usize,
    /// First column.
    pub start: u16,
    /// Column after the last.
    pub end: u16,
    /// `id#anchor`.
    pub target: String,
}

/// A rendered document.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// The lines.
    pub lines: Vec<Line<'static>>,
    /// Where the links are.
    pub links: Vec<LinkSpot>,
    /// Headings: (rendered line, text).
    pub headings: Vec<(usize, String)>,
}

impl Rendered {
    /// How many links (not spots) there are.
    pub fn link_count(&self) -> usize {
        self.links.last().map_or(0, |l| l.id + 1)
    }
}

#[derive(Clone, Debug)]
struct Seg {
    text: String,
    style: Style,
    link: Option<usize>,
}

struct Writer<'a> {
    width: usize,
    theme: &'a Theme,
    is_link: &'a dyn Fn(&str) -> bool,
    out: Rendered,
    segs: Vec<Seg>,
    targets: Vec<String>,
    strong: usize,
    emph: usize,
    heading: Option<HeadingLevel>,
    link: Option<usize>,
    lists: Vec<Option<u64>>,
    marker: Option<String>,
    quote: usize,
    code: Option<String>,
    table: Option<Vec<Vec<String>>>,
    cell: Option<String>,
}

impl Writer<'_> {
    fn style(&self) -> Style {
        let mut s = if self.heading.is_some() {
            self.theme.s(Role::Heading)
        } else {
            self.theme.s(Role::Text)
        };
        if self.strong > 0 {
            s = s.patch(self.theme.s(Role::Strong));
        }
        if self.emph > 0 {
            s = s.add_modifier(Modifier::ITALIC);
        }
        if self.link.is_some() {
            s = s.patch(self.theme.s(Role::Link));
        }
        s
    }

    fn indent(&self) -> String {
        let mut s = "│ ".repeat(self.quote);
        s.push_str(&"  ".repeat(self.lists.len().saturating_sub(1)));
        s
    }

    fn blank(&mut self) {
        if self
            .out
            .lines
            .last()
            .is_some_and(|l| !l.spans.is_empty() || l.width() > 0)
        {
            self.out.lines.push(Line::default());
        }
    }

    fn push_text(&mut self, text: &str, style: Style, link: Option<usize>) {
        if let Some(cell) = &mut self.cell {
            cell.push_str(text);
            return;
        }
        self.segs.push(Seg {
            text: text.to_string(),
            style,
            link,
        });
    }

    /// Wraps the pending segments into lines.
    fn flush(&mut self) {
        if self.segs.is_empty() && self.marker.is_none() {
            return;
        }
        let indent = self.indent();
        let marker = self.marker.take().unwrap_or_default();
        let first = format!("{indent}{marker}");
        let cont = format!("{indent}{}", " ".repeat(marker.width()));
        let segs = std::mem::take(&mut self.segs);
        // Split into words and spaces, keeping each piece's style and link.
        let mut tokens: Vec<Seg> = Vec::new();
        for s in segs {
            let mut word = String::new();
            for ch in s.text.chars() {
                let ch = if ch == '\n' { ' ' } else { ch };
                if ch == ' ' {
                    if !word.is_empty() {
                        tokens.push(Seg {
                            text: std::mem::take(&mut word),
                            ..s.clone()
                        });
                    }
                    tokens.push(Seg {
                        text: " ".into(),
                        style: Style::default(),
                        link: None,
                    });
                } else {
                    word.push(ch);
                }
            }
            if !word.is_empty() {
                tokens.push(Seg {
                    text: word,
                    ..s.clone()
                });
            }
        }
        let dim = self.theme.s(Role::Dim);
        let mut line: Vec<Span<'static>> = vec![Span::styled(first.clone(), dim)];
        let mut col = first.width();
        let mut has_word = false;
        let width = self.width.max(cont.width() + 8);
        // The width of each run of pieces with no space between them (a word whose
        // parts are styled differently, such as `(` before inline code): a line breaks
        // only before a whole run.
        let mut run = vec![0usize; tokens.len()];
        let mut acc = 0;
        for (i, t) in tokens.iter().enumerate().rev() {
            acc = if t.text == " " {
                0
            } else {
                acc + t.text.width()
            };
            run[i] = acc;
        }
        let mut glued = false;
        for (i, t) in tokens.into_iter().enumerate() {
            if t.text == " " {
                glued = false;
                if has_word && col < width {
                    line.push(Span::raw(" "));
                    col += 1;
                }
                continue;
            }
            let starts_run = !glued;
            glued = true;
            if has_word && starts_run && col + run[i] > width {
                // Drop a trailing space before breaking.
                if line.last().is_some_and(|s| s.content == " ") {
                    line.pop();
                }
                self.out.lines.push(Line::from(std::mem::take(&mut line)));
                line.push(Span::styled(cont.clone(), dim));
                col = cont.width();
            }
            let mut text = t.text;
            // A word longer than the line is cut into pieces.
            while col + text.width() > width && text.chars().count() > 1 {
                let room = width.saturating_sub(col).max(1);
                let cut: String = text.chars().take(room).collect();
                let rest: String = text.chars().skip(room).collect();
                self.emit(&mut line, &mut col, cut, t.style, t.link);
                self.out.lines.push(Line::from(std::mem::take(&mut line)));
                line.push(Span::styled(cont.clone(), dim));
                col = cont.width();
                text = rest;
            }
            self.emit(&mut line, &mut col, text, t.style, t.link);
            has_word = true;
        }
        self.out.lines.push(Line::from(line));
    }

    fn emit(
        &mut self,
        line: &mut Vec<Span<'static>>,
        col: &mut usize,
        text: String,
        style: Style,
        link: Option<usize>,
    ) {
        let w = text.width();
        if let Some(id) = link {
            let spot = LinkSpot {
                id,
                line: self.out.lines.len(),
                start: *col as u16,
                end: (*col + w) as u16,
                target: self.targets[id].clone(),
            };
            match self.out.links.last_mut() {
                Some(l) if l.id == id && l.line == spot.line && l.end + 1 >= spot.start => {
                    l.end = spot.end
                }
                _ => self.out.links.push(spot),
            }
        }
        line.push(Span::styled(text, style));
        *col += w;
    }

    fn new_link(&mut self, target: &str) -> usize {
        self.targets.push(target.to_string());
        self.targets.len() - 1
    }

    /// A code block, coloured; a line wider than the page wraps, its continuation
    /// marked `┆` in the border (code is never cut off).
    fn code_block(&mut self, code: &str) {
        let indent = format!("{}  ", self.indent());
        let border = self.theme.s(Role::Dim);
        let room = self.width.saturating_sub(indent.width() + 1).max(10);
        let mut in_comment = false;
        for l in code.lines() {
            let spans = highlight::spans(l, in_comment, self.theme);
            in_comment = highlight::lex_line(l, in_comment).1;
            for (i, piece) in split_spans(spans, room).into_iter().enumerate() {
                let mut line = vec![
                    Span::styled(indent.clone(), border),
                    Span::styled(if i == 0 { "▏" } else { "┆" }, border),
                ];
                line.extend(piece);
                self.out.lines.push(Line::from(line));
            }
        }
        self.out.lines.push(Line::default());
    }

    fn table(&mut self, rows: Vec<Vec<String>>) {
        let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let mut widths = vec![0usize; cols];
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                widths[i] = widths[i].max(c.width());
            }
        }
        let indent = self.indent();
        let avail = self
            .width
            .saturating_sub(indent.width() + 3 * (cols - 1))
            .max(cols * 3);
        while widths.iter().sum::<usize>() > avail {
            let (i, _) = widths
                .iter()
                .enumerate()
                .max_by_key(|(_, w)| **w)
                .unwrap_or((0, &0));
            widths[i] -= 1;
        }
        let dim = self.theme.s(Role::Dim);
        for (ri, r) in rows.iter().enumerate() {
            let mut spans = vec![Span::raw(indent.clone())];
            for (i, w) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", dim));
                }
                let text = r.get(i).map(String::as_str).unwrap_or("");
                let cell = fit(text, *w);
                let style = if ri == 0 {
                    self.theme.s(Role::Strong)
                } else {
                    self.theme.s(Role::Text)
                };
                spans.push(Span::styled(cell, style));
            }
            self.out.lines.push(Line::from(spans));
            if ri == 0 {
                let sep: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.out.lines.push(Line::from(vec![
                    Span::raw(indent.clone()),
                    Span::styled(sep.join("─┼─"), dim),
                ]));
            }
        }
        self.out.lines.push(Line::default());
    }
}

/// Styled pieces cut into lines of at most `width` columns (at least one line).
fn split_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Vec<Span<'static>>> {
    let mut out: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut col = 0;
    for sp in spans {
        let mut text = String::new();
        for ch in sp.content.chars() {
            let w = UnicodeWidthStr::width(ch.encode_utf8(&mut [0; 4]) as &str);
            if col + w > width && col > 0 {
                if !text.is_empty() {
                    if let Some(l) = out.last_mut() {
                        l.push(Span::styled(std::mem::take(&mut text), sp.style));
                    }
                }
                out.push(Vec::new());
                col = 0;
            }
            text.push(ch);
            col += w;
        }
        if !text.is_empty() {
            if let Some(l) = out.last_mut() {
                l.push(Span::styled(text, sp.style));
            }
        }
    }
    out
}

/// `text` cut or padded to `w` columns.
pub fn fit(text: &str, w: usize) -> String {
    if text.width() <= w {
        return format!("{text}{}", " ".repeat(w - text.width()));
    }
    let mut out = String::new();
    for ch in text.chars() {
        if out.width() + 1 >= w {
            break;
        }
        out.push(ch);
    }
    out.push('…');
    format!("{out}{}", " ".repeat(w.saturating_sub(out.width())))
}

/// Renders `md` to lines of at most `width` columns (code blocks and tables excepted).
/// `is_link` says which inline code spans and link targets name wiki pages.
pub fn render(md: &str, width: u16, theme: &Theme, is_link: &dyn Fn(&str) -> bool) -> Rendered {
    let mut w = Writer {
        width: usize::from(width).max(20),
        theme,
        is_link,
        out: Rendered::default(),
        segs: Vec::new(),
        targets: Vec::new(),
        strong: 0,
        emph: 0,
        heading: None,
        link: None,
        lists: Vec::new(),
        marker: None,
        quote: 0,
        code: None,
        table: None,
        cell: None,
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(tag) => match tag {
                Tag::Heading { level, .. } => {
                    w.flush();
                    w.blank();
                    w.heading = Some(level);
                    let mark = match level {
                        HeadingLevel::H1 => "█ ",
                        HeadingLevel::H2 => "▌ ",
                        _ => "▸ ",
                    };
                    w.marker = Some(mark.to_string());
                }
                Tag::Paragraph => {}
                Tag::List(start) => {
                    w.flush();
                    if w.lists.is_empty() {
                        w.blank();
                    }
                    w.lists.push(start);
                }
                Tag::Item => {
                    w.flush();
                    let marker = match w.lists.last_mut() {
                        Some(Some(n)) => {
                            let m = format!("{n}. ");
                            *n += 1;
                            m
                        }
                        _ => "• ".to_string(),
                    };
                    w.marker = Some(marker);
                }
                Tag::CodeBlock(_) => {
                    w.flush();
                    w.code = Some(String::new());
                }
                Tag::Table(_) => {
                    w.flush();
                    w.table = Some(Vec::new());
                }
                Tag::TableHead | Tag::TableRow => {
                    if let Some(t) = &mut w.table {
                        t.push(Vec::new());
                    }
                }
                Tag::TableCell => w.cell = Some(String::new()),
                Tag::Strong => w.strong += 1,
                Tag::Emphasis => w.emph += 1,
                Tag::Link { dest_url, .. } => {
                    let dest = dest_url.trim_start_matches("./").trim_end_matches(".md");
                    let dest = dest.rsplit('/').next().unwrap_or(dest).to_string();
                    if (w.is_link)(&dest) {
                        w.link = Some(w.new_link(&dest));
                    }
                }
                Tag::BlockQuote(_) => {
                    w.flush();
                    w.quote += 1;
                }
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Heading(_) => {
                    let text: String = w.segs.iter().map(|s| s.text.as_str()).collect();
                    let at = w.out.lines.len();
                    w.flush();
                    w.out.headings.push((at, text));
                    w.heading = None;
                    w.out.lines.push(Line::default());
                }
                TagEnd::Paragraph => {
                    w.flush();
                    if w.lists.is_empty() {
                        w.out.lines.push(Line::default());
                    }
                }
                TagEnd::Item => w.flush(),
                TagEnd::List(_) => {
                    w.flush();
                    w.lists.pop();
                    if w.lists.is_empty() {
                        w.blank();
                    }
                }
                TagEnd::CodeBlock => {
                    if let Some(code) = w.code.take() {
                        w.code_block(&code);
                    }
                }
                TagEnd::TableCell => {
                    if let (Some(cell), Some(t)) = (w.cell.take(), &mut w.table) {
                        if let Some(r) = t.last_mut() {
                            r.push(cell.trim().to_string());
                        }
                    }
                }
                TagEnd::Table => {
                    if let Some(rows) = w.table.take() {
                        w.table(rows);
                    }
                }
                TagEnd::Strong => w.strong = w.strong.saturating_sub(1),
                TagEnd::Emphasis => w.emph = w.emph.saturating_sub(1),
                TagEnd::Link => w.link = None,
                TagEnd::BlockQuote(_) => {
                    w.flush();
                    w.quote = w.quote.saturating_sub(1);
                    w.blank();
                }
                _ => {}
            },
            Event::Text(t) => {
                if let Some(code) = &mut w.code {
                    code.push_str(&t);
                } else {
                    let (style, link) = (w.style(), w.link);
                    w.push_text(&t, style, link);
                }
            }
            Event::Code(t) => {
                if w.cell.is_some() {
                    w.push_text(&t, Style::default(), None);
                } else if w.link.is_none() && (w.is_link)(&t) {
                    let id = w.new_link(&t);
                    let style = w.theme.s(Role::Link);
                    w.push_text(&t, style, Some(id));
                } else {
                    let style = w.style().patch(w.theme.s(Role::Code));
                    let link = w.link;
                    w.push_text(&t, style, link);
                }
            }
            Event::SoftBreak => {
                let link = w.link;
                w.push_text(" ", Style::default(), link);
            }
            Event::HardBreak => w.flush(),
            Event::Rule => {
                w.flush();
                let rule = "─".repeat(w.width.min(60));
                w.out.lines.push(Line::styled(rule, theme.s(Role::Dim)));
                w.out.lines.push(Line::default());
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let (style, link) = (w.style(), w.link);
                w.push_text(&t, style, link);
            }
            _ => {}
        }
    }
    w.flush();
    while w.out.lines.last().is_some_and(|l| l.width() == 0) {
        w.out.lines.pop();
    }
    w.out
}

/// Heading text reduced for comparison with a section title.
pub fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '`' | '*' | '_'))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: &Rendered) -> Vec<String> {
        r.lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn lists_tables_and_links_render() {
        let md = "# Title\n\nSome **bold** and `code` see `pitfall-x#P1`.\n\n- one\n- two words that wrap around the narrow column\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```cuda\n__syncthreads();\n```\n";
        let theme = Theme { color: false };
        let r = render(md, 30, &theme, &|t| t.starts_with("pitfall-"));
        let t = text(&r);
        assert_eq!(t[0], "█ Title");
        assert!(t.iter().any(|l| l == "• one"), "{t:#?}");
        assert!(t.iter().any(|l| l == "  the narrow column"), "{t:#?}");
        assert!(t.iter().any(|l| l.contains("a │ b")), "{t:#?}");
        assert!(t.iter().any(|l| l.contains("▏__syncthreads();")), "{t:#?}");
        assert_eq!(r.links.len(), 1);
        assert_eq!(r.links[0].target, "pitfall-x#P1");
        let spot = &r.links[0];
        let line = &t[spot.line];
        let cols: String = line
            .chars()
            .skip(spot.start as usize)
            .take((spot.end - spot.start) as usize)
            .collect();
        assert_eq!(cols, "pitfall-x#P1");
        assert_eq!(r.headings[0], (0, "Title".to_string()));
    }
}
