//! The kernel report on kernels that reproduce known cases (`tests/data/report/`, each
//! runnable with a host `main`): the ranking puts the known bottleneck first, the
//! what-ifs show the figures after each fix, and the hover and the lens show the same
//! numbers as the report (one query).

use std::sync::{Arc, OnceLock};

use expect_test::expect;
use kernaut_ide::compiled::{CompiledFacts, CompiledKernel};
use kernaut_ide::kernel_report::{CostKind, KernelReport, ReportConfig};
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge};

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| Arc::new(Knowledge::load(&WikiConfig::builtin()).unwrap()))
        .clone()
}

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/report/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn host_with(name: &str, compiled: Option<CompiledFacts>) -> (AnalysisHost, kernaut_ide::FileId) {
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let id = host.set_file(&format!("/r/{name}"), &data(name));
    if compiled.is_some() {
        let mut change = Change::new();
        change.set_compiled(id, compiled);
        host.apply_change(change);
    }
    (host, id)
}

fn report_with(name: &str, kernel: &str, compiled: Option<CompiledFacts>) -> KernelReport {
    let (host, id) = host_with(name, compiled);
    host.analysis()
        .kernel_report(id, kernel, ReportConfig { what_ifs: true })
        .unwrap()
        .unwrap()
}

fn report(name: &str, kernel: &str) -> KernelReport {
    report_with(name, kernel, None)
}

/// What ptxas 13.5 (`nvcc -arch=sm_90 -Xptxas -v`) reported for `spilling.cu`.
fn spilling_facts() -> CompiledFacts {
    CompiledFacts {
        toolkit: "nvcc 13.5 (V13.5.37)".into(),
        kernels: vec![CompiledKernel {
            name: "_Z11spill_heavyPfPKfi".into(),
            base_name: "spill_heavy".into(),
            arch: "sm_90".into(),
            registers: 32,
            spill_store_bytes: 8272,
            spill_load_bytes: 16720,
            stack_frame_bytes: 7984,
            ..CompiledKernel::default()
        }],
        ..CompiledFacts::default()
    }
}

fn first(r: &KernelReport) -> (&str, CostKind) {
    let c = &r.costs[0];
    (c.rule.as_str(), c.kind)
}

#[test]
fn the_known_bottleneck_ranks_first() {
    let naive = report("naive_transpose.cu", "transpose_naive");
    assert_eq!(first(&naive), ("bank-conflict", CostKind::SharedWavefronts));
    assert_eq!(
        (naive.costs[1].rule.as_str(), naive.costs[1].kind),
        ("coalescing/strided-global-access", CostKind::GlobalSectors)
    );
    let strided = report("strided_load.cu", "row_sums");
    assert_eq!(
        first(&strided),
        ("coalescing/strided-global-access", CostKind::GlobalSectors)
    );
    let pipeline = report("pipeline_wait_all.cu", "pipelined_sum");
    assert_eq!(
        first(&pipeline),
        (
            "async-copy/wait-all-in-pipelined-loop",
            CostKind::SerializedCopies
        )
    );
    let spilling = report_with("spilling.cu", "spill_heavy", Some(spilling_facts()));
    assert_eq!(first(&spilling), ("resources/spills", CostKind::Spills));
    let padded = report("padded_transpose.cu", "transpose_padded");
    assert!(padded.costs.is_empty(), "{:?}", padded.costs);
    assert!(padded.shared.iter().all(|s| s.conflict_degree == Some(1)));
    assert!(padded.global.iter().all(|g| g.sectors == g.ideal_sectors));
}

#[test]
fn what_ifs_give_the_figures_after_each_fix() {
    let naive = report("naive_transpose.cu", "transpose_naive");
    let summaries: Vec<String> = naive
        .what_ifs
        .iter()
        .map(|w| format!("{} → {}", w.title, w.summary))
        .collect();
    expect![[r#"
        [
            "Pad the rows of `tile` to 33 elements (128 more bytes) → 1 wavefront per request instead of 32; modelled memory transactions 69 → 38",
        ]
    "#]]
    .assert_debug_eq(&summaries);
    let pipeline = report("pipeline_wait_all.cu", "pipelined_sum");
    let w = &pipeline.what_ifs[0];
    assert_eq!(w.rule, "async-copy/wait-all-in-pipelined-loop");
    assert!(
        w.summary.contains("copy and compute overlap"),
        "{}",
        w.summary
    );
}

#[test]
fn an_occupancy_what_if_names_the_better_block() {
    // 48 KiB of static shared memory per block of 64 threads: shared memory allows 4
    // blocks (8 warps); 1024 threads per block would fill the SM.
    let text = "__global__ void k(float* o) {\n    __shared__ float s[12288];\n    s[threadIdx.x] = 1.0f;\n    o[threadIdx.x] = s[threadIdx.x];\n}\nint main() { k<<<1, 64>>>(nullptr); }\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let id = host.set_file("/r/occ.cu", text);
    let r = host
        .analysis()
        .kernel_report(id, "k", ReportConfig { what_ifs: true })
        .unwrap()
        .unwrap();
    assert_eq!(first(&r), ("occupancy", CostKind::Occupancy));
    let w = r.what_ifs.iter().find(|w| w.rule == "occupancy").unwrap();
    expect!["block 64 → 512: occupancy 100% instead of 12%"].assert_eq(&w.summary);
}

#[test]
fn the_naive_transpose_report() {
    let naive = report("naive_transpose.cu", "transpose_naive");
    expect![[r#"
        # Kernel report: `transpose_naive` on sm_90

        Costs are modelled memory transactions (shared-memory wavefronts and 32-byte global sectors of one warp request, times the executions the loops' trip counts give), not run times. The kernel's modelled total: **69** transactions.

        ## Costs, ranked

        1. 45% of memory transactions · `bank-conflict` (line 16): 32 wavefronts per request instead of 1: 31 extra × 1 execution
           - 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank; the lanes' stride comes from `threadIdx.x` in the row index ([pitfall-bank-conflict#P1])
        2. 41% of memory transactions · `coalescing/strided-global-access` (line 16): 32 sectors per request instead of 4: 28 extra × 1 execution
           - uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 8192 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: the kernel is named as a deliberate baseline) ([pitfall-coalescing#P1])

        ## What if

        - Pad the rows of `tile` to 33 elements (128 more bytes) (line 16, `bank-conflict`, review it): 1 wavefront per request instead of 32; modelled memory transactions 69 → 38

        ## Launch and occupancy

        - line 25: `<<<grid, block>>>` (block 32×32×1): occupancy 100%

        Block 32×32×1 (from the launch at line 25), 32 registers per thread (assumed: a typical count), 4096 B static + 0 B dynamic shared memory.

        **Occupancy 100%**: 2 blocks/SM, 64 of 64 warps, limited by warps and registers.

        The register count is assumed; occupancy at other counts: 32: 100% · 64: 50% · 128: cannot launch · 255: cannot launch.

        The launch's block already reaches the best occupancy for these resources.

        ## Shared-memory accesses

        | line | access | op | bytes | runs | wavefronts | ideal | conflict | colliding lanes |
        |---|---|---|---|---|---|---|---|---|
        | 14 | `tile[threadIdx.y][threadIdx.x]` | store | 4 | 1 | 1 | 1 | 1-way |  |
        | 16 | `tile[threadIdx.x][threadIdx.y]` | load | 4 | 1 | 32 | 1 | 32-way | bank 0: lanes 0-31 |

        ## Global accesses

        | line | access | op | bytes | runs | sectors | ideal | bytes used per sector | lanes |
        |---|---|---|---|---|---|---|---|---|
        | 14 | `in[y * N + x]` | load | 4 | 1 | 4 | 4 | 32.0 of 32 | 32 |
        | 16 | `out[x * N + y]` | store | 4 | 1 | 32 | 4 | 4.0 of 32 | 32 |

        No compiled facts: spills, stack and SASS need a CUDA toolkit.

        ## Notes

        - Registers: 32 per thread is an assumption, a typical count; set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
    "#]].assert_eq(&naive.markdown());
}

#[test]
fn hover_and_lens_show_the_reports_numbers() {
    let (host, id) = host_with("naive_transpose.cu", None);
    let a = host.analysis();
    let text = a.text(id).unwrap().to_string();
    let at = text.find("transpose_naive(float").unwrap() + 3;
    let r = a
        .kernel_report(id, "transpose_naive", ReportConfig::default())
        .unwrap()
        .unwrap();
    let hover = a.hover(id, at).unwrap().unwrap();
    let top = r.top_costs(3);
    assert_eq!(top.len(), 2);
    for line in &top {
        assert!(
            hover.markdown.contains(line.as_str()),
            "{line}\n{}",
            hover.markdown
        );
    }
    assert!(top[0].starts_with("45% of memory transactions · `bank-conflict` (line 16)"));
    let lenses = a.report_lenses(id).unwrap();
    assert_eq!(lenses.len(), 1);
    assert_eq!(
        lenses[0].title,
        "report · top cost 45% `bank-conflict` (line 16)"
    );
    assert_eq!(lenses[0].title, r.lens_title());
    assert!(r.markdown().contains(&top[0]));
}

/// The C type of an element of `bytes` bytes.
fn ctype(bytes: u64) -> &'static str {
    match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "float",
        8 => "double",
        16 => "float4",
        _ => unreachable!(),
    }
}

/// One row of a ground-truth CSV: (column, value) pairs.
type Row<'a> = [(&'a str, &'a str)];
/// A measured stride pattern: (pattern, op, elem_bytes, stride, base_bytes, measured).
type StrideRow = (String, String, u64, u64, u64, u64);

/// `(pattern, op, elem_bytes, stride, base_bytes, measured)` for each `stride_eE_sS[_mM]`
/// row of a ground-truth CSV.
fn stride_rows(csv: &str, measured: &dyn Fn(&Row) -> u64) -> Vec<StrideRow> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .filter_map(|l| {
            let row: Vec<(&str, &str)> = header.iter().copied().zip(l.split(',')).collect();
            let get = |k: &str| row.iter().find(|(h, _)| *h == k).unwrap().1;
            let id = get("pattern_id");
            let rest = id.strip_prefix("stride_e")?;
            let mut parts = rest.split('_');
            let e: u64 = parts.next()?.parse().ok()?;
            let s: u64 = parts.next()?.strip_prefix('s')?.parse().ok()?;
            let m: u64 = match parts.next() {
                Some(m) => m.strip_prefix('m')?.parse().ok()?,
                None => 0,
            };
            Some((
                id.to_string(),
                get("op").to_string(),
                e,
                s,
                m,
                measured(&row),
            ))
        })
        .collect()
}

/// One kernel per measured stride pattern, each with the one access the probe measured;
/// the report's figure for that access is the measured one, for every row: sectors per
/// request for global loads and stores, wavefronts for shared ones.
#[test]
fn the_reports_per_access_figures_equal_the_measured_stride_rows() {
    let col = |row: &[(&str, &str)], k: &str| -> u64 {
        row.iter()
            .find(|(h, _)| *h == k)
            .unwrap()
            .1
            .parse()
            .unwrap()
    };
    let global = stride_rows(
        include_str!("../../gpu/tests/data/coalescing_sm90.csv"),
        &|r| {
            col(r, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld")
                + col(r, "l1tex__t_sectors_pipe_lsu_mem_global_op_st")
        },
    );
    let shared = stride_rows(
        include_str!("../../gpu/tests/data/bank_conflicts_sm90.csv"),
        &|r| col(r, "wavefronts"),
    );
    assert!(
        global.len() > 400 && shared.len() > 50,
        "{} {}",
        global.len(),
        shared.len()
    );
    let mut text = String::new();
    let mut kernels = Vec::new();
    for (i, (id, op, e, s, m, want)) in global.iter().enumerate() {
        let (t, index) = (ctype(*e), format!("threadIdx.x * {s} + {}", m / e));
        let body = if op == "ld" {
            format!("{t} v = p[{index}];\n    (void)v;")
        } else {
            format!("p[{index}] = v;")
        };
        text.push_str(&format!(
            "__global__ void g{i}({t}* p, {t} v) {{\n    {body}\n}}\n"
        ));
        kernels.push((format!("g{i}"), id.clone(), op.clone(), *want, false));
    }
    for (i, (id, op, e, s, _, want)) in shared.iter().enumerate() {
        let (t, index) = (ctype(*e), format!("threadIdx.x * {s}"));
        let body = if op == "ld" {
            format!("{t} w = s[{index}];\n    out[0] = w;")
        } else {
            format!("s[{index}] = v;")
        };
        text.push_str(&format!(
            "__global__ void b{i}({t}* out, {t} v) {{\n    __shared__ {t} s[4096];\n    {body}\n}}\n"
        ));
        kernels.push((format!("b{i}"), id.clone(), op.clone(), *want, true));
    }
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let id = host.set_file("/r/probes.cu", &text);
    let a = host.analysis();
    let mut failures = Vec::new();
    for (k, pattern, op, want, is_shared) in &kernels {
        let r = a
            .kernel_report(id, k, ReportConfig::default())
            .unwrap()
            .unwrap();
        let got = if *is_shared {
            r.shared
                .iter()
                .find(|x| x.text.starts_with("s["))
                .and_then(|x| x.wavefronts)
        } else {
            r.global
                .iter()
                .find(|x| x.text.starts_with("p["))
                .and_then(|x| x.sectors)
        };
        if got.map(u64::from) != Some(*want) {
            failures.push(format!("{pattern} {op}: report {got:?}, measured {want}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        kernels.len(),
        failures.join("\n")
    );
}

/// The lenses of a 10,000-line file: one report per kernel, each without what-ifs.
#[test]
fn report_lenses_of_a_large_file() {
    let text = kernaut_test_utils::gen::generated(10_000);
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let id = host.set_file("/r/big.cu", &text);
    let a = host.analysis();
    let _ = a.diagnostics(id).unwrap();
    let t = std::time::Instant::now();
    let lenses = a.report_lenses(id).unwrap();
    let took = t.elapsed();
    println!("{} report lenses in {took:?}", lenses.len());
    assert!(!lenses.is_empty());
    let t = std::time::Instant::now();
    let r = a
        .kernel_report(id, &lenses[0].kernel, ReportConfig::default())
        .unwrap();
    println!("one report in {:?}", t.elapsed());
    assert!(r.is_some());
}

/// A kernel whose accesses are in device functions it calls: the helpers' shared read
/// and global store are in its report, under its launch and with the call's arguments,
/// at the helpers' lines, and the hover on the read and `check` give the same figure.
#[test]
fn accesses_in_called_device_functions() {
    let (host, id) = host_with("device_helpers.cu", None);
    let a = host.analysis();
    let r = a
        .kernel_report(id, "transpose_helpers", ReportConfig::default())
        .unwrap()
        .unwrap();
    expect![[r#"
        # Kernel report: `transpose_helpers` on sm_90

        Costs are modelled memory transactions (shared-memory wavefronts and 32-byte global sectors of one warp request, times the executions the loops' trip counts give), not run times. The kernel's modelled total: **69** transactions.

        ## Costs, ranked

        1. 45% of memory transactions · `bank-conflict` (line 12): 32 wavefronts per request instead of 1: 31 extra × 1 execution
           - 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in `column` as `transpose_helpers` calls it at line 25) ([pitfall-bank-conflict#P1])
        2. 41% of memory transactions · `coalescing/strided-global-access` (line 16): 32 sectors per request instead of 4: 28 extra × 1 execution
           - uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 8192 bytes apart (in `store_strided` as `transpose_helpers` calls it at line 25); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory ([pitfall-coalescing#P1])

        ## Launch and occupancy

        - line 34: `<<<grid, block>>>` (block 32×32×1): occupancy 100%

        Block 32×32×1 (from the launch at line 34), 32 registers per thread (assumed: a typical count), 4096 B static + 0 B dynamic shared memory.

        **Occupancy 100%**: 2 blocks/SM, 64 of 64 warps, limited by warps and registers.

        The register count is assumed; occupancy at other counts: 32: 100% · 64: 50% · 128: cannot launch · 255: cannot launch.

        The launch's block already reaches the best occupancy for these resources.

        ## Shared-memory accesses

        | line | access | op | bytes | runs | wavefronts | ideal | conflict | colliding lanes |
        |---|---|---|---|---|---|---|---|---|
        | 23 | `tile[threadIdx.y * TILE + threadIdx.x]` | store | 4 | 1 | 1 | 1 | 1-way |  |
        | 12 (in `column`, called at line 25) | `tile[threadIdx.x * TILE + col]` | load | 4 | 1 | 32 | 1 | 32-way | bank 0: lanes 0-31 |

        ## Global accesses

        | line | access | op | bytes | runs | sectors | ideal | bytes used per sector | lanes |
        |---|---|---|---|---|---|---|---|---|
        | 23 | `in[y * N + x]` | load | 4 | 1 | 4 | 4 | 32.0 of 32 | 32 |
        | 16 (in `store_strided`, called at line 25) | `out[row * N]` | store | 4 | 1 | 32 | 4 | 4.0 of 32 | 32 |

        No compiled facts: spills, stack and SASS need a CUDA toolkit.

        ## Notes

        - Registers: 32 per thread is an assumption, a typical count; set it with `// kernaut: registers=N` above the kernel or `registers = N` in `.kernaut.toml`; ptxas (`-Xptxas -v`) reports the real count.
    "#]].assert_eq(&r.markdown());
    let text = a.text(id).unwrap().to_string();
    let diagnostics: Vec<String> = a
        .diagnostics(id)
        .unwrap()
        .iter()
        .map(|d| {
            let line = text[..d.range.start].matches('\n').count() + 1;
            format!("{line}: {}: {}", d.rule, d.message)
        })
        .collect();
    expect![[r#"
        [
            "12: bank-conflict: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in `column` as `transpose_helpers` calls it at line 25)",
            "16: coalescing/strided-global-access: uncoalesced store to `out`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 8192 bytes apart (in `store_strided` as `transpose_helpers` calls it at line 25); map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory",
        ]
    "#]].assert_debug_eq(&diagnostics);
    // The hover on the helper's read: the same figure, under the kernel's block.
    let at = text.find("tile[threadIdx.x * TILE + col]").unwrap() + 2;
    let hover = a.hover(id, at).unwrap().unwrap();
    expect![[r#"
        **warning** `bank-conflict`: 32-way bank conflict: this load from `tile` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank (in `column` as `transpose_helpers` calls it at line 25)

        Wiki: `pitfall-bank-conflict#P1` (Column access of a `[32][32]` tile is a 32-way conflict)

        ---

        **shared load** `tile[threadIdx.x * TILE + col]` · 4 B per lane · warp 0 of a 32×32×1 block (from the launch at line 34)

        In `column` as `transpose_helpers` calls it at line 25: modelled with the kernel's block and the call's arguments.

        Byte offset: `(threadIdx.x * TILE + threadIdx.y) * 4`

        **32-way bank conflict**: 32 wavefronts per request (32 active lanes, 32 distinct words).

        ```text
        bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
        words  32  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
        bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
        ```
    "#]].assert_eq(&hover.markdown);
    let read = r.shared.iter().find(|s| s.callee.is_some()).unwrap();
    let bank = hover.bank.as_ref().unwrap().result.as_ref().unwrap();
    assert_eq!(
        (Some(bank.wavefronts), Some(bank.conflict_degree)),
        (read.wavefronts, read.conflict_degree)
    );
}

/// A device function of a quoted header: its access is in the report of the kernel that
/// calls it, named with the header's file, and its hover in the header names the
/// kernel's file.
#[test]
fn accesses_in_a_headers_device_function() {
    let header = "#pragma once\n__device__ float column(const float* tile, int col) {\n    return tile[threadIdx.x * 32 + col];\n}\n";
    let main = "#include \"helpers.cuh\"\n__global__ void k(float* out) {\n    __shared__ float tile[32 * 32];\n    tile[threadIdx.y * 32 + threadIdx.x] = out[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = column(tile, threadIdx.y);\n}\nint main() { k<<<1, dim3(32, 32)>>>(nullptr); }\n";
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(knowledge());
    let h = host.set_file("/r/helpers.cuh", header);
    let id = host.set_file("/r/main.cu", main);
    let a = host.analysis();
    let r = a
        .kernel_report(id, "k", ReportConfig::default())
        .unwrap()
        .unwrap();
    let rows: Vec<String> = r
        .shared
        .iter()
        .map(|s| {
            format!(
                "{} {:?} {:?} {:?}",
                s.text,
                s.callee
                    .as_ref()
                    .map(|c| (&c.function, &c.file_name, c.call_line)),
                s.wavefronts,
                s.conflict_degree
            )
        })
        .collect();
    expect![[r#"
        [
            "tile[threadIdx.y * 32 + threadIdx.x] None Some(1) Some(1)",
            "tile[threadIdx.x * 32 + col] Some((\"column\", Some(\"helpers.cuh\"), 6)) Some(32) Some(32)",
        ]
    "#]].assert_debug_eq(&rows);
    let at = header.find("tile[").unwrap() + 1;
    let hover = a.hover(h, at).unwrap().unwrap();
    let first: Vec<&str> = hover.markdown.lines().collect();
    expect![[r#"
        [
            "**hint** `coalescing/strided-global-access`: uncoalesced load from `tile`: each warp request touches 32 sectors of 32 bytes where its 128 bytes need 4 (8.0x the memory traffic), because neighbouring lanes are 128 bytes apart; map `threadIdx.x` to the contiguous dimension, or stage the tile through shared memory (a hint only: no kernel of this file is seen to call `column`, so what `tile` points at, the block and the arguments are assumed)",
            "",
            "Wiki: `pitfall-coalescing#P1` (`threadIdx.x` walks the strided dimension)",
            "",
            "---",
            "",
            "**shared load** `tile[threadIdx.x * 32 + col]` · 4 B per lane · warp 0 of a 32×32×1 block (from the launch at /r/main.cu:8)",
            "",
            "In `column` as `k` calls it at main.cu:6: modelled with the kernel's block and the call's arguments.",
            "",
            "Byte offset: `(threadIdx.x * 32 + threadIdx.y) * 4`",
            "",
            "**32-way bank conflict**: 32 wavefronts per request (32 active lanes, 32 distinct words).",
            "",
            "```text",
            "bank    0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15",
            "words  32  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .",
            "bank   16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31",
            "words   .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .",
            "```",
        ]
    "#]].assert_debug_eq(&first);
}
