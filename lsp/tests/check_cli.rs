//! `kernaut-lsp check` end to end: a temporary tree with `.cu` files, a `.kernaut.toml`
//! and a `.gitignore`d file, checked through the real binary in every format.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CONFLICT: &str = "__global__ void transpose(float* out) {\n    __shared__ float tile[32][32];\n    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\n";

const LEGACY: &str = "__device__ float reduce(float v) {\n    return v + __shfl_down(v, 16);\n}\n";

/// A fresh folder under the target directory, removed first if a previous run left it.
fn temp_tree(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/sub")).unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::write(dir.join("src/transpose.cu"), CONFLICT).unwrap();
    std::fs::write(dir.join("src/sub/reduce.cuh"), LEGACY).unwrap();
    std::fs::write(dir.join("src/notes.txt"), LEGACY).unwrap();
    std::fs::write(dir.join("build/generated.cu"), LEGACY).unwrap();
    std::fs::write(dir.join(".gitignore"), "build/\n").unwrap();
    // The project builds for sm_90: architecture findings are errors, not the hints
    // of an assumed target.
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "add_subdirectory(src)\nset(CMAKE_CUDA_ARCHITECTURES 90)\n",
    )
    .unwrap();
    dir
}

fn check(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("kernaut-lsp runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn text_output_walks_honours_gitignore_and_fails_on_errors() {
    let dir = temp_tree("check-text");
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0]
            .starts_with("src/sub/reduce.cuh:2:16: error: `__shfl_down` has no participation mask"),
        "{out}"
    );
    assert!(
        lines[0].ends_with("[warp/legacy-sync-free-intrinsic] (wiki pitfall-warp-primitives#P1)"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("src/transpose.cu:3:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        lines[1].ends_with("[bank-conflict] (wiki pitfall-bank-conflict#P1)"),
        "{out}"
    );
    assert!(
        !out.contains("generated.cu") && !out.contains("notes.txt"),
        "{out}"
    );
}

#[test]
fn configuration_relevels_rules_and_sets_the_arch() {
    let dir = temp_tree("check-config");
    std::fs::write(
        dir.join(".kernaut.toml"),
        "arch = \"sm_61\"\n[rules]\nbank-conflict = \"error\"\n",
    )
    .unwrap();
    let o = check(&dir, &["src"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // On sm_61 the mask-free shuffle still exists; the conflict is now an error.
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.contains("src/transpose.cu:3:24: error: 32-way"),
        "{out}"
    );

    std::fs::write(
        dir.join(".kernaut.toml"),
        "[rules]\nbank-conflict = \"off\"\n",
    )
    .unwrap();
    let o = check(&dir, &["src", "--arch", "sm_61"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o), "");
}

#[test]
fn json_is_an_array_with_one_based_positions_and_fixes() {
    let dir = temp_tree("check-json");
    let o = check(&dir, &["src/sub/reduce.cuh", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let d = &v.as_array().unwrap()[0];
    assert_eq!(d["file"], "src/sub/reduce.cuh");
    assert_eq!((d["line"].as_u64(), d["col"].as_u64()), (Some(2), Some(16)));
    assert_eq!(
        (d["end_line"].as_u64(), d["end_col"].as_u64()),
        (Some(2), Some(27))
    );
    assert_eq!(d["severity"], "error");
    assert_eq!(d["rule"], "warp/legacy-sync-free-intrinsic");
    assert_eq!(d["wiki"], "pitfall-warp-primitives#P1");
    assert_eq!(d["fixes"][0]["safe"], true);
    let edits = &d["fixes"][0]["edits"];
    assert_eq!(edits[0]["new_text"], "__shfl_down_sync");
    assert_eq!(edits[1]["new_text"], "0xffffffff, ");
}

#[test]
fn sarif_is_version_2_1_0() {
    let dir = temp_tree("check-sarif");
    let o = check(&dir, &["src", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "kernaut");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["ruleId"], "warp/legacy-sync-free-intrinsic");
    assert_eq!(results[0]["level"], "error");
    let loc = &results[0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "src/sub/reduce.cuh");
    assert_eq!(loc["region"]["startLine"], 2);
    assert_eq!(results[1]["level"], "warning");
    let rule_index = results[1]["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(
        run["tool"]["driver"]["rules"][rule_index]["id"],
        "bank-conflict"
    );
}

#[test]
fn usage_and_io_errors_exit_2() {
    let dir = temp_tree("check-errors");
    let o = check(&dir, &["missing.cu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.cu"));
    let o = check(&dir, &["src", "--arch", "sm_1"]);
    assert_eq!(o.status.code(), Some(2));
    let o = check(&dir, &["src", "--format", "xml"]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::write(
        dir.join(".kernaut.toml"),
        "[rules]\nbank-conflict = \"loud\"\n",
    )
    .unwrap();
    let o = check(&dir, &["src"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(".kernaut.toml"));
}

#[test]
fn bare_invocation_is_the_server_and_ends_when_stdin_closes() {
    let o = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("kernaut-lsp runs");
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}

#[test]
fn requires_newer_sm_needs_a_configured_target() {
    let dir = temp_tree("check-arch");
    let file = "src/copy.cu";
    std::fs::write(
        dir.join(file),
        "__global__ void k(const float* in) {\n    asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\\n\" :: \"r\"(0), \"l\"(in));\n}\n",
    )
    .unwrap();
    let o = check(&dir, &[file]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = check(&dir, &[file, "--arch", "sm_75"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("src/copy.cu:2:19: error: `cp.async.ca` needs sm_80"),
        "{}",
        stdout(&o)
    );
}

/// `check --resources` compiles each file: a table of registers, spills and occupancy,
/// and a budget that fails the run. Without a toolkit it says so and exits 2.
#[test]
fn resources_table_and_budget() {
    let dir = temp_tree("check-resources");
    std::fs::write(
        dir.join("src/small.cu"),
        "__global__ void small(float* o) { o[threadIdx.x] *= 2.0f; }\nvoid run(float* o) { small<<<1, 128>>>(o); }\n",
    )
    .unwrap();
    let o = check(
        &dir,
        &[
            "src/small.cu",
            "--arch",
            "sm_80",
            "--resources",
            "--max-registers",
            "1",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if kernaut_compiler::Toolkit::discover(&kernaut_compiler::ToolkitConfig::default()).is_err() {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--resources needs a CUDA toolkit"), "{err}");
        eprintln!("skipped the compile half: no CUDA toolkit here");
        return;
    }
    assert!(
        err.contains("kernel") && err.contains("regs") && err.contains("small"),
        "{err}"
    );
    assert!(err.contains("over the resource budget"), "{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    let o = check(
        &dir,
        &[
            "src/small.cu",
            "--arch",
            "sm_80",
            "--resources",
            "--format",
            "json",
        ],
    );
    let out = stdout(&o);
    assert!(out.contains("\"resources\""), "{out}");
    assert_eq!(o.status.code(), Some(0));
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `--list-rules` names every rule once with its severity, anchor and one line;
/// `--explain` prints a rule's doc block; both need no path.
#[test]
fn list_rules_and_explain() {
    let dir = temp_tree("check-list-rules");
    let o = check(&dir, &["--list-rules"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        out.lines().count(),
        kernaut_ide::rules::RULES.len(),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("warp/legacy-sync-free-intrinsic "))
        .expect("the rule is listed");
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[1], "error", "{line}");
    assert_eq!(cells[2], "pitfall-warp-primitives#P1", "{line}");
    assert!(line.contains("`__shfl`, `__shfl_up`"), "{line}");

    let o = check(&dir, &["--list-rules", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let rules = v.as_array().unwrap();
    assert_eq!(rules.len(), kernaut_ide::rules::RULES.len());
    let bank = rules.iter().find(|r| r["id"] == "bank-conflict").unwrap();
    assert_eq!(bank["severity"], "warning");
    assert_eq!(bank["wiki"], "pitfall-bank-conflict#P1");
    assert!(bank["wiki_anchors"].as_array().unwrap().len() > 1);
    assert!(bank["summary"].as_str().unwrap().contains("bank"));

    let o = check(&dir, &["--explain", "bank-conflict"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.starts_with("bank-conflict (default severity: warning; wiki pitfall-bank-conflict#P1"),
        "{out}"
    );
    assert!(
        out.contains("```cuda") && out.contains("__shared__ float tile[32][33];"),
        "{out}"
    );
    assert!(!out.contains("//!"), "{out}");

    let o = check(&dir, &["--explain", "bank-conflit"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean `bank-conflict`?"),
        "{}",
        stderr(&o)
    );
    // A path is still needed to check.
    assert_eq!(check(&dir, &[]).status.code(), Some(2));
}

/// A misspelled id in `.kernaut.toml` stops the run with the closest id; one in an
/// `allow(...)` comment is a hint at the comment and silences nothing.
#[test]
fn misspelled_rule_ids_are_reported() {
    let dir = temp_tree("check-misspelled");
    std::fs::write(
        dir.join(".kernaut.toml"),
        "[rules]\nbank-conflit = \"off\"\n",
    )
    .unwrap();
    let o = check(&dir, &["src"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(".kernaut.toml")
            && err
                .contains("rules.\"bank-conflit\": no such rule; did you mean \"bank-conflict\"?"),
        "{err}"
    );
    std::fs::write(
        dir.join(".kernaut.toml"),
        "[rules]\n\"resources/spills\" = \"off\"\n",
    )
    .unwrap();
    assert_eq!(check(&dir, &["src"]).status.code(), Some(1));

    std::fs::remove_file(dir.join(".kernaut.toml")).unwrap();
    std::fs::write(
        dir.join("src/transpose.cu"),
        CONFLICT.replace(
            "tile[threadIdx.x][threadIdx.y];",
            "tile[threadIdx.x][threadIdx.y]; // kernaut: allow(bank-conflit)",
        ),
    )
    .unwrap();
    let o = check(&dir, &["src/transpose.cu"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("src/transpose.cu:3:24: warning: 32-way"),
        "{out}"
    );
    assert_eq!(
        lines[1],
        "src/transpose.cu:3:56: hint: `allow(bank-conflit)` names no rule and silences nothing; did you mean `bank-conflict`? [config/unknown-rule]",
        "{out}"
    );
    // The correct id silences the line and leaves no hint.
    std::fs::write(
        dir.join("src/transpose.cu"),
        CONFLICT.replace(
            "tile[threadIdx.x][threadIdx.y];",
            "tile[threadIdx.x][threadIdx.y]; // kernaut: allow(bank-conflict)",
        ),
    )
    .unwrap();
    assert_eq!(stdout(&check(&dir, &["src/transpose.cu"])), "");
}

const TWO_SHUFFLES: &str = "__device__ float reduce(float v) {\n    return v + __shfl_down(v, 16);\n}\n__device__ float half(float v) {\n    if (threadIdx.x < 16) v += __shfl_xor(v, 1);\n    return v;\n}\n";

/// `--fix` applies the safe fixes (a full mask where the whole warp reaches the call) and
/// not the others (the padding of a conflicting array, a mask inside a branch on the
/// thread index); `--fix --dry-run` prints the same change as a diff and writes nothing.
#[test]
fn fix_applies_safe_fixes_and_dry_run_prints_the_diff() {
    let dir = temp_tree("check-fix");
    std::fs::write(dir.join("src/sub/reduce.cuh"), TWO_SHUFFLES).unwrap();
    let o = check(&dir, &["src", "--fix", "--dry-run"]);
    // A pending safe fix fails the step, as `cargo fmt --check` does.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let diff = stdout(&o);
    assert_eq!(
        diff,
        "--- a/src/sub/reduce.cuh\n+++ b/src/sub/reduce.cuh\n@@ -1,5 +1,5 @@\n __device__ float reduce(float v) {\n-    return v + __shfl_down(v, 16);\n+    return v + __shfl_down_sync(0xffffffff, v, 16);\n }\n __device__ float half(float v) {\n     if (threadIdx.x < 16) v += __shfl_xor(v, 1);\n",
    );
    assert!(
        stderr(&o)
            .contains("would fix src/sub/reduce.cuh: 1 fix (warp/legacy-sync-free-intrinsic ×1)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/sub/reduce.cuh")).unwrap(),
        TWO_SHUFFLES
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/transpose.cu")).unwrap(),
        CONFLICT
    );

    let o = check(&dir, &["src", "--fix"]);
    let err = stderr(&o);
    assert!(err.contains("fixed src/sub/reduce.cuh: 1 fix"), "{err}");
    let fixed = std::fs::read_to_string(dir.join("src/sub/reduce.cuh")).unwrap();
    assert!(
        fixed.contains("return v + __shfl_down_sync(0xffffffff, v, 16);"),
        "{fixed}"
    );
    assert!(fixed.contains("v += __shfl_xor(v, 1);"), "{fixed}");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/transpose.cu")).unwrap(),
        CONFLICT
    );
    // What remains is reported against the fixed text.
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("src/sub/reduce.cuh:5:32: error: `__shfl_xor`"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("src/transpose.cu:3:24: warning"),
        "{out}"
    );
    assert_eq!(o.status.code(), Some(1));

    // Nothing safe is left.
    let o = check(&dir, &["src", "--fix"]);
    assert!(
        stderr(&o).contains("no safe fixes to apply"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/sub/reduce.cuh")).unwrap(),
        fixed
    );
    // With nothing safe left, the dry run prints nothing and passes.
    let o = check(&dir, &["src", "--fix", "--dry-run"]);
    assert_eq!(stdout(&o), "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing to fix: no safe fixes to apply"),
        "{}",
        stderr(&o)
    );
    assert_eq!(check(&dir, &["src", "--dry-run"]).status.code(), Some(2));
}

/// An unroll factor is safe to change: `--fix` sets it.
#[test]
fn fix_lowers_an_unroll_factor() {
    let dir = temp_tree("check-fix-unroll");
    let text = "__global__ void k(const float* a, float* out, int n) {\n    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;\n    #pragma unroll 32\n    for (int i = threadIdx.x; i < n; i += blockDim.x) {\n        float x = a[i];\n        float y = x * x;\n        s0 = fmaf(x, y, s0);\n        s1 = fmaf(y, y, s1);\n        s2 = fmaf(x, s1, s2);\n        s3 = fmaf(y, s0, s3);\n        s0 = s0 * 0.5f;\n        s1 = s1 + s2;\n    }\n    out[threadIdx.x] = s0 + s1 + s2 + s3;\n}\n";
    std::fs::write(dir.join("src/unroll.cu"), text).unwrap();
    let o = check(&dir, &["src/unroll.cu", "--fix"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fixed = std::fs::read_to_string(dir.join("src/unroll.cu")).unwrap();
    assert_eq!(fixed, text.replace("#pragma unroll 32", "#pragma unroll 4"));
    assert_eq!(stdout(&o), "");
}

/// A binary file is skipped with a note; a non-UTF-8 one is decoded lossily with a note
/// and still checked (and never rewritten by `--fix`).
#[test]
fn binary_and_non_utf8_files_are_reported() {
    let dir = temp_tree("check-encodings");
    std::fs::write(
        dir.join("src/blob.cu"),
        b"\x7fELF\x02\x01\x01\x00\x00\x00__shfl_down(",
    )
    .unwrap();
    let mut latin1 = b"// caf\xe9\n".to_vec();
    latin1.extend_from_slice(LEGACY.as_bytes());
    std::fs::write(dir.join("src/latin1.cu"), &latin1).unwrap();
    let o = check(&dir, &["src"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(
        err.contains("note: src/blob.cu: a binary file (it holds NUL bytes), skipped"),
        "{err}"
    );
    assert!(
        err.contains("note: src/latin1.cu: not valid UTF-8 (1 byte replaced by U+FFFD)"),
        "{err}"
    );
    assert!(
        out.contains("src/latin1.cu:3:16: error: `__shfl_down`"),
        "{out}"
    );
    assert!(!out.contains("blob.cu"), "{out}");
    assert!(err.contains("checked 3 files"), "{err}");

    let o = check(&dir, &["src/latin1.cu", "--fix"]);
    assert!(
        stderr(&o).contains("src/latin1.cu: not fixed: the file is not UTF-8"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("src/latin1.cu")).unwrap(), latin1);
}

/// Many findings in one file: every one is reported (the run that was quadratic in its
/// findings, docs/BENCHMARKS.md).
#[test]
fn many_findings_in_one_file() {
    let dir = temp_tree("check-many");
    let text: String = (0..2000)
        .map(|i| format!("__global__ void k{i}(float* o) {{ __shared__ float t[32][32]; o[threadIdx.x] = t[threadIdx.x][0]; }}\n"))
        .collect();
    std::fs::write(dir.join("src/many.cu"), text).unwrap();
    let o = check(&dir, &["src/many.cu"]);
    assert_eq!(stdout(&o).lines().count(), 2000);
    assert!(
        stderr(&o).contains("0 errors, 2000 warnings"),
        "{}",
        stderr(&o)
    );
}

/// A `.cu` whose double-buffered loop waits through a wrapper macro of the project's own
/// `ptx.h`: the header is read from disk (it is not a `.cu`/`.cuh`, so the walk does not
/// list it) and its macros reach the rule; the header itself is not reported on.
#[test]
fn quoted_include_macros_are_read_from_disk() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-include");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("common")).unwrap();
    std::fs::write(
        dir.join("common/ptx.h"),
        "#pragma once\n\
         #define CP_ASYNC_CG(dst, src) asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" ::\"r\"(dst), \"l\"(src))\n\
         #define CP_ASYNC_COMMIT_GROUP() asm volatile(\"cp.async.commit_group;\\n\" ::)\n\
         #define CP_ASYNC_WAIT_GROUP(n) asm volatile(\"cp.async.wait_group %0;\\n\" ::\"n\"(n))\n",
    )
    .unwrap();
    let kernel = "#include \"../common/ptx.h\"\n#include \"missing.h\"\n\
__global__ void k(const float4* in, float* out, int n) {\n\
    __shared__ float4 buf[2][256];\n\
    CP_ASYNC_CG(&buf[0][threadIdx.x], in);\n\
    CP_ASYNC_COMMIT_GROUP();\n\
    for (int t = 0; t < n; ++t) {\n\
        CP_ASYNC_CG(&buf[(t + 1) % 2][threadIdx.x], in + t);\n\
        CP_ASYNC_COMMIT_GROUP();\n\
        CP_ASYNC_WAIT_GROUP(0);\n\
        __syncthreads();\n\
        out[t] = buf[t % 2][threadIdx.x].x;\n\
        __syncthreads();\n\
    }\n\
}\n";
    std::fs::write(dir.join("src/k.cu"), kernel).unwrap();
    let finding = "src/k.cu:10:1: warning: `CP_ASYNC_WAIT_GROUP(0)` waits for every copy";
    // The folder.
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with(finding), "{out}");
    assert!(
        out.contains("[async-copy/wait-all-in-pipelined-loop]"),
        "{out}"
    );
    // Only the .cu named: the header is still read; the missing one is a note in
    // verbose output only.
    let o = check(&dir, &["src/k.cu"]);
    assert!(stdout(&o).starts_with(finding), "{}", stdout(&o));
    assert!(!stderr(&o).contains("missing.h"), "{}", stderr(&o));
    let o = check(&dir, &["--verbose", "src/k.cu"]);
    assert!(stdout(&o).starts_with(finding), "{}", stdout(&o));
    assert!(stderr(&o).contains("missing.h"), "{}", stderr(&o));
    // Without the header on disk the wrapper is unknown: nothing to report.
    std::fs::remove_file(dir.join("common/ptx.h")).unwrap();
    let o = check(&dir, &["src/k.cu"]);
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
}

/// Targets from `-gencode` flags a `CMakeLists.txt` collects in a variable under its
/// options and hands nvcc: the options' defaults decide the branches, and a condition
/// the file does not decide keeps its targets, with a note naming it.
#[test]
fn cmake_gencode_flags_behind_options_name_the_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-cmake-gencode");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let cmake = "cmake_minimum_required(VERSION 3.18)\n\
        project(demo LANGUAGES CXX CUDA)\n\
        option(WITH_TURING \"Build for sm_75\" ON)\n\
        option(WITH_HOPPER \"Build for sm_90\" OFF)\n\
        if(WITH_TURING)\n\
        \x20 set(ARCH_FLAGS ${ARCH_FLAGS} -gencode arch=compute_75,code=sm_75)\n\
        endif()\n\
        if(WITH_HOPPER)\n\
        \x20 list(APPEND ARCH_FLAGS -gencode arch=compute_90,code=sm_90)\n\
        endif()\n\
        list(APPEND ARCH_FLAGS -gencode arch=compute_86,code=sm_86)\n\
        set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS} ${ARCH_FLAGS})\n\
        add_library(demo copy.cu)\n";
    std::fs::write(dir.join("CMakeLists.txt"), cmake).unwrap();
    std::fs::write(
        dir.join("copy.cu"),
        "__global__ void k(const float* in) {\n    asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\\n\" :: \"r\"(0), \"l\"(in));\n}\n",
    )
    .unwrap();
    let shown = |o: &Output| stdout(o).replace(&dir.display().to_string(), "$DIR");
    let o = check(&dir, &["copy.cu"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        shown(&o).starts_with("copy.cu:2:19: error: `cp.async.ca` needs sm_80, but this file is also built for sm_75 (from $DIR/CMakeLists.txt:6)"),
        "{}",
        shown(&o)
    );
    // A condition the file does not decide: its targets count, the origin says so, and
    // a finding that rests on them alone is a hint (the build may not make sm_75).
    std::fs::write(
        dir.join("CMakeLists.txt"),
        cmake.replace("if(WITH_TURING)", "if(CUDA_VERSION VERSION_LESS 13.0)"),
    )
    .unwrap();
    let o = check(&dir, &["copy.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        shown(&o).starts_with("copy.cu:2:19: hint: `cp.async.ca` needs sm_80, but this file is also built for sm_75 (from $DIR/CMakeLists.txt:6; sm_75 only under if(CUDA_VERSION VERSION_LESS 13.0) (line 6), which the file does not decide)"),
        "{}",
        shown(&o)
    );
    // Every option off but one sm_86 flag: built for sm_86 only, nothing to say.
    std::fs::write(
        dir.join("CMakeLists.txt"),
        cmake.replace("\"Build for sm_75\" ON", "\"Build for sm_75\" OFF"),
    )
    .unwrap();
    let o = check(&dir, &["copy.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// A block size that a header's constant gives a local (`int bsize = tblock;` with
/// `static const int tblock = 32;` in a header found through CMake's
/// `target_include_directories`): the launch's block is 32 threads, so a guard on the
/// warp index is the same for a whole block and the barrier under it is fine. Without the
/// include folder the header is not found, the block is unknown and the guard divides
/// larger blocks.
#[test]
fn header_constants_reach_the_launch_through_cmake_include_folders() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-header-constants");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("include/lib")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let dir = dir.canonicalize().unwrap();
    let cmake = "cmake_minimum_required(VERSION 3.18)\n\
        project(demo LANGUAGES CUDA)\n\
        add_library(demo src/k.cu src/entry.cu)\n\
        target_include_directories(demo PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include/lib>)\n\
        set(CMAKE_CUDA_ARCHITECTURES 80)\n";
    std::fs::write(dir.join("CMakeLists.txt"), cmake).unwrap();
    std::fs::write(
        dir.join("include/lib/k.h"),
        "#pragma once\nstatic const int tblock = 32;\n__global__ void kern(const unsigned* in, unsigned* out);\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/k.cu"),
        "#include \"k.h\"\n__global__ void kern(const unsigned* in, unsigned* out) {\n    __shared__ unsigned carry;\n    int gid = blockIdx.x * blockDim.x + threadIdx.x;\n    int warp = gid >> 5;\n    if (warp > 0) {\n        if (threadIdx.x == 0) carry = out[warp - 1];\n        __syncthreads();\n    }\n    out[gid] = in[gid] + carry;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/entry.cu"),
        "#include \"k.h\"\nvoid run(const unsigned* in, unsigned* out, int n) {\n    int bsize = tblock;\n    dim3 b(bsize);\n    kern<<<(n + bsize - 1) / bsize, b>>>(in, out);\n}\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert_eq!(stdout(&o), "");
    assert_eq!(o.status.code(), Some(0));
    std::fs::write(
        dir.join("CMakeLists.txt"),
        cmake.replace("target_include_directories", "# target_include_directories"),
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert!(
        stdout(&o).contains("src/k.cu:8:9: warning: `__syncthreads()` inside `if (warp > 0)`"),
        "{}",
        stdout(&o)
    );
}

/// A kernel's strides that the host function launching it passes on, and that every
/// call of that function in the project (in `.cu` files and in host C++ files) passes as
/// 1: `check` over the folder says nothing of them; a call in another file that passes a
/// runtime stride brings the hint.
#[test]
fn strides_every_caller_passes_as_one_are_coalesced() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-fixed-strides");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("copy.cu"),
        "__global__ void copy_kernel(int n, const float *x, int incx, float *y, int incy)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i*incy] = x[i*incx];\n}\n\nvoid copy_gpu(int n, const float *x, int incx, float *y, int incy)\n{\n    copy_kernel<<<(n + 255) / 256, 256>>>(n, x, incx, y, incy);\n}\n",
    )
    .unwrap();
    let caller = "void copy_gpu(int n, const float *x, int incx, float *y, int incy);\n\nvoid backup(const float *w, float *saved, int n)\n{\n    copy_gpu(n, w, 1, saved, 1);\n}\n";
    std::fs::write(dir.join("train.cu"), caller).unwrap();
    // A host C++ file of the project calls it too: it is read, not checked.
    std::fs::write(dir.join("main.cpp"), caller.replace("backup", "restore")).unwrap();
    let o = check(&dir, &["."]);
    assert!(
        !stdout(&o).contains("strided-global-access"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("main.cpp"), "{}", stdout(&o));
    std::fs::write(
        dir.join("main.cpp"),
        caller.replace("saved, 1);", "saved, 1);\n    copy_gpu(n, w, n, saved, 1);"),
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert!(
        stdout(&o).contains("copy.cu:4:28: hint: uncoalesced load from `x`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic) (taking `incx` to be 64 or more)"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("store to `y`"), "{}", stdout(&o));
}

/// A `.cu` kept in an `include/` folder that no build file sits above, compiled through
/// a source of `lib/` whose `CMakeLists.txt` builds for sm_35: it is built with those
/// targets, in the editor's load and in `check`'s streamed one alike, so its
/// warp-synchronous tail through `volatile` (lock-step on sm_35) is no finding.
#[test]
fn a_source_included_from_another_folder_takes_its_includers_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-include-tree");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("include/util")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("lib/CMakeLists.txt"),
        "project(sums)\nset(CUDA_NVCC_FLAGS \"-arch=sm_35\")\ninclude_directories(${CMAKE_CURRENT_SOURCE_DIR}/../include)\ncuda_add_library(sums sum.cu)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("lib/sum.cu"),
        "#include \"util/tail.cu\"\nvoid run(const int* in, int* out, int n) { block_sum<<<n, 64>>>(in, out); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("include/util/tail.cu"),
        "__global__ void block_sum(const int* in, int* out) {\n    __shared__ int part[64];\n    unsigned t = threadIdx.x;\n    part[t] = in[blockIdx.x * 64 + t];\n    __syncthreads();\n    if (t < 32) {\n        volatile int* w = part;\n        w[t] += w[t + 32];\n        w[t] += w[t + 16];\n        w[t] += w[t + 8];\n    }\n    if (t == 0) out[blockIdx.x] = part[0];\n}\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert!(
        stderr(&o).contains("targets: sm_35 (from ") && !stderr(&o).contains("assumed"),
        "{}",
        stderr(&o)
    );
    // Alone, the file has no build to read: sm_90 is assumed, and the tail races there.
    let o = check(&dir.join("include"), &["."]);
    assert!(
        stdout(&o).contains("implicit warp-synchronous"),
        "{}\n{}",
        stdout(&o),
        stderr(&o)
    );
}

/// A Makefile's `-I./include` is where `#include "tile.h"` is found: the tile size it
/// defines reaches the kernel, whose column read is then a 32-way conflict.
#[test]
fn makefile_include_folders_reach_the_headers() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-include");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "all:\n\tnvcc -I./include -o main src/main.cu\n",
    )
    .unwrap();
    std::fs::write(dir.join("include/tile.h"), "#define TILE 32\n").unwrap();
    std::fs::write(
        dir.join("src/main.cu"),
        "#include \"tile.h\"\n__global__ void col(float* out) {\n    __shared__ float t[TILE][TILE];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}\nvoid run(float* o) { col<<<1, TILE>>>(o); }\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert!(
        stdout(&o).contains("src/main.cu:6:24: warning: 32-way bank conflict"),
        "{}\n{}",
        stdout(&o),
        stderr(&o)
    );
    assert!(!stderr(&o).contains("not found"), "{}", stderr(&o));
}

/// Outside any repository, the project is the folder `check` is given: a build script in
/// the folder above it (another project's, or a download folder's) gives its files no
/// targets. Inside the folder, the same script does.
#[test]
fn a_build_file_above_the_checked_folder_is_not_the_projects() {
    // Under the system's temporary folder: no `.git` above says where a project ends.
    let top = std::env::temp_dir().join(format!("kernaut-check-above-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    let dir = top.join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    let (top, dir) = (top.canonicalize().unwrap(), dir.canonicalize().unwrap());
    std::fs::write(top.join("build.sh"), "nvcc -arch=sm_75 proj/k.cu -o k\n").unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "__global__ void k(int* out) {\n    out[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    let err = stderr(&check(&dir, &["."]));
    assert!(
        err.contains("targets: sm_90 (assumed: no setting or build file names them"),
        "{err}"
    );
    // A file given stands for its folder.
    let err = stderr(&check(&dir, &["k.cu"]));
    assert!(
        err.contains("targets: sm_90 (assumed: no setting or build file names them"),
        "{err}"
    );
    std::fs::rename(top.join("build.sh"), dir.join("build.sh")).unwrap();
    std::fs::write(dir.join("build.sh"), "nvcc -arch=sm_75 k.cu -o k\n").unwrap();
    let err = stderr(&check(&dir, &["."]));
    assert!(err.contains("targets: sm_75 (from "), "{err}");
    // A file below the current folder, given alone: the project still ends at the
    // current folder, whose build file names it.
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::rename(dir.join("k.cu"), dir.join("sub/k.cu")).unwrap();
    std::fs::write(dir.join("build.sh"), "nvcc -arch=sm_75 sub/k.cu -o k\n").unwrap();
    let err = stderr(&check(&dir, &["sub/k.cu"]));
    assert!(err.contains("targets: sm_75 (from "), "{err}");
    let _ = std::fs::remove_dir_all(&top);
}

/// A pointer chase written out statement by statement (`tmp = chase[tmp];` 4096 times,
/// as cache microbenchmarks are generated): each value is a load through the one before,
/// and the lowering of an index gives up at its depth bound instead of following the
/// chain down the stack. The run ends with its summary.
#[test]
fn a_long_chain_of_loads_through_one_another_is_checked() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-chase");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::from(
        "__global__ void chase_k(int n, int* out, const int* chase) {\n    unsigned tid = threadIdx.x + blockIdx.x * blockDim.x;\n    int tmp = chase[threadIdx.x];\n",
    );
    for _ in 0..64 {
        text.push_str("   ");
        for _ in 0..64 {
            text.push_str(" tmp = chase[tmp];");
        }
        text.push('\n');
    }
    text.push_str("    if (tid < n) {\n        out[tid] = tmp;\n    }\n}\nvoid run(int n, int* out, const int* chase) { chase_k<<<(n + 255) / 256, 256>>>(n, out, chase); }\n");
    std::fs::write(dir.join("chase.cu"), text).unwrap();
    let o = check(&dir, &["."]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("checked 1 file: 0 errors, 0 warnings, 0 hints"),
        "{err}"
    );
}

/// A rule whose prerequisites go on over a tab-indented line (`app: a.cu \\` then
/// `\tb.cu`): make joins the lines before it looks for a recipe's tab, so `b.cu` is a
/// prerequisite that the `nvcc -arch=sm_35 $^` recipe compiles, and a call that needs
/// sm_80 is an error there as in `a.cu`.
#[test]
fn a_continued_prerequisite_line_is_no_recipe() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-continued");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "run: app\n\t./app\n\napp: a.cu \\\n\tb.cu\n\tnvcc -arch=sm_35 \\\n\t    $^ -o app\n",
    )
    .unwrap();
    let kernel = |name: &str| {
        format!("__global__ void {name}(int* out) {{\n    out[0] = __reduce_add_sync(0xffffffff, out[threadIdx.x]);\n}}\n")
    };
    std::fs::write(dir.join("a.cu"), kernel("ka")).unwrap();
    std::fs::write(dir.join("b.cu"), kernel("kb")).unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    for file in ["a.cu", "b.cu"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("{file}:2:14: error:"))
                    && l.contains("sm_35")
                    && l.contains("[arch/requires-newer-sm]")),
            "{out}"
        );
    }
    let err = stderr(&o);
    assert!(err.contains("targets: sm_35 (from "), "{err}");
    assert!(!err.contains("assumed"), "{err}");
}

/// A Makefile that names the CUDA sources it compiles and not `stale.cu`: the stale
/// copy's finding is a hint that says the build does not compile it, and its targets
/// line says none; `part.cu`, which the compiled file `#include`s, is compiled with it and
/// keeps its warning.
#[test]
fn files_a_makefile_does_not_compile_give_hints_only() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-unbuilt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "all: app\napp: live.cu\n\tnvcc -gencode arch=compute_80,code=sm_80 live.cu -o app\n",
    )
    .unwrap();
    let kernel = |name: &str| {
        format!(
            "__global__ void {name}(float* out) {{\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}}\nvoid run_{name}(float* o) {{ {name}<<<1, 32>>>(o); }}\n"
        )
    };
    std::fs::write(
        dir.join("live.cu"),
        format!("#include \"part.cu\"\n{}", kernel("live")),
    )
    .unwrap();
    std::fs::write(dir.join("part.cu"), kernel("part")).unwrap();
    // A finding that is a hint for a reason of its own says so too.
    std::fs::write(
        dir.join("stale.cu"),
        format!(
            "{}__global__ void gather(float* out, const float* in, int n) {{\n    out[threadIdx.x] = in[threadIdx.x * n];\n}}\n",
            kernel("stale")
        ),
    )
    .unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.starts_with("stale.cu:9:24: hint: uncoalesced load")
                && l.contains("which the code does not fix; at `n` = 4")
                && l.contains(") (the build does not compile this file: ")),
        "{out}"
    );
    assert!(
        out.contains("live.cu:6:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("part.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("stale.cu:5:24: hint: 32-way bank conflict")
            && out.contains("(a hint only: the build does not compile this file: ")
            && out.contains("Makefile names the CUDA sources it compiles, and not this file)"),
        "{out}"
    );
    assert!(
        stderr(&o).contains("targets: none, the build does not compile the file ("),
        "{}",
        stderr(&o)
    );
}

/// A shell script that runs nvcc is a build description: its `-arch` gives the targets,
/// and a `.cu` below it that no nvcc command of the script names (an older copy in
/// `alt/`) is not compiled, so its finding is a hint that says so.
#[test]
fn files_a_build_script_leaves_out_give_hints_only() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-shell-unbuilt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("alt")).unwrap();
    let dir = dir.canonicalize().unwrap();
    let kernel = "__global__ void col(float* out) {\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}\nvoid run(float* o) { col<<<1, 32>>>(o); }\n";
    std::fs::write(dir.join("main.cu"), kernel).unwrap();
    std::fs::write(dir.join("alt/main.cu"), kernel).unwrap();
    std::fs::write(
        dir.join("build.sh"),
        "#!/bin/bash\nset -e\nmkdir -p build\nnvcc -O2 -arch=sm_80 main.cu -o build/app\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(
        out.contains("main.cu:5:24: warning: 32-way bank conflict")
            && out.contains("alt/main.cu:5:24: hint: 32-way bank conflict")
            && out.contains("build.sh names the CUDA sources it compiles, and not this file)"),
        "{out}"
    );
    assert!(err.contains("targets: sm_80 (from "), "{err}");
}

/// A `CMakeLists.txt` that lists its targets' sources, and not `filter6.cu`: the
/// file's finding is a hint that says the build does not compile it; the listed file
/// keeps its warning. With a glob the list is not known and both are compiled.
#[test]
fn files_a_cmake_list_leaves_out_give_hints_only() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-cmake-unbuilt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let kernel = |name: &str| {
        format!(
            "__global__ void {name}(float* out) {{\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}}\nvoid run_{name}(float* o) {{ {name}<<<1, 32>>>(o); }}\n"
        )
    };
    std::fs::write(dir.join("filter1.cu"), kernel("one")).unwrap();
    std::fs::write(dir.join("filter6.cu"), kernel("six")).unwrap();
    // A commented-out target names nothing.
    let listed = "cmake_minimum_required(VERSION 3.18)\nproject(filters LANGUAGES CXX CUDA)\nset(SOURCES filter1.cu)\n#add_library(old STATIC filter6.cu)\nadd_library(filters STATIC ${SOURCES})\nset_property(TARGET filters PROPERTY CUDA_ARCHITECTURES 80)\n";
    std::fs::write(dir.join("CMakeLists.txt"), listed).unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.contains("filter1.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("filter6.cu:5:24: hint: 32-way bank conflict")
            && out.contains("CMakeLists.txt lists the sources of its targets, and not this file)"),
        "{out}"
    );
    // A folder the list adds whose own list names nothing here changes nothing; one
    // whose list names the file by a path compiles it.
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("tests/CMakeLists.txt"),
        "add_executable(t t.cpp)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        format!("{listed}add_subdirectory(tests)\n"),
    )
    .unwrap();
    let out = stdout(&check(&dir, &["."]));
    assert!(
        out.contains("filter6.cu:5:24: hint: 32-way bank conflict"),
        "{out}"
    );
    std::fs::write(
        dir.join("tests/CMakeLists.txt"),
        "add_executable(t t.cpp ../filter6.cu)\n",
    )
    .unwrap();
    let out = stdout(&check(&dir, &["."]));
    assert!(
        out.contains("filter6.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    // A file in a folder below with a build of its own (a torch extension's `setup.py`)
    // is that build's: the list above does not decide it.
    std::fs::create_dir_all(dir.join("ext")).unwrap();
    std::fs::write(
        dir.join("ext/setup.py"),
        "from setuptools import setup\nsetup(name='ext')\n",
    )
    .unwrap();
    std::fs::write(dir.join("ext/ext.cu"), kernel("ext")).unwrap();
    let out = stdout(&check(&dir, &["."]));
    assert!(
        out.contains("ext/ext.cu:5:24: warning: 32-way bank conflict")
            && out.contains("filter6.cu:5:24: hint: 32-way bank conflict"),
        "{out}"
    );
    std::fs::remove_dir_all(dir.join("ext")).unwrap();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        listed.replace("set(SOURCES filter1.cu)", "file(GLOB SOURCES *.cu)"),
    )
    .unwrap();
    let out = stdout(&check(&dir, &["."]));
    assert!(
        out.contains("filter6.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
}

/// A top-level Makefile (its tools and flags from an included `config.mak`) that compiles
/// one file of `common/cuda` under `ifeq ($(HAVE_CUDA),yes)`: the folder's other `.cu`
/// file is not built (a hint that says why); the one it compiles keeps its warning.
#[test]
fn a_top_level_makefile_that_names_a_folders_sources() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-top");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("common/cuda")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(dir.join("config.mak"), "CC = gcc\nHAVE_CUDA = yes\n").unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "include config.mak\nSRCS = common/frame.c\nifeq ($(HAVE_CUDA),yes)\ncommon/cuda/search.o: common/cuda/search.cu\n\tnvcc -G -c -o $@ $<\nOBJS += common/cuda/search.o\nendif\nOBJS += $(SRCS:%.c=%.o)\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS) $(LDFLAGS)\n",
    )
    .unwrap();
    let kernel = |name: &str| {
        format!(
            "__global__ void {name}(float* out) {{\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}}\nvoid run_{name}(float* o) {{ {name}<<<1, 32>>>(o); }}\n"
        )
    };
    std::fs::write(dir.join("common/cuda/search.cu"), kernel("search")).unwrap();
    std::fs::write(dir.join("common/cuda/search_old.cu"), kernel("search_old")).unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.contains("search.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("search_old.cu:5:24: hint: 32-way bank conflict")
            && out.contains("Makefile names the CUDA sources it compiles, and not this file)"),
        "{out}"
    );
}

/// A Makefile that compiles `$(wildcard $(DIR_SRC)/*.cu)`: a file in a folder below
/// `src` that nothing else builds is not compiled (a hint that says why); one that the
/// pattern matches keeps its warning.
#[test]
fn a_makefile_wildcard_names_its_folders_sources() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-wildcard");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/useless")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "DIR_SRC = ./src\nNVCC = nvcc -arch=sm_80\nCU_SRC = $(wildcard ${DIR_SRC}/*.cu)\nCU_OBJ = $(patsubst %.cu,obj/%.o,$(notdir ${CU_SRC}))\nlib.a: $(CU_OBJ)\n\t$(NVCC) -lib $^ -o $@\nobj/%.o: src/%.cu\n\t$(NVCC) -dc $< -o $@\nclean:\n\trm -f obj/*.o\n",
    )
    .unwrap();
    let kernel = |name: &str| {
        format!(
            "__global__ void {name}(float* out) {{\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}}\nvoid run_{name}(float* o) {{ {name}<<<1, 32>>>(o); }}\n"
        )
    };
    std::fs::write(dir.join("src/rsa.cu"), kernel("rsa")).unwrap();
    std::fs::write(dir.join("src/useless/old.cu"), kernel("old")).unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.contains("rsa.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("old.cu:5:24: hint: 32-way bank conflict")
            && out.contains("Makefile names the CUDA sources it compiles, and not this file)"),
        "{out}"
    );
}

/// A `setup.py` whose torch extensions each give their own nvcc flags: a source is
/// checked for its extension's targets only (the sm_80 extension's header, included by
/// its source, too), not for the union of the script's.
#[test]
fn torch_extensions_are_checked_for_their_own_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-torch-extensions");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/volta")).unwrap();
    std::fs::create_dir_all(dir.join("src/ampere")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("setup.py"),
        "setup(name='two', ext_modules=[\n    CUDAExtension(name='two.volta', sources=['src/volta/v.cu'],\n        extra_compile_args={'cxx': [], 'nvcc': ['-gencode', 'arch=compute_70,code=sm_70']}),\n    CUDAExtension(name='two.ampere', sources=['src/ampere/a.cu'],\n        extra_compile_args={'cxx': [], 'nvcc': ['-gencode', 'arch=compute_80,code=sm_80']}),\n])\n",
    )
    .unwrap();
    let kernel = "__global__ void sum(const unsigned* in, unsigned* out) {\n    unsigned v = in[threadIdx.x];\n    out[threadIdx.x] = __reduce_add_sync(0xffffffffu, v);\n}\n";
    std::fs::write(dir.join("src/ampere/reduce.cuh"), kernel).unwrap();
    std::fs::write(
        dir.join("src/ampere/a.cu"),
        "#include \"reduce.cuh\"\nvoid run(const unsigned* i, unsigned* o) { sum<<<1, 32>>>(i, o); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/volta/v.cu"),
        format!("{kernel}void run(const unsigned* i, unsigned* o) {{ sum<<<1, 32>>>(i, o); }}\n"),
    )
    .unwrap();
    let o = check(&dir, &["."]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(
        out.contains("v.cu:3:24: error: `__reduce_add_sync` needs sm_80"),
        "{out}"
    );
    assert!(
        !out.contains("reduce.cuh") && !out.contains("a.cu:"),
        "{out}"
    );
    assert!(
        err.contains("targets: sm_80 (from ") && err.contains("setup.py:4"),
        "{err}"
    );
}

/// A Makefile variant run with `make -f Makefile.ampere` that names a file decides its
/// targets, where the plain Makefile (sm_75) compiles other sources only.
#[test]
fn a_makefile_variant_that_names_the_file_gives_its_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-variant");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/kernels")).unwrap();
    std::fs::create_dir_all(dir.join("src/extra")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "CFLAGS = -O3 -arch=sm_75\nKERNEL_DIR = src/kernels\nmain: $(KERNEL_DIR)/main.cu\n\tnvcc $(CFLAGS) -o $@ $<\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Makefile.ampere"),
        "FLAGS = -gencode arch=compute_80,code=sm_80\nampere: src/extra/a.cu\n\tnvcc $(FLAGS) -c src/extra/a.cu -o a.o\n",
    )
    .unwrap();
    let kernel = "__global__ void sum(const unsigned* in, unsigned* out) {\n    unsigned v = in[threadIdx.x];\n    out[threadIdx.x] = __reduce_add_sync(0xffffffffu, v);\n}\nvoid run(const unsigned* i, unsigned* o) { sum<<<1, 32>>>(i, o); }\n";
    std::fs::write(dir.join("src/extra/a.cu"), kernel).unwrap();
    std::fs::write(dir.join("src/kernels/main.cu"), kernel).unwrap();
    let o = check(&dir, &["."]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(
        out.contains("main.cu:3:24: error: `__reduce_add_sync` needs sm_80"),
        "{out}"
    );
    assert!(!out.contains("a.cu:"), "{out}");
    assert!(
        err.contains("targets: sm_80 (from ") && err.contains("Makefile.ampere:3)"),
        "{err}"
    );
}

/// A Visual Studio project that lists its CUDA sources (`<CudaCompile Include="…">`)
/// and not `old.cu`: the file is not compiled (a hint that says why). A header that
/// `kernel.cu` includes is compiled with it; one that no file includes, listed as a
/// `ClInclude` only, is compiled nowhere.
#[test]
fn files_a_visual_studio_project_does_not_list_give_hints_only() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-vs-members");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("app")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("app/app.vcxproj"),
        "<Project>\n  <ItemGroup>\n    <CudaCompile Include=\"kernel.cu\" />\n    <ClInclude Include=\"unused.cuh\" />\n  </ItemGroup>\n</Project>\n",
    )
    .unwrap();
    let kernel = |name: &str| {
        format!(
            "__global__ void {name}(float* out) {{\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}}\nvoid run_{name}(float* o) {{ {name}<<<1, 32>>>(o); }}\n"
        )
    };
    std::fs::write(
        dir.join("app/kernel.cu"),
        format!("#include \"used.cuh\"\n{}", kernel("live")),
    )
    .unwrap();
    std::fs::write(dir.join("app/old.cu"), kernel("old")).unwrap();
    std::fs::write(dir.join("app/used.cuh"), kernel("used")).unwrap();
    std::fs::write(dir.join("app/unused.cuh"), kernel("unused")).unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.contains("used.cuh:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("unused.cuh:5:24: hint: 32-way bank conflict")
            && out.contains("no file below ")
            && out.contains("includes this header, so none of the sources "),
        "{out}"
    );
    assert!(
        out.contains("kernel.cu:6:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("old.cu:5:24: hint: 32-way bank conflict")
            && out.contains("app.vcxproj names the CUDA sources it compiles, and not this file)"),
        "{out}"
    );
}

/// A Visual Studio project's `<CodeGeneration>` names the targets of the sources below
/// its folder (here sm_30 and sm_50, lock-step warps: the warp-synchronous tail through
/// `volatile` is no finding); an xmake project's `add_cugencodes` those of its own.
#[test]
fn visual_studio_and_xmake_projects_name_their_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-vs-xmake");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("vs/kernels")).unwrap();
    std::fs::create_dir_all(dir.join("xm")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("vs/app.vcxproj"),
        "<Project>\n  <ItemDefinitionGroup>\n    <CudaCompile>\n      <CodeGeneration>compute_30,sm_30;compute_50,sm_50</CodeGeneration>\n    </CudaCompile>\n  </ItemDefinitionGroup>\n  <ItemGroup>\n    <CudaCompile Include=\"kernels\\sum.cu\" />\n  </ItemGroup>\n</Project>\n",
    )
    .unwrap();
    let tail = "__global__ void block_sum(const int* in, int* out) {\n    __shared__ int part[64];\n    unsigned t = threadIdx.x;\n    part[t] = in[blockIdx.x * 64 + t];\n    __syncthreads();\n    if (t < 32) {\n        volatile int* w = part;\n        w[t] += w[t + 32];\n        w[t] += w[t + 16];\n        w[t] += w[t + 8];\n    }\n    if (t == 0) out[blockIdx.x] = part[0];\n}\nvoid run(const int* in, int* out, int n) { block_sum<<<n, 64>>>(in, out); }\n";
    std::fs::write(dir.join("vs/kernels/sum.cu"), tail).unwrap();
    std::fs::write(
        dir.join("xm/xmake.lua"),
        "target(\"ops\")\n    add_files(\"*.cu\")\n    add_cugencodes(\"sm_80\")\n",
    )
    .unwrap();
    std::fs::write(dir.join("xm/sum.cu"), tail).unwrap();
    let o = check(&dir.join("vs"), &["."]);
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert!(
        stderr(&o).contains("targets: sm_30, sm_50 (from ")
            && stderr(&o).contains("app.vcxproj:4)"),
        "{}",
        stderr(&o)
    );
    let o = check(&dir.join("xm"), &["."]);
    assert!(
        stdout(&o).contains("implicit warp-synchronous"),
        "{}\n{}",
        stdout(&o),
        stderr(&o)
    );
    assert!(stderr(&o).contains("xmake.lua:3)"), "{}", stderr(&o));
}

/// A Makefile that builds for pre-Volta targets only (`-arch=sm_35`, which current nvcc
/// no longer accepts): the build is read as written. Its lanes run in lock-step, so a
/// warp-synchronous tail through `volatile` is no race there, and the same tail
/// without `volatile` still is (the compiler may keep a value in a register). The rule
/// written for one file decides that file's target: `shfl.cu` is built for sm_30, so its
/// `__shfl` (sm_30) is fine although the pattern rule builds the rest for sm_20. Built
/// for sm_70 as well, the tail is a race again.
#[test]
fn pre_volta_builds_run_warps_in_lock_step() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-pre-volta");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let makefile = "APPS = sum shfl\nall: $(APPS)\n\nshfl: shfl.cu\n\tnvcc -O2 -arch=sm_30 -o $@ $<\n\n%: %.cu\n\tnvcc -O2 -arch=sm_20 -o $@ $<\n";
    std::fs::write(dir.join("Makefile"), makefile).unwrap();
    // The tail through a `volatile` pointer `w`, or on the array itself.
    let tail = |w: &str| {
        format!(
            "__global__ void block_sum(const int* in, int* out) {{\n    __shared__ int part[64];\n    unsigned t = threadIdx.x;\n    part[t] = in[blockIdx.x * 64 + t];\n    __syncthreads();\n    if (t < 32) {{\n        volatile int* w = part;\n        {w}[t] += {w}[t + 32];\n        {w}[t] += {w}[t + 16];\n        {w}[t] += {w}[t + 8];\n    }}\n    if (t == 0) out[blockIdx.x] = part[0];\n}}\nvoid run(const int* in, int* out, int n) {{ block_sum<<<n, 64>>>(in, out); }}\n"
        )
    };
    std::fs::write(dir.join("sum.cu"), tail("w")).unwrap();
    std::fs::write(
        dir.join("shfl.cu"),
        "__global__ void rotate(int* v) {\n    v[threadIdx.x] = __shfl(v[threadIdx.x], threadIdx.x + 1);\n}\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("targets: sm_20 (from ")
            && stderr(&o).contains("targets: sm_30 (from "),
        "{}",
        stderr(&o)
    );
    // Without `volatile` the tail is a race on any target.
    std::fs::write(dir.join("sum.cu"), tail("part")).unwrap();
    let o = check(&dir, &["sum.cu"]);
    assert!(
        stdout(&o).contains("sum.cu:9:20: warning: thread 16 updates `part[16]` at line 8 and thread 0 reads it at line 9 with no barrier between (read after write)"),
        "{}",
        stdout(&o)
    );
    // The targets in a file the Makefile includes (`include $(ROOT)/make.defs`).
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/make.defs"),
        "GEN = -gencode=arch=compute_35,code=\\\"sm_35,compute_35\\\"\nNVCCFLAGS = -O3 $(GEN)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inc/makefile"),
        "ROOT = .\ninclude $(ROOT)/make.defs\nsum.o: sum.cu\n\tnvcc $(NVCCFLAGS) -c $< -o $@\n",
    )
    .unwrap();
    std::fs::write(dir.join("inc/sum.cu"), tail("w")).unwrap();
    let o = check(&dir.join("inc"), &["sum.cu"]);
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    assert!(
        stderr(&o).contains("targets: sm_35 (from ") && stderr(&o).contains("inc/makefile:4)"),
        "{}",
        stderr(&o)
    );
    // Built for sm_70 too: the lanes are scheduled independently there.
    std::fs::write(dir.join("sum.cu"), tail("w")).unwrap();
    std::fs::write(
        dir.join("Makefile"),
        makefile.replace(
            "-arch=sm_20",
            "-gencode arch=compute_35,code=sm_35 -gencode arch=compute_70,code=sm_70",
        ),
    )
    .unwrap();
    let o = check(&dir, &["sum.cu"]);
    assert!(
        stdout(&o).contains("sum.cu:8:9: warning: implicit warp-synchronous reduction: these 3 steps on `w` read what other lanes of the warp write in the same or the previous step, with no `__syncwarp()` between them; on sm_70 (independent thread scheduling)"),
        "{}",
        stdout(&o)
    );
}

/// A kernel template in a header that no file of the project launches (its one launch
/// is commented out) is compiled nowhere: its findings are hints that say so. The same
/// template launched from a source file keeps its warning.
#[test]
fn header_templates_no_file_launches_give_hints() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-header-template");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("unused")).unwrap();
    std::fs::create_dir_all(dir.join("used")).unwrap();
    let dir = dir.canonicalize().unwrap();
    let header = "#pragma once\ntemplate <typename T>\n__global__ void spread(T* out) {\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[0][threadIdx.x];\n}\n";
    for sub in ["unused", "used"] {
        std::fs::write(dir.join(sub).join("spread.cuh"), header).unwrap();
    }
    std::fs::write(
        dir.join("unused/main.cu"),
        "#include \"spread.cuh\"\nvoid run(float* o) {\n    // spread<float><<<1, 32>>>(o);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("used/main.cu"),
        "#include \"spread.cuh\"\nvoid run(float* o) { spread<float><<<1, 32>>>(o); }\n",
    )
    .unwrap();
    let out = stdout(&check(&dir.join("unused"), &["."]));
    assert!(
        out.lines().any(|l| l.starts_with("spread.cuh:5:5: hint: 32-way bank conflict")
            && l.contains("(a hint only: no file of the project launches or instantiates the template `spread`")),
        "{out}"
    );
    let out = stdout(&check(&dir.join("used"), &["."]));
    assert!(
        out.contains("spread.cuh:5:5: warning: 32-way bank conflict"),
        "{out}"
    );
}

/// A folder's `CMakeLists.txt` with no `project()` is read only through the
/// `add_subdirectory` of the list above; where that line is commented out, its sources
/// are not compiled, and a finding there is a hint that says so.
#[test]
fn a_subfolder_the_top_list_does_not_add_is_not_built() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-cmake-unreached");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("transpose")).unwrap();
    std::fs::create_dir_all(dir.join("gemm")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.18)\nproject(t CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\n#add_subdirectory(transpose)\nadd_subdirectory(gemm)\n",
    )
    .unwrap();
    let kernel = "__global__ void col(float* out) {\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}\nvoid run(float* o) { col<<<1, 32>>>(o); }\n";
    for sub in ["transpose", "gemm"] {
        std::fs::write(
            dir.join(sub).join("CMakeLists.txt"),
            format!("add_executable({sub} k.cu)\n"),
        )
        .unwrap();
        std::fs::write(dir.join(sub).join("k.cu"), kernel).unwrap();
    }
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.contains("gemm/k.cu:5:24: warning: 32-way bank conflict"),
        "{out}"
    );
    assert!(
        out.contains("transpose/k.cu:5:24: hint: 32-way bank conflict")
            && out.contains("(a hint only: the build does not compile this file: ")
            && out.contains("transpose/CMakeLists.txt has no `project()` and ")
            && out.contains("CMakeLists.txt does not add its folder `transpose`)"),
        "{out}"
    );
    // Uncommented, the folder is built for the top list's sm_80.
    std::fs::write(
        dir.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.18)\nproject(t CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\nadd_subdirectory(transpose)\nadd_subdirectory(gemm)\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert!(
        stdout(&o).contains("transpose/k.cu:5:24: warning: 32-way bank conflict"),
        "{}",
        stdout(&o)
    );
}

/// A Makefile variant (`make -f Makefile.hopper`) that names the file gives its targets,
/// though it reads a variable from the environment, and the main Makefile's recipe that
/// only echoes compile lines into a database compiles nothing.
#[test]
fn a_makefile_variant_with_environment_variables_gives_the_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-make-variant-env");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "CFLAGS = -O3 -arch=sm_89\nbuild/plain: src/plain.cu\n\tnvcc $(CFLAGS) -o $@ $<\ndb:\n\t@for s in src/*.cu; do \\\n\t\techo '{\"command\": \"nvcc $(CFLAGS) -c '$$s'\"},' >> db.json; \\\n\tdone\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Makefile.hopper"),
        "INCLUDES = -I$(CUDA_HOME)/include\nbin/tma: tma.cu\n\tnvcc -arch=sm_90 $(INCLUDES) -o $@ $<\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tma.cu"),
        "__global__ void k(unsigned dst, const void* src, unsigned n, unsigned bar) {\n    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\" :: \"r\"(dst), \"l\"(src), \"r\"(n), \"r\"(bar) : \"memory\");\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/plain.cu"),
        "__global__ void p(float* o) { o[threadIdx.x] = 1.0f; }\n",
    )
    .unwrap();
    let o = check(&dir, &["tma.cu"]);
    assert!(!stdout(&o).contains("error"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("targets: sm_90 (from ") && stderr(&o).contains("Makefile.hopper:3)"),
        "{}",
        stderr(&o)
    );
}

/// A `.cu` that only an uncompiled test file `#include`s is not compiled either: the
/// list names `lib.cu` alone, and `tests/bench.cu`, which includes `kernel.cu`, is in no
/// list. Once the list names the test, the kernel is compiled with it.
#[test]
fn a_file_only_uncompiled_files_include_is_not_built() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-cmake-included-by-unbuilt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let dir = dir.canonicalize().unwrap();
    let list = |sources: &str| {
        format!("cmake_minimum_required(VERSION 3.18)\nproject(r LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 90)\nadd_library(r STATIC {sources})\n")
    };
    std::fs::write(dir.join("CMakeLists.txt"), list("lib.cu")).unwrap();
    std::fs::write(dir.join("lib.cu"), "__global__ void nothing() {}\n").unwrap();
    std::fs::write(
        dir.join("kernel.cu"),
        "__global__ void col(float* out) {\n    __shared__ float t[32][32];\n    t[threadIdx.x][0] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = t[threadIdx.x][1];\n}\nvoid run(float* o) { col<<<1, 32>>>(o); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tests/bench.cu"),
        "#include \"../kernel.cu\"\nint main() { run(nullptr); }\n",
    )
    .unwrap();
    let o = check(&dir, &["."]);
    assert!(
        stdout(&o).contains("kernel.cu:5:24: hint: 32-way bank conflict"),
        "{}",
        stdout(&o)
    );
    std::fs::write(dir.join("CMakeLists.txt"), list("lib.cu tests/bench.cu")).unwrap();
    let o = check(&dir, &["."]);
    assert!(
        stdout(&o).contains("kernel.cu:5:24: warning: 32-way bank conflict"),
        "{}",
        stdout(&o)
    );
}

/// A file the build does not compile has no target for a call to fail on: a Hopper
/// sample beside a script that builds only an Ampere one gets no `needs sm_90a` finding,
/// where the script's own file, built for sm_80, does.
#[test]
fn an_unbuilt_file_has_no_target_to_fail() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-unbuilt-arch");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    std::fs::write(dir.join("cmd.sh"), "nvcc -arch=sm_80 built.cu -o built\n").unwrap();
    let kernel = "__global__ void k() {\n    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n}\n";
    std::fs::write(dir.join("built.cu"), kernel).unwrap();
    std::fs::write(dir.join("hopper.cu"), kernel).unwrap();
    let o = check(&dir, &["."]);
    let out = stdout(&o);
    assert!(
        out.contains("built.cu:2:19: error: `wgmma.fence` needs sm_90a"),
        "{out}"
    );
    assert!(!out.contains("hopper.cu"), "{out}");
    assert!(
        stderr(&o).contains("targets: none, the build does not compile the file"),
        "{}",
        stderr(&o)
    );
}

/// A build for compute capability 1.x or 2.x only: the bank model counts 32 banks over
/// the whole warp (2.0 and newer) and the sector model 32-byte sectors (3.0 and newer),
/// so their findings are hints that say which hardware they count for. A target that
/// the models describe keeps them warnings.
#[test]
fn findings_for_older_hardware_than_the_models_are_hints() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-older-hardware");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "__global__ void t(const float* in, float* out, int n) {\n    __shared__ float tile[32][32];\n    tile[threadIdx.x][0] = in[threadIdx.x * 64];\n    __syncthreads();\n    out[threadIdx.x] = tile[0][threadIdx.x];\n}\nvoid run(const float* in, float* out) { t<<<1, 32>>>(in, out, 1); }\n",
    )
    .unwrap();
    let severities = |arch: &str| -> Vec<String> {
        std::fs::write(
            dir.join("Makefile"),
            format!("all: k.cu\n\tnvcc -arch={arch} -c k.cu\n"),
        )
        .unwrap();
        stdout(&check(&dir, &["."]))
            .lines()
            .map(|l| {
                let rule = l.rsplit_once(" [").map_or("", |(_, r)| r);
                let severity = l.split(": ").nth(1).unwrap_or("");
                format!("{severity} [{}", rule.split(']').next().unwrap_or(""))
            })
            .collect()
    };
    let modern = severities("sm_35");
    assert!(
        modern.contains(&"warning [bank-conflict".to_string()),
        "{modern:?}"
    );
    assert!(
        modern.contains(&"warning [coalescing/strided-global-access".to_string()),
        "{modern:?}"
    );
    let fermi = severities("sm_20");
    assert!(
        fermi.contains(&"warning [bank-conflict".to_string()),
        "{fermi:?}"
    );
    assert!(
        fermi.contains(&"hint [coalescing/strided-global-access".to_string()),
        "{fermi:?}"
    );
    let tesla = severities("sm_13");
    assert!(
        tesla.contains(&"hint [bank-conflict".to_string()),
        "{tesla:?}"
    );
    let out = stdout(&check(&dir, &["."]));
    assert!(
        out.contains("compute capability 1.x has 16 banks and serves each half-warp on its own, and the build targets only sm_13)"),
        "{out}"
    );
}

/// A Visual Studio project with CUDA's build customisation and no `<CodeGeneration>`
/// builds for that toolkit's default; a `Directory.Build.props` above may set the code
/// generation for every project, so then the default is not known.
#[test]
fn a_visual_studio_project_without_code_generation_builds_the_toolkit_default() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-vcxproj-default");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(
        dir.join("k.cu"),
        "__global__ void k(int* out) {\n    out[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.vcxproj"),
        "<Project>\n  <ImportGroup Label=\"ExtensionSettings\"><Import Project=\"$(VCTargetsPath)\\BuildCustomizations\\CUDA 8.0.props\" /></ImportGroup>\n  <ItemGroup><CudaCompile Include=\"k.cu\" /></ItemGroup>\n</Project>\n",
    )
    .unwrap();
    let err = stderr(&check(&dir, &["."]));
    assert!(
        err.contains("targets: sm_20 (from ") && err.contains("p.vcxproj:2; the default of the CUDA 8.0 build customisation the project imports: no `<CodeGeneration>` is set)"),
        "{err}"
    );
    std::fs::write(dir.join("Directory.Build.props"), "<Project />\n").unwrap();
    let err = stderr(&check(&dir, &["."]));
    assert!(err.contains("targets: sm_90 (assumed"), "{err}");
}

/// A Visual Studio project in another folder of the project (`win/App/App.vcxproj`)
/// that lists the file through `..\..\src\k.cu` names its targets; one that lists
/// other files does not.
#[test]
fn a_visual_studio_project_in_a_sibling_folder_names_the_targets() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check-vcxproj-sibling");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("win/App")).unwrap();
    std::fs::write(
        dir.join("src/k.cu"),
        "__global__ void k(int* out) {\n    out[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    let project = |include: &str| {
        format!("<Project>\n  <ItemDefinitionGroup>\n    <CudaCompile>\n      <CodeGeneration>compute_75,sm_75</CodeGeneration>\n    </CudaCompile>\n  </ItemDefinitionGroup>\n  <ItemGroup><CudaCompile Include=\"{include}\" /></ItemGroup>\n</Project>\n")
    };
    std::fs::write(
        dir.join("win/App/App.vcxproj"),
        project("..\\..\\src\\k.cu"),
    )
    .unwrap();
    let err = stderr(&check(&dir, &["src"]));
    assert!(
        err.contains("targets: sm_75 (from ") && err.contains("App.vcxproj:4)"),
        "{err}"
    );
    std::fs::write(
        dir.join("win/App/App.vcxproj"),
        project("..\\..\\src\\other.cu"),
    )
    .unwrap();
    let err = stderr(&check(&dir, &["src"]));
    assert!(err.contains("targets: sm_90 (assumed"), "{err}");
}
