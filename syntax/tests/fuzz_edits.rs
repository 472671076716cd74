//! Fuzzing `SourceFile::apply_edit` with proptest (64 cases by default,
//! `PROPTEST_CASES` for longer runs): a sequence of random edits on a real kernel, each
//! inserting a piece that breaks or restores the syntax. After every edit the text is
//! exactly the spliced text, and when neither the edited nor a fresh parse has errors,
//! the incremental tree holds the fresh one's items. Shrunk failures land in
//! `fuzz_edits.proptest-regressions` next to this file and are replayed first.

use kernaut_syntax::SourceFile;
use proptest::prelude::*;

const KERNEL: &str = "#define TILE 32
__global__ void transpose(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[x][y];
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}
";

const PIECES: &[&str] = &[
    "",
    "x",
    "\n",
    "{",
    "}",
    "(",
    ")",
    ";",
    "/*",
    "*/",
    "// c\n",
    "\"",
    "'",
    "#if X\n",
    "#endif\n",
    "#if 0\n",
    "#else\n",
    "__syncthreads();\n",
    "int q = 3;\n",
    "void f() {}\n",
    "__align__(16) ",
    "[",
    "]",
    "<<<1, 32>>>",
    "é",
    "\\\n",
];

/// `PROPTEST_CASES` when set (longer local runs), else `default` (CI).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    #[test]
    fn incremental_edits_match_a_fresh_parse(
        edits in proptest::collection::vec((0..=1000usize, 0..24usize, 0..PIECES.len()), 1..12)
    ) {
        let mut file = SourceFile::parse(KERNEL);
        let mut model = KERNEL.to_string();
        for (at, remove, piece) in edits {
            let mut start = model.len() * at / 1000;
            while !model.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + remove).min(model.len());
            while !model.is_char_boundary(end) {
                end += 1;
            }
            model.replace_range(start..end, PIECES[piece]);
            file.apply_edit(start..end, PIECES[piece]);
            prop_assert_eq!(file.text(), model.as_str());
            let fresh = SourceFile::parse(&model);
            // The same items; where the edit left a chunk boundary the fresh parse does
            // not make (a stray `;` between two functions), the chunks differ, not the
            // code.
            if file.errors().is_empty() && fresh.errors().is_empty() {
                prop_assert_eq!(file.debug_items(), fresh.debug_items());
            }
            let _ = file.facts();
        }
    }
}
