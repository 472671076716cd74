//! End to end: `ktui explain FILE:LINE[:COL]` run as the built binary on a temporary
//! `.cu` file, its JSON and text output asserted.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const KERNEL: &str = r#"#include <cuda_pipeline.h>
#define TILE 32

__global__ void __launch_bounds__(256, 2) transpose(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ void wait_all() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(0));
}

void launch(float* out, const float* in, int n) {
    dim3 block(32, 8);
    transpose<<<dim3(n / 32, n / 32), block>>>(out, in, n);
}
"#;

/// A temporary `.cu` file, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let dir = std::env::temp_dir().join(format!("ktui-explain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write the .cu file");
        TempFile(path)
    }

    fn at(&self, line: usize, col: Option<usize>) -> String {
        match col {
            Some(c) => format!("{}:{line}:{c}", self.0.display()),
            None => format!("{}:{line}", self.0.display()),
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn ktui(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args(args)
        .output()
        .expect("ktui runs");
    (
        out.status.code().expect("ktui exits with a code"),
        String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    )
}

fn explain_json(position: &str, arch: &str) -> Value {
    let (code, stdout, stderr) = ktui(&["explain", position, "--arch", arch, "--json"]);
    assert_eq!(code, 0, "stdout `{stdout}` stderr `{stderr}`");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: `{stdout}`"))
}

#[test]
fn intrinsic_json_has_signature_arch_and_pitfalls() {
    let f = TempFile::new("intrinsic.cu", KERNEL);
    let v = explain_json(&f.at(14, Some(46)), "sm_90");
    assert_eq!(v["kind"], "symbol");
    assert_eq!(v["symbol"], "__shfl_xor_sync");
    assert_eq!(v["wiki_page"], "api-warp-shuffle");
    assert_eq!(
        v["signatures"][0],
        "T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize);"
    );
    assert_eq!(v["requires_sm"], "sm_30");
    assert_eq!(v["target_satisfies"], true);
    assert_eq!(
        v["range"]["start"],
        serde_json::json!({"line": 14, "column": 43})
    );
    assert_eq!(v["pitfalls"][0]["id"], "pitfall-warp-primitives#P2");
}

#[test]
fn ptx_in_asm_string_resolves_the_whole_mnemonic() {
    let f = TempFile::new("ptx.cu", KERNEL);
    let v = explain_json(&f.at(19, Some(30)), "sm_75");
    assert_eq!(v["symbol_kind"], "ptx");
    assert_eq!(v["written"], "cp.async.wait_group");
    assert_eq!(v["requires_sm"], "sm_80");
    assert_eq!(v["target_satisfies"], false);
    let text = ktui(&["explain", &f.at(19, Some(30)), "--arch", "sm_75"]).1;
    assert!(text.contains("requires sm_80, target is sm_75"), "{text}");
}

#[test]
fn kernel_json_has_occupancy_at_the_launch() {
    let f = TempFile::new("kernel.cu", KERNEL);
    let v = explain_json(&f.at(4, Some(45)), "sm_90");
    assert_eq!(v["kind"], "kernel");
    assert_eq!(v["kernel"]["launch_bounds"]["max_threads"], 256);
    assert_eq!(v["kernel"]["launch_bounds_regs"], 128);
    assert_eq!(v["occupancy"]["block"], serde_json::json!([32, 8, 1]));
    // The limit only caps registers: the typical 32 are assumed until ptxas reports.
    assert_eq!(v["occupancy"]["regs_per_thread"], 32);
    assert_eq!(v["occupancy"]["blocks_per_sm"], 8);
    assert_eq!(
        v["occupancy"]["limiter"],
        serde_json::json!(["warps", "registers"])
    );
}

#[test]
fn shared_access_json_has_the_bank_map() {
    let f = TempFile::new("banks.cu", KERNEL);
    // `tile[threadIdx.x][threadIdx.y]`: warp 0 of a 32x8 block reads one column.
    let v = explain_json(&f.at(10, Some(24)), "sm_90");
    assert_eq!(v["kind"], "shared-access");
    assert_eq!(v["bank"]["conflict_degree"], 32);
    assert_eq!(v["bank"]["wavefronts"], 32);
    assert_eq!(v["bank"]["banks"].as_array().map(Vec::len), Some(32));
    // The store `tile[threadIdx.y][threadIdx.x]` is conflict-free.
    let v = explain_json(&f.at(8, None), "sm_90");
    assert_eq!(v["bank"]["conflict_degree"], 1);
}

#[test]
fn shared_declaration_and_text_output() {
    let f = TempFile::new("decl.cu", KERNEL);
    let v = explain_json(&f.at(5, Some(22)), "sm_90");
    assert_eq!(v["kind"], "shared-declaration");
    assert_eq!(v["shared"]["bytes"], 4096);
    let (code, text, _) = ktui(&["explain", &f.at(5, Some(22))]);
    assert_eq!(code, 0);
    assert!(text.contains("4096 bytes"), "{text}");
}

/// Issue 28: piped, `explain` prints the hover as plain text (no Markdown syntax, no
/// escape codes, one paragraph a line); on a terminal (`--color always`) it renders the
/// Markdown with styles, as the TUI's panel does.
#[test]
fn explain_prints_plain_text_into_a_pipe_and_styles_a_terminal() {
    let f = TempFile::new("render.cu", KERNEL);
    let pos = f.at(19, Some(30));
    let (code, piped, _) = ktui(&["explain", &pos, "--arch", "sm_75"]);
    assert_eq!(code, 0);
    let (_, never, _) = ktui(&["explain", &pos, "--arch", "sm_75", "--color", "never"]);
    assert_eq!(piped, never);
    let markdown = explain_json(&pos, "sm_75")["markdown"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(markdown.contains('`'), "{markdown}");
    assert!(!piped.contains('`'), "{piped}");
    assert!(!piped.contains("**"), "{piped}");
    assert!(!piped.contains('\u{1b}'), "{piped:?}");
    assert!(piped.contains("cp.async.wait_group"), "{piped}");
    let (_, styled, _) = ktui(&["explain", &pos, "--arch", "sm_75", "--color", "always"]);
    assert!(styled.contains("\u{1b}["), "{styled:?}");
    assert!(!styled.contains("**"), "{styled:?}");
}

#[test]
fn nothing_to_explain_and_bad_positions() {
    let f = TempFile::new("blank.cu", KERNEL);
    let (code, stdout, stderr) = ktui(&["explain", &f.at(3, None), "--json"]);
    assert_eq!((code, stdout.trim()), (1, "null"), "{stderr}");
    let (code, _, stderr) = ktui(&["explain", &f.at(999, None)]);
    assert_eq!(code, 2);
    assert!(stderr.contains("has no line 999"), "{stderr}");
    let (code, _, stderr) = ktui(&["explain", "no-such-file.cu:1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("reading no-such-file.cu"), "{stderr}");
}

/// `explain` reads files as `check` does: a Latin-1 comment is decoded lossily with a
/// note, and the `.kernaut.toml` above the file sets the target.
#[test]
fn latin1_files_and_kernaut_toml_are_read_like_check() {
    let dir = std::env::temp_dir().join(format!("ktui-explain-toml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".kernaut.toml"), "arch = \"sm_52\"\n").unwrap();
    let mut bytes = b"// transpos\xe9e\n".to_vec();
    bytes.extend_from_slice(
        b"__global__ void k(__half2* o, __half2 a) { o[0] = __hfma2(a, a, a); }\n",
    );
    let file = dir.join("k.cu");
    std::fs::write(&file, &bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args(["explain", &format!("{}:2:55", file.display()), "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("not valid UTF-8"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(
        text.contains("sm_52"),
        "the target comes from .kernaut.toml: {text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The hover sees the constants of a header the file includes with `#include "…"`, read
/// from disk next to it: the shared array's bytes are known only through the header.
#[test]
fn explain_reads_the_quoted_includes_from_disk() {
    let header = TempFile::new("explain_tile.h", "#define EXPLAIN_BM 64\n");
    let kernel = "#include \"explain_tile.h\"\n__global__ void k(float* out) {\n    __shared__ float a[EXPLAIN_BM][EXPLAIN_BM];\n    out[0] = a[threadIdx.x][0];\n}\n";
    let cu = TempFile::new("explain_include.cu", kernel);
    let (code, stdout, stderr) = ktui(&["explain", &cu.at(3, Some(22)), "--arch", "sm_90"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("16384"), "{stdout}");
    // Without the header the size is unknown.
    drop(header);
    let (code, stdout, stderr) = ktui(&["explain", &cu.at(3, Some(22)), "--arch", "sm_90"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("16384"), "{stdout}");
}
