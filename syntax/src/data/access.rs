//! The data of a shared-memory access: [`SharedAccess`], what it accesses and how, and
//! its index lowered to an [`IndexExpr`] (computed in `crate::access`).

use std::fmt;
use std::sync::Arc;

use crate::TextRange;

/// The one expression form, defined where it is evaluated (`kernaut-gpu`): syntax lowers
/// indices to it.
pub use kernaut_gpu::expr::{Axis, BinOp, Expr as IndexExpr};

/// How a shared-memory element is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// Read.
    Load,
    /// Written with `=`.
    Store,
    /// Read and written (`+=`, `++`).
    LoadStore,
    /// Its address is taken (`&tile[i]`), for example for `cp.async` or `ldmatrix`.
    AddressOf,
}

/// One subscript of shared memory inside a function: its range, and what it accesses
/// ([`AccessData`], read through `Deref`: `access.array`, `access.byte_offset`).
///
/// The data is shared between copies, so copying the accesses of a file (as each edit
/// does, to move them to new offsets) allocates nothing per access.
#[derive(Clone, PartialEq, Eq)]
pub struct SharedAccess {
    /// The range of the access expression.
    pub range: TextRange,
    data: Arc<AccessData>,
}

/// What a [`SharedAccess`] accesses, and how.
#[derive(Debug, PartialEq, Eq)]
pub struct AccessData {
    /// The array or carved pointer subscripted.
    pub array: String,
    /// The `__shared__` buffer the bytes belong to (the carve's root buffer, or `array`).
    pub root: String,
    /// Load, store, both, or address taken.
    pub kind: AccessKind,
    /// The indices as written, outermost first.
    pub index_texts: Vec<String>,
    /// The indices lowered, outermost first.
    pub indices: Vec<IndexExpr>,
    /// The element size of the array, in bytes.
    pub element_size: Option<u64>,
    /// The bytes each thread accesses: the element size, or the size of the cast type for
    /// `reinterpret_cast<float4*>(&tile[..])[0]`.
    pub width: Option<u64>,
    /// The cast type, for a vectorised access through a cast.
    pub cast_type: Option<String>,
    /// The byte offset from the start of `root`: the indices flattened row-major, times the
    /// element size, plus the carve offset.
    pub byte_offset: IndexExpr,
    /// The enclosing function.
    pub function: Option<String>,
}

impl SharedAccess {
    /// The access at `range` to what `data` describes.
    pub fn new(range: TextRange, data: AccessData) -> SharedAccess {
        SharedAccess {
            range,
            data: Arc::new(data),
        }
    }
}

impl std::ops::Deref for SharedAccess {
    type Target = AccessData;

    fn deref(&self) -> &AccessData {
        &self.data
    }
}

/// One flat struct, in the field order it had before its data was shared.
impl fmt::Debug for SharedAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &*self.data;
        f.debug_struct("SharedAccess")
            .field("array", &d.array)
            .field("root", &d.root)
            .field("range", &self.range)
            .field("kind", &d.kind)
            .field("index_texts", &d.index_texts)
            .field("indices", &d.indices)
            .field("element_size", &d.element_size)
            .field("width", &d.width)
            .field("cast_type", &d.cast_type)
            .field("byte_offset", &d.byte_offset)
            .field("function", &d.function)
            .finish()
    }
}
