//! The interactive UI, Elm-style: a [`State`], [`update`] that applies one [`Action`] to
//! it, and a pure [`view`] that draws it. [`keys`] holds the one key table; [`model`] is
//! the one module that asks `kernaut-ide` for anything; [`term`] owns the terminal.
pub mod highlight;
pub mod keys;
pub mod markdown;
pub mod model;
pub mod term;
pub mod theme;
pub mod view;

use crossterm::event::{Event, KeyEventKind, MouseButton, MouseEventKind};

pub use keys::{Action, Scope};
use markdown::Rendered;
use model::{
    arch_limits, occupancy_view, Library, NavEntry, OccInputs, OccView, PageDoc, Panel, Query,
    SearchHit, Workspace,
};
use theme::Theme;
pub use view::view;

/// How many hits the search box lists.
pub const SEARCH_LIMIT: usize = 20;

/// A group of the navigator: all pages, a folder, or a kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The label shown.
    pub label: String,
    /// Pages in a folder (`None`: every page).
    pub folder: Option<String>,
    /// Pages of a kind.
    pub kind: Option<String>,
}

/// Which pane of the navigator has the keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The groups on the left.
    Groups,
    /// The pages on the right.
    Pages,
}

/// The wiki navigator.
#[derive(Clone, Debug)]
pub struct BrowseState {
    /// The groups.
    pub groups: Vec<(Group, usize)>,
    /// The selected group.
    pub group: usize,
    /// The pages shown (indices into [`State::entries`]).
    pub list: Vec<usize>,
    /// The selected page in `list`.
    pub selected: usize,
    /// The first page shown.
    pub scroll: usize,
    /// Which pane has the keys.
    pub focus: Pane,
    /// The filter text (`tag:tma sm:80`).
    pub filter: String,
    /// Whether the filter is being typed.
    pub editing: bool,
}

/// A wiki page on screen.
#[derive(Clone, Debug)]
pub struct PageState {
    /// The page.
    pub doc: PageDoc,
    /// Its rendering at the current width.
    pub rendered: Rendered,
    /// The width it was rendered for.
    pub width: u16,
    /// The first line shown.
    pub scroll: usize,
    /// The selected link.
    pub link: Option<usize>,
    /// The anchor being typed after `#`, while it is.
    pub jump: Option<String>,
}

/// A source file on screen.
pub struct FileState {
    /// The analysed file.
    pub ws: Workspace,
    /// Whether each line starts inside a block comment (for colouring).
    pub comments: Vec<bool>,
    /// Cursor line (0-based).
    pub line: usize,
    /// Cursor column (characters, 0-based).
    pub col: usize,
    /// The first line shown.
    pub scroll: usize,
    /// What the side panel can show at the cursor.
    pub panels: Vec<Panel>,
    /// Which of them it shows.
    pub panel: usize,
    /// The calculator's inputs as edited (`None`: as found in the code).
    pub inputs: Option<OccInputs>,
    /// The calculator's result for the kernel panel.
    pub occ: Option<OccView>,
    /// Which chart: 0 threads, 1 registers, 2 shared memory.
    pub chart: usize,
    /// Whether the bank panel shows the padded layout.
    pub padded: bool,
    /// How far the side panel is scrolled.
    pub panel_scroll: u16,
    /// The `--arch` given on the command line (`None`: the project's), kept for reloads.
    pub arch_flag: Option<model::ArchChoice>,
    /// The column Up and Down keep to, across shorter lines.
    pub want_col: Option<usize>,
    /// The selected what-if of the report panel.
    pub what_if: usize,
    /// Fixes applied in memory, last on top: the text before each.
    pub undo: Vec<Applied>,
    /// How many fixes were applied when the text last matched the file on disk (`None`:
    /// never, since an undo went below it and another fix was applied).
    pub saved: Option<usize>,
    /// What the file screen shows.
    pub layout: Layout,
}

/// A fix applied to the text shown, for undo.
#[derive(Clone, Debug)]
pub struct Applied {
    /// The fix's title.
    pub title: String,
    /// The text before it.
    pub text: String,
    /// The cursor before it.
    pub line: usize,
    /// The cursor's column before it.
    pub col: usize,
}

/// What the file screen shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// The source and the side panel.
    #[default]
    Split,
    /// The source alone.
    Source,
    /// The side panel alone, over the whole width.
    Panel,
}

impl FileState {
    /// Reads the file and its project again (F5, or a change on disk), keeping the
    /// cursor where it can.
    pub fn reload(&mut self) -> bool {
        let Some(ws) = self.ws.reloaded(self.arch_flag) else {
            return false;
        };
        self.comments = highlight::comment_states((0..ws.line_count()).map(|i| ws.line(i)));
        self.line = self.line.min(ws.line_count().saturating_sub(1));
        self.ws = ws;
        self.inputs = None;
        self.undo.clear();
        self.saved = Some(0);
        refresh_panels(self);
        true
    }

    /// Whether the text shown differs from the file on disk (fixes applied, not written).
    pub fn modified(&self) -> bool {
        self.saved != Some(self.undo.len())
    }

    /// Shows `ws` (the file with a fix applied or undone), the cursor at `line`, `col`,
    /// and the report panel again if the kernel still has one.
    fn install(&mut self, ws: Workspace, line: usize, col: usize) {
        self.comments = highlight::comment_states((0..ws.line_count()).map(|i| ws.line(i)));
        self.ws = ws;
        self.line = line.min(self.ws.line_count().saturating_sub(1));
        self.col = col.min(self.ws.line(self.line).chars().count());
        self.want_col = None;
        refresh_panels(self);
        if let Some(i) = self
            .panels
            .iter()
            .position(|p| matches!(p, Panel::Report(_)))
        {
            self.panel = i;
            refresh_occ(self);
        }
        let n = match self.panels.get(self.panel) {
            Some(Panel::Report(r)) => r.what_ifs.len(),
            _ => 0,
        };
        self.what_if = self.what_if.min(n.saturating_sub(1));
    }

    /// Applies the selected what-if of the report panel to the text shown; the message
    /// for the status line.
    fn apply_what_if(&mut self) -> String {
        let Some(Panel::Report(r)) = self.panels.get(self.panel) else {
            return "no report here".into();
        };
        let Some(w) = r.what_ifs.get(self.what_if).cloned() else {
            return "this report has no what-if to apply".into();
        };
        if w.edits.is_empty() {
            return format!(
                "{}: a change to make in the host code, not a fix to apply",
                w.title
            );
        }
        let before = self.ws.text().to_string();
        let after = model::apply_fix(&before, &w.edits);
        let cursor = model::shift_offset(self.ws.offset(self.line, self.col), &w.edits);
        let ws = self.ws.with_text(after, self.arch_flag);
        if self.saved.is_some_and(|d| d > self.undo.len()) {
            self.saved = None;
        }
        self.undo.push(Applied {
            title: w.title.clone(),
            text: before,
            line: self.line,
            col: self.col,
        });
        let line = ws.line_of(cursor);
        let col = ws.text()[ws.offset(line, 0)..cursor].chars().count();
        self.install(ws, line, col);
        format!("applied: {} (u undoes)", w.title.replace('`', ""))
    }

    /// Undoes the last fix applied; the message for the status line.
    fn undo_fix(&mut self) -> String {
        let Some(a) = self.undo.pop() else {
            return "nothing to undo".into();
        };
        let ws = self.ws.with_text(a.text, self.arch_flag);
        self.install(ws, a.line, a.col);
        format!("undone: {}", a.title.replace('`', ""))
    }
}

/// One screen of the back stack.
pub enum Screen {
    /// The navigator.
    Browse(BrowseState),
    /// A page.
    Page(PageState),
    /// A source file.
    File(Box<FileState>),
}

/// The search box.
#[derive(Clone, Debug, Default)]
pub struct SearchState {
    /// What was typed.
    pub input: String,
    /// The hits for it.
    pub hits: Vec<SearchHit>,
    /// The selected hit.
    pub selected: usize,
}

/// Everything the UI shows.
pub struct State {
    /// The wiki.
    pub lib: Library,
    /// Every page, for the navigator.
    pub entries: Vec<NavEntry>,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// Colours.
    pub theme: Theme,
    /// The current screen.
    pub screen: Screen,
    /// Screens to go back to.
    pub history: Vec<Screen>,
    /// The search box, when open.
    pub search: Option<SearchState>,
    /// The key map, when shown: its scroll.
    pub help: Option<usize>,
    /// A message for the status line.
    pub message: String,
    /// Set when the user quits.
    pub quit: bool,
}

/// Where `ktui` starts.
pub enum Start {
    /// The navigator.
    Browse,
    /// A source file at a position (1-based line and column; column `None`: first
    /// non-blank).
    File {
        /// The path as given.
        path: String,
        /// The text.
        text: String,
        /// The line.
        line: usize,
        /// The column.
        col: Option<usize>,
        /// The architecture named on the command line (`None`: the project's).
        arch: Option<model::ArchChoice>,
        /// Whether the pitfall rules run on a worker thread, the file shown before its
        /// diagnostics arrive (the terminal UI); tests ask for them at once.
        background: bool,
    },
}

impl State {
    /// A state at `start`, for a terminal of `size`.
    pub fn new(lib: Library, start: Start, size: (u16, u16), theme: Theme) -> State {
        let entries = lib.entries();
        let browse = browse_state(&entries);
        let mut s = State {
            lib,
            entries,
            size,
            theme,
            screen: Screen::Browse(browse),
            history: Vec::new(),
            search: None,
            help: None,
            message: String::new(),
            quit: false,
        };
        s.refilter();
        if let Start::File {
            path,
            text,
            line,
            col,
            arch,
            background,
        } = start
        {
            let ws = if background {
                Workspace::open_in_background(&s.lib, &path, text, arch)
            } else {
                Workspace::open(&s.lib, &path, text, arch)
            };
            let comments = highlight::comment_states((0..ws.line_count()).map(|i| ws.line(i)));
            let line = line
                .saturating_sub(1)
                .min(ws.line_count().saturating_sub(1));
            let col = match col {
                Some(c) => c.saturating_sub(1),
                None => ws
                    .line(line)
                    .chars()
                    .take_while(|c| c.is_whitespace())
                    .count(),
            };
            let mut f = FileState {
                ws,
                comments,
                line,
                col,
                scroll: 0,
                panels: Vec::new(),
                panel: 0,
                inputs: None,
                occ: None,
                chart: 0,
                padded: false,
                panel_scroll: 0,
                arch_flag: arch,
                want_col: None,
                what_if: 0,
                undo: Vec::new(),
                saved: Some(0),
                layout: Layout::Split,
            };
            let h = view::file_height(s.size);
            f.scroll = line.saturating_sub(h / 3);
            refresh_panels(&mut f);
            s.screen = Screen::File(Box::new(f));
        }
        s
    }

    /// Picks up work finished in the background (a file's diagnostics); true when the
    /// screen changed.
    pub fn poll_background(&mut self) -> bool {
        let Screen::File(f) = &mut self.screen else {
            return false;
        };
        // A change on disk is read at once, unless fixes applied here are not written
        // yet (F5 reads it then, dropping them).
        if !f.modified() && f.ws.changed_on_disk() && f.reload() {
            return true;
        }
        if !f.ws.poll() {
            return false;
        }
        // The panel shown stays (the report after a fix is applied, say) if there is
        // still one of its kind.
        let kind = f.panels.get(f.panel).map(std::mem::discriminant);
        let scroll = f.panel_scroll;
        refresh_panels(f);
        if let Some(i) = f
            .panels
            .iter()
            .position(|p| Some(std::mem::discriminant(p)) == kind)
        {
            f.panel = i;
            f.panel_scroll = scroll;
            refresh_occ(f);
        }
        true
    }

    /// The scope whose keys apply now.
    pub fn scope(&self) -> Scope {
        if self.search.is_some() {
            return Scope::Search;
        }
        match &self.screen {
            Screen::Browse(_) => Scope::Browse,
            Screen::Page(_) => Scope::Page,
            Screen::File(_) => Scope::File,
        }
    }

    /// Whether a text field has the keys.
    pub fn typing(&self) -> bool {
        self.search.is_some()
            || matches!(&self.screen, Screen::Browse(b) if b.editing)
            || matches!(&self.screen, Screen::Page(p) if p.jump.is_some())
    }

    /// The action a terminal event asks for, if any.
    pub fn action_for(&self, ev: &Event) -> Option<Action> {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                keys::lookup(k, self.scope(), self.typing())
            }
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => Some(Action::ScrollUp(m.column, m.row)),
                MouseEventKind::ScrollDown => Some(Action::ScrollDown(m.column, m.row)),
                MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
                _ => None,
            },
            Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
            _ => None,
        }
    }

    fn refilter(&mut self) {
        let Screen::Browse(b) = &mut self.screen else {
            return;
        };
        let q = Query::parse(&b.filter);
        let passing: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.lib.passes(&self.entries[i], &q))
            .collect();
        for (g, count) in &mut b.groups {
            *count = passing
                .iter()
                .filter(|&&i| in_group(&self.entries[i], g))
                .count();
        }
        let g = &b.groups[b.group.min(b.groups.len() - 1)].0;
        b.list = passing
            .into_iter()
            .filter(|&i| in_group(&self.entries[i], g))
            .collect();
        b.selected = b.selected.min(b.list.len().saturating_sub(1));
        b.scroll = b.scroll.min(b.selected);
    }

    /// Opens the page `link` names, keeping the current screen on the back stack.
    pub fn open_page(&mut self, link: &str) {
        let Some(doc) = self.lib.page(link) else {
            self.message = format!("no page `{link}`");
            return;
        };
        let page = page_state(&self.lib, doc, self.size, &self.theme);
        let old = std::mem::replace(&mut self.screen, Screen::Page(page));
        self.history.push(old);
        self.search = None;
        self.message.clear();
    }
}

fn in_group(e: &NavEntry, g: &Group) -> bool {
    g.folder.as_ref().is_none_or(|f| *f == e.folder) && g.kind.as_ref().is_none_or(|k| *k == e.kind)
}

fn browse_state(entries: &[NavEntry]) -> BrowseState {
    let mut groups = vec![(
        Group {
            label: "all pages".into(),
            folder: None,
            kind: None,
        },
        entries.len(),
    )];
    let mut folders: Vec<&str> = entries.iter().map(|e| e.folder.as_str()).collect();
    folders.sort_unstable();
    folders.dedup();
    for f in folders {
        groups.push((
            Group {
                label: format!("{f}/"),
                folder: Some(f.to_string()),
                kind: None,
            },
            0,
        ));
    }
    let mut kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for k in kinds {
        groups.push((
            Group {
                label: format!("kind: {k}"),
                folder: None,
                kind: Some(k.to_string()),
            },
            0,
        ));
    }
    BrowseState {
        groups,
        group: 0,
        list: Vec::new(),
        selected: 0,
        scroll: 0,
        focus: Pane::Pages,
        filter: String::new(),
        editing: false,
    }
}

fn page_state(lib: &Library, doc: PageDoc, size: (u16, u16), theme: &Theme) -> PageState {
    let width = view::page_width(size);
    let rendered = markdown::render(&doc.body, width, theme, &|t| lib.resolves(t));
    let scroll = doc
        .anchor
        .as_ref()
        .and_then(|a| anchor_line(&doc, &rendered, a))
        .unwrap_or(0);
    PageState {
        doc,
        rendered,
        width,
        scroll,
        link: None,
        jump: None,
    }
}

/// The rendered line of the heading of section `anchor`.
fn anchor_line(doc: &PageDoc, r: &Rendered, anchor: &str) -> Option<usize> {
    let title = doc
        .sections
        .iter()
        .find(|(a, _)| a == anchor)
        .map(|(_, t)| markdown::normalize(t))?;
    let a = markdown::normalize(anchor);
    r.headings
        .iter()
        .find(|(_, h)| markdown::normalize(h) == title)
        .or_else(|| {
            r.headings.iter().find(|(_, h)| {
                let h = markdown::normalize(h);
                h.starts_with(&format!("{a}:"))
                    || h.starts_with(&format!("{a} "))
                    || h.starts_with(&format!("{a}."))
            })
        })
        .or_else(|| {
            r.headings
                .iter()
                .find(|(_, h)| markdown::normalize(h).contains(&title))
        })
        .map(|(l, _)| *l)
}

/// Recomputes the side panel for the cursor position.
fn refresh_panels(f: &mut FileState) {
    let offset = f.ws.offset(f.line, f.col);
    let old_kernel = match f.panels.get(f.panel) {
        Some(Panel::Kernel(k)) => Some(k.name.clone()),
        _ => None,
    };
    f.panels = f.ws.panels_at(offset);
    f.panel = 0;
    f.panel_scroll = 0;
    let new_kernel = match f.panels.first() {
        Some(Panel::Kernel(k)) => Some(k.name.clone()),
        _ => None,
    };
    if new_kernel != old_kernel {
        f.inputs = None;
        f.padded = false;
        f.what_if = 0;
    }
    refresh_occ(f);
}

fn refresh_occ(f: &mut FileState) {
    f.occ = match f.panels.get(f.panel) {
        Some(Panel::Kernel(k)) => Some(occupancy_view(k, f.inputs)),
        _ => None,
    };
}

/// Applies one action.
pub fn update(s: &mut State, a: Action) {
    if let Action::Resize(w, h) = a {
        s.size = (w, h);
        rerender(s);
        return;
    }
    if a == Action::Quit {
        s.quit = true;
        return;
    }
    if let Some(scroll) = &mut s.help {
        match a {
            Action::Help | Action::Back => s.help = None,
            Action::Down | Action::ScrollDown(..) => *scroll += 1,
            Action::Up | Action::ScrollUp(..) => *scroll = scroll.saturating_sub(1),
            Action::PageDown => *scroll += 10,
            Action::PageUp => *scroll = scroll.saturating_sub(10),
            Action::Top => *scroll = 0,
            _ => {}
        }
        return;
    }
    if s.search.is_some() {
        update_search(s, a);
        return;
    }
    match a {
        Action::Help => {
            s.help = Some(0);
            return;
        }
        Action::Search => {
            s.search = Some(SearchState::default());
            return;
        }
        Action::Back if !s.typing() => {
            match s.history.pop() {
                Some(prev) => {
                    s.screen = prev;
                    rerender(s);
                }
                None if matches!(s.screen, Screen::Browse(_)) => {
                    s.message = "q quits".into();
                    return;
                }
                None => {
                    let b = browse_state(&s.entries);
                    s.screen = Screen::Browse(b);
                    s.refilter();
                }
            }
            s.message.clear();
            return;
        }
        _ => {}
    }
    match &mut s.screen {
        Screen::Browse(_) => update_browse(s, a),
        Screen::Page(_) => update_page(s, a),
        Screen::File(_) => update_file(s, a),
    }
}

fn rerender(s: &mut State) {
    let size = s.size;
    if let Screen::Page(p) = &mut s.screen {
        let width = view::page_width(size);
        if width != p.width {
            let top = p
                .rendered
                .headings
                .iter()
                .rev()
                .find(|(l, _)| *l <= p.scroll)
                .map(|(_, h)| h.clone());
            p.rendered = markdown::render(&p.doc.body, width, &s.theme, &|t| s.lib.resolves(t));
            p.width = width;
            p.link = None;
            p.scroll = top
                .and_then(|h| {
                    p.rendered
                        .headings
                        .iter()
                        .find(|(_, x)| *x == h)
                        .map(|(l, _)| *l)
                })
                .unwrap_or(0);
        }
    }
    if let Screen::File(f) = &mut s.screen {
        keep_cursor_visible(f, size);
    }
}

fn update_search(s: &mut State, a: Action) {
    let Some(q) = &mut s.search else {
        return;
    };
    let mut changed = false;
    match a {
        Action::Back => {
            s.search = None;
            return;
        }
        Action::Input(c) => {
            q.input.push(c);
            changed = true;
        }
        Action::Erase => {
            q.input.pop();
            changed = true;
        }
        Action::ClearInput => {
            q.input.clear();
            changed = true;
        }
        Action::Down | Action::ScrollDown(..) => {
            q.selected = (q.selected + 1).min(q.hits.len().saturating_sub(1));
        }
        Action::Up | Action::ScrollUp(..) => q.selected = q.selected.saturating_sub(1),
        Action::Click(_, y) => {
            let area = view::search_list_area(s.size);
            if y >= area.y && y < area.bottom() {
                let i = usize::from((y - area.y) / 2);
                if i < q.hits.len() {
                    q.selected = i;
                    let t = q.hits[i].target.clone();
                    s.open_page(&t);
                }
            }
            return;
        }
        Action::Open => {
            if let Some(h) = q.hits.get(q.selected) {
                let t = h.target.clone();
                s.open_page(&t);
            }
            return;
        }
        _ => {}
    }
    if changed {
        q.hits = s.lib.search(&Query::parse(&q.input), SEARCH_LIMIT);
        q.selected = 0;
    }
}

fn update_browse(s: &mut State, a: Action) {
    let rows = view::browse_rows(s.size);
    let Screen::Browse(b) = &mut s.screen else {
        return;
    };
    if b.editing {
        match a {
            Action::Input(c) => b.filter.push(c),
            Action::Erase => {
                b.filter.pop();
            }
            Action::Open | Action::Back => b.editing = false,
            _ => return,
        }
        s.refilter();
        return;
    }
    let mut regroup = false;
    match (a, b.focus) {
        (Action::Filter, _) => {
            b.editing = true;
            return;
        }
        (Action::Next, _) => {
            b.focus = if b.focus == Pane::Groups {
                Pane::Pages
            } else {
                Pane::Groups
            };
        }
        (Action::Left, _) => b.focus = Pane::Groups,
        (Action::Right, _) => b.focus = Pane::Pages,
        (Action::Up, Pane::Groups) => {
            b.group = b.group.saturating_sub(1);
            regroup = true;
        }
        (Action::Down, Pane::Groups) => {
            b.group = (b.group + 1).min(b.groups.len() - 1);
            regroup = true;
        }
        (Action::Open, Pane::Groups) => b.focus = Pane::Pages,
        (Action::Up | Action::ScrollUp(..), Pane::Pages) => {
            b.selected = b.selected.saturating_sub(1)
        }
        (Action::Down | Action::ScrollDown(..), Pane::Pages) => {
            b.selected = (b.selected + 1).min(b.list.len().saturating_sub(1));
        }
        (Action::PageDown, _) => {
            b.selected = (b.selected + rows).min(b.list.len().saturating_sub(1))
        }
        (Action::PageUp, _) => b.selected = b.selected.saturating_sub(rows),
        (Action::Top, _) => b.selected = 0,
        (Action::Bottom, _) => b.selected = b.list.len().saturating_sub(1),
        (Action::Open, Pane::Pages) => {
            if let Some(&i) = b.list.get(b.selected) {
                let id = s.entries[i].id.clone();
                s.open_page(&id);
            }
            return;
        }
        (Action::Click(x, y), _) => {
            let (groups, pages) = view::browse_areas(s.size);
            if groups.contains((x, y).into()) && y > groups.y {
                let i = usize::from(y - groups.y - 1);
                if i < b.groups.len() {
                    b.group = i;
                    b.focus = Pane::Groups;
                    regroup = true;
                }
            } else if pages.contains((x, y).into()) && y > pages.y {
                let i = b.scroll + usize::from(y - pages.y - 1);
                if i < b.list.len() {
                    b.focus = Pane::Pages;
                    if b.selected == i {
                        let id = s.entries[b.list[i]].id.clone();
                        s.open_page(&id);
                        return;
                    }
                    b.selected = i;
                }
            }
        }
        _ => {}
    }
    if regroup {
        b.selected = 0;
        b.scroll = 0;
        s.refilter();
    }
    if let Screen::Browse(b) = &mut s.screen {
        if b.selected < b.scroll {
            b.scroll = b.selected;
        } else if b.selected >= b.scroll + rows {
            b.scroll = b.selected + 1 - rows;
        }
    }
}

fn update_page(s: &mut State, a: Action) {
    let h = view::page_height(s.size);
    let Screen::Page(p) = &mut s.screen else {
        return;
    };
    let max = p.rendered.lines.len().saturating_sub(h);
    let links = p.rendered.link_count();
    if let Some(typed) = &mut p.jump {
        match a {
            Action::Input(c) => typed.push(c),
            Action::Erase => {
                typed.pop();
            }
            Action::Back => p.jump = None,
            Action::Open => {
                let want = typed.trim_start_matches('#').to_string();
                p.jump = None;
                let found = p
                    .doc
                    .sections
                    .iter()
                    .find(|(a, _)| a.eq_ignore_ascii_case(&want))
                    .and_then(|(a, _)| anchor_line(&p.doc, &p.rendered, a));
                match found {
                    Some(l) => p.scroll = l.min(max),
                    None => {
                        let anchors: Vec<&str> =
                            p.doc.sections.iter().map(|(a, _)| a.as_str()).collect();
                        s.message =
                            format!("no anchor `{want}`; this page has {}", anchors.join(" "));
                    }
                }
            }
            _ => {}
        }
        return;
    }
    match a {
        Action::Jump => p.jump = Some(String::new()),
        Action::NextSection => {
            if let Some((l, _)) = p.rendered.headings.iter().find(|(l, _)| *l > p.scroll) {
                p.scroll = (*l).min(max);
            }
        }
        Action::PrevSection => {
            p.scroll = p
                .rendered
                .headings
                .iter()
                .rev()
                .find(|(l, _)| *l < p.scroll)
                .map_or(0, |(l, _)| *l);
        }
        Action::Down | Action::ScrollDown(..) => {
            p.scroll = (p.scroll + if matches!(a, Action::Down) { 1 } else { 3 }).min(max)
        }
        Action::Up | Action::ScrollUp(..) => {
            p.scroll = p
                .scroll
                .saturating_sub(if matches!(a, Action::Up) { 1 } else { 3 })
        }
        Action::PageDown => p.scroll = (p.scroll + h.saturating_sub(2)).min(max),
        Action::PageUp => p.scroll = p.scroll.saturating_sub(h.saturating_sub(2)),
        Action::Top => p.scroll = 0,
        Action::Bottom => p.scroll = max,
        Action::Next | Action::Prev if links > 0 => {
            // Cycle from the first link on screen rather than from the top of the page.
            let first_visible = p
                .rendered
                .links
                .iter()
                .find(|l| l.line >= p.scroll)
                .map_or(0, |l| l.id);
            let next = match (p.link, a) {
                (Some(i), Action::Next) => (i + 1) % links,
                (Some(i), _) => (i + links - 1) % links,
                (None, Action::Next) => first_visible,
                (None, _) => first_visible.checked_sub(1).unwrap_or(links - 1),
            };
            p.link = Some(next);
            if let Some(spot) = p.rendered.links.iter().find(|l| l.id == next) {
                if spot.line < p.scroll || spot.line >= p.scroll + h {
                    p.scroll = spot.line.saturating_sub(h / 3).min(max);
                }
            }
        }
        Action::Open => {
            let target = p
                .link
                .and_then(|i| p.rendered.links.iter().find(|l| l.id == i))
                .map(|l| l.target.clone());
            match target {
                Some(t) => s.open_page(&t),
                None => s.message = "Tab selects a link, Enter follows it".into(),
            }
        }
        Action::Click(x, y) => {
            let area = view::page_body_area(s.size);
            if area.contains((x, y).into()) {
                let line = p.scroll + usize::from(y - area.y);
                let col = x - area.x;
                let hit = p
                    .rendered
                    .links
                    .iter()
                    .find(|l| l.line == line && l.start <= col && col < l.end)
                    .map(|l| l.target.clone());
                if let Some(t) = hit {
                    s.open_page(&t);
                }
            }
        }
        _ => {}
    }
}

fn keep_cursor_visible(f: &mut FileState, size: (u16, u16)) {
    let h = view::file_height(size).max(1);
    if f.line < f.scroll {
        f.scroll = f.line;
    } else if f.line >= f.scroll + h {
        f.scroll = f.line + 1 - h;
    }
}

fn update_file(s: &mut State, a: Action) {
    let size = s.size;
    let h = view::file_height(size);
    let Screen::File(f) = &mut s.screen else {
        return;
    };
    let last = f.ws.line_count().saturating_sub(1);
    let line_len = |f: &FileState, l: usize| f.ws.line(l).chars().count();
    let mut moved = false;
    // Up and Down keep to the column the cursor had before the first of them.
    let vertical = matches!(
        a,
        Action::Down | Action::Up | Action::PageDown | Action::PageUp
    );
    if vertical {
        let want = f.want_col.unwrap_or(f.col);
        f.want_col = Some(want);
        f.col = want;
    } else if !matches!(a, Action::Resize(..)) {
        f.want_col = None;
    }
    match a {
        Action::Down => {
            f.line = (f.line + 1).min(last);
            moved = true;
        }
        Action::Up => {
            f.line = f.line.saturating_sub(1);
            moved = true;
        }
        Action::Left => {
            f.col = f.col.min(line_len(f, f.line)).saturating_sub(1);
            moved = true;
        }
        Action::Right => {
            f.col = (f.col + 1).min(line_len(f, f.line));
            moved = true;
        }
        Action::PageDown => {
            f.line = (f.line + h).min(last);
            f.scroll = (f.scroll + h).min(last.saturating_sub(h.saturating_sub(1)));
            moved = true;
        }
        Action::PageUp => {
            f.line = f.line.saturating_sub(h);
            f.scroll = f.scroll.saturating_sub(h);
            moved = true;
        }
        Action::Top => {
            f.line = 0;
            moved = true;
        }
        Action::Bottom => {
            f.line = last;
            moved = true;
        }
        Action::ScrollDown(x, _) if x >= view::source_area(size, f.layout).right() => {
            f.panel_scroll = f.panel_scroll.saturating_add(3);
        }
        Action::ScrollUp(x, _) if x >= view::source_area(size, f.layout).right() => {
            f.panel_scroll = f.panel_scroll.saturating_sub(3);
        }
        Action::PanelDown => f.panel_scroll = f.panel_scroll.saturating_add(1),
        Action::PanelUp => f.panel_scroll = f.panel_scroll.saturating_sub(1),
        Action::ScrollDown(..) => {
            f.scroll = (f.scroll + 3).min(last);
            f.line = f.line.max(f.scroll);
            moved = true;
        }
        Action::ScrollUp(..) => {
            f.scroll = f.scroll.saturating_sub(3);
            f.line = f.line.min(f.scroll + h.saturating_sub(1));
            moved = true;
        }
        Action::Click(x, y) => {
            let area = view::source_area(size, f.layout);
            if area.contains((x, y).into()) {
                f.line = (f.scroll + usize::from(y - area.y)).min(last);
                f.col = usize::from(x.saturating_sub(area.x + view::gutter(f.ws.line_count())));
                moved = true;
            }
        }
        Action::NextDiagnostic => {
            let cur = f.ws.offset(f.line, f.col);
            let next =
                f.ws.diagnostics()
                    .iter()
                    .find(|d| d.range.start > cur)
                    .or_else(|| f.ws.diagnostics().first())
                    .map(|d| d.range.start);
            match next {
                Some(o) => {
                    f.line = f.ws.line_of(o);
                    let start = f.ws.offset(f.line, 0);
                    f.col = f.ws.text()[start..o].chars().count();
                    moved = true;
                }
                None => s.message = "no diagnostics in this file".into(),
            }
        }
        Action::Next | Action::Prev if !f.panels.is_empty() => {
            let n = f.panels.len();
            f.panel_scroll = 0;
            f.panel = if a == Action::Next {
                (f.panel + 1) % n
            } else {
                (f.panel + n - 1) % n
            };
            refresh_occ(f);
        }
        Action::Reload => {
            f.reload();
        }
        Action::TogglePadded => match f.panels.get_mut(f.panel) {
            Some(Panel::Bank(b)) if b.padding.is_some() => {
                if b.padded.is_none() {
                    b.padded = f.ws.padded_map(&b.range);
                }
                f.padded = !f.padded;
            }
            _ => {
                s.message = "no padding fix here: p works on a conflicting __shared__ access".into()
            }
        },
        Action::NextChart => f.chart = (f.chart + 1) % 3,
        Action::ThreadsUp
        | Action::ThreadsDown
        | Action::RegsUp
        | Action::RegsDown
        | Action::SmemUp
        | Action::SmemDown
        | Action::ArchNext
        | Action::ResetInputs => {
            let Some(Panel::Kernel(k)) = f.panels.get(f.panel) else {
                s.message = "put the cursor on a kernel's name for the occupancy calculator".into();
                return;
            };
            let mut i = f.inputs.unwrap_or(k.found);
            let (max_threads, max_regs, max_smem) = arch_limits(i.arch);
            match a {
                Action::ThreadsUp => i.threads = (i.threads / 32 * 32 + 32).min(max_threads),
                Action::ThreadsDown => {
                    i.threads = (i.threads.div_ceil(32) * 32).saturating_sub(32).max(32)
                }
                Action::RegsUp => i.regs = (i.regs / 8 * 8 + 8).min(max_regs),
                Action::RegsDown => i.regs = (i.regs.div_ceil(8) * 8).saturating_sub(8).max(8),
                Action::SmemUp => {
                    i.dyn_smem = (i.dyn_smem + 1024).min(max_smem.saturating_sub(i.static_smem))
                }
                Action::SmemDown => i.dyn_smem = i.dyn_smem.saturating_sub(1024),
                Action::ArchNext => i.arch = i.arch.next(1),
                _ => i = k.found,
            }
            f.inputs = (i != k.found).then_some(i);
            refresh_occ(f);
            return;
        }
        Action::NextWhatIf | Action::PrevWhatIf => match f.panels.get(f.panel) {
            Some(Panel::Report(r)) if !r.what_ifs.is_empty() => {
                let n = r.what_ifs.len();
                f.what_if = if a == Action::NextWhatIf {
                    (f.what_if + 1) % n
                } else {
                    (f.what_if + n - 1) % n
                };
            }
            Some(Panel::Report(_)) => s.message = "this report has no what-if".into(),
            _ => {
                s.message =
                    "] and [ choose a what-if in a kernel's report (Tab to it on the kernel's name)"
                        .into()
            }
        },
        Action::Undo => {
            s.message = f.undo_fix();
            keep_cursor_visible(f, size);
            return;
        }
        Action::Save => {
            if !f.modified() {
                s.message = "no change to write".into();
                return;
            }
            let n = f.undo.len();
            s.message = match f.ws.save() {
                Ok(()) => {
                    f.saved = Some(n);
                    format!("wrote {}", f.ws.path())
                }
                Err(e) => format!("could not write {}: {e}", f.ws.path()),
            };
            return;
        }
        Action::Zoom => {
            f.layout = match f.layout {
                Layout::Split => Layout::Source,
                Layout::Source => Layout::Panel,
                Layout::Panel => Layout::Split,
            };
            return;
        }
        Action::Open if matches!(f.panels.get(f.panel), Some(Panel::Report(_))) => {
            s.message = f.apply_what_if();
            keep_cursor_visible(f, size);
            return;
        }
        Action::Open => {
            let target = match f.panels.get(f.panel) {
                Some(Panel::Symbol { page: Some(p), .. }) => Some(p.clone()),
                Some(Panel::Diagnostic(d)) => Some(d.wiki.clone()),
                _ => None,
            };
            if let Some(t) = target {
                s.open_page(&t);
            }
            return;
        }
        _ => {}
    }
    if moved {
        f.col = f.col.min(line_len(f, f.line));
        keep_cursor_visible(f, size);
        refresh_panels(f);
    }
}
