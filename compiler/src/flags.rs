//! The flags a file is compiled with: from `compile_commands.json` when present,
//! through an allow-list, else `-std=c++17 -arch=<target>`.
//!
//! A compile database belongs to the workspace, so it may set the architecture and
//! ordinary flags but never which program runs: `-ccbin`, `-Xcompiler`, `--run`,
//! response files (`@file`, `--options-file`) and everything else not on the list
//! below are dropped, each with a reason the caller can log.
//!
//! Kept: `-I`, `-isystem`, `-D`, `-U`, `-std`, `-arch`/`--gpu-architecture`,
//! `-code`/`--gpu-code`, `-gencode`/`--generate-code`, `--expt-relaxed-constexpr`,
//! `--extended-lambda`, `-O*`, `-G`, `-lineinfo`, `-rdc`, and, because they change
//! register counts, `-maxrregcount`, `--use_fast_math`, `-ftz`, `-prec-div`,
//! `-prec-sqrt`, `-fmad`. clang's `--cuda-gpu-arch=sm_80`/`--offload-arch=sm_80`
//! become `-arch=sm_80`, and `-std=gnu++17` becomes `-std=c++17`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A flag that was not passed on, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedFlag {
    /// The flag as written (with its value when that was a separate word).
    pub flag: String,
    /// Why: `not on the allow-list`, `chooses a program`, `host-only`, ….
    pub reason: String,
}

/// Where a file's flags came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FlagsOrigin {
    /// An entry of this `compile_commands.json`.
    CompileCommands(PathBuf),
    /// No entry: `-std=c++17 -arch=<target>`.
    Default,
}

/// The nvcc flags for one file, already checked against the allow-list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileFlags {
    /// Flags for nvcc, one word each (`-I/abs/include`, `-arch=sm_80`). Relative
    /// include folders are made absolute against the entry's `directory`.
    pub args: Vec<String>,
    /// What was left out, for a log line each.
    pub dropped: Vec<DroppedFlag>,
    /// Where they came from.
    pub origin: FlagsOrigin,
}

impl CompileFlags {
    /// `-std=c++17 -arch=<target>` (`target` such as `sm_80`; anything but letters,
    /// digits and `_` falls back to `sm_80`).
    pub fn default_for(target: &str) -> CompileFlags {
        CompileFlags {
            args: vec![
                "-std=c++17".to_string(),
                format!("-arch={}", clean_arch(target)),
            ],
            dropped: Vec::new(),
            origin: FlagsOrigin::Default,
        }
    }

    /// Whether the flags name an architecture (`-arch`, `-gencode`, …).
    pub fn has_arch(&self) -> bool {
        self.args.iter().any(|a| {
            a.starts_with("-arch")
                || a.starts_with("--gpu-architecture")
                || a.starts_with("-gencode")
                || a.starts_with("--generate-code")
        })
    }
}

fn clean_arch(target: &str) -> &str {
    if !target.is_empty()
        && target
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        target
    } else {
        "sm_80"
    }
}

/// Why a compile database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FlagsError {
    /// The file could not be read.
    #[error("reading {}: {source}", .path.display())]
    Read {
        /// The database.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a JSON compile database.
    #[error("{}: not a compile database: {message}", .path.display())]
    Parse {
        /// The database.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
}

/// The flags for `source`: from the compile database `database` when it has an
/// entry for the file, else [`CompileFlags::default_for`]`(default_arch)`. When the
/// entry names no architecture, `-arch=<default_arch>` is added.
pub fn flags_for(
    source: &Path,
    database: Option<&Path>,
    default_arch: &str,
) -> Result<CompileFlags, FlagsError> {
    let Some(db) = database else {
        return Ok(CompileFlags::default_for(default_arch));
    };
    let text = std::fs::read_to_string(db).map_err(|source| FlagsError::Read {
        path: db.to_path_buf(),
        source,
    })?;
    let Some(entry) = find_entry(&text, db, source)? else {
        return Ok(CompileFlags::default_for(default_arch));
    };
    let (args, dropped) = translate(&entry.arguments, &entry.directory);
    let mut flags = CompileFlags {
        args,
        dropped,
        origin: FlagsOrigin::CompileCommands(db.to_path_buf()),
    };
    if !flags.has_arch() {
        flags
            .args
            .push(format!("-arch={}", clean_arch(default_arch)));
    }
    Ok(flags)
}

/// The nearest `compile_commands.json` at or above `source`'s folder (also in a
/// `build/` folder at each level), not going above `root` when given.
pub fn find_compile_commands(source: &Path, root: Option<&Path>) -> Option<PathBuf> {
    let mut dir = source.parent();
    while let Some(d) = dir {
        for candidate in [
            d.join("compile_commands.json"),
            d.join("build").join("compile_commands.json"),
        ] {
            if candidate.is_file() {
                return Some(candidate);
            }
        }
        if Some(d) == root {
            break;
        }
        dir = d.parent();
    }
    None
}

/// One entry of a compile database, its command split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileEntry {
    /// The entry's `directory`.
    pub directory: PathBuf,
    /// The entry's `arguments`, or its `command` split as a shell would.
    pub arguments: Vec<String>,
}

/// The entry of `text` (a compile database at `db`) for `source`, matching the
/// `file` field as written, against `directory`, or by canonical path.
pub fn find_entry(
    text: &str,
    db: &Path,
    source: &Path,
) -> Result<Option<CompileEntry>, FlagsError> {
    let parse_err = |message: String| FlagsError::Parse {
        path: db.to_path_buf(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| parse_err(e.to_string()))?;
    let entries = value
        .as_array()
        .ok_or_else(|| parse_err("the top level is not an array".into()))?;
    let wanted = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
    for entry in entries {
        let Some(file) = entry.get("file").and_then(|f| f.as_str()) else {
            continue;
        };
        let directory = PathBuf::from(
            entry
                .get("directory")
                .and_then(|d| d.as_str())
                .unwrap_or(""),
        );
        let path = directory.join(file);
        let same = path == source
            || Path::new(file) == source
            || std::fs::canonicalize(&path)
                .map(|p| p == wanted)
                .unwrap_or(false);
        if !same {
            continue;
        }
        let arguments = if let Some(args) = entry.get("arguments").and_then(|a| a.as_array()) {
            args.iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect()
        } else if let Some(cmd) = entry.get("command").and_then(|c| c.as_str()) {
            split_command(cmd)
        } else {
            continue;
        };
        return Ok(Some(CompileEntry {
            directory,
            arguments,
        }));
    }
    Ok(None)
}

/// Splits a shell command line into words: spaces separate, single and double
/// quotes group, a backslash escapes the next character (outside single quotes).
pub fn split_command(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                in_word = true;
            }
            '"' if !single => {
                double = !double;
                in_word = true;
            }
            '\\' if !single => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
                in_word = true;
            }
            c if c.is_whitespace() && !single && !double => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Options that take their value as the next word; when dropped, the value goes too.
const TAKES_VALUE: &[&str] = &[
    "-ccbin",
    "--compiler-bindir",
    "-Xcompiler",
    "--compiler-options",
    "-Xptxas",
    "--ptxas-options",
    "-Xlinker",
    "--linker-options",
    "-Xnvlink",
    "--nvlink-options",
    "-Xcudafe",
    "-Xarchive",
    "--archive-options",
    "-o",
    "--output-file",
    "-optf",
    "--options-file",
    "-include",
    "--pre-include",
    "-l",
    "--library",
    "-L",
    "--library-path",
    "-odir",
    "--output-directory",
    "-MF",
    "--dependency-output",
    "-MT",
    "-MQ",
    "-x",
    "--x",
    "-idirafter",
    "-iquote",
    "-imacros",
    "--run-args",
    "-t",
    "--threads",
    "--keep-dir",
    "-keep-dir",
    "-Xclang",
    "-target",
    "--target",
];

/// Options that choose or start a program: dropped with a pointed reason.
const CHOOSES_PROGRAM: &[&str] = &[
    "-ccbin",
    "--compiler-bindir",
    "-Xcompiler",
    "--compiler-options",
    "--run",
    "-run",
    "--run-args",
    "-optf",
    "--options-file",
    "--dryrun",
    "-dryrun",
    "-Xclang",
    "-fplugin",
    "-B",
];

/// Passes `args` (a compile database's words, compiler first) through the
/// allow-list. Returns the kept nvcc flags and the dropped ones with reasons.
/// Quietly left out (not reported): the compiler itself, source files, `-c`, `-o`
/// and its value, `-x cu`/`-x cuda`.
pub fn translate(args: &[String], directory: &Path) -> (Vec<String>, Vec<DroppedFlag>) {
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let absolute = |p: &str| -> String {
        let path = Path::new(p);
        if path.is_absolute() || directory.as_os_str().is_empty() {
            p.to_string()
        } else {
            directory.join(path).display().to_string()
        }
    };
    let mut i = 1; // args[0] is the compiler: never used.
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        let next = args.get(i).map(String::as_str);
        if a == "-c" || a == "--compile" || a == "-cuda" {
            continue;
        }
        if a == "-o" || a == "--output-file" || a == "-x" || a == "--x" {
            i += 1;
            continue;
        }
        if a.starts_with("--output-file=") || a.starts_with("-x=") {
            continue;
        }
        if a.starts_with('@') {
            dropped.push(drop(a, "a response file (could carry any flag)"));
            continue;
        }
        if !a.starts_with('-') {
            // A source file or a stray value: never passed on.
            continue;
        }
        if let Some(o) = ["-I", "--include-path"]
            .into_iter()
            .find(|o| opt_matches(a, o, true))
        {
            if let Some(v) = value_of(a, next, o, &mut i) {
                kept.push(format!("-I{}", absolute(&v)));
            }
            continue;
        }
        if let Some(o) = ["-isystem", "--system-include"]
            .into_iter()
            .find(|o| opt_matches(a, o, true))
        {
            if let Some(v) = value_of(a, next, o, &mut i) {
                kept.push("-isystem".to_string());
                kept.push(absolute(&v));
            }
            continue;
        }
        if let Some(o) = ["-D", "--define-macro"]
            .into_iter()
            .find(|o| opt_matches(a, o, true))
        {
            if let Some(v) = value_of(a, next, o, &mut i) {
                kept.push(format!("-D{v}"));
            }
            continue;
        }
        if let Some(o) = ["-U", "--undefine-macro"]
            .into_iter()
            .find(|o| opt_matches(a, o, true))
        {
            if let Some(v) = value_of(a, next, o, &mut i) {
                kept.push(format!("-U{v}"));
            }
            continue;
        }
        if let Some(o) = ["-std", "--std"]
            .into_iter()
            .find(|o| opt_matches(a, o, false))
        {
            let v = value_of(a, next, o, &mut i)
                .unwrap_or_default()
                .replace("gnu++", "c++");
            if ["c++03", "c++11", "c++14", "c++17", "c++20"].contains(&v.as_str()) {
                kept.push(format!("-std={v}"));
            } else {
                dropped.push(drop(a, "a language standard nvcc does not take"));
            }
            continue;
        }
        if let Some(o) = ["--cuda-gpu-arch", "--offload-arch"]
            .into_iter()
            .find(|o| opt_matches(a, o, false))
        {
            if let Some(v) = value_of(a, next, o, &mut i) {
                push_value(&mut kept, &mut dropped, a, "-arch", &v);
            }
            continue;
        }
        if let Some((o, canonical)) = VALUE_OPTIONS.iter().find(|(o, _)| opt_matches(a, o, false)) {
            if let Some(v) = value_of(a, next, o, &mut i) {
                push_value(&mut kept, &mut dropped, a, canonical, &v);
            }
            continue;
        }
        if let Some((_, canonical)) = SWITCHES.iter().find(|(o, _)| a == *o) {
            kept.push(canonical.to_string());
            continue;
        }
        // Everything else is dropped, with its value when it takes one.
        let name = a.split('=').next().unwrap_or(a);
        let shown = match next {
            Some(v) if TAKES_VALUE.contains(&a) => {
                i += 1;
                format!("{a} {v}")
            }
            _ => a.to_string(),
        };
        let reason = if CHOOSES_PROGRAM.contains(&name) || name.starts_with("-fplugin") {
            "chooses or runs a program; only the user's own settings may"
        } else if name.starts_with("-W") || name.starts_with("-f") || name.starts_with("-m") {
            "a host-compiler flag"
        } else {
            "not on the allow-list"
        };
        dropped.push(drop(&shown, reason));
    }
    (kept, dropped)
}

/// nvcc options with a value, kept under their short spelling.
const VALUE_OPTIONS: &[(&str, &str)] = &[
    ("--gpu-architecture", "-arch"),
    ("-arch", "-arch"),
    ("--gpu-code", "-code"),
    ("-code", "-code"),
    ("--generate-code", "-gencode"),
    ("-gencode", "-gencode"),
    ("--maxrregcount", "-maxrregcount"),
    ("-maxrregcount", "-maxrregcount"),
    ("--relocatable-device-code", "-rdc"),
    ("-rdc", "-rdc"),
    ("--ftz", "-ftz"),
    ("-ftz", "-ftz"),
    ("--prec-div", "-prec-div"),
    ("-prec-div", "-prec-div"),
    ("--prec-sqrt", "-prec-sqrt"),
    ("-prec-sqrt", "-prec-sqrt"),
    ("--fmad", "-fmad"),
    ("-fmad", "-fmad"),
];

/// Switches kept as they are (under one spelling).
const SWITCHES: &[(&str, &str)] = &[
    ("--expt-relaxed-constexpr", "--expt-relaxed-constexpr"),
    ("-expt-relaxed-constexpr", "--expt-relaxed-constexpr"),
    ("--extended-lambda", "--extended-lambda"),
    ("-extended-lambda", "--extended-lambda"),
    ("--expt-extended-lambda", "--extended-lambda"),
    ("-expt-extended-lambda", "--extended-lambda"),
    ("-G", "-G"),
    ("--device-debug", "-G"),
    ("-lineinfo", "-lineinfo"),
    ("--generate-line-info", "-lineinfo"),
    ("--use_fast_math", "--use_fast_math"),
    ("-use_fast_math", "--use_fast_math"),
    ("-O0", "-O0"),
    ("-O1", "-O1"),
    ("-O2", "-O2"),
    ("-O3", "-O3"),
];

/// Whether `a` is option `o`: exactly, as `o=value`, or (`glued`) as `o<value>`.
fn opt_matches(a: &str, o: &str, glued: bool) -> bool {
    a == o
        || a.strip_prefix(o)
            .is_some_and(|rest| rest.starts_with('=') || (glued && !rest.is_empty()))
}

/// The value of option `o` in `a` (`-Ifoo`, `-I=foo`) or in the next word (`-I foo`),
/// stepping `i` past a separate value.
fn value_of(a: &str, next: Option<&str>, o: &str, i: &mut usize) -> Option<String> {
    if a == o {
        let v = next?.to_string();
        *i += 1;
        return Some(v);
    }
    let rest = a.strip_prefix(o)?;
    Some(rest.strip_prefix('=').unwrap_or(rest).to_string())
}

fn drop(flag: &str, reason: &str) -> DroppedFlag {
    DroppedFlag {
        flag: flag.to_string(),
        reason: reason.to_string(),
    }
}

/// Keeps `canonical=value` when the value is plain (letters, digits, `_ , = .`).
fn push_value(
    kept: &mut Vec<String>,
    dropped: &mut Vec<DroppedFlag>,
    a: &str,
    canonical: &str,
    v: &str,
) {
    // Compile databases often quote gencode lists: `code=\"sm_80,compute_80\"`.
    let v = v.replace('"', "");
    let v = v.as_str();
    if canonical == "-arch" && v == "native" {
        dropped.push(drop(
            a,
            "`native` needs a GPU at compile time; the default target is used",
        ));
        return;
    }
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ',' | '=' | '.' | '[' | ']'));
    if plain {
        kept.push(format!("{canonical}={v}"));
    } else {
        dropped.push(drop(a, "a value that is not a plain word"));
    }
}
