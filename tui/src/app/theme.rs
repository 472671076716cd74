//! Colours, or their absence: with `NO_COLOR` set every role keeps only its modifiers
//! (bold, underline, reverse), so the screens stay readable in monochrome.
use ratatui::style::{Color, Modifier, Style};

/// What a piece of text is, for styling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Plain text.
    Text,
    /// Less important text.
    Dim,
    /// A heading.
    Heading,
    /// A screen or box title.
    Title,
    /// Bold text.
    Strong,
    /// Inline code.
    Code,
    /// A link.
    Link,
    /// The selected link or item.
    Selected,
    /// A matched word in a snippet.
    Match,
    /// A C++/CUDA keyword.
    Keyword,
    /// A type.
    Type,
    /// A number.
    Number,
    /// A string or character literal.
    Str,
    /// A comment.
    Comment,
    /// A preprocessor line.
    Preproc,
    /// A CUDA qualifier or intrinsic (`__global__`, `__syncthreads`).
    Cuda,
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// A hint.
    Hint,
    /// A line added by a fix.
    Added,
    /// A line removed by a fix.
    Removed,
    /// A lane that is accessed without conflict.
    BankOk,
    /// A lane in conflict.
    BankConflict,
    /// The cursor.
    Cursor,
    /// Key names in the help and the status line.
    Key,
}

/// The styles in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used (false under `NO_COLOR`).
    pub color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to anything non-empty.
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    /// The style of a role.
    pub fn s(&self, role: Role) -> Style {
        let m = Style::default();
        let bold = m.add_modifier(Modifier::BOLD);
        if !self.color {
            return match role {
                Role::Heading | Role::Title | Role::Strong | Role::Error | Role::Key => bold,
                Role::Link | Role::Match => m.add_modifier(Modifier::UNDERLINED),
                Role::Selected | Role::Cursor | Role::BankConflict => {
                    m.add_modifier(Modifier::REVERSED)
                }
                _ => m,
            };
        }
        match role {
            Role::Text => m,
            Role::Dim | Role::Comment => m.fg(Color::DarkGray),
            Role::Heading => bold.fg(Color::Yellow),
            Role::Title => bold.fg(Color::Cyan),
            Role::Strong => bold,
            Role::Code => m.fg(Color::LightGreen),
            Role::Link => m.fg(Color::LightBlue).add_modifier(Modifier::UNDERLINED),
            Role::Selected => m.fg(Color::Black).bg(Color::LightBlue),
            Role::Match => bold.fg(Color::LightYellow),
            Role::Keyword => m.fg(Color::Magenta),
            Role::Type => m.fg(Color::Cyan),
            Role::Number => m.fg(Color::LightRed),
            Role::Str => m.fg(Color::Green),
            Role::Preproc => m.fg(Color::LightMagenta),
            Role::Cuda => bold.fg(Color::LightCyan),
            Role::Error => bold.fg(Color::Red),
            Role::Warning => bold.fg(Color::Yellow),
            Role::Hint => m.fg(Color::Blue),
            Role::Added => m.fg(Color::Green),
            Role::Removed => m.fg(Color::Red),
            Role::BankOk => m.fg(Color::Green),
            Role::BankConflict => bold.fg(Color::Red),
            Role::Cursor => m.add_modifier(Modifier::REVERSED),
            Role::Key => bold.fg(Color::LightYellow),
        }
    }
}
