//! Branch conditions evaluated through their lowered form for every thread of a known
//! launch (`||`, `!`, bare values, `switch` values and `?:` included), where the barrier
//! rule used to substitute the launch into the condition's text: a guard that every
//! thread of the launch passes splits nothing.

use std::sync::Arc;

use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::Fixture;

const RULE: &str = "sync/barrier-in-divergent-branch";

/// Checks the rule's diagnostics on the fixture against its `// ^^^` annotations (range,
/// severity, message prefix).
fn check(fixture: &str) {
    let fixture = Fixture::parse(fixture);
    let file = fixture.single();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()));
    let id = host.set_file("/p/k.cu", &file.text);
    let got: Vec<_> = host
        .analysis()
        .diagnostics(id)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule == RULE)
        .collect();
    assert_eq!(
        got.len(),
        file.annotations.len(),
        "{got:#?} against {:#?}",
        file.annotations
    );
    for (d, a) in got.iter().zip(&file.annotations) {
        assert_eq!(d.range, a.range, "{d:?}");
        assert_eq!(d.severity.as_str(), a.severity, "{d:?}");
        assert!(d.message.starts_with(&a.message), "{d:?}");
    }
}

#[test]
fn an_or_that_every_thread_of_the_launch_passes_splits_nothing() {
    check(
        r#"
__global__ void k(float* out, int flag) {
    __shared__ float s[256];
    if (threadIdx.x < 256 || flag) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
        out[threadIdx.x] = s[255 - threadIdx.x];
    }
}
void run(float* out) { k<<<4, 256>>>(out, 0); }
"#,
    );
}

#[test]
fn the_same_or_under_a_larger_block_splits_it() {
    check(
        r#"
__global__ void k(float* out, int flag) {
    __shared__ float s[512];
    if (threadIdx.x < 256 || flag) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
     // ^^^^^^^^^^^^^^^ hint: `__syncthreads()` inside `if (threadIdx.x < 256 || flag)`: the threads of the block that skip the branch
        out[threadIdx.x] = s[255 - threadIdx.x];
    }
}
void run(float* out) { k<<<4, 512>>>(out, 0); }
"#,
    );
}

#[test]
fn a_negated_guard_and_a_switch_on_the_warp_of_a_one_warp_block() {
    check(
        r#"
__global__ void k(float* out) {
    __shared__ float s[32];
    if (!(threadIdx.x >= blockDim.x)) {
        s[threadIdx.x] = out[threadIdx.x];
        __syncthreads();
    }
    switch (threadIdx.x / 32) {
    case 0:
        __syncthreads();
        break;
    default:
        break;
    }
    out[threadIdx.x] = s[31 - threadIdx.x];
}
void run(float* out) { k<<<1, 32>>>(out); }
"#,
    );
}

/// The tile's size is read from its definition in the tree: the commented-out
/// `tiled_partition<8>` (which the text scan took as the last definition) is not one, so
/// `threadIdx.x < 16` keeps whole tiles of 16 together.
#[test]
fn a_tile_size_is_read_from_its_definition_not_a_comment() {
    check(
        r#"
namespace cg = cooperative_groups;
__global__ void k(float* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_group sixteen = cg::tiled_partition(block, 16);
    // sixteen = cg::tiled_partition<8>(block); was tried
    if (threadIdx.x < 16) cg::sync(sixteen);
    if (threadIdx.x < 8) cg::sync(sixteen);
                      // ^^^^^^^^^^^^^^^^^ warning: `cg::sync(sixteen)` inside `if (threadIdx.x < 8)`
}
"#,
    );
}
