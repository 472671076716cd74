//! The pure view: [`view`] draws a [`State`] and changes nothing. The layout helpers are
//! shared with `update`, which needs them to map mouse clicks to what was drawn there.
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Clear, Dataset, GraphType, Paragraph, Wrap};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use super::keys::{Scope, KEYMAP};
use super::markdown::{self, fit};
use super::model::{
    BankMap, BankPanel, DiffLine, IntervalsPanel, KernelPanel, Level, OccView, Panel, ReportPanel,
};
use super::theme::{Role, Theme};
use super::{
    highlight, BrowseState, FileState, Layout, PageState, Pane, Screen, SearchState, State,
};

/// Columns before the code: the line number (at least three digits), the diagnostic
/// mark, a space.
pub fn gutter(line_count: usize) -> u16 {
    let digits = line_count.max(1).to_string().len().max(3);
    digits as u16 + 2
}

fn main_area(size: (u16, u16)) -> Rect {
    Rect::new(0, 1, size.0, size.1.saturating_sub(2))
}

/// The navigator's two panes.
pub fn browse_areas(size: (u16, u16)) -> (Rect, Rect) {
    let m = main_area(size);
    let gw = 24.min(m.width / 3);
    (
        Rect::new(m.x, m.y, gw, m.height),
        Rect::new(m.x + gw, m.y, m.width - gw, m.height),
    )
}

/// Pages the navigator's list shows at once.
pub fn browse_rows(size: (u16, u16)) -> usize {
    usize::from(main_area(size).height.saturating_sub(2)).max(1)
}

/// Where a page's body is drawn.
pub fn page_body_area(size: (u16, u16)) -> Rect {
    let m = main_area(size);
    Rect::new(
        1,
        m.y + 2,
        m.width.saturating_sub(2),
        m.height.saturating_sub(2),
    )
}

/// The width pages are rendered for.
pub fn page_width(size: (u16, u16)) -> u16 {
    page_body_area(size).width.max(20)
}

/// Lines of a page shown at once.
pub fn page_height(size: (u16, u16)) -> usize {
    usize::from(page_body_area(size).height).max(1)
}

/// The side panel's width: 37 columns at least (a bank map's 32 banks, its lane
/// labels and the borders), at most 64, never more than half the screen.
fn panel_width(w: u16, layout: Layout) -> u16 {
    match layout {
        Layout::Split => (w * 2 / 5).clamp(37, 64).min(w / 2),
        Layout::Source => 0,
        Layout::Panel => w,
    }
}

/// Where the source is drawn.
pub fn source_area(size: (u16, u16), layout: Layout) -> Rect {
    let m = main_area(size);
    Rect::new(m.x, m.y, m.width - panel_width(m.width, layout), m.height)
}

fn panel_area(size: (u16, u16), layout: Layout) -> Rect {
    let m = main_area(size);
    let w = panel_width(m.width, layout);
    Rect::new(m.x + m.width - w, m.y, w, m.height)
}

/// Source lines shown at once.
pub fn file_height(size: (u16, u16)) -> usize {
    usize::from(main_area(size).height).max(1)
}

fn overlay_area(size: (u16, u16)) -> Rect {
    let (w, h) = size;
    Rect::new(
        2.min(w / 10),
        1,
        w.saturating_sub(2 * 2.min(w / 10)),
        h.saturating_sub(2),
    )
}

/// Where the search hits are listed (two rows each).
pub fn search_list_area(size: (u16, u16)) -> Rect {
    let o = overlay_area(size);
    Rect::new(
        o.x + 1,
        o.y + 3,
        o.width.saturating_sub(2),
        o.height.saturating_sub(4),
    )
}

/// Draws the state.
pub fn view(s: &State, f: &mut Frame) {
    let size = (f.area().width, f.area().height);
    if size.0 < 20 || size.1 < 6 {
        f.render_widget(Paragraph::new("ktui: the terminal is too small"), f.area());
        return;
    }
    let t = &s.theme;
    let (title, right) = match &s.screen {
        Screen::Browse(_) => ("wiki".to_string(), format!("{} pages", s.entries.len())),
        Screen::Page(p) => (format!("wiki › {}", p.doc.id), p.doc.kind.clone()),
        Screen::File(fs) => (
            if fs.modified() {
                format!("{} (modified: w writes, u undoes)", fs.ws.path())
            } else {
                fs.ws.path().to_string()
            },
            if fs.ws.diagnostics_pending() {
                format!("rules running… · {}", fs.ws.target_title())
            } else {
                fs.ws.target_title()
            },
        ),
    };
    draw_bar(
        f,
        Rect::new(0, 0, size.0, 1),
        &format!(" ktui · {title}"),
        &right,
        t.s(Role::Title),
        t,
    );
    match &s.screen {
        Screen::Browse(b) => draw_browse(f, s, b, size),
        Screen::Page(p) => draw_page(f, p, size, t),
        Screen::File(fs) => draw_file(f, fs, size, t),
    }
    let hints = if let Screen::Page(PageState { jump: Some(j), .. }) = &s.screen {
        format!("jump to anchor: #{j}▏ (Enter jumps, Esc cancels)")
    } else if !s.message.is_empty() {
        s.message.clone()
    } else {
        hints(s, usize::from(size.0).saturating_sub(12))
    };
    let pos = match &s.screen {
        Screen::Page(p) => format!(
            "{}/{}",
            (p.scroll + 1).min(p.rendered.lines.len()),
            p.rendered.lines.len()
        ),
        Screen::File(fs) => format!("{}:{}", fs.line + 1, fs.col + 1),
        Screen::Browse(b) => format!("{}/{}", (b.selected + 1).min(b.list.len()), b.list.len()),
    };
    draw_bar(
        f,
        Rect::new(0, size.1 - 1, size.0, 1),
        &format!(" {hints}"),
        &pos,
        t.s(Role::Dim),
        t,
    );
    if let Some(q) = &s.search {
        draw_search(f, q, size, t);
    }
    if let Some(scroll) = s.help {
        draw_help(f, scroll, size, t);
    }
}

/// The status line's key hints for the screen shown, as many as fit in `width` columns,
/// most useful first; "? keys" always stays.
fn hints(s: &State, width: usize) -> String {
    let items: Vec<&str> = match s.scope() {
        Scope::Search => vec![
            "type to search",
            "↑↓ choose",
            "Enter open",
            "Esc close",
            "kind: tag: sm: filters",
        ],
        Scope::Browse if s.typing() => {
            return "type a filter: tag:NAME sm:80 kind:api · Enter done".to_string()
        }
        Scope::Browse => vec![
            "↑↓ choose",
            "Enter open",
            "/ search",
            "f filter",
            "q quit",
            "Tab pane",
        ],
        Scope::Page => vec![
            "Tab link",
            "Enter follow",
            "Esc back",
            "/ search",
            "# anchor",
            "] section",
        ],
        Scope::File => match &s.screen {
            Screen::File(f) => match f.panels.get(f.panel) {
                Some(Panel::Report(_)) => {
                    vec![
                        "] [ what-if",
                        "Enter apply",
                        "u undo",
                        "w write",
                        "Tab panel",
                        "z zoom",
                    ]
                }
                Some(Panel::Kernel(_)) => {
                    vec![
                        "Tab panel",
                        "t/r/s/a edit",
                        "c chart",
                        "n next diag",
                        "z zoom",
                    ]
                }
                Some(Panel::Bank(_)) => vec!["Tab panel", "p padded", "n next diag", "z zoom"],
                _ => vec![
                    "Tab panel",
                    "n next diag",
                    "Enter wiki",
                    "z zoom",
                    "/ search",
                ],
            },
            _ => Vec::new(),
        },
        Scope::Global => Vec::new(),
    };
    let keys = "? keys";
    let mut out = String::new();
    for item in items {
        let extra = if out.is_empty() { 0 } else { 3 };
        if out.width() + extra + item.width() + 3 + keys.width() > width {
            break;
        }
        if !out.is_empty() {
            out.push_str(" · ");
        }
        out.push_str(item);
    }
    if !out.is_empty() {
        out.push_str(" · ");
    }
    out.push_str(keys);
    out
}

fn draw_bar(f: &mut Frame, area: Rect, left: &str, right: &str, style: Style, t: &Theme) {
    let w = usize::from(area.width);
    let rw = right.width() + 1;
    let left = fit(left, w.saturating_sub(rw + 1)) + " ";
    let style = if t.color { style } else { t.s(Role::Text) };
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(left, style),
            Span::styled(format!("{right} "), style),
        ])),
        area,
    );
}

fn block<'a>(title: String, focused: bool, t: &Theme) -> Block<'a> {
    let style = if focused {
        t.s(Role::Title)
    } else {
        t.s(Role::Dim)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(Span::styled(title, style))
}

fn draw_browse(f: &mut Frame, s: &State, b: &BrowseState, size: (u16, u16)) {
    let t = &s.theme;
    let (ga, pa) = browse_areas(size);
    let gw = usize::from(ga.width.saturating_sub(2));
    let lines: Vec<Line> = b
        .groups
        .iter()
        .enumerate()
        .map(|(i, (g, n))| {
            let n = n.to_string();
            let text = format!("{}{n}", fit(&g.label, gw.saturating_sub(n.len() + 1)) + " ");
            let style = if i == b.group {
                if b.focus == Pane::Groups {
                    t.s(Role::Selected)
                } else {
                    t.s(Role::Strong)
                }
            } else {
                t.s(Role::Text)
            };
            Line::styled(text, style)
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(block("groups".into(), b.focus == Pane::Groups, t)),
        ga,
    );
    let pw = usize::from(pa.width.saturating_sub(2));
    let rows = browse_rows(size);
    let idw = b
        .list
        .iter()
        .map(|&i| s.entries[i].id.width())
        .max()
        .unwrap_or(0)
        .min(pw / 2);
    let lines: Vec<Line> = b
        .list
        .iter()
        .enumerate()
        .skip(b.scroll)
        .take(rows)
        .map(|(i, &e)| {
            let e = &s.entries[e];
            let selected = i == b.selected && b.focus == Pane::Pages;
            let id_style = if selected {
                t.s(Role::Selected)
            } else {
                t.s(Role::Link)
            };
            let title_style = if selected {
                t.s(Role::Selected)
            } else {
                t.s(Role::Text)
            };
            Line::from(vec![
                Span::styled(fit(&e.id, idw), id_style),
                Span::styled(
                    fit(&format!("  {}", e.title), pw.saturating_sub(idw)),
                    title_style,
                ),
            ])
        })
        .collect();
    let mut title = format!("{} ({})", b.groups[b.group].0.label, b.list.len());
    if b.editing || !b.filter.is_empty() {
        title.push_str(&format!(
            " · filter: {}{}",
            b.filter,
            if b.editing { "▏" } else { "" }
        ));
    }
    let body = if lines.is_empty() {
        vec![Line::styled(
            "no pages match the filter (f to change it)",
            t.s(Role::Dim),
        )]
    } else {
        lines
    };
    f.render_widget(
        Paragraph::new(body).block(block(title, b.focus == Pane::Pages, t)),
        pa,
    );
}

/// `line` with columns `start..end` restyled.
fn restyle(line: &Line<'static>, start: u16, end: u16, style: Style) -> Line<'static> {
    restyle_with(line, start, end, |_| style)
}

/// `line` with columns `start..end` restyled by `f` (applied to each piece's style).
fn restyle_with(
    line: &Line<'static>,
    start: u16,
    end: u16,
    f: impl Fn(Style) -> Style,
) -> Line<'static> {
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut col = 0u16;
    for sp in &line.spans {
        let mut before = String::new();
        let mut inside = String::new();
        let mut after = String::new();
        for ch in sp.content.chars() {
            let w = UnicodeWidthStr::width(ch.encode_utf8(&mut [0; 4]) as &str) as u16;
            if col < start {
                before.push(ch);
            } else if col < end {
                inside.push(ch);
            } else {
                after.push(ch);
            }
            col += w;
        }
        for (text, st) in [(before, sp.style), (inside, f(sp.style)), (after, sp.style)] {
            if !text.is_empty() {
                out.push(Span::styled(text, st));
            }
        }
    }
    Line::from(out)
}

fn draw_page(f: &mut Frame, p: &PageState, size: (u16, u16), t: &Theme) {
    let m = main_area(size);
    let w = usize::from(m.width.saturating_sub(2));
    let facts: Vec<String> = p
        .doc
        .facts
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let header = vec![
        Line::styled(fit(&p.doc.title, w), t.s(Role::Heading)),
        Line::styled(fit(&facts.join(" · "), w), t.s(Role::Dim)),
    ];
    f.render_widget(
        Paragraph::new(header),
        Rect::new(1, m.y, m.width.saturating_sub(2), 2),
    );
    let area = page_body_area(size);
    let lines: Vec<Line> = p
        .rendered
        .lines
        .iter()
        .enumerate()
        .skip(p.scroll)
        .take(usize::from(area.height))
        .map(|(i, l)| {
            let mut line = l.clone();
            if let Some(sel) = p.link {
                for spot in p
                    .rendered
                    .links
                    .iter()
                    .filter(|s| s.id == sel && s.line == i)
                {
                    line = restyle(&line, spot.start, spot.end, t.s(Role::Selected));
                }
            }
            line
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

/// The display column of byte `offset` of a source line (tabs are drawn as 4 spaces).
fn display_col(text: &str, offset: usize) -> u16 {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end]
        .chars()
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum::<usize>()
        .min(usize::from(u16::MAX)) as u16
}

/// The spans of `spans` from display column `skip`, at most `width` columns.
fn clip(spans: Vec<Span<'static>>, skip: usize, width: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut col = 0;
    for sp in spans {
        let mut text = String::new();
        for ch in sp.content.chars() {
            if col >= skip && col < skip + width {
                text.push(ch);
            }
            col += 1;
        }
        if !text.is_empty() {
            out.push(Span::styled(text, sp.style));
        }
    }
    out
}

fn draw_file(f: &mut Frame, fs: &FileState, size: (u16, u16), t: &Theme) {
    let area = source_area(size, fs.layout);
    let gutter = gutter(fs.ws.line_count());
    let digits = usize::from(gutter - 2);
    let code_w = usize::from(area.width.saturating_sub(gutter));
    let hscroll = fs.col.saturating_sub(code_w.saturating_sub(2));
    let diags = fs.ws.diagnostics();
    let mut lines = Vec::new();
    for i in fs.scroll..(fs.scroll + usize::from(area.height)).min(fs.ws.line_count()) {
        let text = fs.ws.line(i);
        let worst = diags.iter().filter(|d| d.line == i).map(|d| d.level).max();
        let (mark, mstyle) = match worst {
            Some(Level::Error) => (if t.color { "●" } else { "E" }, t.s(Role::Error)),
            Some(Level::Warning) => (if t.color { "●" } else { "W" }, t.s(Role::Warning)),
            Some(Level::Hint) => (if t.color { "●" } else { "H" }, t.s(Role::Hint)),
            None => (" ", t.s(Role::Text)),
        };
        let num_style = if i == fs.line {
            t.s(Role::Strong)
        } else {
            t.s(Role::Dim)
        };
        let mut spans = vec![
            Span::styled(format!("{:>digits$}", i + 1), num_style),
            Span::styled(mark, mstyle),
            Span::raw(" "),
        ];
        let code = highlight::spans(text, fs.comments.get(i).copied().unwrap_or(false), t);
        // Diagnostics are underlined where they are on this line.
        let line_start = fs.ws.offset(i, 0);
        let line_end = line_start + text.len();
        let mut l = Line::from(code);
        for d in diags
            .iter()
            .filter(|d| d.range.start < line_end.max(line_start + 1) && d.range.end > line_start)
        {
            let a = display_col(text, d.range.start.saturating_sub(line_start));
            let b = display_col(text, d.range.end.min(line_end) - line_start);
            l = restyle_with(&l, a, b.max(a + 1), |st| {
                st.add_modifier(Modifier::UNDERLINED)
            });
        }
        if i == fs.line {
            let c = display_col(
                text,
                text.char_indices()
                    .nth(fs.col)
                    .map_or(text.len(), |(b, _)| b),
            );
            if fs.col >= text.chars().count() {
                l.spans.push(Span::raw(" "));
            }
            l = restyle(&l, c, c + 1, t.s(Role::Cursor));
        }
        let code = l.spans;
        spans.extend(clip(code, hscroll, code_w));
        lines.push(Line::from(spans));
    }
    if area.width > 0 {
        f.render_widget(Paragraph::new(lines), area);
    }
    let panel = panel_area(size, fs.layout);
    if panel.width > 0 {
        draw_panel(f, fs, panel, t);
    }
}

fn draw_panel(f: &mut Frame, fs: &FileState, area: Rect, t: &Theme) {
    let n = fs.panels.len();
    let Some(panel) = fs.panels.get(fs.panel) else {
        let b = block("panel".into(), false, t);
        let inner = b.inner(area);
        f.render_widget(b, area);
        let mut lines = vec![
            Line::styled("Nothing to explain here.", t.s(Role::Dim)),
            Line::default(),
        ];
        lines.push(Line::raw(
            "Move the cursor onto an intrinsic, a kernel's name or a __shared__ access.",
        ));
        lines.push(Line::default());
        let d = fs.ws.diagnostics().len();
        lines.push(Line::styled(
            format!(
                "{d} diagnostic{} in this file (n: next)",
                if d == 1 { "" } else { "s" }
            ),
            t.s(Role::Text),
        ));
        f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
        return;
    };
    let count = if n > 1 {
        format!(" {}/{n} Tab", fs.panel + 1)
    } else {
        String::new()
    };
    let title = match panel {
        Panel::Symbol { symbol, .. } => format!("{symbol}{count}"),
        Panel::Kernel(k) => format!("occupancy · {}{count}", k.name),
        Panel::Bank(b) => format!("banks · {}{count}", b.array),
        Panel::Diagnostic(d) => format!("{}{count}", d.rule),
        Panel::Note { title, .. } => format!("{title}{count}"),
        Panel::Report(r) => format!("report · {}{count}", r.kernel),
        Panel::Intervals(i) => format!("barrier intervals · {}{count}", i.kernel),
    };
    let b = block(title, true, t);
    let inner = b.inner(area);
    f.render_widget(b, area);
    match panel {
        Panel::Symbol { markdown, page, .. } => {
            let mut md = markdown.clone();
            if let Some(p) = page {
                md.push_str(&format!("\n\nEnter opens `{p}`."));
            }
            draw_markdown(f, &md, fs.panel_scroll, inner, t);
        }
        Panel::Note { markdown, .. } => draw_markdown(f, markdown, fs.panel_scroll, inner, t),
        Panel::Diagnostic(d) => {
            let style = match d.level {
                Level::Error => t.s(Role::Error),
                Level::Warning => t.s(Role::Warning),
                Level::Hint => t.s(Role::Hint),
            };
            // The message, then the fix (its diff lines cut at the edge, never wrapped:
            // code reads as code), then the wiki text, which may run off the bottom.
            let w = usize::from(inner.width);
            let mut lines = vec![Line::styled(d.message.clone(), style)];
            if let Some((title, diff)) = &d.fix {
                lines.push(Line::styled(format!("fix: {title}"), t.s(Role::Strong)));
                for l in diff {
                    let (mark, text, role) = match l {
                        DiffLine::Same(s) => (' ', s, Role::Dim),
                        DiffLine::Removed(s) => ('-', s, Role::Removed),
                        DiffLine::Added(s) => ('+', s, Role::Added),
                    };
                    let text = fit(&format!("{mark}{}", text.trim_end()), w);
                    lines.push(Line::styled(text, t.s(role)));
                }
            }
            lines.push(Line::from(vec![
                Span::styled("wiki ", t.s(Role::Dim)),
                Span::styled(d.wiki.clone(), t.s(Role::Link)),
                Span::styled(" (Enter)", t.s(Role::Dim)),
            ]));
            if let Some(text) = &d.wiki_text {
                lines.push(Line::styled(text.replace(['*', '`'], ""), t.s(Role::Text)));
            }
            f.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .scroll((fs.panel_scroll, 0)),
                inner,
            );
        }
        Panel::Kernel(k) => {
            if let Some(o) = &fs.occ {
                draw_kernel(f, k, o, fs.chart, inner, t);
            }
        }
        Panel::Bank(b) => draw_bank(f, b, fs.padded, inner, t),
        Panel::Report(r) => draw_report(f, r, fs, inner, t),
        Panel::Intervals(i) => draw_intervals(f, i, fs, inner, t),
    }
}

/// `text` broken into lines of at most `width` columns at spaces (a longer word is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while word.width() > width {
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            out.push(head);
        }
        if !line.is_empty() && line.width() + 1 + word.width() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

/// `text` wrapped to `width` after a first-line prefix, later lines indented to match.
fn wrapped(
    prefix: &str,
    text: &str,
    width: usize,
    style: Style,
    pstyle: Style,
) -> Vec<Line<'static>> {
    let indent = " ".repeat(prefix.width());
    wrap_words(text, width.saturating_sub(prefix.width()))
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let p = if i == 0 {
                prefix.to_string()
            } else {
                indent.clone()
            };
            Line::from(vec![Span::styled(p, pstyle), Span::styled(l, style)])
        })
        .collect()
}

/// The report: its what-ifs as a list (the selected one marked; Enter applies it), then
/// the rest of the report.
fn draw_report(f: &mut Frame, r: &ReportPanel, fs: &FileState, area: Rect, t: &Theme) {
    let w = usize::from(area.width);
    let mut lines: Vec<Line<'static>> = Vec::new();
    if r.what_ifs.is_empty() {
        lines.push(Line::styled(
            "No what-if: no finding has a fix.",
            t.s(Role::Dim),
        ));
    } else {
        lines.extend(wrapped(
            "",
            &format!("What if ({}): ] [ choose, Enter applies", r.what_ifs.len()),
            w,
            t.s(Role::Heading),
            t.s(Role::Heading),
        ));
        for (i, wi) in r.what_ifs.iter().enumerate() {
            let sel = i == fs.what_if;
            let mark = if sel { "▶ " } else { "  " };
            let style = if sel {
                t.s(Role::Selected)
            } else {
                t.s(Role::Strong)
            };
            // Inline code in the titles reads as plain text in a list.
            let head = format!("{} (line {})", wi.title.replace('`', ""), wi.line);
            lines.extend(wrapped(mark, &head, w, style, t.s(Role::Key)));
            let summary = if wi.edits.is_empty() {
                format!("{} (change the launch yourself)", wi.summary)
            } else {
                wi.summary.clone()
            }
            .replace('`', "");
            lines.extend(wrapped("  ", &summary, w, t.s(Role::Text), t.s(Role::Text)));
        }
    }
    if let Some(last) = fs.undo.last() {
        lines.push(Line::styled(
            fit(&format!("u undoes: {}", last.title.replace('`', "")), w),
            t.s(Role::Key),
        ));
    }
    lines.push(Line::default());
    let body = markdown::render(&r.markdown, area.width, t, &|_| false);
    lines.extend(body.lines);
    let scroll = fs.panel_scroll.min(lines.len().saturating_sub(1) as u16);
    f.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
}

/// The barrier intervals: for each, what opens and closes it and its accesses, those
/// that race with another access of the interval marked with the two threads.
fn draw_intervals(f: &mut Frame, p: &IntervalsPanel, fs: &FileState, area: Rect, t: &Theme) {
    let w = usize::from(area.width);
    let here = (fs.line + 1) as u32;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if p.barriers.is_empty() {
        lines.push(Line::styled("No barrier: one interval.", t.s(Role::Dim)));
    }
    let conflicts = p
        .intervals
        .iter()
        .filter(|i| i.accesses.iter().any(|a| !a.conflicts.is_empty()))
        .count();
    if !p.launched {
        lines.extend(wrapped(
            "",
            "No launch fixes the block: races are not checked.",
            w,
            t.s(Role::Dim),
            t.s(Role::Dim),
        ));
    } else if conflicts > 0 {
        lines.extend(wrapped(
            "",
            &format!(
                "{conflicts} interval{} with a race (✗)",
                if conflicts == 1 { "" } else { "s" }
            ),
            w,
            t.s(Role::Warning),
            t.s(Role::Warning),
        ));
    }
    for (n, i) in p.intervals.iter().enumerate() {
        let closes = if i.closes.is_empty() {
            "?".to_string()
        } else {
            i.closes.join(" or ")
        };
        let head = format!("{}. {} → {}", n + 1, i.opens, closes);
        lines.extend(wrapped(
            "",
            &head,
            w,
            t.s(Role::Heading),
            t.s(Role::Heading),
        ));
        for a in &i.accesses {
            let bad = !a.conflicts.is_empty();
            let mark = match (bad, a.line == here) {
                (true, _) => {
                    if t.color {
                        "✗"
                    } else {
                        "X"
                    }
                }
                (false, true) => "▸",
                _ => " ",
            };
            let style = if bad {
                t.s(Role::Error)
            } else if a.line == here {
                t.s(Role::Strong)
            } else {
                t.s(Role::Text)
            };
            let prefix = format!("{mark}{:>4} ", a.line);
            let text = format!("{} {} {}", a.op, a.space, a.text);
            lines.extend(wrapped(&prefix, &text, w, style, style));
            for c in &a.conflicts {
                lines.extend(wrapped(
                    "      ",
                    c,
                    w,
                    t.s(Role::Warning),
                    t.s(Role::Warning),
                ));
            }
        }
        for wb in &i.warp_barriers {
            lines.extend(wrapped(
                "      ",
                &format!("{wb}: orders one warp's lanes only"),
                w,
                t.s(Role::Dim),
                t.s(Role::Dim),
            ));
        }
    }
    let scroll = fs.panel_scroll.min(lines.len().saturating_sub(1) as u16);
    f.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
}

fn draw_markdown(f: &mut Frame, md: &str, scroll: u16, area: Rect, t: &Theme) {
    let r = markdown::render(md, area.width, t, &|_| false);
    let scroll = scroll.min(r.lines.len().saturating_sub(1) as u16);
    f.render_widget(Paragraph::new(r.lines).scroll((scroll, 0)), area);
}

fn kv(t: &Theme, key: &str, label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{key:<2}"), t.s(Role::Key)),
        Span::styled(format!("{label:<9}"), t.s(Role::Dim)),
        Span::styled(value, t.s(Role::Strong)),
    ])
}

fn draw_kernel(f: &mut Frame, k: &KernelPanel, o: &OccView, chart: usize, area: Rect, t: &Theme) {
    let i = &o.inputs;
    let edited = |a: bool| if a { " *" } else { "" };
    let mut lines = vec![
        kv(
            t,
            "a",
            "arch",
            format!("{}{}", i.arch.describe(), edited(i.arch != k.found.arch)),
        ),
        kv(
            t,
            "t",
            "threads",
            format!("{}{}", i.threads, edited(i.threads != k.found.threads)),
        ),
        kv(
            t,
            "r",
            "regs",
            format!(
                "{}{}",
                i.regs,
                if i.regs != k.found.regs {
                    " *"
                } else if k.regs_assumed {
                    " (assumed)"
                } else {
                    ""
                }
            ),
        ),
        kv(
            t,
            "s",
            "smem",
            format!(
                "{} B static + {} B dyn{}",
                i.static_smem,
                i.dyn_smem,
                edited(i.dyn_smem != k.found.dyn_smem)
            ),
        ),
    ];
    match &o.result {
        Ok(r) => {
            lines.push(Line::from(vec![
                Span::styled(format!("{:.0}%", r.occupancy * 100.0), t.s(Role::Heading)),
                Span::styled(
                    format!(
                        "  {} blocks/SM · {}/{} warps",
                        r.blocks_per_sm, r.active_warps, r.max_warps
                    ),
                    t.s(Role::Text),
                ),
            ]));
            lines.push(Line::styled(
                format!("limited by {}", r.limiters.join(", ")),
                t.s(Role::Dim),
            ));
        }
        Err(e) => {
            lines.push(Line::styled(e.clone(), t.s(Role::Error)));
            lines.push(Line::default());
        }
    }
    let top = lines.len() as u16;
    f.render_widget(
        Paragraph::new(lines),
        Rect::new(area.x, area.y, area.width, top.min(area.height)),
    );
    let rest = Rect::new(
        area.x,
        area.y + top,
        area.width,
        area.height.saturating_sub(top),
    );
    if rest.height < 5 {
        return;
    }
    // All three charts where the panel is tall enough; otherwise the one `c` picks.
    if rest.height >= 27 {
        let h = rest.height / 3;
        for c in 0..3u16 {
            let area = Rect::new(rest.x, rest.y + c * h, rest.width, h);
            draw_chart(f, o, usize::from(c), area, t);
        }
    } else {
        draw_chart(f, o, chart, rest, t);
    }
}

fn draw_chart(f: &mut Frame, o: &OccView, chart: usize, area: Rect, t: &Theme) {
    let i = &o.inputs;
    let (name, points, x) = match chart {
        0 => ("threads/block", &o.curves.threads, f64::from(i.threads)),
        1 => ("regs/thread", &o.curves.regs, f64::from(i.regs)),
        _ => (
            "smem/block KiB",
            &o.curves.smem,
            f64::from(i.static_smem + i.dyn_smem) / 1024.0,
        ),
    };
    let here: Vec<(f64, f64)> = o
        .result
        .as_ref()
        .map(|r| vec![(x, r.occupancy * 100.0)])
        .unwrap_or_default();
    let xmax = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let (line_style, point_style) = if t.color {
        (
            Style::default().fg(Color::Cyan),
            Style::default().fg(Color::LightRed),
        )
    } else {
        (Style::default(), Style::default())
    };
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(line_style)
            .data(points),
        Dataset::default()
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(point_style)
            .data(&here),
    ];
    let chart_w = Chart::new(datasets)
        .block(Block::default().title(Span::styled(
            format!("c: occupancy vs {name} ({}/3)", chart + 1),
            t.s(Role::Dim),
        )))
        .x_axis(
            Axis::default()
                .bounds([0.0, xmax])
                .labels(vec![Span::raw("0"), Span::raw(format!("{xmax:.0}"))])
                .style(t.s(Role::Dim)),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, 100.0])
                .labels(vec![Span::raw("0"), Span::raw("100%")])
                .style(t.s(Role::Dim)),
        );
    f.render_widget(chart_w, area);
}

fn draw_bank(f: &mut Frame, b: &BankPanel, padded: bool, area: Rect, t: &Theme) {
    let (map, label) = match (&b.padded, padded) {
        (Some((title, m)), true) => (m, format!("padded: {title}")),
        _ => (
            &b.map,
            b.lowered
                .clone()
                .map(|l| format!("byte offset {l}"))
                .unwrap_or_default(),
        ),
    };
    let mut lines = Vec::new();
    match map {
        Ok(m) => {
            let degree = if m.degree <= 1 {
                "no conflict".to_string()
            } else {
                format!("{}-way conflict", m.degree)
            };
            let style = if m.degree <= 1 {
                t.s(Role::BankOk)
            } else {
                t.s(Role::BankConflict)
            };
            lines.push(Line::from(vec![
                Span::styled(degree, style),
                Span::styled(
                    format!(
                        " · {} wavefront{}",
                        m.wavefronts,
                        if m.wavefronts == 1 { "" } else { "s" }
                    ),
                    t.s(Role::Text),
                ),
            ]));
            lines.push(Line::styled(
                fit(&label, usize::from(area.width)),
                t.s(Role::Dim),
            ));
            lines.extend(bank_rows(m, t));
            let n = m.conflicting.count_ones();
            let mut key = vec![Span::styled("lanes ↓ · banks →", t.s(Role::Dim))];
            if n > 0 {
                key.push(Span::styled(
                    format!(" · {n} in conflict"),
                    t.s(Role::BankConflict),
                ));
            }
            lines.push(Line::from(key));
        }
        Err(e) => lines.push(Line::styled(format!("no bank model: {e}"), t.s(Role::Dim))),
    }
    match (&b.padding, padded) {
        (Some(_), false) => lines.push(Line::styled("p: show the padded map", t.s(Role::Key))),
        (Some(_), true) => lines.push(Line::styled(
            "p: back to the map as written",
            t.s(Role::Key),
        )),
        _ => {}
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// Sixteen rows of two lanes each (upper and lower half of a cell) by 32 banks.
fn bank_rows(m: &BankMap, t: &Theme) -> Vec<Line<'static>> {
    let cell = |lane: usize, bank: usize| -> u8 {
        match m.lane_bank[lane] {
            Some(b) if usize::from(b) == bank => {
                if m.conflicting & (1 << lane) != 0 {
                    2
                } else {
                    1
                }
            }
            _ => 0,
        }
    };
    let color = |c: u8| match c {
        1 => Color::Green,
        2 => Color::Red,
        _ => Color::Reset,
    };
    (0..16)
        .map(|r| {
            let mut spans = vec![Span::styled(format!("{:>2} ", r * 2), t.s(Role::Dim))];
            for bank in 0..32 {
                let (a, b) = (cell(2 * r, bank), cell(2 * r + 1, bank));
                let span = if t.color {
                    match (a, b) {
                        (0, 0) => Span::styled("·", Style::default().fg(Color::DarkGray)),
                        (a, 0) => Span::styled("▀", Style::default().fg(color(a))),
                        (0, b) => Span::styled("▄", Style::default().fg(color(b))),
                        (a, b) => Span::styled("▀", Style::default().fg(color(a)).bg(color(b))),
                    }
                } else {
                    Span::raw(match (a, b) {
                        (0, 0) => "·",
                        (2, _) | (_, 2) => "X",
                        (_, 0) => "▀",
                        (0, _) => "▄",
                        _ => "█",
                    })
                };
                spans.push(span);
            }
            Line::from(spans)
        })
        .collect()
}

fn draw_search(f: &mut Frame, q: &SearchState, size: (u16, u16), t: &Theme) {
    let o = overlay_area(size);
    f.render_widget(Clear, o);
    let b = block("search the wiki".into(), true, t);
    let inner = b.inner(o);
    f.render_widget(b, o);
    let w = usize::from(inner.width);
    let input = Line::from(vec![
        Span::styled("/ ", t.s(Role::Key)),
        Span::styled(format!("{}▏", q.input), t.s(Role::Strong)),
    ]);
    let help = Line::styled(
        fit("symptoms in your own words · kind:pitfall tag:tma sm:80", w),
        t.s(Role::Dim),
    );
    f.render_widget(
        Paragraph::new(vec![input, help]),
        Rect::new(inner.x, inner.y, inner.width, 2),
    );
    let area = search_list_area(size);
    let mut lines = Vec::new();
    if q.hits.is_empty() {
        let msg = if q.input.trim().is_empty() {
            ""
        } else {
            "no good match: try other words, a symbol or a page id"
        };
        lines.push(Line::styled(msg, t.s(Role::Dim)));
    }
    for (i, h) in q.hits.iter().enumerate() {
        let sel = i == q.selected;
        let head = format!("{}  {}", h.target, h.title);
        let style = if sel {
            t.s(Role::Selected)
        } else {
            t.s(Role::Link)
        };
        lines.push(Line::from(vec![
            Span::styled(if sel { "▶ " } else { "  " }, t.s(Role::Key)),
            Span::styled(fit(&head, w.saturating_sub(2)), style),
        ]));
        lines.push(snippet_line(&h.snippet, w.saturating_sub(4), t));
    }
    let skip = (q.selected * 2 + 2).saturating_sub(usize::from(area.height));
    f.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()),
        area,
    );
}

/// A snippet on one line, the words between `**` highlighted.
fn snippet_line(snippet: &str, w: usize, t: &Theme) -> Line<'static> {
    let flat = snippet.replace(['\n', '\r'], " ");
    let mut spans = vec![Span::raw("    ")];
    let mut used = 0;
    for (i, part) in flat.split("**").enumerate() {
        if used >= w {
            break;
        }
        let text: String = part.chars().take(w - used).collect();
        used += text.width();
        let style = if i % 2 == 1 {
            t.s(Role::Match)
        } else {
            t.s(Role::Dim)
        };
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

fn draw_help(f: &mut Frame, scroll: usize, size: (u16, u16), t: &Theme) {
    let o = overlay_area(size);
    f.render_widget(Clear, o);
    let b = block("keys (Esc or ? closes)".into(), true, t);
    let inner = b.inner(o);
    f.render_widget(b, o);
    let mut lines = Vec::new();
    for scope in [
        Scope::Global,
        Scope::Browse,
        Scope::Page,
        Scope::File,
        Scope::Search,
    ] {
        lines.push(Line::styled(scope.title(), t.s(Role::Heading)));
        for k in KEYMAP
            .iter()
            .filter(|k| k.scope == scope && !k.help.is_empty())
        {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<11}", k.label), t.s(Role::Key)),
                Span::raw(k.help),
            ]));
        }
        if scope == Scope::Global {
            lines.push(Line::styled(
                "  mouse      wheel scrolls, click selects or follows",
                t.s(Role::Text),
            ));
        }
    }
    let skip = scroll.min(lines.len().saturating_sub(usize::from(inner.height)));
    f.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()),
        inner,
    );
}
