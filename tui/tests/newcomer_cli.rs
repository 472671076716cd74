//! The subcommands as a newcomer met them (issue 15): closed pipes, units and GPU names
//! people type, "did you mean", `show` of a symbol, and the lane-variable suggestion of
//! `banks`. Each test is named after what went wrong.
use std::process::{Command, Stdio};

fn ktui() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ktui"));
    c.env_remove("KERNAUT_WIKI");
    c
}

fn run(args: &[&str]) -> (i32, String, String) {
    let o = ktui().args(args).stdin(Stdio::null()).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_reader_that_closes_the_pipe_early_ends_ktui_quietly() {
    for args in [
        &["symbol", "__half"][..],
        &["show", "pitfall-bank-conflict"],
        &["search", "bank conflict"],
        &["wiki", "check"],
    ] {
        let mut child = ktui()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before ktui writes (it is still loading the wiki), as
        // `head` does once it has its lines: every write then fails with EPIPE.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn bare_ktui_off_a_terminal_prints_a_guide_and_succeeds() {
    let (code, out, _) = run(&[]);
    assert_eq!(code, 0);
    assert!(out.contains("ktui search"), "{out}");
    assert!(out.contains("ktui occupancy"), "{out}");
}

#[test]
fn smem_takes_kilobyte_units() {
    let (_, plain, _) = run(&[
        "occupancy",
        "--threads",
        "256",
        "--regs",
        "32",
        "--smem",
        "49152",
    ]);
    for unit in ["48KB", "48K", "48KiB"] {
        let (code, out, err) = run(&[
            "occupancy",
            "--threads",
            "256",
            "--regs",
            "32",
            "--smem",
            unit,
        ]);
        assert_eq!((code, &out), (0, &plain), "{unit}: {err}");
    }
}

#[test]
fn arch_takes_gpu_names_and_shows_what_they_mapped_to() {
    for (name, sm) in [
        ("H200", "sm_90"),
        ("h100", "sm_90"),
        ("A100", "sm_80"),
        ("4090", "sm_89"),
    ] {
        let (code, out, err) = run(&[
            "occupancy",
            "--arch",
            name,
            "--threads",
            "256",
            "--regs",
            "32",
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.starts_with(sm), "{name}: {out}");
        assert!(err.contains(&format!("is {sm} (")), "{name}: {err}");
    }
}

#[test]
fn misspellings_get_did_you_mean() {
    let (code, _, err) = run(&["show", "pitfal-bank-conflict"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("did you mean `pitfall-bank-conflict`"),
        "{err}"
    );
    let (code, _, err) = run(&["symbol", "__syncthread"]);
    assert_eq!(code, 1);
    assert!(err.contains("did you mean `__syncthreads`"), "{err}");
    let (code, _, err) = run(&["serch", "bank", "conflict"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `ktui search`"), "{err}");
}

#[test]
fn show_of_a_symbol_opens_its_page() {
    let (code, out, err) = run(&["show", "__syncthreads"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("api-block-sync"), "{out}");
}

#[test]
fn banks_suggests_the_lane_variable_not_a_constant_for_tid() {
    let (code, _, err) = run(&["banks", "--index", "tid*33"]);
    assert_eq!(code, 2);
    assert!(err.contains("--index 'threadIdx.x*33'"), "{err}");
    assert!(
        !err.contains("tid=32"),
        "holding tid constant gives every lane one address: {err}"
    );
    let (_, _, err) = run(&["banks", "--index", "row*33+lane"]);
    assert!(err.contains("-D row=VALUE"), "{err}");
}
