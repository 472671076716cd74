//! Real resource usage from NVIDIA's toolkit, as plain data: registers, spills,
//! stack, shared and constant memory per kernel and per template instantiation;
//! nvcc's errors and warnings with their places; and, when `cuobjdump` and
//! `nvdisasm` are there, SASS facts (`LDGSTS.BYPASS` or not, `LDL`/`STL`, the
//! instruction mix) and the SASS text of each kernel.
//!
//! This crate does the I/O of issue 19 and nothing else: it knows no LSP or TUI
//! types, so `kernaut-lsp` and `ktui` turn its structs into lenses, diagnostics
//! and tables.
//!
//! # Pieces
//!
//! - [`Toolkit::discover`] finds `nvcc` from the user's settings
//!   ([`ToolkitConfig::nvcc`]), `CUDA_HOME`/`CUDA_PATH`, `PATH`, or a Python
//!   environment holding NVIDIA's wheels (`site-packages/nvidia/cu13/bin/nvcc` from
//!   `nvidia-cuda-nvcc`, `…/nvidia/cuda_nvcc/bin/nvcc`), runs `nvcc --version`, and
//!   says where it looked when it finds nothing ([`ToolkitError`]).
//! - [`flags_for`] reads the file's entry in `compile_commands.json` (see
//!   [`find_compile_commands`]) through an allow-list, or gives
//!   `-std=c++17 -arch=<target>`. Workspace files never choose the program.
//! - [`Toolkit::compile`] runs `nvcc -fatbin -Xptxas -v` on the buffer's text
//!   in a temporary folder, with a time limit and a [`CancelFlag`] that kills the
//!   compiler, and returns a [`CompileOutput`].
//! - [`CompileCache`] keeps outputs by content hash; [`CompileJobs`] compiles in
//!   the background, one file at a time, debounced.
//! - The parsers ([`parse_ptxas_resources`], [`parse_nvcc_messages`],
//!   [`parse_cuobjdump_sass`], [`parse_cuobjdump_resource_usage`]) are public and
//!   pure, so they can be tested on captured output anywhere.
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use kernaut_compiler::{CompileFlags, CompileRequest, Toolkit, ToolkitConfig};
//!
//! let toolkit = match Toolkit::discover(&ToolkitConfig::default()) {
//!     Ok(t) => t,
//!     Err(e) => {
//!         eprintln!("{e}"); // "no CUDA toolkit found (compiling is off); tried: …"
//!         return;
//!     }
//! };
//! println!("{}", toolkit.describe()); // nvcc 13.5 (V13.5.37) at …, from PATH; SASS via cuobjdump
//! let text = "__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }";
//! let mut request = CompileRequest::new("/src/k.cu", text, CompileFlags::default_for("sm_80"));
//! request.sass = toolkit.has_sass_tools();
//! let cancel = Arc::default();
//! let output = toolkit.compile(&request, &cancel).expect("nvcc ran");
//! for k in &output.kernels {
//!     println!("{} on {}: {} registers, {} B spilled", k.name, k.arch, k.registers, k.spill_store_bytes);
//! }
//! for m in &output.messages {
//!     println!("{:?} {:?}:{:?}: {}", m.severity, m.file, m.line, m.message);
//! }
//! ```
//!
//! # Safety of the workspace
//!
//! Compiling runs the compiler, never the program. The toolkit comes only from the
//! caller's [`ToolkitConfig`] and the environment; flags from a compile database
//! pass an allow-list ([`flags`]) and what is dropped is reported
//! ([`CompileFlags::dropped`]); the text is compiled in a private temporary folder,
//! so nothing is written into the workspace.

#![deny(missing_docs)]

mod cache;
mod compile;
mod demangle;
pub mod flags;
mod jobs;
mod messages;
mod process;
mod resources;
mod sass;
mod toolkit;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use cache::{CacheKey, CompileCache};
pub use compile::{CompileError, CompileOutput, CompileRequest};
pub use flags::{
    find_compile_commands, flags_for, CompileFlags, DroppedFlag, FlagsError, FlagsOrigin,
};
pub use jobs::{CompileJobs, JobResult, JobsConfig};
pub use messages::{parse_nvcc_messages, CompilerMessage, Severity};
pub use resources::{
    parse_cuobjdump_resource_usage, parse_ptxas_resources, ConstantBank, DeviceFunctionResources,
    DumpedResources, KernelResources, ModuleResources, ResourceReport,
};
pub use sass::{parse_cuobjdump_sass, AsyncCopyMode, SassKernel};
pub use toolkit::{
    Environment, Toolkit, ToolkitConfig, ToolkitError, ToolkitSource, ToolkitVersion,
};

/// Set it to stop a compilation: the compiler and the processes it started are
/// killed and the call returns [`CompileError::Cancelled`].
pub type CancelFlag = Arc<AtomicBool>;

/// Demangles an Itanium C++ symbol (`_Z9transposeILi32EfEvPT0_PKS0_i` →
/// `void transpose<32, float>(float*, float const*, int)`); other names come back
/// as they are.
pub fn demangle(mangled: &str) -> String {
    demangle::demangle(mangled).full
}
