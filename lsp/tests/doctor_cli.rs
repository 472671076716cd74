//! `kernaut-lsp doctor` through the real binary, in a fixture project, with a fake CUDA
//! toolkit and with none: what a user sees in a terminal (plain text) and in an editor
//! (`--markdown`, what `kernaut.doctor` shows). The environment is cleared so that the
//! machine's own toolkit, Python and clangd stay out of the snapshots.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::{expect, Expect};

/// A fresh folder under the target directory, removed first if a previous run left it.
fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn script(path: &Path, body: &str) {
    write(path, &format!("#!/bin/sh\n{body}"));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Three folders, three ways to get targets: a `.kernaut.toml`, a `CMakeLists.txt`, and
/// none (the assumed target).
fn project(root: &Path) -> PathBuf {
    let p = root.join("proj");
    write(&p.join("app/.kernaut.toml"), "arch = \"sm_80\"\n");
    write(
        &p.join("app/transpose.cu"),
        "__global__ void transpose(float* out) { out[threadIdx.x] = 0.f; }\n",
    );
    write(
        &p.join("lib/CMakeLists.txt"),
        "project(lib LANGUAGES CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 86)\nadd_library(lib reduce.cu)\n",
    );
    write(
        &p.join("lib/reduce.cu"),
        "__global__ void reduce(float* v) { v[0] = 1.f; }\n",
    );
    write(
        &p.join("scratch/try.cu"),
        "__global__ void k(float* v) { v[threadIdx.x] = 2.f; }\n",
    );
    p
}

/// A toolkit as `$CUDA_HOME` lays it out: `bin/nvcc` answering `--version`, `ptxas`,
/// `cuobjdump` and `nvdisasm` beside it.
fn fake_toolkit(root: &Path) -> PathBuf {
    let t = root.join("cuda");
    script(
        &t.join("bin/nvcc"),
        "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n",
    );
    for tool in ["ptxas", "cuobjdump", "nvdisasm"] {
        script(&t.join("bin").join(tool), "exit 0\n");
    }
    t
}

struct Env<'a> {
    /// The only folder on `PATH`.
    path: &'a Path,
    cuda_home: Option<&'a Path>,
    /// `KERNAUT_WIKI`: a folder of the user's pages.
    wiki: Option<&'a Path>,
}

/// `kernaut-lsp doctor [--markdown] FOLDER` with only `env`; the fixture's folders in
/// the output become `$ROOT`, and the built-in page count `$BUILTIN` (the wiki grows).
fn doctor(root: &Path, folder: &Path, env: &Env, markdown: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kernaut-lsp"));
    cmd.env_clear()
        .env("PATH", env.path)
        .env("HOME", root)
        .arg("doctor")
        .arg(folder);
    if markdown {
        cmd.arg("--markdown");
    }
    if let Some(c) = env.cuda_home {
        cmd.env("CUDA_HOME", c);
    }
    if let Some(w) = env.wiki {
        cmd.env("KERNAUT_WIKI", w);
    }
    let o = cmd.output().expect("kernaut-lsp runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let builtin = kernaut_ide::wiki::Wiki::load(&kernaut_ide::wiki::WikiConfig::builtin())
        .pages()
        .len();
    String::from_utf8(o.stdout)
        .unwrap()
        .replace(&root.display().to_string(), "$ROOT")
        .replace(&format!("{builtin} pages"), "$BUILTIN pages")
}

fn check(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}

#[test]
fn doctor_without_a_toolkit() {
    let root = fresh("doctor-none");
    let proj = project(&root);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let env = Env {
        path: &bin,
        cuda_home: None,
        wiki: None,
    };
    check(
        &doctor(&root, &proj, &env, false),
        expect![[r#"
            kernaut doctor: $ROOT/proj

            Targets
              app/transpose.cu: sm_80 (from $ROOT/proj/app/.kernaut.toml:1)
              lib/reduce.cu: sm_86 (from $ROOT/proj/lib/CMakeLists.txt:2)
              scratch/try.cu: sm_90 (assumed: no .kernaut.toml, compile_commands.json, CMakeLists.txt, setup.py or Makefile names a target; architecture findings are hints until one does)

            Configuration
              .kernaut.toml: $ROOT/proj/app/.kernaut.toml
              compile_commands.json: none (CMake writes one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)

            CUDA toolkit
              none found; looked at: kernaut.nvcc is not set; $CUDA_HOME is not set; $CUDA_PATH is not set; no nvcc on PATH; no Python environment (no $VIRTUAL_ENV, $CONDA_PREFIX or python3)
              without it, register counts are assumed (32, or `registers` in .kernaut.toml) and there are no SASS facts or spill reports; `pip install nvidia-cuda-nvcc` gives one without a GPU

            Wiki
              $BUILTIN pages (the built-in pages)

            Editor
              clangd: not found (optional: kernaut gives CUDA facts, clangd C++ navigation)
        "#]],
    );
    check(
        &doctor(&root, &proj, &env, true),
        expect![[r#"
            # kernaut doctor

            `$ROOT/proj`

            ## Targets

            - app/transpose.cu: sm_80 (from $ROOT/proj/app/.kernaut.toml:1)
            - lib/reduce.cu: sm_86 (from $ROOT/proj/lib/CMakeLists.txt:2)
            - scratch/try.cu: sm_90 (assumed: no .kernaut.toml, compile_commands.json, CMakeLists.txt, setup.py or Makefile names a target; architecture findings are hints until one does)

            ## Configuration

            - .kernaut.toml: $ROOT/proj/app/.kernaut.toml
            - compile_commands.json: none (CMake writes one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)

            ## CUDA toolkit

            - none found; looked at: kernaut.nvcc is not set; $CUDA_HOME is not set; $CUDA_PATH is not set; no nvcc on PATH; no Python environment (no $VIRTUAL_ENV, $CONDA_PREFIX or python3)
            - without it, register counts are assumed (32, or `registers` in .kernaut.toml) and there are no SASS facts or spill reports; `pip install nvidia-cuda-nvcc` gives one without a GPU

            ## Wiki

            - $BUILTIN pages (the built-in pages)

            ## Editor

            - clangd: not found (optional: kernaut gives CUDA facts, clangd C++ navigation)
        "#]],
    );
}

#[test]
fn doctor_with_a_toolkit_and_clangd() {
    let root = fresh("doctor-toolkit");
    let proj = project(&root);
    let cuda = fake_toolkit(&root);
    let bin = root.join("bin");
    script(&bin.join("clangd"), "exit 0\n");
    // A user's wiki folder, with one page that stands in for a built-in one.
    let wiki = root.join("wiki");
    let page =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../wiki/pages/pitfalls/bank-conflict.md");
    write(
        &wiki.join("bank-conflict.md"),
        &std::fs::read_to_string(page).unwrap(),
    );
    let env = Env {
        path: &bin,
        cuda_home: Some(&cuda),
        wiki: Some(&wiki),
    };
    check(
        &doctor(&root, &proj, &env, false),
        expect![[r#"
            kernaut doctor: $ROOT/proj

            Targets
              app/transpose.cu: sm_80 (from $ROOT/proj/app/.kernaut.toml:1)
              lib/reduce.cu: sm_86 (from $ROOT/proj/lib/CMakeLists.txt:2)
              scratch/try.cu: sm_90 (assumed: no .kernaut.toml, compile_commands.json, CMakeLists.txt, setup.py or Makefile names a target; architecture findings are hints until one does)

            Configuration
              .kernaut.toml: $ROOT/proj/app/.kernaut.toml
              compile_commands.json: none (CMake writes one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)

            CUDA toolkit
              nvcc 12.8 (V12.8.93) at $ROOT/cuda/bin/nvcc, from $CUDA_HOME; SASS via cuobjdump
              ptxas: $ROOT/cuda/bin/ptxas
              cuobjdump: $ROOT/cuda/bin/cuobjdump

            Wiki
              $BUILTIN pages (the built-in pages and 1 folder)
              folder: $ROOT/wiki

            Editor
              clangd: $ROOT/bin/clangd (run it beside kernaut for C++ navigation; `kernaut-lsp setup-clangd` lets it parse CUDA without a local toolkit)
        "#]],
    );
    check(
        &doctor(&root, &proj, &env, true),
        expect![[r#"
            # kernaut doctor

            `$ROOT/proj`

            ## Targets

            - app/transpose.cu: sm_80 (from $ROOT/proj/app/.kernaut.toml:1)
            - lib/reduce.cu: sm_86 (from $ROOT/proj/lib/CMakeLists.txt:2)
            - scratch/try.cu: sm_90 (assumed: no .kernaut.toml, compile_commands.json, CMakeLists.txt, setup.py or Makefile names a target; architecture findings are hints until one does)

            ## Configuration

            - .kernaut.toml: $ROOT/proj/app/.kernaut.toml
            - compile_commands.json: none (CMake writes one with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)

            ## CUDA toolkit

            - nvcc 12.8 (V12.8.93) at $ROOT/cuda/bin/nvcc, from $CUDA_HOME; SASS via cuobjdump
            - ptxas: $ROOT/cuda/bin/ptxas
            - cuobjdump: $ROOT/cuda/bin/cuobjdump

            ## Wiki

            - $BUILTIN pages (the built-in pages and 1 folder)
            - folder: $ROOT/wiki

            ## Editor

            - clangd: $ROOT/bin/clangd (run it beside kernaut for C++ navigation; `kernaut-lsp setup-clangd` lets it parse CUDA without a local toolkit)
        "#]],
    );
}
