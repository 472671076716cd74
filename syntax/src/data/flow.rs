//! The data of the control-flow helpers: [`Enclosing`] chains, [`CallSite`]s and the walk
//! of a function that finds both ([`FunctionScan`]), computed in `crate::flow`.

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::SymbolKind;
use crate::TextRange;

/// A statement or function around an offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enclosing {
    /// What it is.
    pub kind: EnclosingKind,
    /// Its range.
    pub range: TextRange,
}

/// The kinds of [`Enclosing`] statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnclosingKind {
    /// An `if`; `in_else` says whether the offset is in the `else` branch.
    If {
        /// The condition, without the parentheses.
        condition: Arc<str>,
        /// The range of the condition.
        condition_range: TextRange,
        /// Whether the offset is in the `else` branch.
        in_else: bool,
        /// Whether the condition depends on `threadIdx`, the lane, a `thread_rank()` or a
        /// local alias of them (so threads of one warp may take different branches).
        thread_dependent: bool,
    },
    /// A `for` loop.
    For {
        /// The header between the parentheses.
        header: Arc<str>,
        /// The variable it initialises.
        var: Option<Arc<str>>,
        /// The start value, as written.
        start: Option<Arc<str>>,
        /// The exclusive end, when constant.
        end: Option<i64>,
        /// The step, when constant.
        step: Option<i64>,
        /// Whether the condition depends on the thread index.
        thread_dependent: bool,
    },
    /// A `while` loop.
    While {
        /// The condition.
        condition: Arc<str>,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// A `do ... while` loop.
    DoWhile {
        /// The condition.
        condition: Arc<str>,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// A `switch`.
    Switch {
        /// The controlling expression.
        condition: Arc<str>,
        /// The range of the controlling expression (its parentheses included).
        condition_range: TextRange,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// A conditional expression `c ? a : b`.
    Conditional {
        /// The condition.
        condition: Arc<str>,
        /// The range of the condition.
        condition_range: TextRange,
        /// Whether it depends on the thread index.
        thread_dependent: bool,
    },
    /// The function.
    Function {
        /// Its name.
        name: Arc<str>,
        /// Whether it is a `__global__` kernel.
        is_kernel: bool,
    },
}

/// A call expression, or a PTX instruction in an `asm` string: its ranges, and what is
/// called with what ([`CallData`], read through `Deref`: `call.callee`, `call.args`).
///
/// The data is shared between copies, so moving a function's cached calls to new
/// offsets after an edit copies no strings.
#[derive(Clone, PartialEq, Eq)]
pub struct CallSite {
    /// The range of the callee.
    pub callee_range: TextRange,
    /// The ranges of the arguments.
    pub arg_ranges: Vec<TextRange>,
    /// The range of the whole call (for PTX, the instruction statement).
    pub range: TextRange,
    pub(crate) data: std::sync::Arc<CallData>,
}

/// What a [`CallSite`] calls, and with what.
#[derive(Debug, PartialEq, Eq)]
pub struct CallData {
    /// The callee resolved as [`SourceFile::symbol_at`](crate::SourceFile::symbol_at)
    /// would (aliases expanded, members qualified by their receiver's type, the full PTX
    /// mnemonic).
    pub callee: String,
    /// The callee as written, without template arguments.
    pub callee_text: String,
    /// The kind of the callee symbol.
    pub kind: SymbolKind,
    /// The arguments, as written (for PTX, the operands).
    pub args: Vec<String>,
    /// The enclosing function.
    pub function: Option<String>,
}

impl CallSite {
    /// The call at these ranges of what `data` describes.
    pub fn new(
        callee_range: TextRange,
        arg_ranges: Vec<TextRange>,
        range: TextRange,
        data: CallData,
    ) -> CallSite {
        CallSite {
            callee_range,
            arg_ranges,
            range,
            data: std::sync::Arc::new(data),
        }
    }
}

impl std::ops::Deref for CallSite {
    type Target = CallData;

    fn deref(&self) -> &CallData {
        &self.data
    }
}

/// One flat struct, in the field order it had before its data was shared.
impl std::fmt::Debug for CallSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &*self.data;
        f.debug_struct("CallSite")
            .field("callee", &d.callee)
            .field("callee_text", &d.callee_text)
            .field("kind", &d.kind)
            .field("callee_range", &self.callee_range)
            .field("args", &d.args)
            .field("arg_ranges", &self.arg_ranges)
            .field("range", &self.range)
            .field("function", &d.function)
            .finish()
    }
}

/// What one walk of a function finds: its calls, and the chain part of each statement in
/// it (see [`SourceFile::scan_function`](crate::SourceFile::scan_function)).
#[derive(Debug)]
pub(crate) struct FunctionScan {
    /// The calls, in document order.
    pub(crate) calls: Vec<CallSite>,
    /// The range of the function (its `function_definition`).
    pub(crate) range: TextRange,
    /// Whether the function lies inside another function (a method of a local class).
    pub(crate) nested: bool,
    /// The statements of [`CONSTRUCTS`](crate::flow::CONSTRUCTS) in the function, the
    /// function included, in the order the walk met them.
    pub(crate) constructs: Vec<Construct>,
    /// The position in `constructs` of each statement, by `flow::scan::part_key`.
    pub(crate) parts: HashMap<(usize, usize, u16), usize>,
}

/// A statement of [`CONSTRUCTS`](crate::flow::CONSTRUCTS) as a [`FunctionScan`] keeps it.
#[derive(Debug)]
pub(crate) struct Construct {
    /// Its node's range.
    pub(crate) range: TextRange,
    /// The range its [`Enclosing`] reports (a function template's starts at `template`).
    pub(crate) shown: TextRange,
    /// An `if`'s `else` branch, a conditional expression's condition.
    pub(crate) inner: Option<TextRange>,
    /// Its [`EnclosingKind`], an `if`'s `in_else` left `false`.
    pub(crate) kind: EnclosingKind,
}

/// An inline `asm` statement, as [`SourceFile::asm_statements`](crate::SourceFile::asm_statements)
/// reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmStatement {
    /// The range of the statement's `asm (...)` expression.
    pub range: TextRange,
    /// The PTX template: the string literals' contents joined, with `\n` and `\t` as
    /// the characters they stand for.
    pub template: String,
    /// The operands in `%N` order (outputs first, then inputs): the range of each
    /// operand's value expression.
    pub operands: Vec<TextRange>,
}
