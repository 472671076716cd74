//! Problems found while loading or checking a wiki, with file:line:col.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Severity {
    /// Information only: an override of a built-in page.
    Note,
    /// The page loads but breaks the format's rules (a dangling link, a missing part).
    Warning,
    /// The page (or folder) could not be loaded and was skipped.
    Error,
}

impl Severity {
    /// `note`, `warning` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One problem, located in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// The file (or folder) as shown to the user.
    pub path: String,
    /// 1-based line (0 when the problem is about a folder).
    pub line: u32,
    /// 1-based column (0 when the problem is about a folder).
    pub col: u32,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong and what to do.
    pub message: String,
}

impl Diagnostic {
    /// A new diagnostic.
    pub fn new(
        path: impl Into<String>,
        line: u32,
        col: u32,
        severity: Severity,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            path: path.into(),
            line,
            col,
            severity,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(
                f,
                "{}: {}: {}",
                self.path,
                self.severity.as_str(),
                self.message
            )
        } else {
            write!(
                f,
                "{}:{}:{}: {}: {}",
                self.path,
                self.line,
                self.col,
                self.severity.as_str(),
                self.message
            )
        }
    }
}
