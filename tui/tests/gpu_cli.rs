//! End to end: `ktui occupancy` and `ktui banks` run as the built binary, their text
//! and JSON output and exit codes asserted.

use std::process::Command;

use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ktui(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_ktui"))
        .args(args)
        .output()
        .expect("ktui runs");
    Run {
        code: out.status.code().expect("ktui exits with a code"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
    }
}

fn ktui_json(args: &[&str]) -> (i32, Value) {
    let run = ktui(args);
    let value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout `{}` stderr `{}`", run.stdout, run.stderr));
    (run.code, value)
}

#[test]
fn occupancy_text() {
    let run = ktui(&[
        "occupancy",
        "--arch",
        "sm_90",
        "--threads",
        "256",
        "--regs",
        "64",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
sm_90: 256 threads, 64 registers, 0 B static + 0 B dynamic shared memory
blocks per SM:  4
active warps:   32 of 64
occupancy:      50.0%
limiter:        registers
blocks allowed: warps 8, registers 4, shared memory 32 (capped from 228), barriers 32 (capped from 64); at most 32 per SM
allocated:      2048 registers per warp, 1024 B shared memory per block of 233472 B per SM
best block:     this one; no block size gives more with these registers and shared memory
"
    );
}

// Issue 28: "best block: 1024 threads (50 %)" when 256 threads already gave 50 %; the
// suggestion is the smallest block that reaches the best, and only when it helps.
#[test]
fn occupancy_suggests_the_smallest_better_block() {
    let run = ktui(&["occupancy", "--threads", "1024", "--regs", "40"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let best = run.stdout.lines().last().unwrap();
    assert_eq!(
        best, "best block:     64 threads (75.0%), the smallest block that reaches it",
        "{}",
        run.stdout
    );
}

// Issue 28: `--threads 1024 --regs 65` printed "0 blocks, 0 %" and exited 0.
#[test]
fn occupancy_that_cannot_launch_says_so_and_exits_1() {
    let run = ktui(&["occupancy", "--threads", "1024", "--regs", "65"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "ktui: no occupancy on sm_90: too many resources requested for launch: 1024 threads × 65 registers = 66,560 registers per block (73,728 as allocated) > 65,536\n"
    );
}

#[test]
fn occupancy_json_keys() {
    let (code, v) = ktui_json(&["occupancy", "--threads", "128", "--regs", "33", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["blocks_per_sm"], 12);
    assert_eq!(v["active_warps"], 48);
    assert_eq!(v["occupancy"], 0.75);
    assert_eq!(v["limiter"], "registers");
    assert_eq!(v["arch"], "sm_90");
}

#[test]
fn occupancy_json_reproduces_measured_rows() {
    // Rows of occupancy_sm90_runtime.csv and occupancy_sm90_carveout.csv: the 1 KiB
    // reservation (25, not 28), the carveout step (50% of 228 KiB rounds up to 132 KiB),
    // and carveout 0 with no shared memory (one 8 KiB step).
    let cases: [(&[&str], u64, &str); 4] = [
        (
            &["--threads", "32", "--regs", "12", "--dyn-smem", "8192"],
            25,
            "shared_memory",
        ),
        (
            &[
                "--threads",
                "64",
                "--regs",
                "32",
                "--dyn-smem",
                "8192",
                "--carveout",
                "50",
            ],
            14,
            "shared_memory",
        ),
        (
            &["--threads", "64", "--regs", "32", "--carveout", "0"],
            8,
            "shared_memory",
        ),
        (&["--threads", "1024", "--regs", "72"], 0, "registers"),
    ];
    for (args, blocks, limiter) in cases {
        let mut all = vec!["occupancy", "--json"];
        all.extend_from_slice(args);
        let (code, v) = ktui_json(&all);
        // The runtime's 0 blocks is a block that cannot launch: an error, exit 1.
        assert_eq!(code, i32::from(blocks == 0), "{args:?}");
        assert_eq!(v["blocks_per_sm"], blocks, "{args:?}");
        assert_eq!(v["limiter"], limiter, "{args:?}");
    }
    let (_, v) = ktui_json(&[
        "occupancy",
        "--arch",
        "8.6",
        "--threads",
        "512",
        "--regs",
        "32",
        "--json",
    ]);
    assert_eq!(
        (v["blocks_per_sm"].as_u64(), v["limiter"].as_str()),
        (Some(3), Some("warps"))
    );
}

#[test]
fn occupancy_invalid_configuration_exits_1_with_the_broken_limit() {
    let run = ktui(&["occupancy", "--threads", "1056", "--regs", "32"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "ktui: no occupancy on sm_90: 1056 threads per block is over the limit of 1024\n"
    );

    let (code, v) = ktui_json(&[
        "occupancy",
        "--threads",
        "256",
        "--regs",
        "128",
        "--launch-bounds",
        "128",
        "--json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["blocks_per_sm"], 0);
    assert_eq!(
        v["error"],
        "256 threads per block is over the kernel's `__launch_bounds__` of 128; the launch would fail"
    );

    let (code, v) = ktui_json(&[
        "occupancy",
        "--threads",
        "128",
        "--regs",
        "32",
        "--smem",
        "1024",
        "--dyn-smem",
        "232448",
        "--json",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["limiter"], "shared_memory");

    for args in [
        ["--threads", "0", "--regs", "32"],
        ["--threads", "64", "--regs", "256"],
    ] {
        let mut all = vec!["occupancy"];
        all.extend_from_slice(&args);
        assert_eq!(ktui(&all).code, 1, "{args:?}");
    }
}

#[test]
fn occupancy_usage_errors_exit_2() {
    let run = ktui(&[
        "occupancy",
        "--arch",
        "sm_91",
        "--threads",
        "128",
        "--regs",
        "32",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("compute capability 9.1 is not known"),
        "{}",
        run.stderr
    );
    assert_eq!(ktui(&["occupancy", "--threads", "128"]).code, 2);
    assert_eq!(
        ktui(&["occupancy", "--threads", "many", "--regs", "32"]).code,
        2
    );
}

#[test]
fn occupancy_curve_table() {
    let run = ktui(&["occupancy", "--regs", "64", "--curve", "threads"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 33);
    assert_eq!(
        lines[0],
        "   threads  blocks/SM  active_warps  occupancy  limiter"
    );
    assert_eq!(
        lines[1],
        "        32         32            32      50.0%  registers,blocks"
    );
    assert_eq!(
        lines[8],
        "       256          4            32      50.0%  registers"
    );
    assert_eq!(
        lines[32],
        "      1024          1            32      50.0%  registers"
    );

    let (code, v) = ktui_json(&["occupancy", "--threads", "256", "--curve", "regs", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["curve"], "regs");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 255);
    assert_eq!(
        (
            points[31]["x"].as_u64(),
            points[31]["blocks_per_sm"].as_u64()
        ),
        (Some(32), Some(8))
    );
    assert_eq!(
        (
            points[32]["x"].as_u64(),
            points[32]["blocks_per_sm"].as_u64()
        ),
        (Some(33), Some(6))
    );

    let (_, v) = ktui_json(&[
        "occupancy",
        "--threads",
        "128",
        "--regs",
        "32",
        "--curve",
        "smem",
        "--json",
    ]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.first().unwrap()["x"], 0);
    assert_eq!(points.last().unwrap()["x"], 232448);
    assert_eq!(points.last().unwrap()["blocks_per_sm"], 1);
}

#[test]
fn banks_text_for_a_padded_column() {
    let run = ktui(&["banks", "--elem-bytes", "4", "--index", "lane*33"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
sm_90: 4-byte load, 32 active lanes, block 32x1x1, warp 0
wavefronts:      1
bank conflicts:  0 (as Nsight Compute counts them)
conflict degree: 1 (conflict-free)
cycles:          1
resolved:        whole warp
distinct 32-bit words per bank:
  bank   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15
  words  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
  bank  16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
  words  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1
"
    );
}

#[test]
fn banks_json_for_an_unpadded_column() {
    let (code, v) = ktui_json(&["banks", "--index", "lane*32", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["wavefronts"], 32);
    assert_eq!(v["conflict_degree"], 32);
    assert_eq!(v["bank_conflicts"], 31);
    let banks: Vec<u64> = v["banks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .collect();
    assert_eq!(banks.len(), 32);
    assert_eq!(banks[0], 32);
    assert!(banks[1..].iter().all(|&b| b == 0));
}

#[test]
fn banks_block_shape_active_lanes_store_and_width() {
    // A 32x8 block: warp 0 is threadIdx.y == 0, so `threadIdx.y*32 + threadIdx.x` is
    // the lane.
    let (_, v) = ktui_json(&[
        "banks",
        "--block",
        "32x8",
        "--index",
        "threadIdx.y*32 + threadIdx.x",
        "--json",
    ]);
    assert_eq!(
        (v["wavefronts"].as_u64(), v["conflict_degree"].as_u64()),
        (Some(1), Some(1))
    );
    // An 8x4 block: warp 0 spans four rows of a [4][32] float tile; each row starts in
    // bank 0, so banks 0-7 serve four words each.
    let (_, v) = ktui_json(&[
        "banks",
        "--block",
        "8x4",
        "--index",
        "threadIdx.y*32 + threadIdx.x",
        "--json",
    ]);
    assert_eq!(
        (v["wavefronts"].as_u64(), v["conflict_degree"].as_u64()),
        (Some(4), Some(4))
    );
    // Measured: 16-byte loads of `lane&7` cost 4 wavefronts (one per quarter-warp)...
    let (_, v) = ktui_json(&["banks", "--elem-bytes", "16", "--index", "lane&7", "--json"]);
    assert_eq!(
        (v["wavefronts"].as_u64(), v["bank_conflicts"].as_u64()),
        (Some(4), Some(0))
    );
    // ...one 8-byte address loaded by all lanes is pair-packed, stored it is not...
    let (_, v) = ktui_json(&["banks", "--elem-bytes", "8", "--index", "0", "--json"]);
    assert_eq!(
        (v["wavefronts"].as_u64(), v["pair_packed"].as_bool()),
        (Some(1), Some(true))
    );
    let (_, v) = ktui_json(&[
        "banks",
        "--elem-bytes",
        "8",
        "--index",
        "0",
        "--store",
        "--json",
    ]);
    assert_eq!(
        (v["wavefronts"].as_u64(), v["pair_packed"].as_bool()),
        (Some(2), Some(false))
    );
    // ...and 16 active lanes doing LDS.64 take 1 wavefront but 2 cycles.
    let (_, v) = ktui_json(&[
        "banks",
        "--elem-bytes",
        "8",
        "--index",
        "lane",
        "--active",
        "0-15",
        "--json",
    ]);
    assert_eq!(
        (
            v["wavefronts"].as_u64(),
            v["cycles"].as_u64(),
            v["active_lanes"].as_u64()
        ),
        (Some(1), Some(2), Some(16))
    );
    // Named constants.
    let (_, v) = ktui_json(&[
        "banks",
        "--index",
        "lane*(TILE+PAD)",
        "-D",
        "TILE=32",
        "-D",
        "PAD=1",
        "--json",
    ]);
    assert_eq!(v["wavefronts"], 1);
}

#[test]
fn banks_offsets_replay_measured_rows() {
    // Rows of bank_conflicts_sm90.csv: (op, elem_bytes, offsets) -> measured wavefronts
    // and bank conflicts.
    let rows: [(&str, &str, &str, u64, u64); 3] = [
        (
            "ld",
            "16",
            "240;80;48;432;400;96;128;224;352;144;384;288;192;304;320;32;64;16;496;480;336;176;368;112;448;272;416;160;0;464;256;208",
            9,
            5,
        ),
        (
            "ld",
            "16",
            "0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;256;272;288;304;320;336;352;368;384;400;416;432;448;464;480;496",
            4,
            0,
        ),
        (
            "ld",
            "8",
            "0,8,16,24,32,40,48,56,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,64,72,80,88,96,104,112,120",
            2,
            0,
        ),
    ];
    for (op, bytes, offsets, wavefronts, conflicts) in rows {
        let flag = format!("--offsets={offsets}");
        let mut args = vec!["banks", "--elem-bytes", bytes, flag.as_str(), "--json"];
        if op == "st" {
            args.push("--store");
        }
        let (code, v) = ktui_json(&args);
        assert_eq!(code, 0);
        assert_eq!(
            (v["wavefronts"].as_u64(), v["bank_conflicts"].as_u64()),
            (Some(wavefronts), Some(conflicts)),
            "{offsets}"
        );
    }
    // A list that starts with an inactive lane, given as a separate argument.
    let mut list = vec!["-1".to_string()];
    list.extend((1..32).map(|l| (l * 4).to_string()));
    let list = list.join(",");
    let (code, v) = ktui_json(&["banks", "--offsets", list.as_str(), "--json"]);
    assert_eq!(
        (code, v["active_lanes"].as_u64(), v["wavefronts"].as_u64()),
        (0, Some(31), Some(1))
    );
    // Four warps' offsets (the x4 rows) add up as the profiler's counters do.
    let four: Vec<String> = (0..128)
        .map(|t| ((t / 32) * 8192 + (t % 32) * 128).to_string())
        .collect();
    let flag = format!("--offsets={}", four.join(","));
    let (_, v) = ktui_json(&["banks", flag.as_str(), "--json"]);
    assert_eq!(
        (
            v["wavefronts"].as_u64(),
            v["bank_conflicts"].as_u64(),
            v["warps"].as_u64()
        ),
        (Some(128), Some(124), Some(4))
    );
}

#[test]
fn banks_errors() {
    let run = ktui(&["banks", "--offsets=0,4,8"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "ktui: error: reading --offsets: expected 32 offsets per warp, got 3\n"
    );
    let run = ktui(&["banks", "--index", "lane *"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "ktui: error: reading --index `lane *`: column 7: expected a number, a name or `(`, found the end\n"
    );
    assert_eq!(
        ktui(&["banks", "--index", "lane", "--elem-bytes", "3"]).code,
        2
    );
    assert_eq!(
        ktui(&["banks", "--index", "lane", "--active", "5-40"]).code,
        2
    );
    assert_eq!(ktui(&["banks", "--index", "lane - 1"]).code, 2);
    assert_eq!(ktui(&["banks"]).code, 2);
    let misaligned: Vec<String> = (0..32).map(|l| (l * 8 + 4).to_string()).collect();
    let flag = format!("--offsets={}", misaligned.join(","));
    let run = ktui(&["banks", "--elem-bytes", "8", flag.as_str()]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "ktui: no bank analysis: lane 0: address 4 is not aligned to the 8-byte access width\n"
    );
}

/// The rows of one of `kernaut-gpu`'s ground-truth CSV files (no quoted fields).
fn csv_rows(text: &str) -> Vec<Vec<(String, String)>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .map(|h| h.to_string())
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

fn col<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    &row.iter().find(|(k, _)| k == name).unwrap().1
}

#[test]
fn banks_replays_every_measured_pattern() {
    let rows = csv_rows(include_str!("../../gpu/tests/data/bank_conflicts_sm90.csv"));
    assert_eq!(rows.len(), 266);
    for row in &rows {
        let offsets = format!("--offsets={}", col(row, "byte_offsets"));
        let mut args = vec![
            "banks",
            "--elem-bytes",
            col(row, "elem_bytes"),
            offsets.as_str(),
            "--json",
        ];
        if col(row, "op") == "st" {
            args.push("--store");
        }
        let (code, v) = ktui_json(&args);
        assert_eq!(code, 0);
        let got = (
            v["wavefronts"].as_u64().unwrap(),
            v["bank_conflicts"].as_u64().unwrap(),
        );
        let want: (u64, u64) = (
            col(row, "wavefronts").parse().unwrap(),
            col(row, "bank_conflicts").parse().unwrap(),
        );
        assert_eq!(got, want, "{} {}", col(row, "pattern_id"), col(row, "op"));
    }
}

#[test]
fn occupancy_replays_sampled_measured_rows() {
    let files = [
        (
            "sm_90",
            include_str!("../../gpu/tests/data/occupancy_sm90_runtime.csv"),
        ),
        (
            "sm_90",
            include_str!("../../gpu/tests/data/occupancy_sm90_carveout.csv"),
        ),
        (
            "",
            include_str!("../../gpu/tests/data/occupancy_multiarch.csv"),
        ),
    ];
    let mut checked = 0;
    for (arch, text) in files {
        // Every 97th row: a spread over kernels, block sizes and shared-memory sizes.
        for row in csv_rows(text).iter().step_by(97) {
            let arch = if arch.is_empty() {
                col(row, "cc")
            } else {
                arch
            };
            let mut args = vec![
                "occupancy",
                "--json",
                "--arch",
                arch,
                "--threads",
                col(row, "threads_per_block"),
                "--regs",
                col(row, "num_regs"),
                "--smem",
                col(row, "static_smem_bytes"),
                "--dyn-smem",
                col(row, "dynamic_smem_bytes"),
                "--max-dyn-smem",
                col(row, "max_dyn_smem_attr"),
            ];
            if let Some((_, c)) = row.iter().find(|(k, _)| k == "carveout") {
                args.extend(["--carveout", c.as_str()]);
            }
            let (code, v) = ktui_json(&args);
            let want: u64 = col(row, "blocks_per_sm").parse().unwrap();
            assert_eq!(v["blocks_per_sm"].as_u64(), Some(want), "{args:?}");
            // A configuration the runtime answers 0 for because its shared memory is over
            // the opt-in maximum is an error here (exit 1), with the same 0 in the JSON.
            assert_eq!(
                code,
                if v.get("error").is_some() { 1 } else { 0 },
                "{args:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 357 + 38 + 238);
}

#[test]
fn coalescing_text_for_every_other_float() {
    let run = ktui(&["coalescing", "--elem-bytes", "4", "--index", "lane*2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "sm_90: 4-byte load, 32 active lanes, block 32x1x1, warp 0\n\
         requests:        1\n\
         sectors:         8 of 32 bytes (L2 sectors on a cold L1: 8)\n\
         ideal:           4 for its 128 distinct bytes (2.0x)\n\
         bytes used:      16.0 per sector fetched (50% of the traffic)\n\
         sectors touched: 0, 1, 2, 3, 4, 5, 6, 7 (from the base)\n"
    );
}

#[test]
fn coalescing_replays_every_measured_row() {
    let rows = csv_rows(include_str!("../../gpu/tests/data/coalescing_sm90.csv"));
    assert_eq!(rows.len(), 588);
    for row in &rows {
        let offsets = format!("--offsets={}", col(row, "byte_offsets"));
        let mut args = vec![
            "coalescing",
            "--elem-bytes",
            col(row, "elem_bytes"),
            offsets.as_str(),
            "--json",
        ];
        let dir = col(row, "op");
        if dir == "st" {
            args.push("--store");
        }
        let (code, v) = ktui_json(&args);
        assert_eq!(code, 0);
        let got = (
            v["requests"].as_u64().unwrap(),
            v["sectors"].as_u64().unwrap(),
            v["l2_sectors"].as_u64().unwrap(),
        );
        let (req, sec, l2) = if dir == "ld" {
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld",
                "lts__t_sectors_srcunit_tex_op_read",
            )
        } else {
            (
                "l1tex__t_requests_pipe_lsu_mem_global_op_st",
                "l1tex__t_sectors_pipe_lsu_mem_global_op_st",
                "lts__t_sectors_srcunit_tex_op_write",
            )
        };
        let want: (u64, u64, u64) = (
            col(row, req).parse().unwrap(),
            col(row, sec).parse().unwrap(),
            col(row, l2).parse().unwrap(),
        );
        assert_eq!(got, want, "{} {dir}", col(row, "pattern_id"));
    }
}
