//! Queries on an old snapshot are cancelled by a change; a failure is not an empty
//! answer.

use std::sync::Arc;

use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, FileId, Knowledge, QueryError};
use kernaut_test_utils::gen::generated;

#[test]
fn an_edit_cancels_diagnostics_running_on_the_10000_line_file() {
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let text = generated(10_000);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let file = host.set_file("/gen.cu", &text);
    // The rules on 10,000 lines take long enough that the edit lands while they run; if
    // a fast machine finishes first, try again on the next revision.
    let mut outcomes = Vec::new();
    for attempt in 0..5 {
        let analysis = host.analysis();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            analysis.diagnostics(file).map(|d| d.len())
        });
        started_rx.recv().unwrap();
        let mut change = Change::new();
        change.edit_file(file, 0..0, format!("// edit {attempt}\n"));
        host.apply_change(change);
        let outcome = worker.join().expect("the query thread does not panic");
        outcomes.push(outcome.clone());
        if outcome == Err(QueryError::Cancelled) {
            break;
        }
    }
    assert_eq!(
        outcomes.last(),
        Some(&Err(QueryError::Cancelled)),
        "{outcomes:?}"
    );
    // A snapshot taken after the change answers.
    let fresh = host.analysis().diagnostics(file).unwrap();
    assert!(!fresh.is_empty());
}

#[test]
fn a_snapshot_older_than_the_host_answers_cancelled_at_once() {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let file = host.set_file("/k.cu", "__global__ void k() {}\n");
    let old = host.analysis();
    assert!(old.kernel_facts(file).is_ok());
    let mut change = Change::new();
    change.set_file(file, "__global__ void k2() {}\n");
    host.apply_change(change);
    assert!(old.is_cancelled());
    assert_eq!(old.hover(file, 16).err(), Some(QueryError::Cancelled));
    assert_eq!(old.kernel_facts(file).err(), Some(QueryError::Cancelled));
    let names: Vec<String> = host
        .analysis()
        .kernel_facts(file)
        .unwrap()
        .iter()
        .map(|k| k.function.name.clone())
        .collect();
    assert_eq!(names, ["k2"]);
}

#[test]
fn one_change_carries_edits_of_several_files_and_the_configuration() {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    let a = host.file_id("/a.cu");
    let b = host.file_id("/b.cu");
    let mut change = Change::new();
    change
        .set_file(a, "__global__ void ka() {}\n")
        .set_file(b, "int x;\n")
        .edit_file(b, 0..0, "__global__ void kb() {}\n")
        .edit_file(a, 0..0, "// first\n");
    change.set_config(AnalysisConfig {
        default_block: [128, 1, 1],
        ..AnalysisConfig::default()
    });
    host.apply_change(change);
    let an = host.analysis();
    assert_eq!(an.text(a).unwrap(), "// first\n__global__ void ka() {}\n");
    assert_eq!(an.text(b).unwrap(), "__global__ void kb() {}\nint x;\n");
    assert_eq!(an.config().default_block, [128, 1, 1]);
    assert_eq!(an.files(), vec![a, b]);
    assert_eq!(an.path(b), Some("/b.cu"));
    let mut change = Change::new();
    change.remove_file(a);
    host.apply_change(change);
    assert_eq!(host.analysis().text(a), Err(QueryError::UnknownFile));
}

#[test]
fn a_kernaut_toml_applies_to_the_files_below_it() {
    use kernaut_ide::config::{parse_config, RuleLevel};
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let code = "__global__ void k(unsigned* o) {\n    o[threadIdx.x] = __reduce_add_sync(0xffffffffu, threadIdx.x);\n}\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let old = host.set_file("/proj/old/k.cu", code);
    let new = host.set_file("/proj/new/k.cu", code);
    let mut change = Change::new();
    change
        .set_dir_config("/proj/old", Some(parse_config("arch = \"sm_70\"").unwrap()))
        .set_dir_config(
            "/proj",
            Some(parse_config("[rules]\n\"bank-conflict\" = \"off\"").unwrap()),
        );
    host.apply_change(change);
    let a = host.analysis();
    assert_eq!(a.file_config(old).arch.to_string(), "sm_70");
    assert_eq!(a.file_config(old).config_dir.as_deref(), Some("/proj/old"));
    assert_eq!(a.file_config(new).arch.to_string(), "sm_90");
    assert_eq!(
        a.file_config(new).rules.level("bank-conflict"),
        Some(RuleLevel::Off)
    );
    let rules = |f| -> Vec<&str> { a.diagnostics(f).unwrap().iter().map(|d| d.rule).collect() };
    assert!(
        rules(old).contains(&"arch/requires-newer-sm"),
        "{:?}",
        rules(old)
    );
    assert!(
        !rules(new).contains(&"arch/requires-newer-sm"),
        "{:?}",
        rules(new)
    );
}

#[test]
fn compiler_facts_drive_occupancy_and_the_spills_diagnostic() {
    use kernaut_ide::compiled::{CompiledFacts, CompiledKernel};
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let code = "__global__ void heavy(float* o) {\n    float a[64];\n    for (int i = 0; i < 64; ++i) a[i] = o[i * threadIdx.x];\n    o[threadIdx.x] = a[threadIdx.x % 64];\n}\nvoid run(float* o) { heavy<<<64, 256>>>(o); }\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let f = host.set_file("/k.cu", code);
    let before = host.analysis().occupancy(f, "heavy").unwrap().unwrap();
    assert_eq!(before.regs_per_thread, 32);
    let mut change = Change::new();
    change.set_compiled(
        f,
        Some(CompiledFacts {
            toolkit: "nvcc 12.8".into(),
            kernels: vec![CompiledKernel {
                name: "heavy(float*)".into(),
                base_name: "heavy".into(),
                arch: "sm_90".into(),
                registers: 128,
                spill_store_bytes: 96,
                spill_load_bytes: 120,
                ..CompiledKernel::default()
            }],
            ..CompiledFacts::default()
        }),
    );
    host.apply_change(change);
    let a = host.analysis();
    let occ = a.occupancy(f, "heavy").unwrap().unwrap();
    assert_eq!(occ.regs_per_thread, 128);
    assert_eq!(occ.regs_source, kernaut_ide::reports::RegsSource::Compiler);
    // 256 threads × 128 registers: 2 blocks of the 64K registers of an SM.
    assert_eq!(occ.result.as_ref().unwrap().blocks_per_sm, 2);
    assert!(
        occ.notes
            .iter()
            .any(|n| n.contains("as ptxas reported for sm_90 (nvcc 12.8)")),
        "{:?}",
        occ.notes
    );
    let spills: Vec<_> = a
        .diagnostics(f)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule == "resources/spills")
        .collect();
    assert_eq!(spills.len(), 1);
    assert_eq!(&code[spills[0].range.clone()], "heavy");
    assert!(
        spills[0]
            .message
            .contains("96 bytes stored and 120 bytes loaded"),
        "{}",
        spills[0].message
    );
    assert_eq!(spills[0].wiki, "pitfall-local-memory-spills#P1");
    let lens = a.code_lenses(f).unwrap();
    assert!(lens[0].title.contains("128 regs"), "{}", lens[0].title);
}

#[test]
fn sass_facts_confirm_or_clear_the_l1_guess_and_reach_the_kernel_hover() {
    use kernaut_ide::compiled::{CompiledFacts, CompiledKernel, SassFacts};
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let code = "#include <cuda_pipeline.h>\n__global__ void copy(float* out, const float* in) {\n    __shared__ float tile[256];\n    __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], 4);\n    __pipeline_commit();\n    __pipeline_wait_prior(0);\n    __syncthreads();\n    out[threadIdx.x] = tile[threadIdx.x];\n}\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let f = host.set_file("/k.cu", code);
    let l1 = |a: &kernaut_ide::Analysis| -> Vec<String> {
        a.diagnostics(f)
            .unwrap()
            .into_iter()
            .filter(|d| d.rule == "async-copy/l1-access-mode")
            .map(|d| d.message)
            .collect()
    };
    assert_eq!(
        l1(&host.analysis()).len(),
        1,
        "the rule fires on a 4-byte copy"
    );
    let facts = |bypass, through_l1| CompiledFacts {
        toolkit: "nvcc 12.8".into(),
        kernels: vec![CompiledKernel {
            name: "copy(float*, float const*)".into(),
            base_name: "copy".into(),
            arch: "sm_90".into(),
            registers: 16,
            sass: Some(SassFacts {
                instructions: 40,
                ldgsts_bypass: bypass,
                ldgsts_l1: through_l1,
                top_opcodes: vec![("LDGSTS".into(), bypass + through_l1), ("MOV".into(), 5)],
                ..SassFacts::default()
            }),
            ..CompiledKernel::default()
        }],
        ..CompiledFacts::default()
    };
    let mut change = Change::new();
    change.set_compiled(f, Some(facts(0, 1)));
    host.apply_change(change);
    let a = host.analysis();
    let messages = l1(&a);
    assert!(
        messages[0].contains("The SASS of `copy` confirms it: 1 `LDGSTS` through L1"),
        "{messages:?}"
    );
    let at = code.find("void copy").unwrap() + 6;
    let hover = a.hover(f, at).unwrap().unwrap().markdown;
    assert!(
        hover.contains("**Compiled** (nvcc 12.8, sm_90): 16 registers"),
        "{hover}"
    );
    assert!(
        hover.contains("SASS: 40 instructions; `LDGSTS` 1, `MOV` 5"),
        "{hover}"
    );
    let mut change = Change::new();
    change.set_compiled(f, Some(facts(1, 0)));
    host.apply_change(change);
    assert!(
        l1(&host.analysis()).is_empty(),
        "all copies bypass L1: the guess is cleared"
    );
}

/// A host holding `/proj/blas.cu`: a kernel whose stride `incx` the host function
/// `scale_gpu` launching it passes on from its own parameter.
fn blas_host() -> (AnalysisHost, FileId) {
    let knowledge = Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap());
    let blas = "__global__ void scale_kernel(int n, float a, float *x, int incx)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i*incx] *= a;\n}\n\nvoid scale_gpu(int n, float a, float *x, int incx)\n{\n    scale_kernel<<<(n + 127) / 128, 128>>>(n, a, x, incx);\n}\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge);
    let kernel = host.set_file("/proj/blas.cu", blas);
    (host, kernel)
}

/// The coalescing findings of `file`, as `severity: message`.
fn strided_findings(host: &AnalysisHost, file: FileId) -> Vec<String> {
    host.analysis()
        .diagnostics(file)
        .unwrap()
        .iter()
        .filter(|d| d.rule == "coalescing/strided-global-access")
        .map(|d| format!("{}: {}", d.severity.as_str(), d.message))
        .collect()
}

/// A kernel's stride parameter that the host function launching it passes on, and that
/// every call of that function, in another file, passes as 1: the accesses are
/// coalesced. A call that passes a runtime value there brings the hint back, in the
/// kernel's file, without an edit of it.
#[test]
fn strides_fixed_by_the_callers_in_other_files() {
    let (mut host, kernel) = blas_host();
    let strided = |host: &AnalysisHost| strided_findings(host, kernel);
    // No call of `scale_gpu` in sight: the stride is unknown, and the hint says so.
    let before = strided(&host);
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(before[0].starts_with("hint: "), "{before:?}");
    assert!(
        before[0].contains("(taking `incx` to be 64 or more)"),
        "{before:?}"
    );
    let main = "void scale_gpu(int n, float a, float *x, int incx);\n\nvoid train(float *w, float *g, int n)\n{\n    scale_gpu(n, 0.9f, w, 1);\n    scale_gpu(n, 0.1f, g, 1);\n}\n";
    let caller = host.set_file("/proj/train.cu", main);
    assert_eq!(strided(&host), Vec::<String>::new());
    // One call passes a runtime stride: unknown again.
    let mut change = Change::new();
    change.set_file(caller, main.replace("g, 1);", "g, n);"));
    host.apply_change(change);
    assert_eq!(strided(&host), before);
}

/// The stride reaches the launch through two host functions in two other files: every
/// call of the outer one passes 1. Changing that call alone, two files away, brings the
/// hint back.
#[test]
fn strides_fixed_by_the_callers_of_callers() {
    let (mut host, kernel) = blas_host();
    let strided = |host: &AnalysisHost| strided_findings(host, kernel);
    let train = "void scale_gpu(int n, float a, float *x, int incx);\n\nvoid train(float *w, float *g, int n, int inc)\n{\n    scale_gpu(n, 0.9f, w, inc);\n    scale_gpu(n, 0.1f, g, inc);\n}\n";
    host.set_file("/proj/train.cu", train);
    // `train`'s own parameter, and no call of `train` in sight: unknown.
    let before = strided(&host);
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(before[0].starts_with("hint: "), "{before:?}");
    let main = "void train(float *w, float *g, int n, int inc);\n\nint main()\n{\n    float *w, *g;\n    train(w, g, 4096, 1);\n    train(g, w, 4096, 1);\n}\n";
    let caller = host.set_file("/proj/main.cu", main);
    assert_eq!(strided(&host), Vec::<String>::new());
    // One call of `train` passes a runtime stride: unknown again.
    let mut change = Change::new();
    change.set_file(
        caller,
        main.replace("train(g, w, 4096, 1);", "train(g, w, 4096, argc);"),
    );
    host.apply_change(change);
    assert_eq!(strided(&host), before);
}
