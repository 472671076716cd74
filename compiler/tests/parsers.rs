//! The parsers on output captured from NVIDIA's toolkit (nvcc 13.5 from the
//! `nvidia-cuda-nvcc` wheel; see `tests/data/README.md`). These run everywhere.

use std::fmt::Write;
use std::path::Path;

use expect_test::{expect, Expect};
use kernaut_compiler::{
    parse_cuobjdump_resource_usage, parse_cuobjdump_sass, parse_nvcc_messages,
    parse_ptxas_resources, ToolkitVersion,
};

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The one helper that calls the ptxas parser: a line per kernel, device function
/// and module.
fn check_resources(file: &str, expect: Expect) {
    let report = parse_ptxas_resources(&data(file));
    let mut out = String::new();
    for k in &report.kernels {
        let banks: Vec<String> = k
            .constant_banks
            .iter()
            .map(|b| format!("c{}={}", b.bank, b.bytes))
            .collect();
        writeln!(
            out,
            "{} {} | {} | regs={} bar={:?} spill={}/{} stack={} cumul={:?} smem={} cmem={} [{}]",
            k.arch,
            k.name,
            k.base_name,
            k.registers,
            k.barriers,
            k.spill_store_bytes,
            k.spill_load_bytes,
            k.stack_frame_bytes,
            k.cumulative_stack_bytes,
            k.static_shared_bytes,
            k.constant_bytes,
            banks.join(" ")
        )
        .unwrap();
    }
    for d in &report.device_functions {
        writeln!(
            out,
            "device {} {} stack={} spill={}/{}",
            d.arch, d.name, d.stack_frame_bytes, d.spill_store_bytes, d.spill_load_bytes
        )
        .unwrap();
    }
    for m in &report.modules {
        let banks: Vec<String> = m
            .constant_banks
            .iter()
            .map(|b| format!("c{}={}", b.bank, b.bytes))
            .collect();
        writeln!(
            out,
            "module {} gmem={} [{}]",
            m.arch,
            m.global_bytes,
            banks.join(" ")
        )
        .unwrap();
    }
    expect.assert_eq(&out);
}

#[test]
fn resources_of_plain_kernels_and_template_instantiations() {
    check_resources(
        "ptxas-plain-sm80.txt",
        expect![[r#"
            sm_80 ops::scale(ops::Params, float*) | ops::scale | regs=8 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=368 [c0=368]
            sm_80 void transpose<16, double>(double*, double const*, int) | transpose | regs=12 bar=Some(1) spill=0/0 stack=0 cumul=None smem=2176 cmem=372 [c0=372]
            sm_80 void transpose<32, float>(float*, float const*, int) | transpose | regs=12 bar=Some(1) spill=0/0 stack=0 cumul=None smem=4224 cmem=372 [c0=372]
            sm_80 saxpy(float, float const*, float*, int) | saxpy | regs=10 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=380 [c0=380]
            module sm_80 gmem=0 [c3=256]
        "#]],
    );
}

#[test]
fn resources_of_a_spilling_kernel_and_a_noinline_helper() {
    check_resources(
        "ptxas-spill-sm80.txt",
        expect![[r#"
            sm_80 calls_helper(float*, int) | calls_helper | regs=32 bar=Some(0) spill=0/0 stack=128 cumul=Some(128) smem=0 cmem=364 [c0=364]
            sm_80 spills(float*, float const*, int) | spills | regs=32 bar=Some(0) spill=216/284 stack=384 cumul=Some(384) smem=0 cmem=372 [c0=372]
            device sm_80 helper(float*, int) stack=0 spill=0/0
            module sm_80 gmem=0 []
        "#]],
    );
}

#[test]
fn resources_of_two_architectures_from_gencode() {
    check_resources(
        "ptxas-async-sm80-sm90.txt",
        expect![[r#"
            sm_80 copy4(float const*, float*) | copy4 | regs=12 bar=Some(1) spill=0/0 stack=0 cumul=None smem=512 cmem=368 [c0=368]
            sm_80 copy16(float4 const*, float4*) | copy16 | regs=14 bar=Some(1) spill=0/0 stack=0 cumul=None smem=2048 cmem=368 [c0=368]
            sm_90 copy4(float const*, float*) | copy4 | regs=14 bar=Some(1) spill=0/0 stack=0 cumul=None smem=512 cmem=0 []
            sm_90 copy16(float4 const*, float4*) | copy16 | regs=18 bar=Some(1) spill=0/0 stack=0 cumul=None smem=2048 cmem=0 []
            module sm_80 gmem=0 []
            module sm_90 gmem=0 []
        "#]],
    );
}

#[test]
fn resources_from_a_c_compile_on_sm90_without_cmem0() {
    check_resources(
        "ptxas-plain-sm90-c.txt",
        expect![[r#"
            sm_90 ops::scale(ops::Params, float*) | ops::scale | regs=8 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=0 []
            sm_90 void transpose<16, double>(double*, double const*, int) | transpose | regs=14 bar=Some(1) spill=0/0 stack=0 cumul=None smem=2176 cmem=0 []
            sm_90 void transpose<32, float>(float*, float const*, int) | transpose | regs=14 bar=Some(1) spill=0/0 stack=0 cumul=None smem=4224 cmem=0 []
            sm_90 saxpy(float, float const*, float*, int) | saxpy | regs=12 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=0 []
            module sm_90 gmem=0 []
        "#]],
    );
}

#[test]
fn resources_next_to_a_front_end_warning() {
    check_resources(
        "nvcc-warning-and-ptxas.txt",
        expect![[r#"
            sm_80 warns(float*) | warns | regs=8 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=360 [c0=360]
            module sm_80 gmem=0 []
        "#]],
    );
}

#[test]
fn resources_under_rdc_before_device_linking() {
    check_resources(
        "ptxas-spill-rdc-sm80.txt",
        expect![[r#"
            sm_80 calls_helper(float*, int) | calls_helper | regs=24 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=364 [c0=364]
            sm_80 spills(float*, float const*, int) | spills | regs=32 bar=Some(0) spill=212/280 stack=384 cumul=None smem=0 cmem=372 [c0=372]
            device sm_80 helper(float*, int)$1 stack=136 spill=0/0
            device sm_80 helper(float*, int) stack=136 spill=0/0
            module sm_80 gmem=0 []
        "#]],
    );
}

#[test]
fn resources_of_anonymous_namespace_extern_c_and_lambda_kernels() {
    check_resources(
        "ptxas-anon-extern-c-lambda-sm80.txt",
        expect![[r#"
            sm_80 (anonymous namespace)::hidden(int*) | hidden | regs=8 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=360 [c0=360]
            sm_80 void apply<launch(float*, int*)::{lambda(float)#1}>(launch(float*, int*)::{lambda(float)#1}, float*) | apply | regs=8 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=368 [c0=368]
            sm_80 c_kernel | c_kernel | regs=8 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=360 [c0=360]
            module sm_80 gmem=1028 [c4=16]
        "#]],
    );
}

#[test]
fn resources_from_ptxas_12_9_with_its_warnings() {
    check_resources(
        "ptxas-12.9-spill-sm75-warn-on-spills.txt",
        expect![[r#"
            sm_75 calls_helper(float*, int) | calls_helper | regs=38 bar=Some(0) spill=0/0 stack=128 cumul=Some(128) smem=0 cmem=364 [c0=364]
            sm_75 spills(float*, float const*, int) | spills | regs=50 bar=Some(0) spill=0/0 stack=0 cumul=None smem=0 cmem=372 [c0=372]
            device sm_75 helper(float*, int) stack=0 spill=0/0
            module sm_75 gmem=0 []
        "#]],
    );
    check_messages(
        "ptxas-12.9-spill-sm75-warn-on-spills.txt",
        expect![[r#"
            Warning [ptxas] -:-:- None: Value of threads per SM for entry spills(float*, float const*, int) is out of range. .minnctapersm will be ignored
            Warning [ptxas] -:-:- None: Local memory used for function 'calls_helper(float*, int)', size of stack frame: 128 bytes
        "#]],
    );
}

#[test]
fn resources_of_nothing() {
    check_resources("nvcc-errors.txt", expect![[r#""#]]);
}

/// The one helper that calls the message parser.
fn check_messages(file: &str, expect: Expect) {
    let mut out = String::new();
    for m in parse_nvcc_messages(&data(file)) {
        writeln!(
            out,
            "{:?} [{}] {}:{}:{} {:?}: {}",
            m.severity,
            m.tool,
            m.file
                .as_deref()
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| "-".into()),
            m.line.map(|l| l.to_string()).unwrap_or_else(|| "-".into()),
            m.column
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into()),
            m.code,
            m.message.replace('\n', " | ")
        )
        .unwrap();
    }
    expect.assert_eq(&out);
}

#[test]
fn front_end_errors_and_warnings_with_columns_from_the_caret() {
    check_messages(
        "nvcc-errors.txt",
        expect![[r#"
            Error [nvcc] errors.cu:3:14 None: identifier "undefined_name" is undefined
            Warning [nvcc] errors.cu:4:9 Some("177-D"): variable "unused_variable" was declared but never referenced
            Error [nvcc] errors.cu:9:1 None: expected a ";"
        "#]],
    );
}

#[test]
fn a_warning_among_ptxas_info_lines() {
    check_messages(
        "nvcc-warning-and-ptxas.txt",
        expect![[r#"
            Warning [nvcc] warn.cu:3:9 Some("177-D"): variable "never_used" was declared but never referenced
        "#]],
    );
}

#[test]
fn template_error_keeps_the_instantiation_context() {
    check_messages(
        "nvcc-template-error.txt",
        expect![[r#"
            Error [nvcc] template_error.cu:3:30 None: class "Pod" has no member "missing_member" | detected during instantiation of "void fill(T *, T) [with T=Pod]" at line 9
        "#]],
    );
}

#[test]
fn missing_include_from_the_host_preprocessor() {
    check_messages(
        "nvcc-missing-include.txt",
        expect![[r#"
            Error [host] include_missing.cu:1:10 None: does_not_exist.cuh: No such file or directory
        "#]],
    );
}

#[test]
fn ptxas_errors_on_inline_asm_have_no_source_place() {
    check_messages(
        "ptxas-error.txt",
        expect![[r#"
            Error [ptxas] -:-:- None: Arguments mismatch for instruction 'mov' (PTX line 26)
            Error [ptxas] -:-:- None: Unknown symbol '%nonexistent_reg' (PTX line 26)
            Error [ptxas] -:-:- None: Ptx assembly aborted due to errors
        "#]],
    );
}

#[test]
fn no_host_compiler() {
    check_messages(
        "nvcc-no-host-compiler.txt",
        expect![[r#"
            Error [nvcc] -:-:- None: Failed to preprocess host compiler properties.
        "#]],
    );
}

/// The one helper that calls the SASS parser.
fn check_sass(file: &str, expect: Expect) {
    let mut out = String::new();
    for k in parse_cuobjdump_sass(&data(file)) {
        let top: Vec<String> = k
            .top_opcodes(5)
            .iter()
            .map(|(op, n, pct)| format!("{op}:{n}({pct:.0}%)"))
            .collect();
        writeln!(
            out,
            "{} {} | {:?} bypass={} l1={} ldl={} stl={} insns={} lines={} | {}",
            k.arch,
            k.name,
            k.async_copy_mode(),
            k.ldgsts_bypass,
            k.ldgsts_l1,
            k.ldl,
            k.stl,
            k.instructions,
            k.text.lines().count(),
            top.join(" ")
        )
        .unwrap();
    }
    expect.assert_eq(&out);
}

#[test]
fn sass_async_copies_16_bytes_bypass_l1_and_4_bytes_do_not() {
    check_sass(
        "cuobjdump-sass-async-sm80-sm90.txt",
        expect![[r#"
            sm_80 copy4(float const*, float*) | ThroughL1 bypass=0 l1=1 ldl=0 stl=0 insns=18 lines=18 | IMAD:2(11%) S2R:2(11%) BAR:1(6%) BRA:1(6%) DEPBAR:1(6%)
            sm_80 copy16(float4 const*, float4*) | Bypass bypass=1 l1=0 ldl=0 stl=0 insns=18 lines=18 | IMAD:2(11%) S2R:2(11%) BAR:1(6%) BRA:1(6%) DEPBAR:1(6%)
            sm_90 copy4(float const*, float*) | ThroughL1 bypass=0 l1=1 ldl=0 stl=0 insns=26 lines=26 | LDS:4(15%) LDC:3(12%) LEA:3(12%) IMAD:2(8%) S2R:2(8%)
            sm_90 copy16(float4 const*, float4*) | Bypass bypass=1 l1=0 ldl=0 stl=0 insns=26 lines=26 | LDS:4(15%) LDC:3(12%) LEA:3(12%) IMAD:2(8%) S2R:2(8%)
        "#]],
    );
}

#[test]
fn sass_local_memory_traffic_of_a_spilling_kernel() {
    check_sass(
        "cuobjdump-sass-spill-sm80.txt",
        expect![[r#"
            sm_80 calls_helper(float*, int) | None bypass=0 l1=0 ldl=1 stl=8 insns=93 lines=93 | LDG:32(34%) FMUL:30(32%) STL:8(9%) MOV:5(5%) IADD3:3(3%)
            sm_80 spills(float*, float const*, int) | None bypass=0 l1=0 ldl=51 stl=52 insns=253 lines=253 | FFMA:80(32%) STL:52(21%) LDL:51(20%) LDG:40(16%) MOV:13(5%)
        "#]],
    );
}

#[test]
fn sass_text_keeps_instructions_and_drops_encodings() {
    let kernels = parse_cuobjdump_sass(&data("cuobjdump-sass-async-sm80-sm90.txt"));
    let copy16 = &kernels[1];
    expect![[r#"
        /*0000*/ MOV R1, c[0x0][0x28] ;
        /*0010*/ S2R R0, SR_TID.X ;
        /*0020*/ HFMA2.MMA R5, -RZ, RZ, 0, 9.5367431640625e-07 ;
        /*0030*/ ULDC.64 UR4, c[0x0][0x118] ;
        /*0040*/ S2R R3, SR_CTAID.X ;
        /*0050*/ SHF.L.U32 R7, R0.reuse, 0x4, RZ ;
        /*0060*/ LEA R4, R3, R0, 0x7 ;
        /*0070*/ IADD3 R0, -R0, 0x7f, RZ ;
        /*0080*/ IMAD.WIDE.U32 R2, R4, R5, c[0x0][0x160] ;
        /*0090*/ IMAD.WIDE.U32 R4, R4, R5, c[0x0][0x168] ;
        /*00a0*/ LDGSTS.E.BYPASS.128 [R7], [R2.64] ;
        /*00b0*/ LDGDEPBAR ;
        /*00c0*/ DEPBAR.LE SB0, 0x0 ;
        /*00d0*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00e0*/ LDS.128 R8, [R0.X16] ;
        /*00f0*/ STG.E.128 [R4.64], R8 ;
        /*0100*/ EXIT ;
        /*0110*/ BRA 0x110;
    "#]]
    .assert_eq(&copy16.text);
}

#[test]
fn cuobjdump_resource_usage_agrees_with_ptxas() {
    let dumped = parse_cuobjdump_resource_usage(&data("cuobjdump-resource-usage.txt"));
    let mut ptxas = parse_ptxas_resources(&data("ptxas-plain-sm80.txt")).kernels;
    ptxas.extend(parse_ptxas_resources(&data("ptxas-spill-sm80.txt")).kernels);
    ptxas.extend(parse_ptxas_resources(&data("ptxas-async-sm80-sm90.txt")).kernels);
    assert_eq!(dumped.len(), ptxas.len());
    for k in &ptxas {
        let d = dumped
            .iter()
            .find(|d| d.mangled == k.mangled && d.arch == k.arch)
            .unwrap_or_else(|| panic!("{} {} not in the dump", k.arch, k.mangled));
        assert_eq!(d.registers, k.registers, "{}", k.name);
        assert_eq!(d.stack_bytes, k.stack_frame_bytes, "{}", k.name);
    }
    let mut out = String::new();
    for d in &dumped {
        writeln!(
            out,
            "{} {} REG={} STACK={} SHARED={} LOCAL={} {:?}",
            d.arch,
            d.mangled,
            d.registers,
            d.stack_bytes,
            d.shared_bytes,
            d.local_bytes,
            d.constant_banks
        )
        .unwrap();
    }
    expect![[r#"
        sm_80 _ZN3ops5scaleENS_6ParamsEPf REG=8 STACK=0 SHARED=0 LOCAL=0 [ConstantBank { bank: 0, bytes: 368 }]
        sm_80 _Z9transposeILi16EdEvPT0_PKS0_i REG=12 STACK=0 SHARED=2176 LOCAL=0 [ConstantBank { bank: 0, bytes: 372 }]
        sm_80 _Z9transposeILi32EfEvPT0_PKS0_i REG=12 STACK=0 SHARED=4224 LOCAL=0 [ConstantBank { bank: 0, bytes: 372 }]
        sm_80 _Z5saxpyfPKfPfi REG=10 STACK=0 SHARED=0 LOCAL=0 [ConstantBank { bank: 0, bytes: 380 }]
        sm_80 _Z12calls_helperPfi REG=32 STACK=128 SHARED=0 LOCAL=0 [ConstantBank { bank: 0, bytes: 364 }]
        sm_80 _Z6spillsPfPKfi REG=32 STACK=384 SHARED=0 LOCAL=0 [ConstantBank { bank: 0, bytes: 372 }]
        sm_80 _Z5copy4PKfPf REG=12 STACK=0 SHARED=512 LOCAL=0 [ConstantBank { bank: 0, bytes: 368 }]
        sm_80 _Z6copy16PK6float4PS_ REG=14 STACK=0 SHARED=2048 LOCAL=0 [ConstantBank { bank: 0, bytes: 368 }]
        sm_90 _Z5copy4PKfPf REG=14 STACK=0 SHARED=1536 LOCAL=0 [ConstantBank { bank: 0, bytes: 544 }]
        sm_90 _Z6copy16PK6float4PS_ REG=18 STACK=0 SHARED=3072 LOCAL=0 [ConstantBank { bank: 0, bytes: 544 }]
    "#]]
    .assert_eq(&out);
}

#[test]
fn versions_of_nvcc_and_of_the_cu12_ptxas_wheel() {
    let nvcc = ToolkitVersion::parse(&data("nvcc-version-13.5.txt")).expect("nvcc version");
    assert_eq!(
        (nvcc.release.as_str(), nvcc.full.as_str()),
        ("13.5", "13.5.37")
    );
    assert_eq!(nvcc.major_minor(), Some((13, 5)));
    let ptxas = ToolkitVersion::parse(&data("ptxas-version-12.9.txt")).expect("ptxas version");
    assert_eq!(
        (ptxas.release.as_str(), ptxas.full.as_str()),
        ("12.9", "12.9.86")
    );
    assert_eq!(ToolkitVersion::parse("gcc (Debian 12.2.0)"), None);
}
