//! Bad input never panics or hangs: syntax errors, huge files, a 5 MB line, deep
//! nesting, binary junk, and random edits (proptest). Every entry point is guarded, so
//! a panic inside would only show as a missing answer; a panic hook counts them per
//! thread here so that the tests fail on any.

use std::cell::Cell;
use std::sync::Once;

use kernaut_ide::{AnalysisConfig, AnalysisHost, FileId, QueryError};
use proptest::prelude::*;

thread_local! {
    static PANICS: Cell<usize> = const { Cell::new(0) };
}

/// Installs the counting hook (once) and returns this thread's count so far.
fn count_panics() -> usize {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            default(info);
        }));
    });
    PANICS.with(Cell::get)
}

/// Runs every entry point over `text` at `offsets`, and returns how many hovers there were.
fn exercise(text: &str, offsets: &[usize]) -> usize {
    let before = count_panics();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let f = host.set_file("/f.cu", text);
    let a = host.analysis();
    let mut hovers = 0;
    for &o in offsets {
        if a.hover(f, o).expect("hover").is_some() {
            hovers += 1;
        }
        a.symbol_at(f, o).expect("symbol_at");
    }
    for k in a.kernel_facts(f).expect("kernel_facts").iter().take(50) {
        a.occupancy(f, &k.function.name).expect("occupancy");
    }
    for acc in a.shared_accesses(f).expect("accesses").iter().take(200) {
        a.bank(f, acc).expect("bank");
    }
    a.syntax_errors(f).expect("syntax_errors");
    a.line_index(f).expect("line_index");
    assert_eq!(count_panics(), before, "an entry point panicked");
    hovers
}

#[test]
fn syntax_errors_keep_hover_and_facts_for_the_rest() {
    let text = "__global__ void k(float* x) {\n  x[0] = 1.0f +;\n  if (x[1] >\n}\n__global__ void ok() { __shared__ float t[32][33]; t[threadIdx.x][0] = 1; __syncthreads(); }\n";
    let at = text.find("t[threadIdx.x]").unwrap() + 1;
    assert_eq!(exercise(text, &[at]), 1);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let f = host.set_file("/f.cu", text);
    let a = host.analysis();
    assert!(a
        .kernel_facts(f)
        .unwrap()
        .iter()
        .any(|k| k.function.name == "ok"));
    assert!(!a.syntax_errors(f).unwrap().is_empty());
}

#[test]
fn a_100000_line_file() {
    // 1,000 kernels of 100 lines: mostly register arithmetic, as real files are, with a
    // shared tile, two accesses and an intrinsic each.
    let mut text = String::new();
    for i in 0..1_000 {
        text.push_str(&format!(
            "__global__ void k{i}(float* o, float x) {{\n    __shared__ float t[32][33];\n    float a0 = x;\n"
        ));
        for j in 1..92 {
            text.push_str(&format!("    float a{j} = a{} * 1.5f + x;\n", j - 1));
        }
        text.push_str("    t[threadIdx.y][threadIdx.x] = a91;\n    __syncthreads();\n    o[threadIdx.x] = t[threadIdx.x][threadIdx.y];\n    o[0] += __shfl_xor_sync(0xffffffffu, a90, 16);\n}\n\n");
    }
    assert_eq!(text.lines().count(), 100_000);
    let last = text.rfind("t[threadIdx.x]").unwrap();
    assert_eq!(
        exercise(&text, &[0, 5, text.len() / 2, last, text.len()]),
        2
    );
}

#[test]
fn a_5_mb_line() {
    let mut text = String::from("__global__ void k(float* o) { o[0] = 0");
    while text.len() < 5 * 1024 * 1024 {
        text.push_str(" + threadIdx.x");
    }
    text.push_str("; }\n");
    exercise(
        &text,
        &[0, 20, text.len() / 2, text.len() - 3, text.len() + 10],
    );
}

/// Nesting depths: syntax bounds its recursion, and these depths keep the debug-build
/// test quick (the time grows faster than linearly with depth; see the report).
const PARENS: usize = 400;
const CALLS: usize = 150;

#[test]
fn deep_nesting_and_nested_macros() {
    let mut text = String::from("#define A(x) (x + 1)\n#define B(x) A(A(A(x)))\n__global__ void k(float* o) {\n    __shared__ float s[64];\n    s[");
    text.push_str(&"(".repeat(PARENS));
    text.push_str("threadIdx.x");
    text.push_str(&")".repeat(PARENS));
    text.push_str("] = B(B(B(B(1))));\n    o[0] = s[");
    text.push_str(&"B(".repeat(CALLS));
    text.push('0');
    text.push_str(&")".repeat(CALLS));
    text.push_str("];\n}\n");
    let offsets: Vec<usize> = (0..text.len()).step_by(997).collect();
    exercise(&text, &offsets);
}

#[test]
fn binary_junk() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let offsets: Vec<usize> = (0..text.len()).step_by(4099).collect();
    exercise(&text, &offsets);
}

#[test]
fn edits_past_the_end_and_inside_characters() {
    let before = count_panics();
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let f = host.set_file("/f.cu", "__global__ void k() { float é = 1; }\n");
    let e = host.analysis().text(f).unwrap().find('é').unwrap();
    assert!(host.apply_edit("/f.cu", e + 1..e + 1, "z"));
    assert!(host.apply_edit("/f.cu", 1000..2000, "x"));
    // A reversed range, as a buggy client might send.
    let reversed = std::ops::Range { start: 30, end: 29 };
    assert!(host.apply_edit("/f.cu", reversed, "y"));
    assert!(!host.apply_edit("/missing.cu", 0..0, "x"));
    let a = host.analysis();
    assert_eq!(a.hover(FileId(999), 0), Err(QueryError::UnknownFile));
    assert_eq!(a.hover(f, usize::MAX), Ok(None));
    assert_eq!(count_panics(), before);
}

/// CUDA-flavoured fragments, so random files look like code often enough.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("__global__ void k(float* o) {".to_string()),
        Just("__shared__ float t[32][33];".to_string()),
        Just("t[threadIdx.x][threadIdx.y] = 1;".to_string()),
        Just("for (int i = 0; i < 32; ++i)".to_string()),
        Just("asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(0));".to_string()),
        Just("k<<<1, dim3(32, 8), 128>>>(o);".to_string()),
        Just("__launch_bounds__(256, 2)".to_string()),
        Just("extern __shared__ char smem[];".to_string()),
        Just("cg::this_thread_block().sync();".to_string()),
        Just("#define TILE 32\n".to_string()),
        Just("}".to_string()),
        Just("{".to_string()),
        "[ -~]{0,12}",
        "\\PC{0,4}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_files_and_edits_never_panic(
        parts in proptest::collection::vec(fragment(), 0..40),
        offsets in proptest::collection::vec(0usize..2000, 0..8),
        edits in proptest::collection::vec((0usize..2000, 0usize..40, fragment()), 0..6),
    ) {
        let before = count_panics();
        let text = parts.join("\n");
        exercise(&text, &offsets);
        let mut host = AnalysisHost::new(AnalysisConfig::default());
        let f = host.set_file("/f.cu", &text);
        for (start, len, new_text) in &edits {
            host.apply_edit("/f.cu", *start..start + len, new_text);
            let a = host.analysis();
            for &o in &offsets {
                prop_assert!(a.hover(f, o).is_ok());
            }
            prop_assert!(a.kernel_facts(f).is_ok());
        }
        prop_assert_eq!(count_panics(), before);
    }
}
