//! Facts about a file: kernels and device functions, `__shared__` declarations and carved
//! pointers, launch sites, `cudaFuncSetAttribute` calls and folded constants.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use tree_sitter::Node;

use crate::consteval::{type_size, Env};
use crate::expr::{from_node, from_text, Expr};
use crate::source::SourceFile;
use crate::util::{
    children, copy_map, mostly_fresh, named_children, node_text, par_map, preorder, squash_ws,
    strip_template_args, Ancestry, NodeExt,
};
use crate::TextRange;

/// Everything [`SourceFile::facts`] knows about a file.
#[derive(Clone, Debug, Default)]
pub struct FileFacts {
    /// `__global__` functions, in document order.
    pub kernels: Vec<Function>,
    /// `__device__` functions that are not kernels, in document order.
    pub device_functions: Vec<Function>,
    /// Every `__shared__` declaration, in document order.
    pub shared: Vec<SharedDecl>,
    /// Pointers carved from `extern __shared__` buffers, in document order.
    pub carves: Vec<SharedCarve>,
    /// Kernel launches `k<<<grid, block, smem, stream>>>(...)`.
    pub launches: Vec<LaunchSite>,
    /// `cudaFuncSetAttribute(kernel, attribute, value)` calls.
    pub func_attributes: Vec<FuncAttributeCall>,
    /// Named constants, folded where the file determines them.
    pub constants: Vec<Constant>,
    /// `namespace alias = target;` pairs, with the range of the scope they live in.
    pub namespace_aliases: Vec<(String, String, TextRange)>,
    /// `using namespace X;` directives: the namespace and the range of the enclosing scope.
    pub using_namespaces: Vec<(String, TextRange)>,
    /// Names of every macro the file `#define`s (object-like and function-like).
    pub macros: Vec<String>,
    /// Calls with explicit template arguments, `launch_gemm<128, 64>(...)`, that bind the
    /// template parameters of a host function whose launches depend on them.
    pub template_calls: Vec<TemplateCall>,
    pub(crate) env: Env,
    /// See [`FileFacts::fingerprint`].
    fingerprint: u64,
    /// Look-up tables over the lists above, built on the first look-up.
    index: OnceLock<FactsIndex>,
}

/// Look-up tables for [`FileFacts`]: built once, read by every look-up after.
#[derive(Clone, Debug, Default)]
struct FactsIndex {
    /// The lengths of `kernels`, `device_functions`, `shared` and `macros` the index was
    /// built from; a look-up on lists of other lengths scans them instead.
    lens: (usize, usize, usize, usize),
    /// The functions that do not overlap one another, as `(start, end, kernel?, position)`
    /// sorted by start; `None` when some ranges overlap, and look-ups scan the lists.
    functions: Option<Vec<(usize, usize, bool, usize)>>,
    /// The kernels as (hash of the name, position), sorted: a look-up takes the first
    /// position whose name matches among those of its hash.
    kernels: Vec<(u64, usize)>,
    /// The declarations in `shared` as (hash of the name and the function that declares
    /// it, [`scoped_hash`], position), sorted, so that the positions of one name in one
    /// scope are in document order.
    shared: Vec<(u64, usize)>,
    /// The macros as (hash of the name, position), sorted, as `kernels`.
    macros: Vec<(u64, usize)>,
}

/// FNV-1a of a name, for the look-up tables (no copy of the name is kept).
fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// [`name_hash`] of a name declared in `function` (`None`: at file scope).
fn scoped_hash(name: &str, function: Option<&str>) -> u64 {
    let mut h = name_hash(name);
    if let Some(f) = function {
        h = (h ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
        for &b in f.as_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// A look-up table of `names` (in list order): (hash of the name, position), sorted.
fn name_table<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(u64, usize)> {
    let mut table: Vec<(u64, usize)> = names.enumerate().map(|(i, n)| (name_hash(n), i)).collect();
    table.sort_unstable();
    table
}

/// The positions listed under `name` in a table sorted by (hash, position), in order,
/// including those of other names with the same hash (callers compare the names).
fn positions_of<'a>(table: &'a [(u64, usize)], name: &str) -> impl Iterator<Item = usize> + 'a {
    table_positions(table, name_hash(name))
}

/// The positions listed under hash `h` in a table sorted by (hash, position), in order.
fn table_positions(table: &[(u64, usize)], h: u64) -> impl Iterator<Item = usize> + '_ {
    let from = table.partition_point(|&(k, _)| k < h);
    table[from..]
        .iter()
        .take_while(move |&&(k, _)| k == h)
        .map(|&(_, i)| i)
}

/// A function definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The name as written (possibly qualified, `Foo::bar`).
    pub name: String,
    /// The range of the name.
    pub name_range: TextRange,
    /// The whole definition, including a `template <...>` header.
    pub range: TextRange,
    /// The body, `{ ... }`.
    pub body_range: Option<TextRange>,
    /// Whether it is `__global__`.
    pub is_kernel: bool,
    /// Whether it is `__device__` (kernels are not).
    pub is_device: bool,
    /// Qualifiers and specifiers as written: `__global__`, `__device__`, `__host__`,
    /// `__forceinline__`, `static`, `inline`, and wrapper macros such as `CUTLASS_DEVICE`.
    pub qualifiers: Vec<String>,
    /// The parameters.
    pub params: Vec<Param>,
    /// The template parameters (empty when it is not a template).
    pub template_params: Vec<TemplateParam>,
    /// `__launch_bounds__(...)`, if present.
    pub launch_bounds: Option<LaunchBounds>,
    /// `__cluster_dims__(x, y, z)`, each folded; missing dimensions are 1.
    pub cluster_dims: Option<[Option<i64>; 3]>,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The name (empty for an unnamed parameter).
    pub name: String,
    /// The type as written, without the name (`const float* __restrict__`).
    pub ty: String,
    /// The range of the whole parameter.
    pub range: TextRange,
}

/// A template parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateParam {
    /// The name.
    pub name: String,
    /// `typename`/`class` for a type parameter, otherwise the value's type (`int`).
    pub ty: String,
    /// Whether it is a type parameter.
    pub is_type: bool,
    /// The default, as written.
    pub default: Option<String>,
    /// The default folded to an integer, for a value parameter.
    pub default_value: Option<i64>,
}

/// `__launch_bounds__(maxThreadsPerBlock, minBlocksPerMultiprocessor, maxBlocksPerCluster)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The arguments as written.
    pub args: Vec<String>,
    /// The first argument, folded.
    pub max_threads: Option<i64>,
    /// The second argument, folded.
    pub min_blocks: Option<i64>,
    /// The third argument, folded.
    pub max_cluster: Option<i64>,
    /// The range of `__launch_bounds__(...)`.
    pub range: TextRange,
}

/// A `__shared__` declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedDecl {
    /// The variable name.
    pub name: String,
    /// The range of the name.
    pub name_range: TextRange,
    /// The range of the whole declaration statement.
    pub range: TextRange,
    /// The element type as written (`float`, `__half`, `cuda::barrier<...>`).
    pub element_type: String,
    /// The element size in bytes, for builtin and CUDA vector types.
    pub element_size: Option<u64>,
    /// The dimensions as written, outermost first (`["TILE", "TILE + 1"]`).
    pub dims_text: Vec<String>,
    /// The dimensions folded, outermost first; `None` where unknown or empty (`[]`).
    pub dims: Vec<Option<u64>>,
    /// `element_size` times the product of the dimensions, when all are known and the
    /// buffer is not `extern`.
    pub static_bytes: Option<u64>,
    /// Whether it is an `extern __shared__` buffer sized at launch.
    pub is_extern: bool,
    /// `__align__(N)` or `alignas(N)`, folded.
    pub alignment: Option<u64>,
    /// The enclosing function, if the declaration is inside one.
    pub function: Option<String>,
}

/// A pointer into an `extern __shared__` buffer: `float* b = (float*)(smem + OFFSET);`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedCarve {
    /// The pointer's name.
    pub name: String,
    /// The range of the declaration statement.
    pub range: TextRange,
    /// The buffer (or earlier carve) it points into.
    pub base: String,
    /// The `extern __shared__` buffer at the root of the chain of carves.
    pub root: String,
    /// The pointee type (`float`).
    pub element_type: String,
    /// The pointee size in bytes.
    pub element_size: Option<u64>,
    /// The byte offset from the start of `root`, when constant.
    pub offset_bytes: Option<i64>,
    /// The enclosing function.
    pub function: Option<String>,
}

/// One dimension argument of a launch (`grid` or `block`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchDim {
    /// The argument as written.
    pub text: String,
    /// The value folded to x, y, z (missing dimensions are 1), when the file determines it.
    pub value: Option<[i64; 3]>,
    /// x, y, z as written (fewer when omitted), after a local `dim3` variable is
    /// followed to its initialiser: `block` declared `dim3 block(BN / TN, BM / TM)` gives
    /// `["BN / TN", "BM / TM"]`. Empty when the argument is not a `dim3` or a number.
    pub parts: Vec<String>,
}

/// A call with explicit template arguments: `launch_gemm<128, 64>(c, m, n)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateCall {
    /// The function called, as written without the arguments.
    pub name: String,
    /// The template arguments as written, split at the top-level commas.
    pub args: Vec<String>,
    /// The range of the call.
    pub range: TextRange,
}

impl LaunchDim {
    /// The product x·y·z, when known.
    pub fn total(&self) -> Option<i64> {
        self.value.map(|[x, y, z]| x * y * z)
    }
}

/// A kernel launch `kernel<<<grid, block, smem, stream>>>(args)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSite {
    /// The kernel name without template arguments.
    pub kernel: String,
    /// The template arguments as written (`<float, 32>`), if any.
    pub template_args: Option<String>,
    /// The range of the whole call.
    pub range: TextRange,
    /// The grid dimension.
    pub grid: LaunchDim,
    /// The block dimension.
    pub block: LaunchDim,
    /// The dynamic shared memory size, as written.
    pub shared_bytes_text: Option<String>,
    /// The dynamic shared memory size folded.
    pub shared_bytes: Option<i64>,
    /// The stream, as written.
    pub stream: Option<String>,
    /// The kernel arguments, as written.
    pub args: Vec<String>,
    /// The function that contains the launch.
    pub function: Option<String>,
    /// The template parameters of that function when it is a template (a host function
    /// such as `template <int BM, int BN> void launch_gemm(...)`), in order.
    pub caller_params: Vec<String>,
    /// Those parameters as the file's first call of the function with foldable template
    /// arguments binds them (`launch_gemm<128, 64>(...)`); the dimensions and template
    /// arguments of the launch are folded with them. Empty when none binds them.
    pub caller_bound: Vec<(String, i64)>,
}

/// A `cudaFuncSetAttribute(kernel, attribute, value)` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncAttributeCall {
    /// The kernel, as written, without `&`, casts or template arguments.
    pub kernel: String,
    /// The attribute (`cudaFuncAttributeMaxDynamicSharedMemorySize`).
    pub attribute: String,
    /// The value as written.
    pub value_text: String,
    /// The value folded.
    pub value: Option<i64>,
    /// The range of the call.
    pub range: TextRange,
}

/// Where a named constant comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstantKind {
    /// `#define NAME value`.
    Define,
    /// `constexpr` variable.
    Constexpr,
    /// `const` integer variable.
    Const,
    /// An enumerator.
    Enum,
    /// A template parameter's default value.
    TemplateDefault,
}

/// A named constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    /// The name.
    pub name: String,
    /// Where it comes from.
    pub kind: ConstantKind,
    /// The value as written.
    pub text: String,
    /// The value folded to an integer.
    pub value: Option<i64>,
    /// The range of the name.
    pub range: TextRange,
    /// The range the constant is visible in, when narrower than the file (a function or a
    /// template).
    pub scope: Option<TextRange>,
}

impl FileFacts {
    /// The look-up tables, when they describe the lists as they are now.
    fn index(&self) -> Option<&FactsIndex> {
        let lens = (
            self.kernels.len(),
            self.device_functions.len(),
            self.shared.len(),
            self.macros.len(),
        );
        let index = self.index.get_or_init(|| self.build_index());
        (index.lens == lens).then_some(index)
    }

    fn build_index(&self) -> FactsIndex {
        let mut functions: Vec<(usize, usize, bool, usize)> = self
            .kernels
            .iter()
            .enumerate()
            .map(|(i, f)| (f.range.start, f.range.end, true, i))
            .chain(
                self.device_functions
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (f.range.start, f.range.end, false, i)),
            )
            .collect();
        functions.sort_unstable();
        let disjoint = functions.windows(2).all(|w| w[0].1 <= w[1].0);
        let kernels = name_table(self.kernels.iter().map(|k| k.name.as_str()));
        let mut shared: Vec<(u64, usize)> = self
            .shared
            .iter()
            .enumerate()
            .map(|(i, d)| (scoped_hash(&d.name, d.function.as_deref()), i))
            .collect();
        shared.sort_unstable();
        FactsIndex {
            lens: (
                self.kernels.len(),
                self.device_functions.len(),
                self.shared.len(),
                self.macros.len(),
            ),
            functions: disjoint.then_some(functions),
            kernels,
            shared,
            macros: name_table(self.macros.iter().map(String::as_str)),
        }
    }

    /// Whether the file `#define`s a macro called `name` (`macros.contains(name)`).
    pub fn defines_macro(&self, name: &str) -> bool {
        match self.index() {
            Some(index) => positions_of(&index.macros, name).any(|i| self.macros[i] == name),
            None => self.macros.iter().any(|m| m == name),
        }
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&Function> {
        match self.index() {
            Some(index) => positions_of(&index.kernels, name)
                .map(|i| &self.kernels[i])
                .find(|k| k.name == name),
            None => self.kernels.iter().find(|k| k.name == name),
        }
    }

    /// The function (kernel or device function) whose range contains `offset`.
    pub fn function_at(&self, offset: usize) -> Option<&Function> {
        if let Some(functions) = self.index().and_then(|i| i.functions.as_ref()) {
            // The ranges are disjoint, so only the last one starting at or before
            // `offset` can contain it.
            let after = functions.partition_point(|f| f.0 <= offset);
            let &(start, end, is_kernel, i) = functions.get(after.checked_sub(1)?)?;
            if !(start..end).contains(&offset) {
                return None;
            }
            return Some(if is_kernel {
                &self.kernels[i]
            } else {
                &self.device_functions[i]
            });
        }
        self.kernels
            .iter()
            .chain(&self.device_functions)
            .filter(|f| f.range.contains(&offset))
            .min_by_key(|f| f.range.len())
    }

    /// The constant named `name` visible at `offset`, folded.
    pub fn constant_value(&self, name: &str, offset: usize) -> Option<i64> {
        self.env.fold(&Expr::Name(name.to_string()), offset)
    }

    /// The `__shared__` declaration named `name` visible at `offset`.
    pub fn shared_named(&self, name: &str, offset: usize) -> Option<&SharedDecl> {
        let in_function = self.function_at(offset).map(|f| f.name.as_str());
        let visible =
            |d: &&SharedDecl| d.function.is_none() || d.function.as_deref() == in_function;
        match self.index() {
            // The first visible one in document order: the first at file scope or the
            // first in the function, whichever comes first.
            Some(index) => {
                let first = |function: Option<&str>| {
                    table_positions(&index.shared, scoped_hash(name, function)).find(|&i| {
                        let d = &self.shared[i];
                        d.name == name && d.function.as_deref() == function
                    })
                };
                let global = first(None);
                let local = in_function.and_then(|f| first(Some(f)));
                global
                    .into_iter()
                    .chain(local)
                    .min()
                    .map(|i| &self.shared[i])
            }
            None => self.shared.iter().filter(|d| d.name == name).find(visible),
        }
    }

    /// Folds the text of an integer expression (`TILE_DIM + 1`) with the file's constants
    /// visible at `offset`.
    pub fn fold_text(&self, text: &str, offset: usize) -> Option<i64> {
        self.env.fold(&from_text(text), offset)
    }

    /// [`FileFacts::fold_text`] with the names in `bound` taking the given values: the
    /// template arguments of one instantiation of a kernel.
    pub fn fold_text_with(
        &self,
        text: &str,
        offset: usize,
        bound: &[(String, i64)],
    ) -> Option<i64> {
        self.env.fold_with(&from_text(text), offset, bound)
    }
}

const QUALIFIER_KINDS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__noinline__",
];

/// What one chunk's walk finds: the nodes the second step reads.
#[derive(Default)]
struct Walk<'t> {
    functions: Vec<Node<'t>>,
    shared: Vec<Node<'t>>,
    declarations: Vec<Node<'t>>,
    calls: Vec<Node<'t>>,
    has_function: bool,
}

/// What is kept of a chunk across edits that do not touch it, with offsets relative to
/// the chunk's start (so that a chunk moved by an edit elsewhere keeps it as it is).
#[derive(Default, Debug)]
pub(crate) struct ChunkCache {
    /// The chunk's own constants, macros, namespace aliases and `using` directives.
    scan: OnceLock<ChunkScan>,
    /// Its functions, `__shared__` declarations, carves, launches and attribute calls,
    /// for the file-wide inputs (see [`ChunkScan::global`]) they were computed with.
    derived: Mutex<Option<(u64, Arc<FileFacts>)>>,
    /// What a walk of each of its functions found (calls, the parts of `enclosing`
    /// chains), by the function's end, in offsets relative to the chunk, for the
    /// file-wide inputs they were computed with.
    pub(crate) scans: Mutex<(u64, ScansByEnd)>,
    /// [`SourceFile::enclosing`] by offset in the chunk, for the file-wide inputs they
    /// were computed with.
    pub(crate) enclosing: OffsetCache<crate::Enclosing>,
    /// Its shared-memory accesses, for the file-wide inputs they were computed with.
    pub(crate) accesses: Mutex<Option<(u64, Arc<Vec<crate::SharedAccess>>)>>,
}

/// The walks of a chunk's functions by the end of each (relative to the chunk's start):
/// more than one where error recovery nests a function in another that ends there too.
pub(crate) type ScansByEnd = crate::hash::FxHashMap<usize, Vec<Arc<crate::flow::FunctionScan>>>;

/// Results kept by offset relative to a chunk's start, with the fingerprint of the
/// file-wide inputs they were computed with.
pub(crate) type OffsetCache<T> = Mutex<(u64, crate::hash::FxHashMap<usize, Arc<Vec<T>>>)>;

#[derive(Debug)]
struct ChunkScan {
    facts: FileFacts,
    /// A hash of what this chunk gives the rest of the file: its file-scope constants and
    /// the text of its top-level declarations.
    global: u64,
    has_function: bool,
}

/// Offsets `usize::MAX..usize::MAX` stand for the whole file in a chunk's relative ranges.
const FILE_SCOPE: TextRange = usize::MAX..usize::MAX;

/// Moves `r` from one base offset to another.
fn rebase(r: &mut TextRange, from: usize, to: usize) {
    if *r != FILE_SCOPE {
        *r = crate::util::move_range(r, from, to);
    }
}

impl FileFacts {
    /// Moves every range from base `from` to base `to` (ranges equal to `file` become
    /// [`FILE_SCOPE`] when `to` is 0 and back to `file` otherwise).
    fn rebased(mut self, from: usize, to: usize, file: &TextRange) -> FileFacts {
        let r = |x: &mut TextRange| {
            if to == 0 && x == file {
                *x = FILE_SCOPE;
            } else if *x == FILE_SCOPE {
                *x = file.clone();
            } else {
                rebase(x, from, to);
            }
        };
        for f in self.kernels.iter_mut().chain(&mut self.device_functions) {
            r(&mut f.name_range);
            r(&mut f.range);
            if let Some(b) = &mut f.body_range {
                r(b);
            }
            for p in &mut f.params {
                r(&mut p.range);
            }
            if let Some(lb) = &mut f.launch_bounds {
                r(&mut lb.range);
            }
        }
        for d in &mut self.shared {
            r(&mut d.name_range);
            r(&mut d.range);
        }
        for c in &mut self.carves {
            r(&mut c.range);
        }
        for l in &mut self.launches {
            r(&mut l.range);
        }
        for a in &mut self.func_attributes {
            r(&mut a.range);
        }
        for c in &mut self.template_calls {
            r(&mut c.range);
        }
        for c in &mut self.constants {
            r(&mut c.range);
            if let Some(s) = &mut c.scope {
                r(s);
            }
        }
        for (_, _, s) in &mut self.namespace_aliases {
            r(s);
        }
        for (_, s) in &mut self.using_namespaces {
            r(s);
        }
        self.env.rebase(&mut |x| r(x));
        self.index = OnceLock::new();
        self
    }

    /// Appends `part` (a chunk's facts with offsets relative to the chunk) at `base`.
    fn append(&mut self, part: FileFacts) {
        self.kernels.extend(part.kernels);
        self.device_functions.extend(part.device_functions);
        self.shared.extend(part.shared);
        self.carves.extend(part.carves);
        self.launches.extend(part.launches);
        self.func_attributes.extend(part.func_attributes);
        self.template_calls.extend(part.template_calls);
        self.constants.extend(part.constants);
        self.namespace_aliases.extend(part.namespace_aliases);
        self.using_namespaces.extend(part.using_namespaces);
        self.macros.extend(part.macros);
        self.env.extend(part.env);
    }

    /// A hash of the file-wide inputs of every chunk: a chunk's derived facts and
    /// accesses are reused while it and this value are unchanged.
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// Computes the facts of `file`, chunk by chunk (see [`crate::chunk`]), reusing what an
/// edit elsewhere left valid. Returns `None` only when there is no tree.
pub(crate) fn compute(file: &SourceFile) -> Option<FileFacts> {
    let chunks = file.chunk_views();
    if chunks.is_empty() {
        return None;
    }
    let text = file.text();
    let whole = 0..text.len();
    // Chunks' roots are small: their ancestor chains need no list of top-level nodes.
    let roots: Vec<Node> = chunks.iter().map(|c| c.root).collect();
    let tree = if roots.len() > 1 {
        Ancestry::few(roots, text.len())
    } else {
        Ancestry::new(roots, text.len())
    };
    let mut facts = FileFacts::default();

    // First step: each chunk's constants and scopes, which together make the file's
    // environment for folding. Chunks not seen before are walked in parallel.
    let fresh: Vec<usize> = (0..chunks.len())
        .filter(|&i| chunks[i].cache.scan.get().is_none())
        .collect();
    let fresh_walks = par_map(&fresh, |&i| {
        let c = &chunks[i];
        let mut local = FileFacts::default();
        let w = walk(&tree, c.root, text, &mut local);
        let scan = ChunkScan {
            global: global_key(&local, c.root, text),
            has_function: w.has_function,
            facts: local.rebased(c.start, 0, &whole),
        };
        (scan, w)
    });
    let mut walks: Vec<Option<Walk>> = (0..chunks.len()).map(|_| None).collect();
    for (&i, (scan, w)) in fresh.iter().zip(fresh_walks) {
        // Another snapshot may have filled it meanwhile: then its walk is as good.
        let _ = chunks[i].cache.scan.set(scan);
        walks[i] = Some(w);
    }
    let mut global = std::collections::hash_map::DefaultHasher::new();
    for c in &chunks {
        if let Some(scan) = c.cache.scan.get() {
            scan.global.hash(&mut global);
        }
    }
    // Each chunk's part copied to the file's offsets (in parallel for a new file), then
    // moved in order.
    let parts = copy_map(&chunks, mostly_fresh(fresh.len(), chunks.len()), |c| {
        c.cache
            .scan
            .get()
            .map(|scan| scan.facts.clone().rebased(0, c.start, &whole))
    });
    for part in parts.into_iter().flatten() {
        facts.append(part);
    }
    facts.fingerprint = global.finish();

    // Second step: functions, shared memory, launches and then carves (which may point
    // into a file-scope `extern __shared__` buffer of another chunk), folded with the
    // file's environment; kept per chunk while the environment is the same.
    let fingerprint = facts.fingerprint;
    let cached: Vec<Option<Arc<FileFacts>>> = chunks
        .iter()
        .map(|c| {
            let slot = c.cache.derived.lock().ok()?;
            slot.as_ref()
                .filter(|(key, _)| *key == fingerprint)
                .map(|(_, d)| d.clone())
        })
        .collect();
    // The chunks to derive, each with its walk: taken above for a chunk scanned afresh,
    // walked again here for one whose scan was kept but whose derived part was not.
    let pending: Vec<(usize, Option<Walk>)> = walks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| cached[*i].is_none())
        .collect();
    // One entry per pending chunk: its walk when it had none.
    let mut rewalked: Vec<Option<Walk>> = if pending.iter().any(|(_, w)| w.is_none()) {
        par_map(&pending, |(i, w)| {
            w.is_none()
                .then(|| walk(&tree, chunks[*i].root, text, &mut FileFacts::default()))
        })
    } else {
        Vec::new()
    };
    rewalked.resize_with(pending.len(), || None);
    let todo: Vec<(usize, Walk)> = pending
        .into_iter()
        .zip(rewalked)
        .filter_map(|((i, w), again)| Some((i, w.or(again)?)))
        .collect();
    let env = &facts.env;
    let derived = par_map(&todo, |(_, w)| {
        let mut out = FileFacts::default();
        derive(&tree, w, file, env, &mut out);
        out
    });
    // The file-scope `__shared__` buffers, for carves.
    let globals: Vec<SharedDecl> = cached
        .iter()
        .zip(&chunks)
        .flat_map(|(d, c)| {
            d.iter().flat_map(move |d| {
                d.shared
                    .iter()
                    .filter(|s| s.function.is_none())
                    .map(move |s| {
                        let mut s = s.clone();
                        rebase(&mut s.name_range, 0, c.start);
                        rebase(&mut s.range, 0, c.start);
                        s
                    })
            })
        })
        .chain(
            derived
                .iter()
                .flat_map(|d| d.shared.iter().filter(|s| s.function.is_none()).cloned()),
        )
        .collect();
    let mut derived = derived;
    let carved = par_map(
        &todo.iter().zip(&derived).collect::<Vec<_>>(),
        |((_, w), d)| {
            let mut out = FileFacts {
                shared: d.shared.clone(),
                ..FileFacts::default()
            };
            for decl in &w.declarations {
                carve(&tree, *decl, text, env, &globals, &mut out);
            }
            out.carves
        },
    );
    for (d, carves) in derived.iter_mut().zip(carved) {
        d.carves = carves;
    }
    let parallel = mostly_fresh(todo.len(), chunks.len());
    let cached_parts = copy_map(
        &chunks.iter().zip(&cached).collect::<Vec<_>>(),
        parallel,
        |(c, d)| {
            d.as_ref()
                .map(|d| FileFacts::clone(d).rebased(0, c.start, &whole))
        },
    );
    let mut derived = derived.into_iter();
    let mut todo = todo.into_iter();
    for (c, cached) in chunks.iter().zip(cached_parts) {
        match cached {
            Some(d) => facts.append(d),
            None => {
                let (Some(d), Some(_)) = (derived.next(), todo.next()) else {
                    continue;
                };
                let keep = d.clone().rebased(c.start, 0, &whole);
                if let Ok(mut slot) = c.cache.derived.lock() {
                    *slot = Some((fingerprint, Arc::new(keep)));
                }
                facts.append(d);
            }
        }
    }

    let env = facts.env.clone();
    for c in &mut facts.constants {
        let at = c.range.start;
        c.value = env.fold(&Expr::Name(c.name.clone()), at);
    }
    // A `const int tid = threadIdx.x;` is an alias, not a constant.
    facts
        .constants
        .retain(|c| c.kind != ConstantKind::Const || c.value.is_some());
    bind_callers(&mut facts);
    Some(facts)
}

/// Binds the template parameters of the host function templates that launch kernels, at
/// the file's first call of each with foldable template arguments, and folds the
/// launches' unknown dimensions again with them.
fn bind_callers(facts: &mut FileFacts) {
    if facts.template_calls.is_empty() {
        return;
    }
    let env = &facts.env;
    let calls = &facts.template_calls;
    for l in facts.launches.iter_mut() {
        let Some(function) = l
            .function
            .as_deref()
            .filter(|_| !l.caller_params.is_empty())
        else {
            continue;
        };
        let short = crate::short_name(function);
        let bound = calls
            .iter()
            .filter(|c| crate::short_name(&c.name) == short)
            .map(|c| {
                l.caller_params
                    .iter()
                    .zip(&c.args)
                    .filter_map(|(p, a)| Some((p.clone(), env.fold(&from_text(a), c.range.start)?)))
                    .collect::<Vec<_>>()
            })
            .find(|b| !b.is_empty());
        let Some(bound) = bound else {
            continue;
        };
        let at = l.range.start;
        for dim in [&mut l.grid, &mut l.block] {
            if dim.value.is_some() || dim.parts.is_empty() {
                continue;
            }
            let mut v = [1i64; 3];
            let mut known = true;
            for (i, p) in dim.parts.iter().take(3).enumerate() {
                match env.fold_with(&from_text(p), at, &bound) {
                    Some(x) => v[i] = x,
                    None => known = false,
                }
            }
            if known {
                dim.value = Some(v);
            }
        }
        if let (None, Some(t)) = (l.shared_bytes, &l.shared_bytes_text) {
            l.shared_bytes = env.fold_with(&from_text(t), at, &bound);
        }
        l.caller_bound = bound;
    }
}

/// Whether each chunk (in order) has a function definition, for the accesses' walk.
pub(crate) fn chunk_has_function(file: &SourceFile) -> Vec<bool> {
    file.chunk_views()
        .iter()
        .map(|c| c.cache.scan.get().is_none_or(|s| s.has_function))
        .collect()
}

/// What a chunk gives the rest of the file, hashed: its file-scope constants and the text
/// of its top-level declarations (global `__shared__` buffers, globals an index reads).
fn global_key(local: &FileFacts, root: Node, text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    local.env.hash_file_scope(&mut h);
    // Every top-level item but function definitions (and comments and pragmas): global
    // variables and buffers, types, namespace aliases and `using` directives, which the
    // lowering of an index and the resolution of a call may read from another chunk.
    for d in children(root) {
        let function = match d.kind_name() {
            "function_definition" | "comment" | "preproc_call" => true,
            "template_declaration" => named_children(d)
                .iter()
                .any(|c| c.kind_name() == "function_definition"),
            _ => false,
        };
        if !function {
            node_text(d, text).hash(&mut h);
        }
    }
    h.finish()
}

/// The second step over one chunk's nodes, carves apart: functions, `__shared__`
/// declarations, launches and attribute calls into `out`.
fn derive(tree: &Ancestry, w: &Walk, file: &SourceFile, env: &Env, out: &mut FileFacts) {
    let text = file.text();
    for f in &w.functions {
        if let Some(function) = function_facts(tree, *f, file, env) {
            if function.is_kernel {
                out.kernels.push(function);
            } else if function.is_device {
                out.device_functions.push(function);
            }
        }
    }
    for d in &w.shared {
        shared_decls(tree, *d, file, env, out);
    }
    for c in &w.calls {
        call_facts(tree, *c, text, &w.declarations, env, out);
    }
}

/// The masked macros that start inside `range`.
fn masks_in(file: &SourceFile, range: TextRange) -> &[crate::MaskedMacro] {
    let masks = file.masked_macros();
    let from = masks.partition_point(|m| m.range.start < range.start);
    let to = masks.partition_point(|m| m.range.start < range.end);
    &masks[from..to.max(from)]
}

/// The first step over one chunk: constants, macros, scopes into `facts`, and the nodes
/// the second step reads.
fn walk<'t>(tree: &Ancestry<'t>, root: Node<'t>, text: &str, facts: &mut FileFacts) -> Walk<'t> {
    let mut walk = Walk::default();
    // Inside expressions only launches and `cudaFuncSetAttribute` calls matter (and the
    // declarations in a lambda's body), so an expression whose text has neither is not
    // walked: most of a file's nodes are in expressions.
    // `>(`: a call with template arguments, which may bind a host function template's
    // parameters that a launch inside it depends on.
    let has_calls = |n: Node| {
        let t = node_text(n, text);
        t.contains("<<<") || t.contains("cudaFuncSetAttribute") || t.contains(">(")
    };
    preorder(root, |node| {
        let kind = node.kind_name();
        if kind.ends_with("_expression") && kind != "lambda_expression" && !has_calls(node) {
            return false;
        }
        if matches!(
            kind,
            "string_literal" | "raw_string_literal" | "char_literal" | "concatenated_string"
        ) {
            return false;
        }
        match kind {
            "preproc_def" => {
                if let Some(name) = node.field("name") {
                    let name = node_text(name, text).to_string();
                    let value = node
                        .field("value")
                        .map(|v| node_text(v, text).trim().to_string())
                        .unwrap_or_default();
                    let expr = from_text(&value);
                    if !value.is_empty() {
                        facts.env.insert(&name, None, expr);
                        facts.constants.push(Constant {
                            name: name.clone(),
                            kind: ConstantKind::Define,
                            text: value,
                            value: None,
                            range: node.field("name").map_or(0..0, |n| n.byte_range()),
                            scope: None,
                        });
                    }
                    facts.macros.push(name);
                }
                return false;
            }
            "preproc_function_def" => {
                if let Some(name) = node.field("name") {
                    facts.macros.push(node_text(name, text).to_string());
                }
                return false;
            }
            "namespace_alias_definition" => {
                let kids = named_children(node);
                if let (Some(a), Some(t)) = (kids.first(), kids.last()) {
                    if kids.len() >= 2 {
                        facts.namespace_aliases.push((
                            node_text(*a, text).to_string(),
                            squash_ws(node_text(*t, text)).replace(' ', ""),
                            scope_of(tree, node),
                        ));
                    }
                }
                return false;
            }
            "using_declaration" => {
                let is_namespace = children(node).iter().any(|c| c.kind_name() == "namespace");
                if let (true, Some(target)) = (is_namespace, named_children(node).last()) {
                    facts.using_namespaces.push((
                        squash_ws(node_text(*target, text)).replace(' ', ""),
                        scope_of(tree, node),
                    ));
                }
                return false;
            }
            "enum_specifier" => {
                if let Some(body) = node.field("body") {
                    let mut next = Expr::Int(0);
                    for e in named_children(body) {
                        if e.kind_name() != "enumerator" {
                            continue;
                        }
                        let Some(name) = e.field("name") else {
                            continue;
                        };
                        let value = e.field("value");
                        let expr = value.map_or(next.clone(), |v| from_node(v, text, 0));
                        let name = node_text(name, text).to_string();
                        facts.env.insert(&name, None, expr.clone());
                        facts.constants.push(Constant {
                            name: name.clone(),
                            kind: ConstantKind::Enum,
                            text: value.map_or_else(String::new, |v| squash_ws(node_text(v, text))),
                            value: None,
                            range: e.byte_range(),
                            scope: None,
                        });
                        next =
                            Expr::Binary(Box::new(Expr::Name(name)), "+", Box::new(Expr::Int(1)));
                    }
                }
            }
            "template_declaration" => {
                if let Some(params) = node.field("parameters") {
                    for p in named_children(params) {
                        if p.kind_name() == "optional_parameter_declaration" {
                            let name = p.field("declarator");
                            let value = p.field("default_value");
                            if let (Some(n), Some(v)) = (name, value) {
                                let name = node_text(n, text).to_string();
                                facts.env.insert(
                                    &name,
                                    Some(node.byte_range()),
                                    from_node(v, text, 0),
                                );
                                facts.constants.push(Constant {
                                    name,
                                    kind: ConstantKind::TemplateDefault,
                                    text: squash_ws(node_text(v, text)),
                                    value: None,
                                    range: n.byte_range(),
                                    scope: Some(node.byte_range()),
                                });
                            }
                        }
                    }
                }
            }
            "function_definition" => {
                walk.has_function = true;
                walk.functions.push(node);
            }
            "declaration" | "field_declaration" => {
                let quals: Vec<Node> = children(node)
                    .into_iter()
                    .filter(|c| c.kind_name() == "type_qualifier")
                    .collect();
                // A statement-like macro call with no `;` before the declaration
                // (`CHECK_SHAPE(a, M, K)\n constexpr int BM = 32;`) parses as an error
                // that ends in the declaration's qualifier.
                let eaten = eaten_qualifier(node, text);
                let has = |q: &str| {
                    eaten == Some(q) || quals.iter().any(|c| node_text(*c, text).trim() == q)
                };
                if has("__shared__") {
                    walk.shared.push(node);
                }
                if has("constexpr") || has("const") {
                    constant_decl(tree, node, text, has("constexpr"), facts);
                }
                walk.declarations.push(node);
            }
            // Only launches and attribute calls (the check above kept those).
            "call_expression" => walk.calls.push(node),
            _ => {}
        }
        true
    });
    walk
}

/// The range of the scope a declaration lives in: the enclosing block, function or file.
fn scope_of(tree: &Ancestry, node: Node) -> TextRange {
    for n in tree.ancestors(node) {
        if tree.is_root(n) {
            return tree.file_range();
        }
        if matches!(
            n.kind_name(),
            "compound_statement" | "declaration_list" | "translation_unit" | "function_definition"
        ) {
            return n.byte_range();
        }
    }
    node.byte_range()
}

/// The innermost function around `node`, with the range that scoped constants use.
fn enclosing_function<'t>(tree: &Ancestry<'t>, node: Node<'t>) -> Option<Node<'t>> {
    tree.ancestors(node)
        .into_iter()
        .find(|n| n.kind_name() == "function_definition")
}

/// The name of a function definition's declarator.
pub(crate) fn function_name<'t>(def: Node<'t>) -> Option<Node<'t>> {
    function_declarator(def)?.field("declarator")
}

/// The `function_declarator` of a function definition: the parent of its name, which
/// holds the parameters.
pub(crate) fn function_declarator<'t>(def: Node<'t>) -> Option<Node<'t>> {
    let mut d = def.field("declarator")?;
    for _ in 0..16 {
        if d.kind_name() == "function_declarator" {
            return Some(d);
        }
        d = d.field("declarator")?;
    }
    None
}

/// The identifier a declarator declares (through pointers, arrays, references, inits).
pub(crate) fn declarator_name<'t>(d: Node<'t>) -> Option<Node<'t>> {
    let mut d = d;
    for _ in 0..32 {
        match d.kind_name() {
            "identifier" | "field_identifier" | "qualified_identifier" | "operator_name" => {
                return Some(d)
            }
            _ => {}
        }
        d = match d.field("declarator") {
            Some(n) => n,
            None => *named_children(d)
                .iter()
                .find(|c| c.kind_name().ends_with("declarator") || c.kind_name() == "identifier")?,
        };
    }
    None
}

/// The qualifier (`constexpr`, `const`) that ends the error node just before the
/// declaration `node`: a function-like macro call without a `;` before it takes the
/// declaration's first qualifier into the error.
fn eaten_qualifier<'t>(node: Node, text: &'t str) -> Option<&'t str> {
    let prev = node.prev_sibling()?;
    if !prev.is_error()
        || !text
            .get(prev.end_byte()..node.start_byte())?
            .trim()
            .is_empty()
    {
        return None;
    }
    let mut last = prev;
    while let Some(c) = last.child(last.child_count().checked_sub(1)?) {
        last = c;
        if last.kind() == "type_qualifier" {
            let q = node_text(last, text).trim();
            return matches!(q, "constexpr" | "const").then_some(q);
        }
    }
    None
}

fn constant_decl(tree: &Ancestry, node: Node, text: &str, constexpr: bool, facts: &mut FileFacts) {
    let scope = enclosing_function(tree, node).map(|f| f.byte_range());
    for d in named_children(node) {
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(name), Some(value)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        if name.kind_name() != "identifier" && name.kind_name() != "field_identifier" {
            continue;
        }
        let value = if value.kind_name() == "initializer_list" {
            match named_children(value).as_slice() {
                [one] => *one,
                _ => continue,
            }
        } else {
            value
        };
        let expr = from_node(value, text, 0);
        let name_text = node_text(name, text).to_string();
        facts.env.insert(&name_text, scope.clone(), expr);
        facts.constants.push(Constant {
            name: name_text,
            kind: if constexpr {
                ConstantKind::Constexpr
            } else {
                ConstantKind::Const
            },
            text: squash_ws(node_text(value, text)),
            value: None,
            range: name.byte_range(),
            scope: scope.clone(),
        });
    }
}

fn fold_u(env: &Env, e: &Expr, at: usize) -> Option<u64> {
    env.fold(e, at).and_then(|v| u64::try_from(v).ok())
}

fn function_facts(tree: &Ancestry, def: Node, file: &SourceFile, env: &Env) -> Option<Function> {
    let text = file.text();
    let name = function_name(def)?;
    let outer = match tree.ancestors(def).first() {
        Some(&p) if p.kind_name() == "template_declaration" => p,
        _ => def,
    };
    let body = def.field("body");
    let header_end = body.map_or(def.end_byte(), |b| b.start_byte());
    let mut qualifiers = Vec::new();
    let mut is_kernel = false;
    let mut is_device = false;
    for c in children(def) {
        let k = c.kind_name();
        if QUALIFIER_KINDS.contains(&k) || k == "storage_class_specifier" {
            if k == "__global__" {
                is_kernel = true;
            }
            if k == "__device__" {
                is_device = true;
            }
            qualifiers.push(node_text(c, text).to_string());
        }
    }
    let mut cluster_dims = None;
    let mut third_bound: Option<(String, usize)> = None;
    for m in masks_in(file, outer.start_byte()..header_end) {
        if m.name == "__launch_bounds__" {
            third_bound = m.args.clone().map(|a| (a, m.range.start));
        } else if m.name == "__cluster_dims__" {
            let args: Vec<Option<i64>> = m
                .args
                .as_deref()
                .unwrap_or("")
                .split(',')
                .map(|a| env.fold(&from_text(a), m.range.start))
                .collect();
            let get = |i: usize| args.get(i).copied().unwrap_or(Some(1));
            cluster_dims = Some([get(0), get(1), get(2)]);
        } else if m.args.is_none() {
            if m.replacement == Some("__global__") {
                is_kernel = true;
            }
            if m.replacement == Some("__device__") {
                is_device = true;
            }
            if !qualifiers.contains(&m.name) {
                qualifiers.push(m.name.clone());
            }
        }
    }
    let launch_bounds = children(def)
        .into_iter()
        .find(|c| c.kind_name() == "launch_bounds")
        .map(|lb| {
            let args: Vec<Node> = named_children(lb)
                .into_iter()
                .filter(|n| n.kind_name() != "comment")
                .collect();
            let fold = |i: usize| {
                args.get(i)
                    .and_then(|a| env.fold(&from_node(*a, text, 0), lb.start_byte()))
            };
            let mut shown: Vec<String> = args
                .iter()
                .map(|a| squash_ws(node_text(*a, text)))
                .collect();
            let mut max_cluster = fold(2);
            if let Some((third, at)) = &third_bound {
                shown.push(squash_ws(third));
                max_cluster = env.fold(&from_text(third), *at);
            }
            LaunchBounds {
                args: shown,
                max_threads: fold(0),
                min_blocks: fold(1),
                max_cluster,
                range: lb.byte_range(),
            }
        });
    let params = function_declarator(def)
        .and_then(|fd| fd.field("parameters"))
        .map(|pl| {
            named_children(pl)
                .into_iter()
                .filter(|p| p.kind_name().contains("parameter_declaration"))
                .map(|p| {
                    let n = p.field("declarator").and_then(declarator_name);
                    let whole = node_text(p, text);
                    let ty = match n {
                        Some(n) => {
                            let s = n.start_byte() - p.start_byte();
                            let e = n.end_byte() - p.start_byte();
                            format!(
                                "{} {}",
                                whole.get(..s).unwrap_or(""),
                                whole.get(e..).unwrap_or("")
                            )
                        }
                        None => whole.to_string(),
                    };
                    Param {
                        name: n
                            .map(|n| node_text(n, text).to_string())
                            .unwrap_or_default(),
                        ty: squash_ws(&ty).replace(" *", "*").replace(" &", "&"),
                        range: p.byte_range(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let template_params = if outer.kind_name() == "template_declaration" {
        template_params(outer, text, env)
    } else {
        Vec::new()
    };
    Some(Function {
        name: node_text(name, text).to_string(),
        name_range: name.byte_range(),
        range: outer.byte_range(),
        body_range: body.map(|b| b.byte_range()),
        is_kernel,
        is_device: is_device && !is_kernel,
        qualifiers,
        params,
        template_params,
        launch_bounds,
        cluster_dims,
    })
}

fn template_params(decl: Node, text: &str, env: &Env) -> Vec<TemplateParam> {
    let Some(list) = decl.field("parameters") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in named_children(list) {
        let kind = p.kind_name();
        let is_type = kind.contains("type_parameter");
        let name_node = if is_type {
            named_children(p)
                .into_iter()
                .find(|c| c.kind_name() == "type_identifier")
        } else {
            p.field("declarator").and_then(declarator_name)
        };
        let Some(name_node) = name_node else {
            continue;
        };
        let default = p.field("default_value").or_else(|| p.field("default_type"));
        let ty = if is_type {
            children(p)
                .first()
                .map(|c| node_text(*c, text).to_string())
                .unwrap_or_else(|| "typename".into())
        } else {
            p.field("type")
                .map(|t| squash_ws(node_text(t, text)))
                .unwrap_or_default()
        };
        out.push(TemplateParam {
            name: node_text(name_node, text).to_string(),
            ty,
            is_type,
            default: default.map(|d| squash_ws(node_text(d, text))),
            default_value: default
                .filter(|_| !is_type)
                .and_then(|d| env.fold(&from_node(d, text, 0), decl.start_byte())),
        });
    }
    out
}

/// The declarators of a declaration (skipping the type and qualifiers).
fn declarators(decl: Node) -> Vec<Node> {
    let mut cursor = decl.walk();
    decl.fields("declarator", &mut cursor).collect()
}

fn shared_decls(tree: &Ancestry, decl: Node, file: &SourceFile, env: &Env, facts: &mut FileFacts) {
    let text = file.text();
    let is_extern = children(decl)
        .iter()
        .any(|c| c.kind_name() == "storage_class_specifier" && node_text(*c, text) == "extern");
    let element_type = decl
        .field("type")
        .map(|t| squash_ws(node_text(t, text)))
        .unwrap_or_default();
    let mut alignment = None;
    for m in masks_in(file, decl.byte_range()) {
        if m.name == "__align__" {
            alignment = m
                .args
                .as_deref()
                .and_then(|a| fold_u(env, &from_text(a), decl.start_byte()));
        }
    }
    if let Some(spec) = children(decl).into_iter().find(|c| {
        c.kind_name() == "alignas_qualifier" || node_text(*c, text).starts_with("alignas")
    }) {
        let inner = node_text(spec, text)
            .trim_start_matches("alignas")
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')');
        alignment = fold_u(env, &from_text(inner), decl.start_byte());
    }
    let function = enclosing_function(tree, decl)
        .and_then(function_name)
        .map(|n| node_text(n, text).to_string());
    for d in declarators(decl) {
        let Some(name) = declarator_name(d) else {
            continue;
        };
        let mut dims_nodes = Vec::new();
        let mut cur = if d.kind_name() == "init_declarator" {
            d.field("declarator").unwrap_or(d)
        } else {
            d
        };
        let mut pointer = false;
        for _ in 0..16 {
            match cur.kind_name() {
                "array_declarator" => {
                    dims_nodes.push(cur.field("size"));
                }
                "pointer_declarator" => pointer = true,
                _ => break,
            }
            match cur.field("declarator") {
                Some(n) => cur = n,
                None => break,
            }
        }
        dims_nodes.reverse();
        let dims_text: Vec<String> = dims_nodes
            .iter()
            .map(|n| n.map(|n| squash_ws(node_text(n, text))).unwrap_or_default())
            .collect();
        let dims: Vec<Option<u64>> = dims_nodes
            .iter()
            .map(|n| n.and_then(|n| fold_u(env, &from_node(n, text, 0), n.start_byte())))
            .collect();
        let element_size = if pointer {
            Some(8)
        } else {
            type_size(&strip_template_args(&element_type))
        };
        let static_bytes = if is_extern {
            None
        } else {
            element_size.and_then(|e| dims.iter().try_fold(e, |acc, d| acc.checked_mul((*d)?)))
        };
        facts.shared.push(SharedDecl {
            name: node_text(name, text).to_string(),
            name_range: name.byte_range(),
            range: decl.byte_range(),
            element_type: element_type.clone(),
            element_size,
            dims_text,
            dims,
            static_bytes,
            is_extern,
            alignment,
            function: function.clone(),
        });
    }
}

/// Strips casts and parentheses, returning the innermost expression and the last cast type.
fn strip_casts(mut e: &Expr) -> (&Expr, Option<&str>) {
    let mut ty = None;
    while let Expr::Cast(t, inner) = e {
        ty.get_or_insert(t.as_str());
        e = inner;
    }
    (e, ty)
}

fn carve(
    tree: &Ancestry,
    decl: Node,
    text: &str,
    env: &Env,
    globals: &[SharedDecl],
    facts: &mut FileFacts,
) {
    // Only an initialised pointer can be a carve: skip the rest before any tree walk.
    if !node_text(decl, text).contains('*') || !node_text(decl, text).contains('=') {
        return;
    }
    let Some(func) = enclosing_function(tree, decl) else {
        return;
    };
    let function = function_name(func).map(|n| node_text(n, text).to_string());
    let base_type = decl
        .field("type")
        .map(|t| squash_ws(node_text(t, text)))
        .unwrap_or_default();
    for d in declarators(decl) {
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(target), Some(value)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        if target.kind_name() != "pointer_declarator" {
            continue;
        }
        let Some(name) = declarator_name(target) else {
            continue;
        };
        let expr = from_node(value, text, 0);
        let (inner, _) = strip_casts(&expr);
        let (base, offset_elems) = match inner {
            Expr::Name(b) => (b.clone(), Some(Expr::Int(0))),
            Expr::Binary(l, "+", r) => match strip_casts(l).0 {
                Expr::Name(b) => (b.clone(), Some((**r).clone())),
                _ => continue,
            },
            Expr::Unary("&", sub) => match &**sub {
                Expr::Subscript(b, i) => match &**b {
                    Expr::Name(b) => (b.clone(), Some((**i).clone())),
                    _ => continue,
                },
                _ => continue,
            },
            _ => continue,
        };
        // The base must be an `extern __shared__` buffer or an earlier carve in this function.
        let (root, base_offset, base_elem) = if let Some(s) = globals
            .iter()
            .filter(|g| g.range.start < decl.start_byte())
            .chain(&facts.shared)
            .find(|s| {
                s.is_extern
                    && s.name == base
                    && s.function
                        .as_ref()
                        .is_none_or(|f| Some(f) == function.as_ref())
            }) {
            (s.name.clone(), Some(0), s.element_size)
        } else if let Some(c) = facts
            .carves
            .iter()
            .rev()
            .find(|c| c.name == base && c.function == function)
        {
            (c.root.clone(), c.offset_bytes, c.element_size)
        } else {
            continue;
        };
        let at = decl.start_byte();
        let offset = offset_elems.and_then(|o| env.fold(&o, at));
        let offset_bytes = match (base_offset, offset, base_elem) {
            (Some(b), Some(o), Some(sz)) => o.checked_mul(sz as i64).and_then(|o| o.checked_add(b)),
            _ => None,
        };
        let element_type = base_type.clone();
        facts.carves.push(SharedCarve {
            name: node_text(name, text).to_string(),
            range: decl.byte_range(),
            base,
            root,
            element_size: type_size(&element_type),
            element_type,
            offset_bytes,
            function: function.clone(),
        });
    }
}

/// The x, y, z of a launch dimension as written: the arguments of `dim3(x, y, z)` or of
/// a local `dim3` variable's initialiser, or the expression itself.
fn dim_parts(
    n: Node,
    text: &str,
    at: usize,
    dim3_vars: &[(String, Vec<String>, TextRange)],
) -> Vec<String> {
    if let Some(args) = dim3_call_args(n, text) {
        return args;
    }
    if n.kind_name() == "identifier" {
        let name = node_text(n, text);
        if let Some((_, args, _)) = dim3_vars
            .iter()
            .filter(|(v, _, scope)| v == name && scope.contains(&at))
            .min_by_key(|(_, _, s)| s.len())
        {
            return args.clone();
        }
    }
    vec![squash_ws(node_text(n, text))]
}

/// The arguments of `dim3(x, y, z)` or `dim3{x, y, z}`, as written.
fn dim3_call_args(n: Node, text: &str) -> Option<Vec<String>> {
    let (callee, args) = match n.kind_name() {
        "call_expression" => (n.field("function")?, n.field("arguments")?),
        "compound_literal_expression" => (n.field("type")?, n.field("value")?),
        _ => return None,
    };
    (node_text(callee, text) == "dim3").then(|| {
        named_children(args)
            .into_iter()
            .filter(|a| a.kind_name() != "comment")
            .map(|a| squash_ws(node_text(a, text)))
            .collect()
    })
}

/// Folds a launch dimension from its x, y, z ([`dim_parts`]); missing ones are 1.
fn fold_dim(parts: &[String], at: usize, env: &Env) -> Option<[i64; 3]> {
    let mut v = [1i64; 3];
    for (i, a) in parts.iter().take(3).enumerate() {
        v[i] = env.fold(&from_text(a), at)?;
    }
    Some(v)
}

fn call_facts<'t>(
    tree: &Ancestry<'t>,
    call: Node<'t>,
    text: &str,
    declarations: &[Node<'t>],
    env: &Env,
    facts: &mut FileFacts,
) {
    let Some(f) = call.field("function") else {
        return;
    };
    let at = call.start_byte();
    let config = children(call)
        .into_iter()
        .find(|c| c.kind_name() == "kernel_call_syntax");
    let args: Vec<Node> = call
        .field("arguments")
        .map(|a| {
            named_children(a)
                .into_iter()
                .filter(|n| n.kind_name() != "comment")
                .collect()
        })
        .unwrap_or_default();
    let function = enclosing_function(tree, call);
    if let Some(config) = config {
        let cfg: Vec<Node> = named_children(config)
            .into_iter()
            .filter(|n| n.kind_name() != "comment")
            .collect();
        // Local `dim3` variables, looked up only when a dimension is a plain name.
        let needs_vars = cfg.iter().take(2).any(|n| n.kind_name() == "identifier");
        let dim3_vars: Vec<(String, Vec<String>, TextRange)> = match function.filter(|_| needs_vars)
        {
            Some(func) => declarations
                .iter()
                .filter(|d| func.byte_range().contains(&d.start_byte()))
                .filter(|d| {
                    d.field("type")
                        .is_some_and(|t| matches!(node_text(t, text), "dim3" | "auto"))
                })
                .flat_map(|d| dim3_inits(tree, *d, text))
                .collect(),
            None => Vec::new(),
        };
        let dim = |i: usize| {
            cfg.get(i).map_or(
                LaunchDim {
                    text: String::new(),
                    value: None,
                    parts: Vec::new(),
                },
                |n| {
                    let parts = dim_parts(*n, text, at, &dim3_vars);
                    LaunchDim {
                        text: squash_ws(node_text(*n, text)),
                        value: fold_dim(&parts, at, env),
                        parts,
                    }
                },
            )
        };
        // `CHECK(x, …)` with no `;` before `k<<<…>>>(…)`: the macro call parses as the
        // callee and the kernel's name as an error node before the configuration.
        let after_macro = children(call)
            .into_iter()
            .take_while(|c| c.kind_name() != "kernel_call_syntax")
            .filter(|c| c.is_error())
            .last()
            .filter(|_| f.kind_name() == "call_expression")
            .map(|e| squash_ws(node_text(e, text)).replace(' ', ""))
            .filter(|t| {
                t.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            });
        let (kernel, template_args) = match f.kind_name() {
            _ if after_macro.is_some() => {
                let t = after_macro.unwrap_or_default();
                match t.find('<').filter(|_| t.ends_with('>')) {
                    Some(open) => (t[..open].to_string(), Some(t[open..].to_string())),
                    None => (t, None),
                }
            }
            "template_function" => (
                f.field("name")
                    .map(|n| node_text(n, text).to_string())
                    .unwrap_or_default(),
                f.field("arguments").map(|a| squash_ws(node_text(a, text))),
            ),
            _ => (squash_ws(&strip_template_args(node_text(f, text))), None),
        };
        let grid = dim(0);
        let block = dim(1);
        facts.launches.push(LaunchSite {
            kernel,
            template_args,
            range: call.byte_range(),
            grid,
            block,
            shared_bytes_text: cfg.get(2).map(|n| squash_ws(node_text(*n, text))),
            shared_bytes: cfg
                .get(2)
                .and_then(|n| env.fold(&from_node(*n, text, 0), at)),
            stream: cfg.get(3).map(|n| squash_ws(node_text(*n, text))),
            args: args
                .iter()
                .map(|a| squash_ws(node_text(*a, text)))
                .collect(),
            function: function
                .and_then(function_name)
                .map(|n| node_text(n, text).to_string()),
            caller_params: function
                .and_then(|func| tree.ancestors(func).first().copied())
                .filter(|p| p.kind_name() == "template_declaration")
                .map(|p| {
                    template_params(p, text, env)
                        .into_iter()
                        .map(|t| t.name)
                        .collect()
                })
                .unwrap_or_default(),
            caller_bound: Vec::new(),
        });
        return;
    }
    if f.kind_name() == "template_function" {
        if let (Some(n), Some(a)) = (f.field("name"), f.field("arguments")) {
            facts.template_calls.push(TemplateCall {
                name: squash_ws(node_text(n, text)),
                args: split_template_args(node_text(a, text)),
                range: call.byte_range(),
            });
        }
    }
    let callee = squash_ws(node_text(f, text));
    if callee.trim_start_matches("::") == "cudaFuncSetAttribute" && args.len() >= 3 {
        let k = squash_ws(node_text(args[0], text));
        let k = k
            .trim_start_matches('&')
            .trim_start_matches("(void*)")
            .trim_start_matches("(const void*)")
            .trim_start_matches('&')
            .trim();
        facts.func_attributes.push(FuncAttributeCall {
            kernel: strip_template_args(k).trim().to_string(),
            attribute: squash_ws(node_text(args[1], text)),
            value_text: squash_ws(node_text(args[2], text)),
            value: env.fold(&from_node(args[2], text, 0), at),
            range: call.byte_range(),
        });
    }
}

/// `dim3 b(32, 8);`, `dim3 b = dim3(32, 8);` and `dim3 b{32, 8};` declarators.
fn dim3_inits(tree: &Ancestry, decl: Node, text: &str) -> Vec<(String, Vec<String>, TextRange)> {
    let scope = scope_of(tree, decl);
    let is_auto = decl
        .field("type")
        .is_some_and(|t| node_text(t, text) == "auto");
    let texts = |n: Node| -> Vec<String> {
        named_children(n)
            .into_iter()
            .filter(|a| a.kind_name() != "comment")
            .map(|a| squash_ws(node_text(a, text)))
            .collect()
    };
    let mut out = Vec::new();
    for d in declarators(decl) {
        if d.kind_name() == "function_declarator" {
            // `dim3 block(TILE, ROWS);` parses as a function declaration.
            let (Some(n), Some(params), false) =
                (d.field("declarator"), d.field("parameters"), is_auto)
            else {
                continue;
            };
            out.push((node_text(n, text).to_string(), texts(params), scope.clone()));
            continue;
        }
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(n), Some(v)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        let args = match (dim3_call_args(v, text), v.kind_name()) {
            (Some(args), _) => args,
            // `auto cfg = make_config(128);` is not known to be a `dim3`.
            (None, _) if is_auto => continue,
            (None, "argument_list" | "initializer_list") => texts(v),
            (None, _) => vec![squash_ws(node_text(v, text))],
        };
        out.push((node_text(n, text).to_string(), args, scope.clone()));
    }
    out
}

/// The arguments of `<a, b<c, d>, (e, f)>`, split at the top-level commas.
fn split_template_args(text: &str) -> Vec<String> {
    let inner = text.trim();
    let inner = inner.strip_prefix('<').unwrap_or(inner);
    let inner = inner.strip_suffix('>').unwrap_or(inner);
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(squash_ws(cur.trim()));
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(squash_ws(cur.trim()));
    }
    out
}
