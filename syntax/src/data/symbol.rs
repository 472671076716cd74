//! The kinds of symbols (computed in `crate::symbol`).

/// What kind of symbol [`SourceFile::symbol_at`](crate::SourceFile::symbol_at) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A plain identifier: `__shfl_sync`, `tile`, `float4`.
    Identifier,
    /// A qualified identifier: `cuda::memcpy_async`, `nvcuda::wmma::mma_sync`.
    Qualified,
    /// A member access or call: `pipe.producer_commit()`, `block.sync()`.
    Member {
        /// The receiver as written (`pipe`).
        receiver: String,
        /// The receiver's type, without template arguments and with namespace aliases
        /// expanded (`cuda::pipeline`), where the file shows it.
        receiver_type: Option<String>,
    },
    /// A PTX mnemonic or directive inside an `asm` string: `cp.async.wait_group`.
    Ptx,
    /// A macro: one the file defines, or a CUDA builtin such as `__launch_bounds__` and
    /// `__syncthreads`.
    Macro,
    /// A keyword or builtin type: `__shared__`, `__global__`, `__restrict__`, `float`.
    Keyword,
}
