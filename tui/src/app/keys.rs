//! The key map: one table of (keys, where, action, description). Key handling looks
//! keys up here and the `?` screen is generated from it, so the two cannot disagree.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every screen (except while typing in the search box).
    Global,
    /// The wiki navigator.
    Browse,
    /// A wiki page.
    Page,
    /// A source file.
    File,
    /// The search box.
    Search,
}

impl Scope {
    /// The heading of the scope on the help screen.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "everywhere",
            Scope::Browse => "navigator",
            Scope::Page => "page",
            Scope::File => "source file",
            Scope::Search => "search box",
        }
    }
}

/// Everything the UI can be asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Leave `ktui`.
    Quit,
    /// Close the overlay, or go back one screen.
    Back,
    /// Show or hide the key map.
    Help,
    /// Open the search box.
    Search,
    /// Move up one line or item.
    Up,
    /// Move down one line or item.
    Down,
    /// Move left (cursor, or to the left pane).
    Left,
    /// Move right (cursor, or to the right pane).
    Right,
    /// Up one screen.
    PageUp,
    /// Down one screen.
    PageDown,
    /// To the top.
    Top,
    /// To the bottom.
    Bottom,
    /// Read the file and its `.kernaut.toml` again.
    Reload,
    /// Open the selection / follow the link.
    Open,
    /// Select the next link (page) or panel (file).
    Next,
    /// Select the previous link (page) or panel (file).
    Prev,
    /// Edit the navigator's filter.
    Filter,
    /// Jump to an anchor typed after `#` (`P3`, `S2`).
    Jump,
    /// To the next section heading.
    NextSection,
    /// To the previous section heading.
    PrevSection,
    /// Show the bank map with the padding fix applied.
    TogglePadded,
    /// Next occupancy chart.
    NextChart,
    /// More threads per block.
    ThreadsUp,
    /// Fewer threads per block.
    ThreadsDown,
    /// More registers per thread.
    RegsUp,
    /// Fewer registers per thread.
    RegsDown,
    /// More shared memory per block.
    SmemUp,
    /// Less shared memory per block.
    SmemDown,
    /// Next architecture.
    ArchNext,
    /// Back to the inputs found in the code.
    ResetInputs,
    /// Scroll the side panel down.
    PanelDown,
    /// Scroll the side panel up.
    PanelUp,
    /// Next diagnostic in the file.
    NextDiagnostic,
    /// Select the next what-if of the kernel report.
    NextWhatIf,
    /// Select the previous what-if.
    PrevWhatIf,
    /// Undo the last fix applied.
    Undo,
    /// Write the file (with the fixes applied) to disk.
    Save,
    /// Source and panel side by side, the source alone, or the panel alone.
    Zoom,
    /// Clear the search box.
    ClearInput,
    /// A typed character (search box, filter).
    Input(char),
    /// Backspace in a text field.
    Erase,
    /// Mouse wheel up at (column, row).
    ScrollUp(u16, u16),
    /// Mouse wheel down at (column, row).
    ScrollDown(u16, u16),
    /// Left click at (column, row).
    Click(u16, u16),
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
}

/// One row of the key map.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// The keys, as the help screen shows them.
    pub label: &'static str,
    /// The keys.
    pub keys: &'static [KeyCode],
    /// Whether Ctrl must be held.
    pub ctrl: bool,
    /// Where it applies.
    pub scope: Scope,
    /// What it does.
    pub action: Action,
    /// The description on the help screen.
    pub help: &'static str,
}

const fn b(
    label: &'static str,
    keys: &'static [KeyCode],
    scope: Scope,
    action: Action,
    help: &'static str,
) -> Binding {
    Binding {
        label,
        keys,
        ctrl: false,
        scope,
        action,
        help,
    }
}

use KeyCode::{
    BackTab, Backspace, Char, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up,
    F,
};

/// The key map.
pub const KEYMAP: &[Binding] = &[
    b("q", &[Char('q')], Scope::Global, Action::Quit, "quit"),
    b(
        "Esc ⌫",
        &[Esc, Backspace],
        Scope::Global,
        Action::Back,
        "close the box, or go back",
    ),
    b(
        "?",
        &[Char('?')],
        Scope::Global,
        Action::Help,
        "this key map",
    ),
    b(
        "/",
        &[Char('/')],
        Scope::Global,
        Action::Search,
        "search the wiki, from any screen",
    ),
    b(
        "j ↓",
        &[Char('j'), Down],
        Scope::Global,
        Action::Down,
        "down",
    ),
    b("k ↑", &[Char('k'), Up], Scope::Global, Action::Up, "up"),
    b(
        "h ←",
        &[Char('h'), Left],
        Scope::Global,
        Action::Left,
        "left",
    ),
    b(
        "l →",
        &[Char('l'), Right],
        Scope::Global,
        Action::Right,
        "right",
    ),
    b(
        "PgDn Space",
        &[PageDown, Char(' ')],
        Scope::Global,
        Action::PageDown,
        "down a screen",
    ),
    b(
        "PgUp",
        &[PageUp],
        Scope::Global,
        Action::PageUp,
        "up a screen",
    ),
    b(
        "g Home",
        &[Char('g'), Home],
        Scope::Global,
        Action::Top,
        "to the top",
    ),
    b(
        "G End",
        &[Char('G'), End],
        Scope::Global,
        Action::Bottom,
        "to the bottom",
    ),
    b(
        "Enter",
        &[Enter],
        Scope::Browse,
        Action::Open,
        "open the page",
    ),
    b(
        "Tab",
        &[Tab],
        Scope::Browse,
        Action::Next,
        "switch between groups and pages",
    ),
    b(
        "f",
        &[Char('f')],
        Scope::Browse,
        Action::Filter,
        "filter: tag:NAME sm:80 kind:api",
    ),
    b("Tab", &[Tab], Scope::Page, Action::Next, "next link"),
    b(
        "S-Tab",
        &[BackTab],
        Scope::Page,
        Action::Prev,
        "previous link",
    ),
    b(
        "Enter",
        &[Enter],
        Scope::Page,
        Action::Open,
        "follow the selected link",
    ),
    b(
        "#",
        &[Char('#')],
        Scope::Page,
        Action::Jump,
        "jump to an anchor: #P3 Enter",
    ),
    b(
        "] [",
        &[Char(']')],
        Scope::Page,
        Action::NextSection,
        "next / previous section",
    ),
    b("", &[Char('[')], Scope::Page, Action::PrevSection, ""),
    b(
        "Tab",
        &[Tab],
        Scope::File,
        Action::Next,
        "next panel at the cursor",
    ),
    b(
        "S-Tab",
        &[BackTab],
        Scope::File,
        Action::Prev,
        "previous panel",
    ),
    b(
        "Enter",
        &[Enter],
        Scope::File,
        Action::Open,
        "open the panel's wiki page; in the report, apply the what-if",
    ),
    b(
        "] [",
        &[Char(']')],
        Scope::File,
        Action::NextWhatIf,
        "report: next / previous what-if",
    ),
    b("", &[Char('[')], Scope::File, Action::PrevWhatIf, ""),
    b(
        "u",
        &[Char('u')],
        Scope::File,
        Action::Undo,
        "undo the last fix applied (in memory)",
    ),
    b(
        "w",
        &[Char('w')],
        Scope::File,
        Action::Save,
        "write the file with the fixes applied",
    ),
    b(
        "z",
        &[Char('z')],
        Scope::File,
        Action::Zoom,
        "side by side / source only / panel only",
    ),
    b(
        "F5",
        &[F(5)],
        Scope::File,
        Action::Reload,
        "read the file and its .kernaut.toml again",
    ),
    b(
        "n",
        &[Char('n')],
        Scope::File,
        Action::NextDiagnostic,
        "next diagnostic",
    ),
    b(
        "p",
        &[Char('p')],
        Scope::File,
        Action::TogglePadded,
        "bank map: show the padded layout",
    ),
    b(
        "c",
        &[Char('c')],
        Scope::File,
        Action::NextChart,
        "occupancy: next chart",
    ),
    b(
        "t T",
        &[Char('t')],
        Scope::File,
        Action::ThreadsUp,
        "occupancy: threads +32 / -32",
    ),
    b("", &[Char('T')], Scope::File, Action::ThreadsDown, ""),
    b(
        "r R",
        &[Char('r')],
        Scope::File,
        Action::RegsUp,
        "occupancy: registers +8 / -8",
    ),
    b("", &[Char('R')], Scope::File, Action::RegsDown, ""),
    b(
        "s S",
        &[Char('s')],
        Scope::File,
        Action::SmemUp,
        "occupancy: shared memory +1 KiB / -1 KiB",
    ),
    b("", &[Char('S')], Scope::File, Action::SmemDown, ""),
    b(
        "a",
        &[Char('a')],
        Scope::File,
        Action::ArchNext,
        "occupancy: next architecture",
    ),
    b(
        "0",
        &[Char('0')],
        Scope::File,
        Action::ResetInputs,
        "occupancy: back to the code's values",
    ),
    b(
        "J K",
        &[Char('J')],
        Scope::File,
        Action::PanelDown,
        "scroll the side panel down / up",
    ),
    b("", &[Char('K')], Scope::File, Action::PanelUp, ""),
    b(
        "Enter",
        &[Enter],
        Scope::Search,
        Action::Open,
        "open the hit at its anchor",
    ),
    b("↑ ↓", &[], Scope::Search, Action::Down, "choose a hit"),
    b(
        "Esc",
        &[Esc],
        Scope::Search,
        Action::Back,
        "close the search box",
    ),
    Binding {
        label: "C-u",
        keys: &[Char('u')],
        ctrl: true,
        scope: Scope::Search,
        action: Action::ClearInput,
        help: "clear the query",
    },
    Binding {
        label: "C-c",
        keys: &[Char('c')],
        ctrl: true,
        scope: Scope::Global,
        action: Action::Quit,
        help: "quit",
    },
];

/// The action a key press asks for in `scope`. `typing` is true while a text field has
/// the keys: printable characters are then input, not commands.
pub fn lookup(key: &KeyEvent, scope: Scope, typing: bool) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if typing && !ctrl {
        match key.code {
            Char(c) => return Some(Action::Input(c)),
            Backspace => return Some(Action::Erase),
            Up => return Some(Action::Up),
            Down => return Some(Action::Down),
            _ => {}
        }
    }
    let find = |s: Scope| {
        KEYMAP
            .iter()
            .find(|b| b.scope == s && b.ctrl == ctrl && b.keys.contains(&key.code))
            .map(|b| b.action)
    };
    find(scope)
        .or_else(|| if typing { None } else { find(Scope::Global) })
        .or_else(|| {
            // Ctrl-C quits from anywhere, the search box included.
            (ctrl && key.code == Char('c')).then_some(Action::Quit)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_means_two_things_in_one_scope() {
        for (i, a) in KEYMAP.iter().enumerate() {
            for c in KEYMAP.iter().skip(i + 1) {
                if a.scope == c.scope && a.ctrl == c.ctrl {
                    for k in a.keys {
                        assert!(!c.keys.contains(k), "{k:?} twice in {:?}", a.scope);
                    }
                }
            }
        }
    }

    #[test]
    fn typing_q_in_the_search_box_types_it() {
        let q = KeyEvent::new(Char('q'), KeyModifiers::NONE);
        assert_eq!(lookup(&q, Scope::Search, true), Some(Action::Input('q')));
        assert_eq!(lookup(&q, Scope::Page, false), Some(Action::Quit));
    }
}
