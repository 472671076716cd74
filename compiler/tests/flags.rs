//! Flags from a compile database through the allow-list.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use expect_test::{expect, Expect};
use kernaut_compiler::flags::{split_command, translate};
use kernaut_compiler::{find_compile_commands, flags_for, CompileFlags, FlagsOrigin};

/// The one helper that calls `translate`: kept flags on the first line, then one
/// line per dropped flag.
fn check(command: &str, expect: Expect) {
    let args = split_command(command);
    let (kept, dropped) = translate(&args, Path::new("/proj/build"));
    let mut out = format!("kept: {}\n", kept.join(" "));
    for d in dropped {
        writeln!(out, "dropped: {} ({})", d.flag, d.reason).unwrap();
    }
    expect.assert_eq(&out);
}

#[test]
fn ordinary_nvcc_command() {
    check(
        "/usr/local/cuda/bin/nvcc -I../include -I /opt/cutlass/include -isystem third_party \
         -DNDEBUG -D USE_TF32=1 -UFOO -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr \
         -gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=[sm_90a] \
         -maxrregcount=64 --use_fast_math -x cu -c ../src/gemm.cu -o gemm.o",
        expect![[r#"
            kept: -I/proj/build/../include -I/opt/cutlass/include -isystem /proj/build/third_party -DNDEBUG -DUSE_TF32=1 -UFOO -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=[sm_90a] -maxrregcount=64 --use_fast_math
        "#]],
    );
}

#[test]
fn compiler_choice_and_host_flags_are_dropped_with_reasons() {
    check(
        "nvcc -ccbin ./evil.sh -Xcompiler -fplugin=./evil.so --compiler-bindir=/tmp/x \
         --run @flags.rsp --options-file more.txt -Wall -fPIC -march=native \
         --keep -arch=sm_80 src/a.cu",
        expect![[r#"
            kept: -arch=sm_80
            dropped: -ccbin ./evil.sh (chooses or runs a program; only the user's own settings may)
            dropped: -Xcompiler -fplugin=./evil.so (chooses or runs a program; only the user's own settings may)
            dropped: --compiler-bindir=/tmp/x (chooses or runs a program; only the user's own settings may)
            dropped: --run (chooses or runs a program; only the user's own settings may)
            dropped: @flags.rsp (a response file (could carry any flag))
            dropped: --options-file more.txt (chooses or runs a program; only the user's own settings may)
            dropped: -Wall (a host-compiler flag)
            dropped: -fPIC (a host-compiler flag)
            dropped: -march=native (a host-compiler flag)
            dropped: --keep (not on the allow-list)
        "#]],
    );
}

#[test]
fn clang_cuda_command_is_translated() {
    check(
        "clang++ -x cuda --cuda-gpu-arch=sm_86 -std=gnu++17 -I inc -DX=1 -fno-exceptions \
         --cuda-path=/usr/local/cuda -c k.cu -o k.o",
        expect![[r#"
            kept: -arch=sm_86 -std=c++17 -I/proj/build/inc -DX=1
            dropped: -fno-exceptions (a host-compiler flag)
            dropped: --cuda-path=/usr/local/cuda (not on the allow-list)
        "#]],
    );
}

#[test]
fn values_that_are_not_plain_words_are_dropped() {
    check(
        "nvcc -arch=native -arch='sm_80;touch /tmp/x' -gencode=arch=compute_80,code=\\\"sm_80,compute_80\\\" k.cu",
        expect![[r#"
            kept: -gencode=arch=compute_80,code=sm_80,compute_80
            dropped: -arch=native (`native` needs a GPU at compile time; the default target is used)
            dropped: -arch=sm_80;touch /tmp/x (a value that is not a plain word)
        "#]],
    );
}

#[test]
fn shell_words() {
    assert_eq!(
        split_command(r#"nvcc -DMSG="a b" 'x y' z\ w -I"/p q""#),
        ["nvcc", "-DMSG=a b", "x y", "z w", "-I/p q"]
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kernaut-flags-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    dir
}

#[test]
fn flags_for_a_file_of_the_database_and_a_file_outside_it() {
    let root = scratch("db");
    let db = root.join("build/compile_commands.json");
    let source = root.join("src/k.cu");
    std::fs::write(&source, "").unwrap();
    let entries = serde_json::json!([
        {
            "directory": root.join("build"),
            "file": "../src/k.cu",
            "arguments": ["nvcc", "-I../include", "-DN=4", "-ccbin", "./evil.sh", "-c", "../src/k.cu"]
        }
    ]);
    std::fs::write(&db, entries.to_string()).unwrap();

    assert_eq!(
        find_compile_commands(&source, Some(&root)),
        Some(db.clone())
    );

    let flags = flags_for(&source, Some(&db), "sm_90").unwrap();
    assert_eq!(flags.origin, FlagsOrigin::CompileCommands(db.clone()));
    let include = format!("-I{}", root.join("build").join("../include").display());
    assert_eq!(flags.args, [include.as_str(), "-DN=4", "-arch=sm_90"]);
    assert_eq!(flags.dropped.len(), 1);
    assert_eq!(flags.dropped[0].flag, "-ccbin ./evil.sh");

    let other = root.join("src/other.cu");
    let flags = flags_for(&other, Some(&db), "sm_90").unwrap();
    assert_eq!(flags, CompileFlags::default_for("sm_90"));
    assert_eq!(flags.args, ["-std=c++17", "-arch=sm_90"]);

    std::fs::write(&db, "{ not json").unwrap();
    let err = flags_for(&source, Some(&db), "sm_90").unwrap_err();
    assert!(err.to_string().contains("not a compile database"), "{err}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn default_target_must_be_a_plain_word() {
    assert_eq!(
        CompileFlags::default_for("sm_80 --run").args,
        ["-std=c++17", "-arch=sm_80"]
    );
    assert!(CompileFlags::default_for("sm_75").has_real_arch());
    let virtual_only = CompileFlags {
        args: vec!["-arch=compute_80".into()],
        ..CompileFlags::default_for("sm_80")
    };
    assert!(!virtual_only.has_real_arch());
}
