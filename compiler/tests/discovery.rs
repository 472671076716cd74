//! Toolkit discovery over fake toolkits: shell scripts that answer `--version` the
//! way nvcc 13.5 does. (Unix only: the fakes are shell scripts.)
#![cfg(unix)]

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use kernaut_compiler::{Environment, Toolkit, ToolkitConfig, ToolkitError, ToolkitSource};

const VERSION: &str = "nvcc: NVIDIA (R) Cuda compiler driver\n\
Cuda compilation tools, release 13.5, V13.5.37\n\
Build cuda_13.5.r13.5/compiler.39125733_0";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kernaut-discovery-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An executable script at `dir/name` that prints `output` and exits with `code`.
fn fake(dir: &Path, name: &str, output: &str, code: i32) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\nexit {code}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// An environment with nothing in it, so the machine's own toolkit is never found.
fn empty_env() -> Environment {
    Environment {
        path: Some(OsString::new()),
        ..Environment::default()
    }
}

#[test]
fn nothing_found_says_where_it_looked() {
    let err = Toolkit::discover_in(&ToolkitConfig::default(), &empty_env()).unwrap_err();
    let ToolkitError::NotFound { tried } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        tried,
        &[
            "kernaut.nvcc is not set",
            "$CUDA_HOME is not set",
            "$CUDA_PATH is not set",
            "no nvcc on PATH",
            "no Python environment (no $VIRTUAL_ENV, $CONDA_PREFIX or python3)",
        ]
    );
    assert!(err
        .to_string()
        .starts_with("no CUDA toolkit found (compiling is off); tried: "));
}

#[test]
fn cuda_home_comes_before_path() {
    let root = scratch("home");
    let home = root.join("cuda");
    let nvcc = fake(&home.join("bin"), "nvcc", VERSION, 0);
    fake(&home.join("bin"), "ptxas", VERSION, 0);
    fake(&home.join("bin"), "cuobjdump", VERSION, 0);
    let on_path = root.join("elsewhere");
    fake(&on_path, "nvcc", VERSION, 0);
    let env = Environment {
        cuda_home: Some(home.clone().into()),
        path: Some(on_path.into()),
        ..Environment::default()
    };
    let t = Toolkit::discover_in(&ToolkitConfig::default(), &env).unwrap();
    assert_eq!(t.nvcc, nvcc);
    assert_eq!(t.source, ToolkitSource::EnvVar("CUDA_HOME".into()));
    assert_eq!(t.version().release, "13.5");
    assert_eq!(t.ptxas, Some(home.join("bin/ptxas")));
    assert_eq!(t.cuobjdump, Some(home.join("bin/cuobjdump")));
    assert_eq!(t.nvdisasm, None);
    assert!(!t.has_sass_tools());
    assert!(
        t.describe().starts_with("nvcc 13.5 (V13.5.37) at "),
        "{}",
        t.describe()
    );
    assert!(t
        .describe()
        .ends_with("from $CUDA_HOME; no SASS (cuobjdump without nvdisasm)"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_cu13_wheel_in_the_active_virtual_environment() {
    let root = scratch("venv");
    let site = root.join("venv/lib/python3.11/site-packages");
    let bin = site.join("nvidia/cu13/bin");
    let nvcc = fake(&bin, "nvcc", VERSION, 0);
    fake(&bin, "cuobjdump", VERSION, 0);
    fake(&bin, "nvdisasm", VERSION, 0);
    let env = Environment {
        virtual_env: Some(root.join("venv").into()),
        ..empty_env()
    };
    let t = Toolkit::discover_in(&ToolkitConfig::default(), &env).unwrap();
    assert_eq!(t.nvcc, nvcc);
    assert_eq!(t.source, ToolkitSource::PythonWheel(site.clone()));
    assert!(t.has_sass_tools());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_cu12_wheel_brings_only_ptxas_and_says_so() {
    let root = scratch("cu12");
    let site = root.join("venv/lib/python3.11/site-packages");
    fake(&site.join("nvidia/cuda_nvcc/bin"), "ptxas", VERSION, 0);
    let env = Environment {
        virtual_env: Some(root.join("venv").into()),
        ..empty_env()
    };
    let err = Toolkit::discover_in(&ToolkitConfig::default(), &env).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("has ptxas but no nvcc"), "{text}");
    assert!(text.contains("pip install nvidia-cuda-nvcc"), "{text}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_python_interpreter_is_asked_for_its_sys_path() {
    let root = scratch("python");
    let site = root.join("site");
    let nvcc = fake(&site.join("nvidia/cuda_nvcc/bin"), "nvcc", VERSION, 0);
    let python = fake(
        &root,
        "python3",
        &format!("{}\n/does/not/exist", site.display()),
        0,
    );
    let config = ToolkitConfig {
        python: Some(python),
        ..ToolkitConfig::default()
    };
    let t = Toolkit::discover_in(&config, &empty_env()).unwrap();
    assert_eq!(t.nvcc, nvcc);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_setting_is_used_alone_and_a_wrong_one_is_an_error() {
    let root = scratch("setting");
    let good = fake(&root.join("good/bin"), "nvcc", VERSION, 0);
    let on_path = root.join("path");
    fake(&on_path, "nvcc", VERSION, 0);
    let env = Environment {
        path: Some(on_path.into()),
        ..Environment::default()
    };

    // A folder or the executable itself.
    for setting in [root.join("good"), good.clone()] {
        let config = ToolkitConfig {
            nvcc: Some(setting),
            ..ToolkitConfig::default()
        };
        let t = Toolkit::discover_in(&config, &env).unwrap();
        assert_eq!((t.nvcc, t.source), (good.clone(), ToolkitSource::Config));
    }

    // A missing one is not replaced by the nvcc on PATH.
    let config = ToolkitConfig {
        nvcc: Some(root.join("missing/nvcc")),
        ..ToolkitConfig::default()
    };
    let err = Toolkit::discover_in(&config, &env).unwrap_err();
    assert!(matches!(err, ToolkitError::BadSetting { .. }), "{err:?}");

    // One that is not nvcc.
    let broken = fake(&root.join("broken"), "nvcc", "segfault", 3);
    let config = ToolkitConfig {
        nvcc: Some(broken),
        ..ToolkitConfig::default()
    };
    let err = Toolkit::discover_in(&config, &env).unwrap_err().to_string();
    assert!(err.contains("exited with"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_broken_candidate_is_reported_and_the_next_one_used() {
    let root = scratch("broken");
    let home = root.join("cuda");
    fake(&home.join("bin"), "nvcc", "not a version", 0);
    let on_path = root.join("path");
    let nvcc = fake(&on_path, "nvcc", VERSION, 0);
    let env = Environment {
        cuda_home: Some(home.into()),
        path: Some(on_path.into()),
        ..Environment::default()
    };
    let t = Toolkit::discover_in(&ToolkitConfig::default(), &env).unwrap();
    assert_eq!((t.nvcc, t.source), (nvcc, ToolkitSource::Path));
    let _ = std::fs::remove_dir_all(&root);
}
