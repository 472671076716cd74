//! `arch/requires-newer-sm` against a file's target set: the targets come from the
//! front end's setting, a `.kernaut.toml` or the build ([`FileBuild`]), and each call is
//! reported for a target that surely compiles it. A helper no kernel reaches is compiled
//! into nothing the file shows (silent, in a header or a `.cu`); an assumed target gives
//! hints that say so.

use std::sync::Arc;

use expect_test::{expect, Expect};
use kernaut_ide::config::{parse_config, FileBuild, TargetSet};
use kernaut_ide::gpu::{Arch, Target};
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Change, Knowledge};

const RULE: &str = "arch/requires-newer-sm";

const BULK: &str = r#"asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 128, [%2];" :: "r"(0), "l"(src), "r"(0) : "memory");"#;

const HELPER: &str = "__device__ void load_tile(const void* src) {\n    @\n}\n";

const KERNEL: &str = "__global__ void k(const float* src) {\n    @\n}\n";

const CALLED: &str = "__device__ void load_tile(const void* src) {\n    @\n}\n__global__ void k(const float* src) { load_tile(src); }\n";

const WGMMA: &str = "__global__ void k() {\n#ifdef MYLIB_HOPPER\n    asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n#endif\n    asm volatile(\"fence.proxy.async.shared::cta;\");\n}\n";

struct Setup<'a> {
    config: AnalysisConfig,
    toml: Option<&'a str>,
    build: Option<FileBuild>,
}

fn user(arch: &str) -> Setup<'static> {
    Setup {
        config: AnalysisConfig {
            arch: Arch::parse(arch).unwrap(),
            arch_configured: true,
            arch_origin: "--arch".into(),
            ..AnalysisConfig::default()
        },
        toml: None,
        build: None,
    }
}

fn targets(names: &[&str], origin: &str) -> Option<TargetSet> {
    TargetSet::named(
        names.iter().map(|t| Target::parse(t).unwrap()).collect(),
        origin,
    )
}

/// Severity, callee and message of each finding of the rule in `path`.
fn check(setup: Setup, path: &str, text: &str, expect: Expect) {
    let text = text.replace('@', BULK);
    let mut host = AnalysisHost::new(setup.config);
    host.set_knowledge(Arc::new(
        Knowledge::load(&WikiConfig::builtin()).expect("the built-in wiki loads"),
    ));
    let id = host.file_id(path);
    let mut change = Change::new();
    change.set_file(id, text.clone());
    if let Some(toml) = setup.toml {
        change.set_dir_config("/p", Some(parse_config(toml).unwrap()));
    }
    change.set_build(id, setup.build);
    host.apply_change(change);
    let got: Vec<String> = host
        .analysis()
        .diagnostics(id)
        .unwrap()
        .into_iter()
        .filter(|d| d.rule == RULE)
        .map(|d| format!("{}: {}", d.severity.as_str(), d.message))
        .collect();
    let shown = if got.is_empty() {
        "(none)\n".to_string()
    } else {
        got.join("\n") + "\n"
    };
    expect.assert_eq(&shown);
}

#[test]
fn helpers_no_kernel_reaches_are_silent_in_headers_and_sources() {
    check(
        user("sm_80"),
        "/p/tile.cuh",
        HELPER,
        expect![[r#"
            (none)
        "#]],
    );
    check(
        user("sm_80"),
        "/p/tile.cu",
        HELPER,
        expect![[r#"
            (none)
        "#]],
    );
}

#[test]
fn kernels_and_the_helpers_they_reach_are_errors() {
    check(
        user("sm_80"),
        "/p/tile.cuh",
        KERNEL,
        expect![[r#"
        error: `cp.async.bulk` needs sm_90, but the target is sm_80 (from --arch): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only
    "#]],
    );
    check(
        user("sm_80"),
        "/p/tile.cu",
        CALLED,
        expect![[r#"
        error: `cp.async.bulk` needs sm_90, but the target is sm_80 (from --arch): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only
    "#]],
    );
}

#[test]
fn an_assumed_target_gives_hints_that_say_so() {
    let setup = Setup {
        config: AnalysisConfig::default(),
        toml: None,
        build: None,
    };
    check(
        setup,
        "/p/tile.cu",
        &WGMMA
            .replace("#ifdef MYLIB_HOPPER\n", "")
            .replace("#endif\n", ""),
        expect![[r#"
            hint: `wgmma.fence` needs sm_90a, but the target is sm_90 (assumed): the call does not compile there; guard it with `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)` (`__CUDA_ARCH__ >= 900` is also true where sm_90a's arch-specific instructions are missing; later `a`/`f` targets that keep it are named by `__CUDA_ARCH_SPECIFIC__`/`__CUDA_ARCH_FAMILY_SPECIFIC__`), or build for sm_90a only (assuming sm_90: no setting or build file names the targets; set `arch` in .kernaut.toml, or keep CMakeLists.txt, compile_commands.json, setup.py or a Makefile where kernaut can read them)
        "#]],
    );
}

#[test]
fn every_target_of_the_build_is_checked() {
    let build = FileBuild {
        targets: targets(&["sm_80", "sm_90a"], "/p/CMakeLists.txt:3"),
        ..FileBuild::default()
    };
    let setup = Setup {
        config: AnalysisConfig::default(),
        toml: None,
        build: Some(build),
    };
    check(
        setup,
        "/p/k.cu",
        WGMMA,
        expect![[r#"
        error: `fence.proxy.async` needs sm_90, but this file is also built for sm_80 (from /p/CMakeLists.txt:3): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only
    "#]],
    );
}

#[test]
fn build_macros_make_guards_known_per_target() {
    // The build compiles the file twice: for sm_80, and for sm_90a with -DMYLIB_HOPPER.
    let hopper = vec![("MYLIB_HOPPER".to_string(), "1".to_string())];
    let per_target = FileBuild {
        targets: targets(&["sm_80", "sm_90a"], "/p/compile_commands.json"),
        target_defines: vec![(Target::parse("sm_90a").unwrap(), hopper.clone())],
        ..FileBuild::default()
    };
    let only_90a = Setup {
        config: AnalysisConfig::default(),
        toml: None,
        build: Some(per_target),
    };
    check(
        only_90a,
        "/p/k.cu",
        WGMMA,
        expect![[r#"
        error: `fence.proxy.async` needs sm_90, but this file is also built for sm_80 (from /p/compile_commands.json): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only
    "#]],
    );
    // The same macro for every target: sm_80 compiles the wgmma too.
    let everywhere = FileBuild {
        targets: targets(&["sm_80", "sm_90a"], "/p/compile_commands.json"),
        defines: hopper,
        ..FileBuild::default()
    };
    let setup = Setup {
        config: AnalysisConfig::default(),
        toml: None,
        build: Some(everywhere),
    };
    check(
        setup,
        "/p/k.cu",
        WGMMA,
        expect![[r#"
            error: `wgmma.fence` needs sm_90a, but this file is also built for sm_80 (from /p/compile_commands.json): the call does not compile there; guard it with `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)` (`__CUDA_ARCH__ >= 900` is also true where sm_90a's arch-specific instructions are missing; later `a`/`f` targets that keep it are named by `__CUDA_ARCH_SPECIFIC__`/`__CUDA_ARCH_FAMILY_SPECIFIC__`), or build for sm_90a only
            error: `fence.proxy.async` needs sm_90, but this file is also built for sm_80 (from /p/compile_commands.json): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only
        "#]],
    );
}

#[test]
fn the_setting_wins_over_kernaut_toml_which_wins_over_the_build() {
    let build = || FileBuild {
        targets: targets(&["sm_90a"], "/p/CMakeLists.txt:3"),
        ..FileBuild::default()
    };
    let toml = Setup {
        config: AnalysisConfig::default(),
        toml: Some("# targets\narch = [\"A100\", \"sm_90a\"]\n"),
        build: Some(build()),
    };
    check(
        toml,
        "/p/k.cu",
        WGMMA,
        expect![[r#"
        error: `fence.proxy.async` needs sm_90, but this file is also built for sm_80 (from /p/.kernaut.toml:2): the call does not compile there; guard it with `#if __CUDA_ARCH__ >= 900` (`NV_IF_TARGET(NV_PROVIDES_SM_90, (...))`), or build for sm_90 only
    "#]],
    );
    let mut flag = user("sm_90a");
    flag.toml = Some("arch = \"sm_80\"\n");
    flag.build = Some(build());
    check(
        flag,
        "/p/k.cu",
        WGMMA,
        expect![[r#"
            (none)
        "#]],
    );
}
