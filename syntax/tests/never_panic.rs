//! Random bytes and CUDA-flavoured strings never make parsing or queries panic.

use kernaut_syntax::SourceFile;
use proptest::prelude::*;

fn exercise(text: &str, probe: usize) {
    // Whole, and cut at every top-level item as files of 32 KB and more are.
    exercise_file(SourceFile::parse(text), text, probe);
    exercise_file(SourceFile::parse_with_target(text, 1), text, probe);
}

fn exercise_file(mut file: SourceFile, text: &str, probe: usize) {
    let _ = file.errors();
    let _ = file.facts();
    let _ = file.shared_accesses();
    let _ = file.unroll_pragmas();
    let _ = file.allow_comments();
    let _ = file.find_calls("cp.async");
    for offset in [0, probe % (text.len() + 2), text.len(), text.len() + 1] {
        let _ = file.symbol_at(offset);
        let _ = file.enclosing(offset);
        let _ = file.calls_in(offset);
    }
    let mid = probe % (text.len() + 1);
    file.apply_edit(mid..mid + 3, "__align__(");
    let _ = file.facts();
    let _ = file.symbol_at(mid);
    file.apply_edit(0..mid / 2, "}\n__global__ void k() {\n");
    let _ = file.facts();
    let _ = file.shared_accesses();
    let _ = file.errors();
}

const PIECES: &[&str] = &[
    "__global__ ",
    "__shared__ ",
    "extern ",
    "float ",
    "tile",
    "[32]",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    ";",
    "<<<",
    ">>>",
    "asm volatile(\"cp.async.wait_group %0;\\n\" ::)",
    "\"",
    "threadIdx.x",
    " % 32",
    "#define N 4\n",
    "__launch_bounds__(256, 2) ",
    "__align__(16) ",
    "CUTLASS_DEVICE ",
    "for (int i = 0; i < N; ++i) ",
    "if (tid < 4) ",
    "namespace cg = cooperative_groups;",
    "cg::",
    "auto b = cg::this_thread_block();",
    "b.sync();",
    "\n",
    " ",
    "/*",
    "*/",
    "//",
    "template <int N = 4> ",
    "reinterpret_cast<float4*>(&tile[0])[0]",
    "= ",
    "+",
    "é",
    "\0",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400), probe in any::<usize>()) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        exercise(&text, probe);
    }

    #[test]
    fn cuda_soup(pieces in proptest::collection::vec(0..PIECES.len(), 0..120), probe in any::<usize>()) {
        let text: String = pieces.iter().map(|i| PIECES[*i]).collect();
        exercise(&text, probe);
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 300;
    let text = format!(
        "#define M(x) x\n__global__ void k() {{ __shared__ int s[4]; int v = s[{}1{}]; {}\n",
        "M(".repeat(depth),
        ")".repeat(depth),
        "{".repeat(depth)
    );
    exercise(&text, 77);
    let parens = format!(
        "__global__ void k() {{ __shared__ int s[4]; s[{}threadIdx.x{}] = 1; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let file = SourceFile::parse(&parens);
    assert_eq!(file.shared_accesses().len(), 1);
}

#[test]
fn huge_line_and_many_lines() {
    let long = format!("int a = {};\n", "1 + ".repeat(1_250_000) + "1");
    assert!(long.len() > 5_000_000);
    let file = SourceFile::parse(&long);
    let _ = file.facts();
    let _ = file.symbol_at(long.len() / 2);
    let many = "int a = 1;\n".repeat(100_000);
    let file = SourceFile::parse(&many);
    assert_eq!(file.facts().constants.len(), 0);
    let _ = file.symbol_at(many.len() / 2);
}
