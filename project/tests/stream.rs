//! A repository loaded a few files at a time (`Plan` and `Stream`, what `kernaut-lsp
//! check` runs) gives every file the diagnostics of the whole repository loaded at once,
//! also when nothing is kept beyond what the file being checked needs.

use std::path::{Path, PathBuf};

use kernaut_ide::{AnalysisConfig, AnalysisHost};
use kernaut_project::{ProjectLoader, Stream};

fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Each file's diagnostics as `file:line-range: rule: message`, from one host holding
/// every file.
fn all_at_once(roots: &[PathBuf]) -> Vec<String> {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.load_knowledge().unwrap();
    let mut loader = ProjectLoader::new(None);
    let loaded = loader.load(&mut host, roots).unwrap();
    let a = host.analysis();
    let mut out = Vec::new();
    for f in &loaded {
        for d in a.diagnostics(f.id).unwrap() {
            out.push(format!(
                "{}:{:?}: {}: {}",
                name(&f.path),
                d.range,
                d.rule,
                d.message
            ));
        }
    }
    out
}

/// The same through a stream that keeps `budget` bytes of text it does not need.
fn streamed(roots: &[PathBuf], budget: usize) -> Vec<String> {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.load_knowledge().unwrap();
    let mut loader = ProjectLoader::new(None);
    let plan = loader.plan(roots).unwrap();
    let mut stream = Stream::new(plan, budget);
    let mut out = Vec::new();
    for i in 0..stream.plan().len() {
        let path = stream.plan().path(i).to_path_buf();
        let (id, _) = stream.load(&mut host, i).unwrap();
        for d in host.analysis().diagnostics(id).unwrap() {
            out.push(format!(
                "{}:{:?}: {}: {}",
                name(&path),
                d.range,
                d.rule,
                d.message
            ));
        }
    }
    out
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn streamed_files_see_launches_opt_ins_and_headers_of_other_files() {
    let dir = tree(
        "stream-cross-file",
        &[
            (
                "a.cu",
                "__global__ void big(float* o) {\n    extern __shared__ float s[];\n    o[threadIdx.x] = s[threadIdx.x];\n}\n",
            ),
            // Launched over 48 KB here, opted in in c.cu: no error.
            ("b.cu", "void run(float* o) {\n    big<<<1, 256, 64 * 1024>>>(o);\n}\n"),
            (
                "c.cu",
                "void setup() {\n    cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);\n}\n",
            ),
            // No opt-in anywhere: an error.
            ("d.cu", "void run2(float* o) {\n    other<<<1, 256, 64 * 1024>>>(o);\n}\n"),
            // A launch written in a header's macro, with no opt-in: an error.
            ("inc/launch.cuh", "#define LAUNCH_OTHER(o) other2<<<1, 256, 64 * 1024>>>(o)\n"),
            ("e.cu", "#include \"inc/launch.cuh\"\nvoid run3(float* o) {\n    LAUNCH_OTHER(o);\n}\n"),
            // An opt-in written in a header's macro that names the kernel: g.cu's text
            // does not, yet it raises the opt-in for h.cu's launch.
            (
                "inc/optin.cuh",
                "#define OPT_IN_BIG4() cudaFuncSetAttribute(big4, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024)\n",
            ),
            ("g.cu", "#include \"inc/optin.cuh\"\nvoid setup4() {\n    OPT_IN_BIG4();\n}\n"),
            ("h.cu", "void run4(float* o) {\n    big4<<<1, 256, 64 * 1024>>>(o);\n}\n"),
            ("i.cu", "void run5(float* o) {\n    big5<<<1, 256, 64 * 1024>>>(o);\n}\n"),
            // A kernel whose block only another file's launch gives: the bank model
            // reads it.
            (
                "t.cu",
                "__global__ void transpose(float* out) {\n    __shared__ float tile[32][32];\n    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}\n",
            ),
            ("u.cu", "void go(float* o) {\n    transpose<<<1, dim3(32, 32)>>>(o);\n}\n"),
            ("z.cu", "__device__ float unrelated(float v) { return v; }\n"),
        ],
    );
    let mut roots: Vec<PathBuf> = [
        "a.cu", "b.cu", "c.cu", "d.cu", "e.cu", "g.cu", "h.cu", "i.cu", "t.cu", "u.cu", "z.cu",
    ]
    .iter()
    .map(|f| dir.join(f))
    .collect();
    roots.push(dir.join("inc/launch.cuh"));
    let whole = all_at_once(&roots);
    let joined = whole.join("\n");
    assert!(
        joined.contains("d.cu:") && !joined.contains("b.cu:"),
        "{joined}"
    );
    assert!(
        joined.contains("e.cu:") && joined.contains("i.cu:"),
        "{joined}"
    );
    assert!(!joined.contains("h.cu:"), "{joined}");
    assert!(joined.contains("t.cu:"), "{joined}");
    // Nothing kept beyond what each file needs, everything kept, and in between.
    for budget in [0, 100, 1 << 20] {
        assert_eq!(streamed(&roots, budget), whole, "budget {budget}");
    }
}

/// The editor's loader reads a project's includes off its request path: a `.cu` whose
/// targets are its includer's has none until the scan it asked for is run and given
/// back, and then the same targets as `check`'s loader finds at once.
#[test]
fn deferred_scans_give_the_includers_targets_once_run() {
    let dir = tree(
        "deferred-scan",
        &[
            (".git/HEAD", "ref: refs/heads/main\n"),
            (
                "lib/CMakeLists.txt",
                "project(sums)\nset(CUDA_NVCC_FLAGS \"-arch=sm_35\")\ncuda_add_library(sums sum.cu)\n",
            ),
            (
                "lib/sum.cu",
                "#include \"../include/tail.cu\"\nvoid run(int* p) { k<<<1, 32>>>(p); }\n",
            ),
            ("include/tail.cu", "__global__ void k(int* p) { p[threadIdx.x] = 0; }\n"),
        ],
    );
    let file = dir.canonicalize().unwrap().join("include/tail.cu");
    let targets = |l: &mut ProjectLoader| {
        l.file_build(&file)
            .targets
            .map(|t| t.targets.iter().map(|t| t.to_string()).collect::<Vec<_>>())
    };
    let mut at_once = ProjectLoader::new(None);
    let expected = targets(&mut at_once);
    assert_eq!(expected, Some(vec!["sm_35".to_string()]));

    let mut editor = ProjectLoader::new(None);
    editor.defer_scans();
    assert_eq!(targets(&mut editor), None);
    let scans = editor.take_wanted_scans();
    assert_eq!(scans.len(), 1);
    assert_eq!(scans[0].root(), dir.canonicalize().unwrap());
    // Asked again before the scan is back: still none, and the scan is not asked twice.
    assert_eq!(targets(&mut editor), None);
    assert!(editor.take_wanted_scans().is_empty());
    for s in scans {
        editor.add_scan(s.run());
    }
    assert_eq!(targets(&mut editor), expected);
}
