//! How launches' grid and block dimensions fold: the forms a launch configuration is
//! written in, each with a near miss that must stay unknown.

use kernaut_syntax::SourceFile;

/// A launch's grid and block, folded.
type GridBlock = (Option<[i64; 3]>, Option<[i64; 3]>);

/// The folded grid and block of each launch, in document order.
fn dims(text: &str) -> Vec<GridBlock> {
    SourceFile::parse(text)
        .facts()
        .launches
        .iter()
        .map(|l| (l.grid.value, l.block.value))
        .collect()
}

const KERNEL: &str = "__global__ void k(float* p) { p[threadIdx.x] = 0.f; }\n";

#[test]
fn auto_variable_initialised_with_dim3() {
    let text = format!(
        "{KERNEL}void run(float* p, int n) {{\n    auto cfg = dim3(128);\n    auto grid = dim3(n / 128, 2);\n    k<<<grid, cfg>>>(p);\n}}\n"
    );
    assert_eq!(dims(&text), [(None, Some([128, 1, 1]))]);
}

#[test]
fn auto_variable_of_another_type_is_not_a_block() {
    // `auto cfg = make_config(128)` may be anything: the block stays unknown.
    let text = format!(
        "{KERNEL}dim3 make_config(int);\nvoid run(float* p) {{\n    auto cfg = make_config(128);\n    k<<<1, cfg>>>(p);\n}}\n"
    );
    assert_eq!(dims(&text), [(Some([1, 1, 1]), None)]);
}

#[test]
fn const_dim3_with_braces() {
    let text = format!(
        "{KERNEL}void run(float* p) {{\n    const dim3 b{{16, 16}};\n    static const dim3 g(4, 4);\n    k<<<g, b>>>(p);\n}}\n"
    );
    assert_eq!(dims(&text), [(Some([4, 4, 1]), Some([16, 16, 1]))]);
}

#[test]
fn dim3_assigned_from_dim3_call() {
    let text = format!(
        "{KERNEL}void run(float* p) {{\n    dim3 block = dim3(32, 8);\n    k<<<1, block>>>(p);\n}}\n"
    );
    assert_eq!(dims(&text), [(Some([1, 1, 1]), Some([32, 8, 1]))]);
}

#[test]
fn dim3_from_constexpr_and_defines() {
    let text = format!(
        "#define BM 128\n#define TM 8\n{KERNEL}constexpr int BN = 64;\nvoid run(float* p) {{\n    constexpr int TN = 4;\n    dim3 block(BN / TN, BM / TM);\n    k<<<1, block>>>(p);\n}}\n"
    );
    assert_eq!(dims(&text), [(Some([1, 1, 1]), Some([16, 16, 1]))]);
}

#[test]
fn a_variable_assigned_after_its_declaration_is_not_folded() {
    // Only declarations are read; a runtime size stays unknown.
    let text = format!(
        "{KERNEL}void run(float* p, int n) {{\n    dim3 block(n, 4);\n    k<<<1, block>>>(p);\n}}\n"
    );
    assert_eq!(dims(&text), [(Some([1, 1, 1]), None)]);
}

const HOST_TEMPLATE: &str = r#"
template <int BM, int BN>
__global__ void gemm(float* c) { c[threadIdx.x] = 0.f; }

template <int BM, int BN, int TM, int TN>
void launch_gemm(float* c, int m, int n) {
    dim3 block(BN / TN, BM / TM);
    dim3 grid(n / BN, m / BM);
    gemm<BM, BN><<<grid, block>>>(c);
}

void run(float* c, int m, int n) {
    launch_gemm<128, 64, 8, 4>(c, m, n);
}
"#;

#[test]
fn template_parameters_of_the_host_function_bound_at_its_call() {
    let file = SourceFile::parse(HOST_TEMPLATE);
    let l = &file.facts().launches[0];
    assert_eq!(l.block.value, Some([16, 16, 1]));
    // The grid depends on runtime sizes as well: still unknown.
    assert_eq!(l.grid.value, None);
    assert_eq!(
        l.caller_bound,
        [
            ("BM".to_string(), 128),
            ("BN".to_string(), 64),
            ("TM".to_string(), 8),
            ("TN".to_string(), 4)
        ]
    );
}

#[test]
fn host_template_never_called_leaves_the_block_unknown() {
    let text = HOST_TEMPLATE.replace("launch_gemm<128, 64, 8, 4>(c, m, n);", "");
    let file = SourceFile::parse(&text);
    let l = &file.facts().launches[0];
    assert_eq!(l.block.value, None);
    assert!(l.caller_bound.is_empty());
}

#[test]
fn dim3_assigned_after_its_declaration() {
    // `dim3 blocks, threads;` then `threads = dim3(16, 16);` on the way to the launch:
    // the assignment is the value; one inside a branch that ends before the launch
    // leaves it unknown; one in the launch's own branch is the value there.
    let text = format!(
        "{KERNEL}void run(float* p, int n, int mode) {{\n    dim3 blocks, threads;\n    blocks = dim3(n / 16);\n    threads = dim3(16, 16);\n    k<<<blocks, threads>>>(p);\n    dim3 t2(16, 16);\n    if (mode) t2 = dim3(32, 8);\n    k<<<1, t2>>>(p);\n    if (mode == 2) {{\n        t2 = dim3(64, 2);\n        k<<<1, t2>>>(p);\n    }}\n}}\n"
    );
    assert_eq!(
        dims(&text),
        [
            (None, Some([16, 16, 1])),
            (Some([1, 1, 1]), None),
            (Some([1, 1, 1]), Some([64, 2, 1])),
        ]
    );
}

#[test]
fn launch_config_block_from_a_dim3_assigned_after_its_declaration() {
    // `cudaLaunchKernelEx`'s `cfg.blockDim = threads;` with `threads` assigned after
    // `dim3 threads;`; the same assignment inside a closed branch leaves it unknown.
    let text = format!(
        "{KERNEL}void run(float* p, int mode) {{\n    dim3 threads;\n    threads = dim3(128, 2);\n    cudaLaunchConfig_t cfg = {{}};\n    cfg.gridDim = dim3(4);\n    cfg.blockDim = threads;\n    cudaLaunchKernelEx(&cfg, k, p);\n}}\nvoid run2(float* p, int mode) {{\n    dim3 threads(64);\n    if (mode) {{ threads = dim3(128, 2); }}\n    cudaLaunchConfig_t cfg = {{}};\n    cfg.gridDim = dim3(4);\n    cfg.blockDim = threads;\n    cudaLaunchKernelEx(&cfg, k, p);\n}}\n"
    );
    assert_eq!(
        dims(&text),
        [
            (Some([4, 1, 1]), Some([128, 2, 1])),
            (Some([4, 1, 1]), None)
        ]
    );
}

#[test]
fn file_and_namespace_constants() {
    // `cfg::kThreads` and `cfg::kBlock` are the namespace's constants; a `dim3` constant
    // at file scope is its parts, as is a global `dim3` the file never assigns. A name
    // two namespaces define differently, and a global `dim3` a function sets again,
    // stay unknown.
    let text = format!(
        "{KERNEL}namespace cfg {{\nconstexpr int kThreads = 64;\nconstexpr dim3 kBlock(32, 4);\n}}\nconst dim3 kGrid{{8, 2}};\nnamespace a {{ constexpr int N = 4; }}\nnamespace b {{ constexpr int N = 8; }}\ndim3 loose(16);\ndim3 moved(16);\nvoid set() {{ moved.x = 32; }}\nvoid run(float* p) {{\n    k<<<kGrid, cfg::kThreads>>>(p);\n    k<<<1, cfg::kBlock>>>(p);\n    k<<<1, a::N>>>(p);\n    k<<<1, loose>>>(p);\n    k<<<1, moved>>>(p);\n}}\n"
    );
    assert_eq!(
        dims(&text),
        [
            (Some([8, 2, 1]), Some([64, 1, 1])),
            (Some([1, 1, 1]), Some([32, 4, 1])),
            (Some([1, 1, 1]), None),
            (Some([1, 1, 1]), Some([16, 1, 1])),
            (Some([1, 1, 1]), None),
        ]
    );
}

/// Each launch's kernel (with template arguments as written), block and arguments.
fn kernels(text: &str) -> Vec<(String, Option<[i64; 3]>, Vec<String>)> {
    SourceFile::parse(text)
        .facts()
        .launches
        .iter()
        .map(|l| {
            (
                format!("{}{}", l.kernel, l.template_args.as_deref().unwrap_or("")),
                l.block.value,
                l.args.clone(),
            )
        })
        .collect()
}

#[test]
fn kernel_passed_to_a_generic_lambda() {
    // `run` takes the kernel as an `auto` parameter: each call launches its argument
    // with the block it passes.
    let text = format!(
        "{KERNEL}__global__ void h(float* p) {{ p[threadIdx.y] = 1.f; }}\nint main() {{\n    float* p = nullptr;\n    auto run = [&](auto kernel, dim3 grid, dim3 block, int n) {{\n        kernel<<<grid, block>>>(p + n);\n    }};\n    dim3 tile(16, 16);\n    run(k, dim3(1), tile, 4);\n    run(&h, 2, dim3(8, 4), 0);\n}}\n"
    );
    assert_eq!(
        kernels(&text),
        [
            (
                "k".to_string(),
                Some([16, 16, 1]),
                vec!["p + 4".to_string()]
            ),
            ("h".to_string(), Some([8, 4, 1]), vec!["p + 0".to_string()]),
        ]
    );
}

#[test]
fn kernel_held_in_a_local() {
    // `auto fn = k<4>;` names the kernel the launch and the attribute call reach; a
    // local assigned again later is not followed.
    let text = format!(
        "{KERNEL}template <int N> __global__ void t(float* p) {{ p[N] = 0.f; }}\nvoid go(float* p, bool b) {{\n    auto fn = t<4>;\n    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n    fn<<<1, 64, 65536>>>(p);\n    auto other = k;\n    if (b) other = t<8>;\n    other<<<1, 32>>>(p);\n}}\n"
    );
    assert_eq!(
        kernels(&text),
        [
            ("t<4>".to_string(), Some([64, 1, 1]), vec!["p".to_string()]),
            ("other".to_string(), Some([32, 1, 1]), vec!["p".to_string()]),
        ]
    );
    let file = SourceFile::parse(&text);
    let attrs: Vec<&str> = file
        .facts()
        .func_attributes
        .iter()
        .map(|a| a.kernel.as_str())
        .collect();
    assert_eq!(attrs, ["t"]);
}

#[test]
fn a_host_functions_parameter_that_every_call_fixes() {
    // `driver`'s `ntcol` is 1 at its only call (a local constant of the caller, two
    // levels up); `spread`'s `rows` differs between its calls, and `moved` assigns its
    // parameter: not known.
    let text = format!(
        "{KERNEL}static void driver(float* p, int ntcol);\nstatic void driver(float* p, int ntcol) {{\n    dim3 threads(64, ntcol, 1);\n    k<<<4, threads>>>(p);\n}}\nstatic void mid(float* p, int c) {{ driver(p, c); }}\nvoid top(float* p) {{\n    const int ntcol = 1;\n    mid(p, ntcol);\n}}\nstatic void spread(float* p, int rows) {{ k<<<1, dim3(32, rows)>>>(p); }}\nvoid both(float* p) {{ spread(p, 2); spread(p, 4); }}\nstatic void moved(float* p, int rows) {{ rows += 1; k<<<1, dim3(32, rows)>>>(p); }}\nvoid once(float* p) {{ moved(p, 2); }}\n"
    );
    assert_eq!(
        dims(&text),
        [
            (Some([4, 1, 1]), Some([64, 1, 1])),
            (Some([1, 1, 1]), None),
            (Some([1, 1, 1]), None)
        ]
    );
}

#[test]
fn a_dim3_assigned_from_another_dim3() {
    // `b = b2;` takes b2's parts; `c = n;` is `dim3(n)`.
    let text = format!(
        "{KERNEL}void run(float* p) {{\n    dim3 g(1, 1, 1), b(256, 1, 1);\n    dim3 b2(16, 1, 1);\n    b = b2;\n    k<<<g, b>>>(p);\n    dim3 c;\n    const int n = 64;\n    c = n;\n    k<<<g, c>>>(p);\n}}\n"
    );
    assert_eq!(
        dims(&text),
        [
            (Some([1, 1, 1]), Some([16, 1, 1])),
            (Some([1, 1, 1]), Some([64, 1, 1]))
        ]
    );
}
