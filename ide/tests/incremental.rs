//! Diagnostics after an edit are recomputed only for the functions the edit reaches
//! (`rules/incremental.rs`), and must equal a run from scratch on the same texts: random
//! edits (that break and restore syntax, add and remove lines, barriers, launches, macros)
//! are applied to a host, and after each one its diagnostics are compared with a fresh
//! host's.

use std::sync::Arc;

use kernaut_ide::rules::RuleDiagnostic;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::gen::{clean_kernel, kernel};
use proptest::prelude::*;

fn knowledge() -> Arc<Knowledge> {
    static K: std::sync::OnceLock<Arc<Knowledge>> = std::sync::OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()))
        .clone()
}

fn host() -> AnalysisHost {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    host
}

/// Kernels that exercise every rule, a race program with its launch, a helper reached
/// through a macro, a kernel launched from a template host function, and clean code.
fn base() -> String {
    let races = |name: &str| {
        std::fs::read_to_string(format!(
            "{}/tests/data/races/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    let mut text = String::new();
    text.push_str(&kernel(0));
    text.push_str(&races("double_buffer_single_racy.cu"));
    text.push_str(
        "#define SYNC_ALL() block_sync()\n\
         __device__ void block_sync() { __syncthreads(); }\n\
         __global__ void reduce(float* out) {\n\
         \x20   __shared__ float s[256];\n\
         \x20   s[threadIdx.x] = out[threadIdx.x];\n\
         \x20   if (threadIdx.x < 128) {\n\
         \x20       SYNC_ALL();\n\
         \x20       s[threadIdx.x] += s[threadIdx.x + 128];\n\
         \x20   }\n\
         \x20   out[threadIdx.x] = s[threadIdx.x * 2 % 256];\n\
         }\n\
         template <int B>\n\
         void run_reduce(float* out) { reduce<<<4, B>>>(out); }\n\
         void go(float* out) { run_reduce<256>(out); }\n\n",
    );
    text.push_str(&clean_kernel(1));
    text.push_str(&kernel(2));
    text.push_str(&races("gemm_missing_second_barrier.cu"));
    text
}

const SNIPPETS: &[&str] = &[
    "\n",
    "// probe edit\n",
    "    __syncthreads();\n",
    "    if (threadIdx.x < 16) {\n        __syncthreads();\n    }\n",
    "    if (threadIdx.x < 16) {\n",
    "}\n",
    "x",
    " ",
    "    tile[threadIdx.x][0] = 1.0f;\n",
    "    v += __shfl_down(v, 1);\n",
    "1",
    "#define EXTRA 4\n",
    "    kernel_0<<<1, dim3(64, 4), 96 * 1024>>>(0, 0, 0);\n",
    "__device__ void block_sync() { }\n",
    "    block_sync();\n",
    "    // kernaut: allow(bank-conflict)\n",
    "    s[threadIdx.x + 1] = s[threadIdx.x];\n",
    "    for (int i = 0; i < 4; ++i) { s[threadIdx.x] += s[i]; }\n",
    "__global__ void extra(float* o) {\n    __shared__ float e[32][32];\n    o[0] = e[threadIdx.x][0];\n}\n",
    "    reduce<<<2, 128>>>(out);\n",
];

/// One edit: where (a fraction of the text), what, and how much to delete.
#[derive(Clone, Debug)]
struct Edit {
    at: u32,
    snippet: usize,
    delete: usize,
    line_start: bool,
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        any::<u32>(),
        0..SNIPPETS.len() + 3,
        0usize..40,
        any::<bool>(),
    )
        .prop_map(|(at, snippet, delete, line_start)| Edit {
            at,
            snippet,
            delete,
            line_start,
        })
}

/// The range and text of `e` on `text`: an insertion, a deletion or both.
fn resolve(text: &str, e: &Edit) -> (std::ops::Range<usize>, String) {
    let mut at = (u64::from(e.at) * text.len() as u64 / u64::from(u32::MAX)) as usize;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let insert = SNIPPETS.get(e.snippet).copied().unwrap_or("");
    if e.line_start || insert.ends_with('\n') {
        at = text[..at].rfind('\n').map_or(0, |p| p + 1);
    }
    let mut end = (at
        + if insert.is_empty() {
            e.delete
        } else {
            e.delete % 3
        })
    .min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (at..end, insert.to_string())
}

fn fresh(path: &str, text: &str) -> Vec<RuleDiagnostic> {
    let mut h = host();
    let id = h.set_file(path, text);
    h.analysis().diagnostics(id).unwrap()
}

fn show(text: &str, d: &[RuleDiagnostic]) -> String {
    d.iter()
        .map(|d| {
            let line = text[..d.range.start].matches('\n').count() + 1;
            format!("{line} {:?} {} {}\n", d.range, d.rule, d.message)
        })
        .collect()
}

/// Applies `edits` one at a time, comparing the host's diagnostics with a fresh host's
/// after each.
fn check_edits(text: &str, edits: &[Edit]) -> Result<(), TestCaseError> {
    let path = "/p/k.cu";
    let mut h = host();
    let id = h.set_file(path, text);
    let mut text = text.to_string();
    let first = h.analysis().diagnostics(id).unwrap();
    prop_assert_eq!(&first, &fresh(path, &text));
    for e in edits {
        let (range, insert) = resolve(&text, e);
        h.apply_edit(path, range.clone(), &insert);
        text.replace_range(range, &insert);
        let got = h.analysis().diagnostics(id).unwrap();
        let want = fresh(path, &text);
        if got != want {
            return Err(TestCaseError::fail(format!(
                "after {e:?}\n--- incremental\n{}--- fresh\n{}",
                show(&text, &got),
                show(&text, &want)
            )));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("KERNAUT_INCR_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_edits_give_what_a_fresh_run_gives(edits in prop::collection::vec(edit(), 1..6)) {
        check_edits(&base(), &edits)?;
    }
}

/// The probe's edit (a comment line inserted in the middle of the file), repeated: every
/// message naming a line after it is renumbered, the rest kept.
#[test]
fn inserted_lines_renumber_the_kept_diagnostics() {
    let text = base();
    let edits: Vec<Edit> = (0..4)
        .map(|k| Edit {
            at: u32::MAX / 2 + k * 1000,
            snippet: 1,
            delete: 0,
            line_start: true,
        })
        .collect();
    check_edits(&text, &edits).unwrap();
    // And lines removed again.
    let removals: Vec<Edit> = (0..3)
        .map(|k| Edit {
            at: u32::MAX / 3 + k * 7000,
            snippet: SNIPPETS.len(),
            delete: 30,
            line_start: true,
        })
        .collect();
    check_edits(&text, &removals).unwrap();
}

/// A kernel's diagnostics follow a launch in another file: a new block there changes the
/// races and conflicts the rules find in the kernel's file, without an edit to it.
#[test]
fn launches_in_another_file_reach_the_kernel() {
    let kernels = "__global__ void colread(float* out) {\n\
                   \x20   __shared__ float tile[32][32];\n\
                   \x20   tile[threadIdx.y][threadIdx.x] = out[threadIdx.x];\n\
                   \x20   out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n\
                   }\n\
                   __global__ void other(float* out) {\n\
                   \x20   __shared__ float t[64];\n\
                   \x20   t[threadIdx.x] = 1.0f;\n\
                   \x20   out[threadIdx.x] = t[(threadIdx.x + 1) % 64];\n\
                   }\n";
    let launch = |block: &str| format!("void run(float* o) {{ colread<<<1, {block}>>>(o); }}\n");
    let mut h = host();
    let k = h.set_file("/p/k.cu", kernels);
    h.set_file("/p/l.cu", &launch("dim3(32, 32)"));
    let before = h.analysis().diagnostics(k).unwrap();
    for block in ["dim3(32, 8)", "dim3(16, 16)", "dim3(32, 32)"] {
        h.set_file("/p/l.cu", &launch(block));
        let got = h.analysis().diagnostics(k).unwrap();
        let mut f = host();
        let fk = f.set_file("/p/k.cu", kernels);
        f.set_file("/p/l.cu", &launch(block));
        assert_eq!(got, f.analysis().diagnostics(fk).unwrap(), "{block}");
    }
    assert!(!before.is_empty());
}

/// A definition written inside a kernel's body parses without a syntax error, and the
/// text's top-level items then cut the kernel in two. Leaving out the half without the
/// edit lost that half's accesses of `tile`, and the bank-conflict findings of the other
/// half gained a padding fix that a fresh run does not offer (the random-edit test found
/// it); such a run now covers the whole file.
#[test]
fn a_definition_inside_a_kernel_body_runs_the_whole_kernel() {
    let path = "/p/k.cu";
    let mut h = host();
    let mut text = base();
    let id = h.set_file(path, &text);
    h.analysis().diagnostics(id).unwrap();
    let inner = text.find("    #pragma unroll 32").unwrap();
    let tile = text.find("    __shared__ float tile[").unwrap();
    for (at, insert) in [
        (inner, "__device__ void block_sync() { }\n"),
        (tile, "    tile[threadIdx.x][0] = 1.0f;\n"),
    ] {
        h.apply_edit(path, at..at, insert);
        text.insert_str(at, insert);
        let got = h.analysis().diagnostics(id).unwrap();
        assert_eq!(got, fresh(path, &text), "after inserting {insert:?}");
    }
}
