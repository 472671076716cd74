//! Tests that run NVIDIA's real toolkit. Each one finds it the way the server does
//! (`Toolkit::discover`: `CUDA_HOME`/`CUDA_PATH`, `PATH`, the active Python
//! environment), or takes `KERNAUT_TEST_NVCC`; when there is none, or nvcc cannot
//! find a host compiler, the test prints why and passes without checking anything.
//!
//! To run them here: `python3 -m venv /tmp/cuda && /tmp/cuda/bin/pip install
//! nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl nvidia-cuda-crt
//! nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, then
//! `VIRTUAL_ENV=/tmp/cuda cargo test -p kernaut-compiler`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use kernaut_compiler::{
    parse_cuobjdump_resource_usage, AsyncCopyMode, CancelFlag, CompileCache, CompileError,
    CompileFlags, CompileJobs, CompileOutput, CompileRequest, JobsConfig, Toolkit, ToolkitConfig,
};

fn kernel_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/kernels")
        .join(name)
}

fn kernel_text(name: &str) -> String {
    std::fs::read_to_string(kernel_path(name)).unwrap()
}

fn no_cancel() -> CancelFlag {
    Arc::new(AtomicBool::new(false))
}

/// The toolkit, or `None` after printing why the test is skipped.
fn toolkit(test: &str) -> Option<Toolkit> {
    let config = ToolkitConfig {
        nvcc: std::env::var_os("KERNAUT_TEST_NVCC").map(PathBuf::from),
        ..ToolkitConfig::default()
    };
    let toolkit = match Toolkit::discover(&config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{test}: skipped, no CUDA toolkit: {e}");
            return None;
        }
    };
    // nvcc needs a host compiler to preprocess; without one nothing compiles.
    let probe = CompileRequest::new(
        "probe.cu",
        "__global__ void probe() {}",
        CompileFlags::default_for("sm_80"),
    );
    match toolkit.compile(&probe, &no_cancel()) {
        Ok(out) if out.success => Some(toolkit),
        Ok(out) => {
            let why: Vec<&str> = out.messages.iter().map(|m| m.message.as_str()).collect();
            eprintln!(
                "{test}: skipped, {} cannot compile a trivial kernel: {}",
                toolkit.describe(),
                why.join("; ")
            );
            None
        }
        Err(e) => {
            eprintln!("{test}: skipped, {}: {e}", toolkit.describe());
            None
        }
    }
}

fn compile(toolkit: &Toolkit, file: &str, arch: &str, sass: bool) -> CompileOutput {
    let mut request = CompileRequest::new(
        kernel_path(file),
        kernel_text(file),
        CompileFlags::default_for(arch),
    );
    request.sass = sass;
    let out = toolkit.compile(&request, &no_cancel()).expect("nvcc runs");
    assert!(out.success, "{file}: {:#?}", out.messages);
    out
}

#[test]
fn version_is_reported() {
    let Some(t) = toolkit("version_is_reported") else {
        return;
    };
    eprintln!("{}", t.describe());
    assert!(t.version().major_minor().is_some(), "{:?}", t.version());
}

#[test]
fn registers_match_cuobjdump_dump_resource_usage() {
    let test = "registers_match_cuobjdump_dump_resource_usage";
    let Some(t) = toolkit(test) else {
        return;
    };
    let Some(cuobjdump) = t.cuobjdump.clone() else {
        eprintln!("{test}: skipped, no cuobjdump beside {}", t.nvcc.display());
        return;
    };
    let tmp = std::env::temp_dir().join(format!("kernaut-real-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for file in ["plain.cu", "spill.cu", "async.cu"] {
        let out = compile(&t, file, "sm_80", false);
        assert!(!out.kernels.is_empty(), "{file}");
        // The same compilation by hand, kept, and read back by cuobjdump.
        let fatbin = tmp.join(format!("{file}.fatbin"));
        let status = Command::new(&t.nvcc)
            .args(["-fatbin", "-std=c++17", "-arch=sm_80"])
            .arg(kernel_path(file))
            .arg("-o")
            .arg(&fatbin)
            .current_dir(&tmp)
            .status()
            .unwrap();
        assert!(status.success());
        let dump = Command::new(&cuobjdump)
            .arg("--dump-resource-usage")
            .arg(&fatbin)
            .output()
            .unwrap();
        let dumped = parse_cuobjdump_resource_usage(&String::from_utf8_lossy(&dump.stdout));
        assert_eq!(dumped.len(), out.kernels.len(), "{file}");
        for k in &out.kernels {
            let d = dumped
                .iter()
                .find(|d| d.mangled == k.mangled && d.arch == k.arch)
                .unwrap_or_else(|| panic!("{file}: {} not dumped", k.mangled));
            assert_eq!(d.registers, k.registers, "{file}: {}", k.name);
            assert_eq!(d.stack_bytes, k.stack_frame_bytes, "{file}: {}", k.name);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_kernel_written_to_spill_spills_and_the_others_do_not() {
    let Some(t) = toolkit("a_kernel_written_to_spill_spills_and_the_others_do_not") else {
        return;
    };
    let out = compile(&t, "spill.cu", "sm_80", false);
    let spills = out
        .kernels
        .iter()
        .find(|k| k.base_name == "spills")
        .unwrap();
    assert!(spills.spills(), "{spills:?}");
    assert!(spills.stack_frame_bytes >= spills.spill_store_bytes);
    let helper = out
        .kernels
        .iter()
        .find(|k| k.base_name == "calls_helper")
        .unwrap();
    assert!(!helper.spills(), "{helper:?}");
    let plain = compile(&t, "plain.cu", "sm_80", false);
    assert!(plain.kernels.iter().all(|k| !k.spills()));
    // Two instantiations of one template, each with its own shared memory.
    let mut transposes: Vec<(String, u64)> = plain
        .kernels
        .iter()
        .filter(|k| k.base_name == "transpose")
        .map(|k| (k.name.clone(), k.static_shared_bytes))
        .collect();
    transposes.sort();
    assert_eq!(
        transposes,
        [
            (
                "void transpose<16, double>(double*, double const*, int)".to_string(),
                16 * 17 * 8
            ),
            (
                "void transpose<32, float>(float*, float const*, int)".to_string(),
                32 * 33 * 4
            ),
        ]
    );
}

#[test]
fn ldgsts_bypass_for_16_byte_cp_async_and_not_for_4_bytes() {
    let test = "ldgsts_bypass_for_16_byte_cp_async_and_not_for_4_bytes";
    let Some(t) = toolkit(test) else {
        return;
    };
    if !t.has_sass_tools() {
        eprintln!("{test}: skipped, {}", t.describe());
        return;
    }
    let out = compile(&t, "async.cu", "sm_80", true);
    let sass = out.sass.as_ref().expect("SASS was asked for");
    let mode = |base: &str| {
        let k = out.kernels.iter().find(|k| k.base_name == base).unwrap();
        out.sass_for(&k.mangled, "sm_80").unwrap().async_copy_mode()
    };
    assert_eq!(mode("copy16"), AsyncCopyMode::Bypass, "{sass:#?}");
    assert_eq!(mode("copy4"), AsyncCopyMode::ThroughL1, "{sass:#?}");
    assert!(sass.iter().all(|k| k.text.contains("LDGSTS")));

    // Before sm_80 there is no LDGSTS at all.
    let old = compile(&t, "async.cu", "sm_75", true);
    let old_sass = old.sass.as_ref().unwrap();
    assert!(old_sass
        .iter()
        .all(|k| k.async_copy_mode() == AsyncCopyMode::None));

    let spill = compile(&t, "spill.cu", "sm_80", true);
    let k = spill
        .kernels
        .iter()
        .find(|k| k.base_name == "spills")
        .unwrap();
    let s = spill.sass_for(&k.mangled, "sm_80").unwrap();
    assert!(s.ldl > 0 && s.stl > 0, "{s:?}");
}

#[test]
fn errors_land_on_their_lines_of_the_source_path() {
    let Some(t) = toolkit("errors_land_on_their_lines_of_the_source_path") else {
        return;
    };
    let path = kernel_path("errors.cu");
    let request = CompileRequest::new(
        &path,
        kernel_text("errors.cu"),
        CompileFlags::default_for("sm_80"),
    );
    let out = t.compile(&request, &no_cancel()).unwrap();
    assert!(!out.success);
    assert!(out.has_errors());
    let places: Vec<String> = out
        .messages
        .iter()
        .map(|m| {
            assert_eq!(m.file.as_deref(), Some(path.as_path()), "{m:?}");
            format!("{:?} {:?}:{:?}", m.severity, m.line, m.column)
        })
        .collect();
    assert_eq!(
        places,
        [
            "Error Some(3):Some(14)",
            "Warning Some(4):Some(9)",
            "Error Some(9):Some(1)",
        ]
    );
}

#[test]
fn unsaved_text_finds_headers_beside_the_file_and_nothing_is_written_there() {
    let test = "unsaved_text_finds_headers_beside_the_file_and_nothing_is_written_there";
    let Some(t) = toolkit(test) else {
        return;
    };
    let project = std::env::temp_dir().join(format!("kernaut-project-{}", std::process::id()));
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/tile.cuh"), "constexpr int TILE = 64;\n").unwrap();
    let source = project.join("src/k.cu");
    // The file on disk is stale; the buffer's text is what gets compiled.
    std::fs::write(&source, "this does not compile").unwrap();
    // Starting with a byte-order mark, as some editors save.
    let text = "\u{feff}#include \"tile.cuh\"\n__global__ void k(float* p) {\n  __shared__ float s[TILE];\n  s[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n  p[threadIdx.x] = s[TILE - 1 - threadIdx.x];\n}\n";
    let request = CompileRequest::new(&source, text, CompileFlags::default_for("sm_80"));
    let out = t.compile(&request, &no_cancel()).unwrap();
    assert!(out.success, "{:#?}", out.messages);
    assert_eq!(out.kernels[0].static_shared_bytes, 64 * 4);
    assert_eq!(out.includes, [project.join("src/tile.cuh")]);
    let mut files: Vec<String> = std::fs::read_dir(project.join("src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["k.cu", "tile.cuh"]);
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn a_compile_database_cannot_choose_the_compiler() {
    let test = "a_compile_database_cannot_choose_the_compiler";
    let Some(t) = toolkit(test) else {
        return;
    };
    let project = std::env::temp_dir().join(format!("kernaut-evil-{}", std::process::id()));
    std::fs::create_dir_all(&project).unwrap();
    let marker = project.join("evil-ran");
    let evil = project.join("evil.sh");
    std::fs::write(
        &evil,
        format!("#!/bin/sh\ntouch {}\nexec g++ \"$@\"\n", marker.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let source = project.join("k.cu");
    std::fs::write(&source, kernel_text("plain.cu")).unwrap();
    let db = project.join("compile_commands.json");
    let entries = serde_json::json!([{
        "directory": project,
        "file": "k.cu",
        "command": "nvcc -ccbin ./evil.sh -Xcompiler -B./ --compiler-bindir=. -arch=sm_86 -c k.cu -o k.o"
    }]);
    std::fs::write(&db, entries.to_string()).unwrap();
    let flags = kernaut_compiler::flags_for(&source, Some(&db), "sm_80").unwrap();
    assert_eq!(flags.args, ["-arch=sm_86"]);
    assert_eq!(flags.dropped.len(), 3, "{:?}", flags.dropped);
    let request = CompileRequest::new(&source, kernel_text("plain.cu"), flags);
    let out = t.compile(&request, &no_cancel()).unwrap();
    assert!(out.success, "{:#?}", out.messages);
    assert!(out.kernels.iter().all(|k| k.arch == "sm_86"));
    assert_eq!(out.dropped_flags.len(), 3);
    assert!(!marker.exists(), "the workspace's script ran");
    let _ = std::fs::remove_dir_all(&project);
}

#[test]
fn cancel_kills_the_compiler() {
    let Some(t) = toolkit("cancel_kills_the_compiler") else {
        return;
    };
    let request = CompileRequest::new(
        kernel_path("spill.cu"),
        kernel_text("spill.cu"),
        CompileFlags::default_for("sm_80"),
    );
    let cancel = no_cancel();
    let setter = cancel.clone();
    let handle = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        setter.store(true, Ordering::Relaxed);
    });
    let result = t.compile(&request, &cancel);
    handle.join().unwrap();
    assert_eq!(result.unwrap_err(), CompileError::Cancelled);
}

#[test]
fn a_time_limit_stops_the_compiler() {
    let Some(t) = toolkit("a_time_limit_stops_the_compiler") else {
        return;
    };
    let mut request = CompileRequest::new(
        kernel_path("spill.cu"),
        kernel_text("spill.cu"),
        CompileFlags::default_for("sm_80"),
    );
    request.timeout = Duration::from_millis(1);
    let result = t.compile(&request, &no_cancel());
    assert_eq!(
        result.unwrap_err(),
        CompileError::TimedOut(Duration::from_millis(1))
    );
}

#[test]
fn unchanged_text_is_not_recompiled() {
    let Some(t) = toolkit("unchanged_text_is_not_recompiled") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kernaut-cache-{}", std::process::id()));
    let cache = CompileCache::new(Some(dir.clone()));
    let request = CompileRequest::new(
        kernel_path("plain.cu"),
        kernel_text("plain.cu"),
        CompileFlags::default_for("sm_80"),
    );
    let first = cache.compile(&t, &request, &no_cancel()).unwrap();
    assert!(!first.from_cache);
    let second = cache.compile(&t, &request, &no_cancel()).unwrap();
    assert!(second.from_cache);
    assert_eq!(first.kernels, second.kernels);

    // A new cache over the same folder: read from disk.
    let fresh = CompileCache::new(Some(dir.clone()));
    let third = fresh.get(&t, &request).expect("on disk");
    assert!(third.from_cache);
    assert_eq!(third.kernels, first.kernels);

    // Other text or other flags: compiled again.
    let mut edited = request.clone();
    edited.text.push_str("\n// an edit\n");
    assert!(!cache.compile(&t, &edited, &no_cancel()).unwrap().from_cache);
    let mut other_arch = request.clone();
    other_arch.flags = CompileFlags::default_for("sm_90");
    let out = cache.compile(&t, &other_arch, &no_cancel()).unwrap();
    assert!(!out.from_cache);
    assert!(out.kernels.iter().all(|k| k.arch == "sm_90"));

    // A file that does not compile is compiled again (a header may be fixed).
    let broken = CompileRequest::new(
        kernel_path("errors.cu"),
        kernel_text("errors.cu"),
        CompileFlags::default_for("sm_80"),
    );
    for _ in 0..2 {
        let out = cache.compile(&t, &broken, &no_cancel()).unwrap();
        assert!(!out.success && !out.from_cache);
    }

    cache.clear();
    assert!(cache.is_empty());
    assert!(
        fresh.get(&t, &request).is_some(),
        "the other cache keeps its memory"
    );
    assert!(CompileCache::new(Some(dir.clone()))
        .get(&t, &edited)
        .is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn background_jobs_debounce_and_keep_the_newest_text() {
    let Some(t) = toolkit("background_jobs_debounce_and_keep_the_newest_text") else {
        return;
    };
    let (tx, rx) = mpsc::channel();
    let jobs = CompileJobs::new(
        t,
        Arc::new(CompileCache::new(None)),
        JobsConfig {
            debounce: Duration::from_millis(100),
        },
        move |r| {
            let _ = tx.send(r);
        },
    );
    let path = PathBuf::from("/nowhere/edit.cu");
    let version = |n: u32| {
        CompileRequest::new(
            &path,
            format!("__global__ void v{n}(int* p) {{ p[0] = {n}; }}"),
            CompileFlags::default_for("sm_80"),
        )
    };
    // Three quick edits: only the last is compiled.
    for n in 1..=3 {
        jobs.submit(version(n));
    }
    let result = rx.recv_timeout(Duration::from_secs(120)).expect("a result");
    assert_eq!(result.source_path, path);
    let out = result.result.expect("compiled");
    let names: Vec<&str> = out.kernels.iter().map(|k| k.base_name.as_str()).collect();
    assert_eq!(names, ["v3"]);
    // An edit while compiling cancels the running job; the newer one follows.
    jobs.submit_after(version(4), Duration::ZERO);
    std::thread::sleep(Duration::from_millis(20));
    jobs.submit_after(version(5), Duration::ZERO);
    let mut last = None;
    while let Ok(r) = rx.recv_timeout(Duration::from_secs(120)) {
        let done = matches!(&r.result, Ok(out) if out.kernels.iter().any(|k| k.base_name == "v5"));
        last = Some(r);
        if done {
            break;
        }
    }
    let last = last.expect("results");
    assert!(last.result.is_ok(), "{:?}", last.result);
    assert!(!jobs.is_busy());
}

#[test]
fn relocatable_device_code_still_reports_resources() {
    let Some(t) = toolkit("relocatable_device_code_still_reports_resources") else {
        return;
    };
    let flags = CompileFlags {
        args: vec!["-arch=sm_80".into(), "-rdc=true".into()],
        ..CompileFlags::default_for("sm_80")
    };
    let request = CompileRequest::new(kernel_path("spill.cu"), kernel_text("spill.cu"), flags);
    let out = t.compile(&request, &no_cancel()).unwrap();
    assert!(out.success, "{:#?}", out.messages);
    let names: Vec<&str> = out.kernels.iter().map(|k| k.base_name.as_str()).collect();
    assert_eq!(names, ["calls_helper", "spills"]);
    assert!(out.kernels[1].spills());
    assert!(out
        .messages
        .iter()
        .any(|m| m.message.contains("before device linking")));
}

/// A kernel that keeps cicc and ptxas busy for seconds.
fn heavy_kernel() -> String {
    let mut s = String::from("__global__ void heavy(float* out, const float* in, int k) {\n");
    s.push_str("  float acc[256];\n#pragma unroll\n");
    s.push_str("  for (int j = 0; j < 256; ++j) acc[j] = in[threadIdx.x + j * 1024];\n");
    s.push_str(
        "  float s = 0.f;\n#pragma unroll\n  for (int r = 0; r < 32; ++r)\n#pragma unroll\n",
    );
    s.push_str("    for (int j = 0; j < 256; ++j) s += acc[j] * acc[(j * 7 + r) % 256];\n");
    s.push_str("  out[threadIdx.x] = s + acc[k % 256];\n}\n");
    s
}

/// Processes whose command line mentions this test process's temporary folders
/// and the file `name` (other tests compile at the same time).
#[cfg(target_os = "linux")]
fn our_compilers(name: &str) -> Vec<String> {
    let marker = format!("kernaut-nvcc-{}-", std::process::id());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(&marker) && cmdline.contains(name) {
                found.push(cmdline);
            }
        }
    }
    found
}

#[cfg(target_os = "linux")]
#[test]
fn cancel_in_the_middle_leaves_no_compiler_running() {
    let Some(t) = toolkit("cancel_in_the_middle_leaves_no_compiler_running") else {
        return;
    };
    let request = CompileRequest::new(
        "/nowhere/cancel-probe.cu",
        heavy_kernel(),
        CompileFlags::default_for("sm_80"),
    );
    let cancel = no_cancel();
    let setter = cancel.clone();
    let watcher = std::thread::spawn(move || {
        // Wait until the device compiler (cicc, then ptxas) is at work, then cancel.
        let mut seen = Vec::new();
        for _ in 0..400 {
            std::thread::sleep(Duration::from_millis(25));
            seen = our_compilers("cancel-probe");
            let program = |c: &String| {
                let first = c.split_whitespace().next().unwrap_or_default();
                first.rsplit('/').next().unwrap_or(first).to_string()
            };
            if seen
                .iter()
                .map(program)
                .any(|p| p == "cicc" || p == "ptxas")
            {
                break;
            }
        }
        setter.store(true, Ordering::Relaxed);
        seen
    });
    let result = t.compile(&request, &cancel);
    let seen = watcher.join().unwrap();
    assert_eq!(result.unwrap_err(), CompileError::Cancelled);
    assert!(!seen.is_empty(), "the compiler was never seen running");
    let programs: Vec<&str> = seen
        .iter()
        .filter_map(|c| c.split_whitespace().next())
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .collect();
    eprintln!("running when cancelled: {}", programs.join(", "));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(our_compilers("cancel-probe"), Vec::<String>::new());
}

#[test]
fn saving_a_header_recompiles_the_files_that_include_it() {
    let Some(t) = toolkit("saving_a_header_recompiles_the_files_that_include_it") else {
        return;
    };
    let project = std::env::temp_dir().join(format!("kernaut-header-{}", std::process::id()));
    std::fs::create_dir_all(&project).unwrap();
    let header = project.join("tile.cuh");
    std::fs::write(&header, "constexpr int TILE = 64;\n").unwrap();
    let text = "#include \"tile.cuh\"\n__global__ void k(float* p) {\n  __shared__ float s[TILE];\n  s[threadIdx.x] = p[threadIdx.x];\n  __syncthreads();\n  p[threadIdx.x] = s[TILE - 1 - threadIdx.x];\n}\n";
    let request = CompileRequest::new(
        project.join("k.cu"),
        text,
        CompileFlags::default_for("sm_80"),
    );
    let cache = CompileCache::new(None);
    let first = cache.compile(&t, &request, &no_cancel()).unwrap();
    assert_eq!(
        (first.from_cache, first.kernels[0].static_shared_bytes),
        (false, 256)
    );
    assert!(
        cache
            .compile(&t, &request, &no_cancel())
            .unwrap()
            .from_cache
    );
    std::fs::write(&header, "constexpr int TILE = 1024;\n").unwrap();
    let after = cache.compile(&t, &request, &no_cancel()).unwrap();
    assert_eq!(
        (after.from_cache, after.kernels[0].static_shared_bytes),
        (false, 4096)
    );
    let _ = std::fs::remove_dir_all(&project);
}
