//! `kernaut-syntax`: tree-sitter-cuda parsing and typed, plain-data views of a CUDA file.
//!
//! The crate is the only one in kernaut that names tree-sitter. Everything it hands out is
//! plain data: owned strings, byte ranges ([`TextRange`]) into the text that was parsed, and
//! small enums. Broken code is not an error: every query returns an `Option` or a `Vec` and
//! nothing panics, whatever the input.
//!
//! The entry point is [`SourceFile`]:
//!
//! ```
//! use kernaut_syntax::{SourceFile, SymbolKind};
//!
//! let text = "__global__ void k() { __shared__ float tile[32][33]; __syncthreads(); }";
//! let file = SourceFile::parse(text);
//! let facts = file.facts();
//! assert_eq!(facts.kernels[0].name, "k");
//! assert_eq!(facts.shared[0].static_bytes, Some(32 * 33 * 4));
//!
//! let at = text.find("__syncthreads").unwrap() + 3;
//! let symbol = file.symbol_at(at).unwrap();
//! assert_eq!(symbol.name, "__syncthreads");
//! assert_eq!(symbol.kind, SymbolKind::Macro);
//! ```
//!
//! What the crate offers, by module:
//! - [`SourceFile`]: parsing, incremental [`SourceFile::apply_edit`], syntax errors, and the
//!   CUDA macros that the grammar does not know, blanked out before parsing ([`MaskedMacro`]).
//!   A file of 32 KB or more is cut into runs of top-level items of about 2 KB, each its own
//!   tree-sitter tree (node offsets stay those of the file), parsed and analysed on one
//!   thread per core ([`cancel::set_max_threads`] caps them). Facts and accesses are kept per run, so
//!   an edit re-parses and re-analyses only the runs it touches.
//! - [`SourceFile::symbol_at`]: the symbol under the cursor ([`SymbolRef`]), including PTX
//!   mnemonics inside `asm` strings.
//! - [`SourceFile::facts`]: kernels, device functions, `__shared__` declarations and the
//!   pointers carved from dynamic shared memory, launch sites, `cudaFuncSetAttribute` calls
//!   and folded constants ([`FileFacts`]).
//! - [`SourceFile::shared_accesses`]: every subscript of shared memory, with each index
//!   lowered to an [`IndexExpr`] over the thread index; [`SourceFile::global_accesses`]: the
//!   same for the subscripts of pointer parameters (global memory).
//! - Variables as the tree shows them: [`SourceFile::variable_at`] (a parameter's or
//!   local's declaration, type, qualifiers, initialiser and scope) and
//!   [`SourceFile::uses_of`] (its uses resolved through the scopes, with writes, casts and
//!   call arguments); [`SourceFile::index_terms`] (each additive term of a subscript with
//!   its range and lowered form) and [`SourceFile::guard_condition`].
//! - Control-flow helpers: [`SourceFile::enclosing`], [`SourceFile::calls_in`],
//!   [`SourceFile::find_calls`], [`SourceFile::unroll_pragmas`] and
//!   [`SourceFile::allow_comments`].
#![deny(missing_docs)]

mod access;
pub mod cancel;
mod chunk;
mod consteval;
mod constexpr_if;
mod data;
mod declarator;
mod expr;
mod facts;
mod flow;
pub mod lex;
mod macros;
mod source;
mod symbol;
mod taint;
mod types;
mod util;
mod variables;

pub use access::{
    BodySteps, ExprShape, GuardComparison, GuardCondition, IndexTerm, NameWrite, Step, Subscript,
};
pub use chunk::top_level_items;
pub use constexpr_if::ConstexprIf;
pub use data::AsmStatement;
pub use data::{
    AccessData, AccessKind, Axis, BinOp, CallData, CallSite, Enclosing, EnclosingKind, IndexExpr,
    SharedAccess, SymbolKind,
};
pub use data::{
    Constant, ConstantKind, FileFacts, FuncAttributeCall, Function, LaunchBounds, LaunchDim,
    LaunchSite, LaunchWritten, Param, SharedCarve, SharedDecl, TemplateParam,
};
pub use facts::split_template_args;
pub use flow::{
    AllowComment, ControlFlow, ForBounds, Jump, JumpKind, LaterKind, LaterStatement,
    StatementShape, UnrollPragma,
};
pub use macros::{
    constant_definitions, macro_definitions, macro_definitions_at, quoted_includes, HelperSummary,
    Include, MacroDef, Prelude,
};
/// The one fast hasher of the workspace (see docs/ARCHITECTURE.md, "Hashing"), re-exported
/// for the crates that name it through `kernaut_syntax`.
pub use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
pub use source::{MaskedMacro, SourceFile, SyntaxError};
pub use symbol::{plain_type, SymbolRef};
pub use types::type_size;
pub use util::{short_name, threads};
pub use variables::{Variable, VariableUse, VariableWrite};

/// A byte range into the text of a [`SourceFile`].
pub type TextRange = std::ops::Range<usize>;
