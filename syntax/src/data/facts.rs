//! The data of the facts about a file ([`FileFacts`] and its parts, and the look-up
//! tables over them), computed in `crate::facts`.

use std::sync::{Arc, OnceLock};

use crate::consteval::Env;
use crate::TextRange;

/// Everything [`SourceFile::facts`](crate::SourceFile::facts) knows about a file.
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
    /// The headers' macros the host gave the file ([`SourceFile::with_prelude`]): their
    /// object-like values are in `env` after the file's own.
    ///
    /// [`SourceFile::with_prelude`]: crate::SourceFile::with_prelude
    pub(crate) prelude: Option<Arc<crate::macros::Prelude>>,
    /// See [`FileFacts::fingerprint`].
    pub(crate) fingerprint: u64,
    /// Look-up tables over the lists above, built on the first look-up.
    pub(crate) index: OnceLock<FactsIndex>,
    /// What the lowering has learnt about the functions' locals ([`LocalsMemo`]).
    pub(crate) locals_memo: LocalsMemo,
}

/// Answers about a file's functions and locals that the lowering and the index terms ask
/// for again and again, kept with the facts of one text (a clone starts empty: the facts
/// of another text).
#[derive(Default)]
pub(crate) struct LocalsMemo {
    /// Every `#pragma unroll` of the file with its loop
    /// ([`SourceFile::unroll_pragmas`](crate::SourceFile::unroll_pragmas)), asked for
    /// each loop a merge or a scratch question looks at.
    pub(crate) unroll_pragmas: std::sync::OnceLock<Arc<[crate::UnrollPragma]>>,
    /// The names each function assigns (`=`, `op=`, `++`, `--` on a plain name), by the
    /// function's range: whether a local is reassigned is asked for most names a
    /// lowering meets, and most are not, which this answers without walking the
    /// function again for each new lowering.
    functions: std::sync::Mutex<rustc_hash::FxHashMap<(usize, usize), NameSet>>,
    /// Whether each local (by the start of its name) is never written after its
    /// declaration nor has its address taken.
    read_only: std::sync::Mutex<rustc_hash::FxHashMap<usize, bool>>,
    /// The index terms of each subscript, by its range
    /// ([`SourceFile::index_terms`](crate::SourceFile::index_terms)).
    terms: Memo<(usize, usize), Arc<[crate::IndexTerm]>>,
    /// The variables declared in a range, looking only into the statements that mention
    /// one of the words (by the range and the words).
    variables: Memo<RangeAndWords, Arc<[crate::Variable]>>,
    /// The uses of each variable, by the start of its name.
    uses: Memo<usize, Arc<[crate::VariableUse]>>,
    /// The pointer expression at each range, as a base name and an element index
    /// ([`SourceFile::pointer_operand`](crate::SourceFile::pointer_operand)).
    operands: Memo<(usize, usize), Option<(String, crate::IndexExpr)>>,
    /// The control flow of each function, by the function's range
    /// ([`SourceFile::control_flow`](crate::SourceFile::control_flow)).
    flows: Memo<(usize, usize), Arc<crate::ControlFlow>>,
    /// The condition at each range lowered for a question of uniformity, by the range,
    /// the bound names and the block
    /// ([`SourceFile::uniformity_condition`](crate::SourceFile::uniformity_condition)).
    conditions: Memo<UniformityKey, Option<crate::GuardCondition>>,
    /// The statements of each preprocessor conditional, by its range
    /// ([`SourceFile::conditional_statements`](crate::SourceFile::conditional_statements)).
    arms: Memo<(usize, usize), Option<Arc<[crate::LaterStatement]>>>,
    /// Whether the code between two ranges runs straight, by the two ranges in document
    /// order ([`SourceFile::straight_line`](crate::SourceFile::straight_line)).
    straight: Memo<(usize, usize, usize, usize), bool>,
    /// The simple statement around each range
    /// ([`SourceFile::statement_at`](crate::SourceFile::statement_at)).
    statements: Memo<(usize, usize), Option<crate::TextRange>>,
    /// The statements without statements inside that lie in each range
    /// ([`SourceFile::simple_statements`](crate::SourceFile::simple_statements)).
    simple: Memo<(usize, usize), Arc<[crate::TextRange]>>,
    /// The top of the expression at each range
    /// ([`SourceFile::expression_shape`](crate::SourceFile::expression_shape)).
    shapes: Memo<(usize, usize), Option<crate::ExprShape>>,
    /// The variable each name declares or refers to, by the offset asked about
    /// ([`SourceFile::variable_at`](crate::SourceFile::variable_at)).
    variables_at: Memo<usize, Option<crate::Variable>>,
    /// The body cost of each `for` loop, by its range
    /// ([`SourceFile::loop_body_cost`](crate::SourceFile::loop_body_cost)).
    body_costs: Memo<(usize, usize), Option<u32>>,
    /// The comparisons of each guard, by its range, the bound names and how it is read
    /// ([`SourceFile::lane_guard_clauses`](crate::SourceFile::lane_guard_clauses)).
    guards: Memo<GuardKey, Option<GuardClauses>>,
}

/// A guard's range (start and end byte), the names bound, and whether it is read for
/// one warp's lanes and with disjunctions.
type GuardKey = (usize, usize, Box<[(String, i64)]>, bool, bool);

/// A guard's comparisons and whether the condition is their conjunction's negation.
pub(crate) type GuardClauses = (Vec<crate::GuardComparison>, bool);

/// A condition's range (start and end byte), the names bound and the block it is
/// lowered with.
type UniformityKey = (usize, usize, Box<[(String, i64)]>, Option<[u32; 3]>);

/// A range (start and end byte) and the words a look into it is limited to.
type RangeAndWords = (usize, usize, Box<[String]>);

/// One table of answers of a [`LocalsMemo`], shared between threads.
type Memo<K, V> = std::sync::Mutex<rustc_hash::FxHashMap<K, V>>;

/// The answer `map` keeps for `key`, computed by `compute` (outside the lock) the first
/// time.
fn memo<K: std::hash::Hash + Eq, V: Clone>(
    map: &Memo<K, V>,
    key: K,
    compute: impl FnOnce() -> V,
) -> V {
    if let Some(found) = map.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return found;
    }
    let answer = compute();
    if let Ok(mut m) = map.lock() {
        m.insert(key, answer.clone());
    }
    answer
}

/// A set of names, shared.
pub(crate) type NameSet = Arc<rustc_hash::FxHashSet<String>>;

impl LocalsMemo {
    /// The names written in the function at `range` (start and end byte), computed by
    /// `walk` the first time.
    pub(crate) fn get_or_insert_with(
        &self,
        range: (usize, usize),
        walk: impl FnOnce() -> rustc_hash::FxHashSet<String>,
    ) -> Arc<rustc_hash::FxHashSet<String>> {
        if let Some(found) = self
            .functions
            .lock()
            .ok()
            .and_then(|m| m.get(&range).cloned())
        {
            return found;
        }
        let names = Arc::new(walk());
        if let Ok(mut m) = self.functions.lock() {
            m.insert(range, names.clone());
        }
        names
    }

    /// Whether the local whose name starts at `name_start` is read only, computed by
    /// `check` the first time.
    pub(crate) fn read_only(&self, name_start: usize, check: impl FnOnce() -> bool) -> bool {
        if let Some(found) = self
            .read_only
            .lock()
            .ok()
            .and_then(|m| m.get(&name_start).copied())
        {
            return found;
        }
        let answer = check();
        if let Ok(mut m) = self.read_only.lock() {
            m.insert(name_start, answer);
        }
        answer
    }
}

impl LocalsMemo {
    /// The index terms of the subscript at `range`, computed by `compute` the first time.
    pub(crate) fn terms(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Vec<crate::IndexTerm>,
    ) -> Arc<[crate::IndexTerm]> {
        memo(&self.terms, (range.start, range.end), || compute().into())
    }

    /// The variables declared in `range` in the statements that mention one of `words`,
    /// computed by `compute` the first time.
    pub(crate) fn variables(
        &self,
        range: &crate::TextRange,
        words: &[&str],
        compute: impl FnOnce() -> Vec<crate::Variable>,
    ) -> Arc<[crate::Variable]> {
        let words = words.iter().map(|w| w.to_string()).collect();
        memo(&self.variables, (range.start, range.end, words), || {
            compute().into()
        })
    }

    /// The uses of the variable whose name starts at `name_start`, computed by `compute`
    /// the first time.
    pub(crate) fn uses(
        &self,
        name_start: usize,
        compute: impl FnOnce() -> Vec<crate::VariableUse>,
    ) -> Arc<[crate::VariableUse]> {
        memo(&self.uses, name_start, || compute().into())
    }
}

impl LocalsMemo {
    /// The pointer expression at `range`, computed by `compute` the first time.
    pub(crate) fn operand(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Option<(String, crate::IndexExpr)>,
    ) -> Option<(String, crate::IndexExpr)> {
        memo(&self.operands, (range.start, range.end), compute)
    }

    /// The control flow of the function at `function`, computed by `compute` the first
    /// time.
    pub(crate) fn flow(
        &self,
        function: &crate::TextRange,
        compute: impl FnOnce() -> crate::ControlFlow,
    ) -> Arc<crate::ControlFlow> {
        memo(&self.flows, (function.start, function.end), || {
            Arc::new(compute())
        })
    }
}

impl LocalsMemo {
    /// The condition at `range` lowered for uniformity with `bound` and `block`,
    /// computed by `compute` the first time.
    pub(crate) fn condition(
        &self,
        range: &crate::TextRange,
        bound: &[(String, i64)],
        block: Option<[u32; 3]>,
        compute: impl FnOnce() -> Option<crate::GuardCondition>,
    ) -> Option<crate::GuardCondition> {
        let key = (range.start, range.end, bound.into(), block);
        memo(&self.conditions, key, compute)
    }

    /// The statements of the preprocessor conditional at `range`, computed by
    /// `compute` the first time.
    pub(crate) fn arms(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Option<Vec<crate::LaterStatement>>,
    ) -> Option<Arc<[crate::LaterStatement]>> {
        memo(&self.arms, (range.start, range.end), || {
            compute().map(Into::into)
        })
    }
}

impl LocalsMemo {
    /// Whether the code between `first` and `second` (in document order) runs straight,
    /// computed by `compute` the first time.
    pub(crate) fn straight(
        &self,
        first: &crate::TextRange,
        second: &crate::TextRange,
        compute: impl FnOnce() -> bool,
    ) -> bool {
        let key = (first.start, first.end, second.start, second.end);
        memo(&self.straight, key, compute)
    }

    /// The comparisons of the guard at `range` read with `bound` and the two flags,
    /// computed by `compute` the first time.
    pub(crate) fn guard(
        &self,
        range: &crate::TextRange,
        bound: &[(String, i64)],
        flags: (bool, bool),
        compute: impl FnOnce() -> Option<GuardClauses>,
    ) -> Option<GuardClauses> {
        let key = (range.start, range.end, bound.into(), flags.0, flags.1);
        memo(&self.guards, key, compute)
    }

    /// The body cost of the loop at `range`, computed by `compute` the first time.
    pub(crate) fn body_cost(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Option<u32>,
    ) -> Option<u32> {
        memo(&self.body_costs, (range.start, range.end), compute)
    }

    /// The simple statement around `range`, computed by `compute` the first time.
    pub(crate) fn statement(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Option<crate::TextRange>,
    ) -> Option<crate::TextRange> {
        memo(&self.statements, (range.start, range.end), compute)
    }

    /// The statements without statements inside that lie in `range`, computed by
    /// `compute` the first time.
    pub(crate) fn simple_statements(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Vec<crate::TextRange>,
    ) -> Arc<[crate::TextRange]> {
        memo(&self.simple, (range.start, range.end), || compute().into())
    }

    /// The top of the expression at `range`, computed by `compute` the first time.
    pub(crate) fn expression_shape(
        &self,
        range: &crate::TextRange,
        compute: impl FnOnce() -> Option<crate::ExprShape>,
    ) -> Option<crate::ExprShape> {
        memo(&self.shapes, (range.start, range.end), compute)
    }

    /// The variable of the name at `offset`, computed by `compute` the first time.
    pub(crate) fn variable_at(
        &self,
        offset: usize,
        compute: impl FnOnce() -> Option<crate::Variable>,
    ) -> Option<crate::Variable> {
        memo(&self.variables_at, offset, compute)
    }
}

impl Clone for LocalsMemo {
    fn clone(&self) -> Self {
        LocalsMemo::default()
    }
}

impl std::fmt::Debug for LocalsMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalsMemo")
    }
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
    /// The innermost `#if` with more than one arm around it (where its directive starts)
    /// and which of its arms holds it: the arms are never compiled together.
    pub arm: Option<(usize, usize)>,
}

/// A pointer into an `extern __shared__` buffer: `float* b = (float*)(smem + OFFSET);`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedCarve {
    /// The pointer's name.
    pub name: String,
    /// The range of the name in its declarator.
    pub name_range: TextRange,
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
    /// The offset expression added to the base (`130` in `smem + 130`, `i` in
    /// `&smem[i]`); `None` when the pointer is the base itself.
    pub offset_range: Option<TextRange>,
    /// The bytes one unit of the offset counts: the pointee of a cast of the base before
    /// the addition (`(int*)smem + 3` counts ints), else the base's element size.
    pub offset_unit: Option<u64>,
    /// The byte offset of the base from the start of `root`, when constant.
    pub base_offset_bytes: Option<i64>,
    /// The pointee type of the outermost cast of the initialiser (`float4` in
    /// `reinterpret_cast<float4*>(smem + 130)`), whitespace squashed.
    pub cast_type: Option<String>,
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
    /// Each kernel argument folded where it names a local of the function around the
    /// launch that holds a constant and is never written again (`int words = 2;
    /// k<<<g, b>>>(p, words)`); `None` for one the file's constants fold as written (and
    /// for launches through a macro or `cudaLaunchKernelEx`).
    pub arg_locals: Vec<Option<i64>>,
    /// Where the grid argument and each kernel argument are written, for a launch
    /// written `kernel<<<grid, …>>>(args)` in the function that contains it (empty for
    /// one through a lambda's parameters, a macro or `cudaLaunchKernelEx`).
    pub written: Option<LaunchWritten>,
    /// The function that contains the launch.
    pub function: Option<String>,
    /// The template parameters of that function when it is a template (a host function
    /// such as `template <int BM, int BN> void launch_gemm(...)`), in order.
    pub caller_params: Vec<String>,
    /// Those parameters as the file's first call of the function with foldable template
    /// arguments binds them (`launch_gemm<128, 64>(...)`); the dimensions and template
    /// arguments of the launch are folded with them. Empty when none binds them.
    pub caller_bound: Vec<(String, i64)>,
    /// The value parameters of the function that contains the launch, in order, each
    /// by name where its body never writes it (`n = …`, `n += …`, `++n`, `&n`), so that
    /// an argument naming it holds what every caller passes; empty for one it writes
    /// (and for an unnamed one).
    pub caller_value_params: Vec<String>,
}

/// Where a launch's grid and arguments are written ([`LaunchSite::written`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchWritten {
    /// The grid argument.
    pub grid: TextRange,
    /// Each kernel argument.
    pub args: Vec<TextRange>,
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

/// The functions of a file by range: see [`FactsIndex::functions`].
#[derive(Clone, Debug, Default)]
pub(crate) struct FunctionTable {
    pub(crate) ranges: Vec<(usize, usize, bool, usize)>,
    pub(crate) parents: Vec<usize>,
}

/// Look-up tables for [`FileFacts`]: built once, read by every look-up after.
#[derive(Clone, Debug, Default)]
pub(crate) struct FactsIndex {
    /// The lengths of `kernels`, `device_functions`, `shared`, `macros` and `launches`
    /// the index was built from; a look-up on lists of other lengths scans them instead.
    pub(crate) lens: (usize, usize, usize, usize, usize),
    /// The functions as `(start, end, kernel?, position)` sorted by start (the longest
    /// first among equal starts) with, for each, the innermost other function that
    /// contains it (`usize::MAX`: none). Ranges nest when a broken brace leaves one
    /// function inside another. `None` when two ranges overlap without nesting, and
    /// look-ups scan the lists.
    pub(crate) functions: Option<FunctionTable>,
    /// The kernels as (hash of the name, position), sorted: a look-up takes the first
    /// position whose name matches among those of its hash.
    pub(crate) kernels: Vec<(u64, usize)>,
    /// The declarations in `shared` as (hash of the name and the function that declares
    /// it, `scoped_hash`, position), sorted, so that the positions of one name in one
    /// scope are in document order.
    pub(crate) shared: Vec<(u64, usize)>,
    /// The macros as (hash of the name, position), sorted, as `kernels`.
    pub(crate) macros: Vec<(u64, usize)>,
    /// The launches as (hash of the launched kernel's name without namespaces,
    /// position), sorted, as `kernels`.
    pub(crate) launches: Vec<(u64, usize)>,
}
