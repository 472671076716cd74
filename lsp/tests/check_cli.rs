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
