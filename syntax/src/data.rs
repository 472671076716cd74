//! Plain data types below [`SourceFile`](crate::SourceFile): what its caches hold (the
//! facts of a file, the walks of its functions, `enclosing` chains, shared accesses) and
//! the parts of those. Nothing here reads a `SourceFile`; the modules that compute the
//! data (`facts`, `flow`, `access`, `symbol`) sit above `source`, which sits above this.

mod access;
pub use access::{AccessData, AccessKind, Axis, BinOp, IndexExpr, SharedAccess};

mod symbol;
pub use symbol::SymbolKind;

mod flow;
pub use flow::{AsmStatement, CallData, CallSite, Enclosing, EnclosingKind};
pub(crate) use flow::{Construct, FunctionScan};

mod facts;
pub use facts::{
    Constant, ConstantKind, FileFacts, FuncAttributeCall, Function, LaunchBounds, LaunchDim,
    LaunchSite, LaunchWritten, Param, SharedCarve, SharedDecl, TemplateCall, TemplateParam,
};
pub(crate) use facts::{FactsIndex, FunctionTable, LocalsMemo};

mod cache;
pub(crate) use cache::{AccessSlot, ChunkCache, ChunkScan, OffsetCache};
