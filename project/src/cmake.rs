//! Just enough of CMake's language to follow the flags a `CMakeLists.txt` hands nvcc:
//! its commands parsed (quoted, bracket and unquoted arguments, comments), variables
//! followed through `set()`, `list(APPEND|PREPEND|INSERT|REMOVE_ITEM)`, `string(APPEND|
//! PREPEND|CONCAT)`, `option()` and cache defaults, `foreach()` over known lists, and
//! FindCUDA's `cuda_select_nvcc_arch_flags(OUT 7.5 8.6+PTX)` with numbered architectures,
//! `if()`/`elseif()`/`else()` decided where the file decides them (`if(VAR)`,
//! `if(NOT VAR)`, `if(DEFINED VAR)`, `AND`/`OR`, string and number comparisons of known
//! values), with the option and cache defaults the file declares.
//!
//! A condition the file does not decide (`if(CUDA_VERSION VERSION_GREATER 11)`, a
//! variable set on the command line) runs both ways: what its branches set is the union,
//! each value tagged with the branch it depends on, so that a target found there can be
//! said to depend on it. A variable whose value comes from something not followed
//! (`execute_process`, `string(REGEX …)`, `find_package`) is unknown: it expands to
//! nothing and decides no condition.
//!
//! The flags that reach nvcc: `CUDA_NVCC_FLAGS*` and `CMAKE_CUDA_FLAGS*` at the end of
//! the file, and the arguments of `target_compile_options`, `add_compile_options`,
//! `cuda_add_library`/`cuda_add_executable`/`cuda_compile*` and the `COMPILE_OPTIONS`/
//! `COMPILE_FLAGS` properties where they are written. [`gencode_targets`] reads the
//! `-gencode`/`--generate-code`/`-arch` targets out of them.

use std::collections::HashMap;

use kernaut_ide::gpu::Target;

/// One argument of a command.
#[derive(Clone, Debug)]
struct Arg {
    text: String,
    /// Quoted or bracket: one list element, no `;` splitting (bracket: no expansion).
    quoted: bool,
    bracket: bool,
}

#[derive(Clone, Debug)]
struct Command {
    /// Lower-case.
    name: String,
    args: Vec<Arg>,
    /// 1-based.
    line: usize,
}

/// A value's element, with where it was written and the undecided conditions it
/// depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Item {
    text: String,
    line: usize,
    conds: Vec<String>,
}

#[derive(Clone, Debug)]
struct Var {
    items: Vec<Item>,
    /// Set where the file decides it, with a value that depends on nothing undecided.
    known: bool,
}

/// The targets the flags reaching nvcc name: each with the line it is written on and
/// the undecided conditions it depends on (empty: always).
/// The include folders a CMake text names for its sources (`include_directories(…)`,
/// `target_include_directories(t PUBLIC|PRIVATE|INTERFACE …)`), relative to the folder
/// of the file, with `${CMAKE_CURRENT_SOURCE_DIR}` (and, in the file that declares the
/// `project()`, `${PROJECT_SOURCE_DIR}` and `${CMAKE_SOURCE_DIR}`) read as that folder and `$<BUILD_INTERFACE:…>` unwrapped. A
/// folder that names any other variable or generator expression is not known and left
/// out.
pub(crate) fn include_dirs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let commands = parse(text);
    let top = commands.iter().any(|c| c.name == "project");
    for c in commands {
        let args: &[Arg] = match c.name.as_str() {
            "include_directories" => &c.args,
            "target_include_directories" => c.args.get(1..).unwrap_or_default(),
            _ => continue,
        };
        for a in args {
            let mut t = a.text.trim().to_string();
            if matches!(
                t.as_str(),
                "PUBLIC" | "PRIVATE" | "INTERFACE" | "SYSTEM" | "BEFORE" | "AFTER"
            ) {
                continue;
            }
            if let Some(inner) = t
                .strip_prefix("$<BUILD_INTERFACE:")
                .and_then(|r| r.strip_suffix('>'))
            {
                t = inner.to_string();
            }
            // The project's top folder is this one only in the file that declares it.
            let vars: &[&str] = if top {
                &[
                    "${CMAKE_CURRENT_SOURCE_DIR}",
                    "${CMAKE_CURRENT_LIST_DIR}",
                    "${PROJECT_SOURCE_DIR}",
                    "${CMAKE_SOURCE_DIR}",
                ]
            } else {
                &["${CMAKE_CURRENT_SOURCE_DIR}", "${CMAKE_CURRENT_LIST_DIR}"]
            };
            for var in vars {
                if let Some(rest) = t.strip_prefix(var) {
                    t = format!(".{rest}");
                }
            }
            if t.is_empty() || t.contains("${") || t.contains("$<") || t.contains("$ENV") {
                continue;
            }
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Whether the `CMakeLists.txt` `text`, in the folder of the source called `name` (a file
/// name), compiles it: `Some(true)` where any command names it; `Some(false)` where the
/// file declares its targets' sources in full and none is this file: it defines targets
/// (`add_library`, `add_executable`, `cuda_add_library`, `cuda_add_executable`), each
/// source argument reads only variables the file sets, and nothing else may add sources
/// (no `file(GLOB …)`, `aux_source_directory`, `target_sources`, no `function()` or
/// `macro()` of its own, no other command that names a `.cu` file, no name assembled
/// from a variable such as `k${N}.cu`); `None` otherwise. The CMake files it includes or
/// whose folders it adds are the caller's to read (they may name the file by a path).
///
/// With `rel`, the file's path from the list's folder, a `file(GLOB …)` whose every
/// pattern lies in folders that do not hold it (`${PROJECT_SOURCE_DIR}/common/*.cu` for
/// `tools/k.cu`) cannot name it.
pub(crate) fn cmake_builds(text: &str, name: &str, rel: Option<&str>) -> Option<bool> {
    let commands = parse(text);
    if names_in(&commands, name) {
        return Some(true);
    }
    const TARGETS: [&str; 4] = [
        "add_library",
        "add_executable",
        "cuda_add_library",
        "cuda_add_executable",
    ];
    let set_here: Vec<&str> = commands
        .iter()
        .filter(|c| matches!(c.name.as_str(), "set" | "list" | "string"))
        .filter_map(|c| {
            let first = c.args.first()?;
            match c.name.as_str() {
                "set" => Some(first.text.as_str()),
                _ => c.args.get(1).map(|a| a.text.as_str()),
            }
        })
        .collect();
    let mut targets = 0;
    for (i, c) in commands.iter().enumerate() {
        match c.name.as_str() {
            "file" if c.args.first().is_some_and(|a| a.text.starts_with("GLOB")) => {
                if !rel.is_some_and(|rel| glob_misses(&c.args, rel)) {
                    return None;
                }
            }
            "aux_source_directory" | "target_sources" => return None,
            // A helper of the file's own may add sources where it is called; one whose
            // body makes no target, adds no source and includes nothing (it builds a
            // flag string, `make_gencode(GENCODE ${CUDA_ARCHS})`) names none.
            open @ ("function" | "macro") => {
                let end = block_end(&commands, i + 1, open, &format!("end{open}"));
                let adds = commands[i + 1..end.max(i + 1)].iter().any(|b| {
                    TARGETS.contains(&b.name.as_str())
                        || matches!(
                            b.name.as_str(),
                            "aux_source_directory"
                                | "target_sources"
                                | "include"
                                | "add_subdirectory"
                                | "cmake_language"
                        )
                        || (b.name == "file"
                            && b.args.first().is_some_and(|a| a.text.starts_with("GLOB")))
                });
                if adds {
                    return None;
                }
            }
            n if TARGETS.contains(&n) => {
                targets += 1;
                for a in c.args.iter().skip(1) {
                    let mut rest = a.text.as_str();
                    while let Some(at) = rest.find("${") {
                        let end = rest[at..].find('}')?;
                        let var = &rest[at + 2..at + end];
                        if !set_here.contains(&var) {
                            return None;
                        }
                        rest = &rest[at + end + 1..];
                    }
                    if a.text.contains("$<") {
                        return None;
                    }
                }
            }
            _ => {
                // Another command handing a CUDA source somewhere (`pybind11_add_module`,
                // a project's own helper) or a name built from a variable.
                for a in &c.args {
                    let t = a.text.trim_end_matches(['"', ')']);
                    let cuda = [".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c"]
                        .iter()
                        .any(|e| t.ends_with(e));
                    if cuda && (t.contains("${") || !matches!(c.name.as_str(), "set" | "list")) {
                        return None;
                    }
                }
            }
        }
    }
    (targets > 0).then_some(false)
}

/// Whether an argument of a command of `commands` names the file called `name` (alone,
/// or as the last part of a path or list item); a comment does not.
/// Whether every pattern of `file(GLOB[_RECURSE] VAR [options] patterns…)` names a
/// folder, from the list's own, that does not hold `rel` (so no match can be the file).
/// A pattern with another variable, or with a wildcard in its folder part, may match.
fn glob_misses(args: &[Arg], rel: &str) -> bool {
    let patterns: Vec<&str> = args
        .iter()
        .skip(2)
        .map(|a| a.text.as_str())
        .filter(|t| {
            !matches!(
                *t,
                "LIST_DIRECTORIES"
                    | "RELATIVE"
                    | "CONFIGURE_DEPENDS"
                    | "FOLLOW_SYMLINKS"
                    | "true"
                    | "false"
            )
        })
        .collect();
    !patterns.is_empty()
        && patterns.iter().all(|p| {
            let p = p
                .trim_start_matches("${PROJECT_SOURCE_DIR}/")
                .trim_start_matches("${CMAKE_CURRENT_SOURCE_DIR}/")
                .trim_start_matches("${CMAKE_SOURCE_DIR}/")
                .trim_start_matches("./");
            if p.contains('$') {
                return false;
            }
            // The folders before the first wildcard.
            let fixed = match p.find(['*', '?', '[']) {
                Some(w) => &p[..w],
                None => p,
            };
            let dir = match fixed.rfind('/') {
                Some(i) => &fixed[..=i],
                None => return false,
            };
            !rel.starts_with(dir)
        })
}

fn names_in(commands: &[Command], name: &str) -> bool {
    let names_it = |t: &str| {
        t.split(|c: char| c == '/' || c == ';' || c == '\\' || c.is_whitespace())
            .any(|part| part == name)
    };
    commands
        .iter()
        .any(|c| c.args.iter().any(|a| names_it(&a.text)))
}

/// Whether the CMake file `text` may add the source called `name` to a target: a
/// command names it, or gathers sources no text spells out (`file(GLOB …)`,
/// `aux_source_directory`). Comments name nothing.
pub(crate) fn may_name_source(text: &str, name: &str) -> bool {
    let commands = parse(text);
    names_in(&commands, name)
        || commands.iter().any(|c| {
            c.name == "aux_source_directory"
                || (c.name == "file" && c.args.first().is_some_and(|a| a.text.starts_with("GLOB")))
        })
}

/// Whether the CMake file `text` declares a `project()`: it can be configured on its own.
pub(crate) fn declares_project(text: &str) -> bool {
    parse(text).iter().any(|c| c.name == "project")
}

/// Whether every folder the CMake file `text` adds is spelled out: its
/// `add_subdirectory`/`subdirs` arguments name no variable, and it includes no file of
/// the project's (`include(cmake/extra.cmake)`, which may add more). Comments add nothing.
pub(crate) fn subdirectories_spelled_out(text: &str) -> bool {
    parse(text).iter().all(|c| match c.name.as_str() {
        "add_subdirectory" | "subdirs" => c.args.iter().all(|a| !a.text.contains("${")),
        "include" => c
            .args
            .first()
            .is_some_and(|a| !a.text.contains(['/', '$', '.'])),
        _ => true,
    })
}

pub(crate) fn gencode_targets(text: &str) -> Vec<(Target, usize, Vec<String>)> {
    let commands = parse(text);
    let mut ev = Eval::default();
    ev.exec(&commands, 0);
    let mut flags = std::mem::take(&mut ev.sinks);
    let mut names: Vec<&String> = ev
        .vars
        .keys()
        .filter(|n| n.starts_with("CUDA_NVCC_FLAGS") || n.starts_with("CMAKE_CUDA_FLAGS"))
        .collect();
    names.sort();
    for n in names {
        flags.extend(ev.vars[n].items.iter().cloned());
    }
    targets_of_flags(&flags)
}

/// The targets `set(CMAKE_CUDA_ARCHITECTURES …)` names where the file sets it only in
/// branches it does not decide (`if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES "aarch64")` with
/// `87`, else `86;89`): each with its line and the conditions it depends on. Empty where
/// a value is set outside every such branch, or names no target the text can know
/// (`native`, a variable).
pub(crate) fn architectures_by_branch(text: &str) -> Vec<(Target, usize, Vec<String>)> {
    let commands = parse(text);
    let mut ev = Eval::default();
    ev.exec(&commands, 0);
    let Some(var) = ev.vars.get("CMAKE_CUDA_ARCHITECTURES") else {
        return Vec::new();
    };
    let mut out: Vec<(Target, usize, Vec<String>)> = Vec::new();
    for item in &var.items {
        if item.conds.is_empty() {
            return Vec::new();
        }
        let values = item
            .text
            .split(|c: char| c == ';' || c.is_whitespace())
            .map(|v| v.trim_matches(['"', '\'']))
            .filter(|v| !v.is_empty());
        for v in values {
            let Ok(t) = Target::parse(v) else {
                return Vec::new();
            };
            if !out.iter().any(|(o, _, c)| *o == t && *c == item.conds) {
                out.push((t, item.line, item.conds.clone()));
            }
        }
    }
    out
}

/// The targets of a list of flags, as nvcc would read them.
fn targets_of_flags(items: &[Item]) -> Vec<(Target, usize, Vec<String>)> {
    // Words, each with its item's line and conditions.
    let mut words: Vec<(String, &Item)> = Vec::new();
    for item in items {
        let text = item.text.strip_prefix("SHELL:").unwrap_or(&item.text);
        for w in text.split(|c: char| c.is_whitespace() || c == ';') {
            // `$<$<COMPILE_LANGUAGE:CUDA>:-gencode …>`: the generator expression's value.
            let mut w = w;
            while w.starts_with("$<") {
                match w.find(">:") {
                    Some(at) => w = &w[at + 2..],
                    None => break,
                }
            }
            let w = w.trim_end_matches('>');
            if !w.is_empty() {
                // `code=\\\"sm_80,compute_80\\\"`: quotes escaped for the shell.
                words.push((w.replace('\\', ""), item));
            }
        }
    }
    let mut out: Vec<(Target, usize, Vec<String>)> = Vec::new();
    let mut push = |t: Target, items: &[&Item]| {
        let mut conds: Vec<String> = Vec::new();
        for i in items {
            for c in &i.conds {
                if !conds.contains(c) {
                    conds.push(c.clone());
                }
            }
        }
        match out.iter_mut().find(|(o, _, _)| *o == t) {
            // Named unconditionally somewhere: always built.
            Some((_, _, c)) if conds.is_empty() => c.clear(),
            Some(_) => {}
            None => out.push((t, items[0].line, conds)),
        }
    };
    let mut i = 0;
    while i < words.len() {
        let (w, item) = (&words[i].0, words[i].1);
        let value_of = |names: &[&str]| -> Option<(String, Option<&Item>)> {
            for n in names {
                if let Some(v) = w.strip_prefix(n) {
                    if let Some(v) = v.strip_prefix('=') {
                        return Some((v.to_string(), None));
                    }
                    if v.is_empty() {
                        return words.get(i + 1).map(|(v, it)| (v.clone(), Some(*it)));
                    }
                }
            }
            None
        };
        if let Some((v, next)) = value_of(&["-gencode", "--generate-code"]) {
            for t in crate::build_files::gencode_targets(&v) {
                push(t, &[item].into_iter().chain(next).collect::<Vec<_>>());
            }
            i += if next.is_some() { 2 } else { 1 };
            continue;
        }
        if let Some((v, next)) = value_of(&["-arch", "--gpu-architecture"]) {
            for t in v.split(',').filter_map(|s| Target::parse(s).ok()) {
                push(t, &[item].into_iter().chain(next).collect::<Vec<_>>());
            }
            i += if next.is_some() { 2 } else { 1 };
            continue;
        }
        i += 1;
    }
    // A PTX-only target next to the real one of the same capability adds nothing.
    let reals: Vec<(u32, u32, kernaut_ide::gpu::Variant)> = out
        .iter()
        .filter(|(t, _, _)| !t.virtual_only)
        .map(|(t, _, _)| (t.major, t.minor, t.variant))
        .collect();
    out.retain(|(t, _, _)| !t.virtual_only || !reals.contains(&(t.major, t.minor, t.variant)));
    out
}

/// The commands of a CMake text, in order.
fn parse(text: &str) -> Vec<Command> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let at_bracket = |i: usize| -> Option<usize> {
        // `[[`, `[=[`, …: the number of `=`.
        if b.get(i) != Some(&b'[') {
            return None;
        }
        let mut j = i + 1;
        while b.get(j) == Some(&b'=') {
            j += 1;
        }
        (b.get(j) == Some(&b'[')).then_some(j - i - 1)
    };
    // The end (past the closing `]=*]`) of a bracket opened at `i` with `eq` `=`.
    let bracket_end = |i: usize, eq: usize| -> (usize, usize) {
        let close = format!("]{}]", "=".repeat(eq));
        let body = i + eq + 2;
        match text.get(body..).and_then(|t| t.find(&close)) {
            Some(at) => (body, body + at + close.len()),
            None => (body, text.len()),
        }
    };
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c == b'#' {
            if let Some(eq) = at_bracket(i + 1) {
                let (_, end) = bracket_end(i + 1, eq);
                line += text[i..end].matches('\n').count();
                i = end;
            } else {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let name = text[start..i].to_ascii_lowercase();
            let mut j = i;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            if b.get(j) != Some(&b'(') {
                continue;
            }
            let cmd_line = line;
            i = j + 1;
            let mut args = Vec::new();
            let mut depth = 0usize;
            while i < b.len() {
                let c = b[i];
                match c {
                    b'\n' => {
                        line += 1;
                        i += 1;
                    }
                    b' ' | b'\t' | b'\r' => i += 1,
                    b'#' => {
                        if let Some(eq) = at_bracket(i + 1) {
                            let (_, end) = bracket_end(i + 1, eq);
                            line += text[i..end].matches('\n').count();
                            i = end;
                        } else {
                            while i < b.len() && b[i] != b'\n' {
                                i += 1;
                            }
                        }
                    }
                    b'(' => {
                        depth += 1;
                        args.push(Arg {
                            text: "(".into(),
                            quoted: false,
                            bracket: false,
                        });
                        i += 1;
                    }
                    b')' => {
                        i += 1;
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                        args.push(Arg {
                            text: ")".into(),
                            quoted: false,
                            bracket: false,
                        });
                    }
                    b'"' => {
                        let mut s = String::new();
                        i += 1;
                        while i < b.len() && b[i] != b'"' {
                            if b[i] == b'\\' && i + 1 < b.len() {
                                // Keep escapes but the quote and the line join.
                                match b[i + 1] {
                                    b'"' => s.push('"'),
                                    b'\n' => line += 1,
                                    _ => s.push_str(&text[i..i + 2]),
                                }
                                i += 2;
                                continue;
                            }
                            if b[i] == b'\n' {
                                line += 1;
                            }
                            let ch = text[i..].chars().next().unwrap_or(' ');
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                        i += 1;
                        args.push(Arg {
                            text: s,
                            quoted: true,
                            bracket: false,
                        });
                    }
                    b'[' if at_bracket(i).is_some() => {
                        let eq = at_bracket(i).unwrap_or(0);
                        let (body, end) = bracket_end(i, eq);
                        let close = format!("]{}]", "=".repeat(eq));
                        let s = text[body..end].strip_suffix(close.as_str()).unwrap_or("");
                        line += text[i..end].matches('\n').count();
                        args.push(Arg {
                            text: s.to_string(),
                            quoted: true,
                            bracket: true,
                        });
                        i = end;
                    }
                    _ => {
                        let start = i;
                        let mut refs = 0usize;
                        while i < b.len() {
                            let c = b[i];
                            if c == b'\\' && i + 1 < b.len() {
                                i += 2;
                                continue;
                            }
                            if c == b'$' && matches!(b.get(i + 1), Some(b'{' | b'<')) {
                                refs += 1;
                                i += 2;
                                continue;
                            }
                            if c == b'}' || c == b'>' {
                                refs = refs.saturating_sub(1);
                            }
                            // `"` inside an unquoted argument (`-DX="a b"`) is literal.
                            if c == b'"' && refs == 0 && i > start {
                                if let Some(end) = text[i + 1..].find('"') {
                                    i += end + 2;
                                    continue;
                                }
                            }
                            if c.is_ascii_whitespace()
                                || (refs == 0 && (c == b'(' || c == b')' || c == b'#'))
                            {
                                break;
                            }
                            i += 1;
                        }
                        args.push(Arg {
                            text: text[start..i].to_string(),
                            quoted: false,
                            bracket: false,
                        });
                    }
                }
            }
            out.push(Command {
                name,
                args,
                line: cmd_line,
            });
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

/// A branch: taken, not taken, or undecided (and then the condition it depends on).
#[derive(Clone, Debug, PartialEq)]
enum Branch {
    On,
    Off,
    Maybe(String),
}

/// An `if()` being run.
struct IfFrame {
    /// Whether the `if` itself runs (its enclosing branch is not `Off`).
    live: bool,
    /// A branch so far was taken for sure.
    taken: bool,
    /// The undecided conditions of the branches so far.
    undecided: Vec<String>,
    /// The branch now running.
    current: Branch,
}

#[derive(Default)]
struct Eval {
    vars: HashMap<String, Var>,
    /// Flags written where a command hands them to nvcc.
    sinks: Vec<Item>,
    ifs: Vec<IfFrame>,
    /// Guard against runaway `foreach` nesting.
    depth: usize,
}

const FALSE_CONSTANTS: [&str; 7] = ["0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"];
const TRUE_CONSTANTS: [&str; 5] = ["1", "ON", "YES", "TRUE", "Y"];

/// CMake's truth of a value: `Some` for a constant (`ON`, `0`, `""`, `…-NOTFOUND`, a
/// number), `None` for anything else.
fn constant_truth(v: &str) -> Option<bool> {
    let u = v.to_ascii_uppercase();
    if u.is_empty() || FALSE_CONSTANTS.contains(&u.as_str()) || u.ends_with("-NOTFOUND") {
        return Some(false);
    }
    if TRUE_CONSTANTS.contains(&u.as_str()) {
        return Some(true);
    }
    u.parse::<f64>().ok().map(|n| n != 0.0)
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Eval {
    /// The undecided conditions of the branches now running, or `None` where the code
    /// now running does not run.
    fn conds(&self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for f in &self.ifs {
            match &f.current {
                Branch::Off => return None,
                Branch::On => {}
                Branch::Maybe(c) => out.push(c.clone()),
            }
        }
        Some(out)
    }

    fn var_text(&self, name: &str) -> Option<String> {
        let v = self.vars.get(name)?;
        v.known.then(|| {
            v.items
                .iter()
                .map(|i| i.text.as_str())
                .collect::<Vec<_>>()
                .join(";")
        })
    }

    /// `${…}` references replaced, innermost first; `None` when one names a variable
    /// not known here (or the environment). The items it read are collected in `used`.
    fn expand_text(&self, s: &str, used: &mut Vec<Item>, strict: bool) -> Option<String> {
        // `$ENV{X}`: the environment of the configure run, not known here; `$CACHE{X}`:
        // the variable's cache value, read as the variable.
        let mut out = s.replace("$CACHE{", "${");
        while let Some(at) = out.find("$ENV{") {
            if strict {
                return None;
            }
            let end = out[at..].find('}').map_or(out.len(), |e| at + e + 1);
            out.replace_range(at..end, "");
        }
        for _ in 0..64 {
            let Some(close) = find_ref_close(&out) else {
                break;
            };
            let open = out[..close].rfind("${")?;
            let name = out[open + 2..close].to_string();
            let value = match self.vars.get(&name) {
                Some(v) => {
                    used.extend(v.items.iter().cloned());
                    if strict && !v.known {
                        return None;
                    }
                    v.items
                        .iter()
                        .map(|i| i.text.as_str())
                        .collect::<Vec<_>>()
                        .join(";")
                }
                None if strict => return None,
                None => String::new(),
            };
            out.replace_range(open..close + 1, &value);
        }
        Some(out)
    }

    /// The items an argument expands to, at `line`, tagged with `conds`: split at `;`
    /// and whitespace (flags), each element keeping the line and conditions of the
    /// values it is made of (`${FLAGS}` keeps each flag where it was written).
    fn expand_arg(&self, a: &Arg, line: usize, conds: &[String]) -> Vec<Item> {
        let tag = |mut i: Item| {
            for c in conds {
                if !i.conds.contains(c) {
                    i.conds.push(c.clone());
                }
            }
            i
        };
        let mut out: Vec<Item> = Vec::new();
        // The element being built, and whether it has text of its own yet.
        let mut cur: Option<Item> = None;
        let flush = |cur: &mut Option<Item>, out: &mut Vec<Item>| {
            if let Some(i) = cur.take().filter(|i| !i.text.is_empty()) {
                out.push(tag(i));
            }
        };
        let join = |cur: &mut Option<Item>, text: &str, from: &Item| {
            let c = cur.get_or_insert_with(|| Item {
                text: String::new(),
                line: from.line,
                conds: Vec::new(),
            });
            // Text of its own so far: none, or only a generator expression's head
            // (`$<$<COMPILE_LANGUAGE:CUDA>:`).
            if c.text.is_empty() || (c.text.starts_with("$<") && c.text.ends_with(':')) {
                c.line = from.line;
            }
            c.text.push_str(text);
            for d in &from.conds {
                if !c.conds.contains(d) {
                    c.conds.push(d.clone());
                }
            }
        };
        let here = Item {
            text: String::new(),
            line,
            conds: Vec::new(),
        };
        let is_sep = |c: char| c == ';' || c.is_whitespace();
        let s = a.text.as_str();
        let mut i = 0;
        while i < s.len() {
            let rest = &s[i..];
            let reference = if a.bracket {
                None
            } else if let Some(r) = rest.strip_prefix("${") {
                Some((r, 2, false))
            } else if let Some(r) = rest.strip_prefix("$CACHE{") {
                Some((r, 7, false))
            } else {
                rest.strip_prefix("$ENV{").map(|r| (r, 5, true))
            };
            if let Some((r, skip, env)) = reference {
                // The matching `}`, across nested references.
                let mut depth = 1;
                let mut end = None;
                for (k, ch) in r.char_indices() {
                    if ch == '{' {
                        depth += 1;
                    } else if ch == '}' {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(k);
                            break;
                        }
                    }
                }
                let Some(end) = end else {
                    join(&mut cur, rest, &here);
                    break;
                };
                let inner = &r[..end];
                let name = if inner.contains("${") {
                    self.expand_text(inner, &mut Vec::new(), false)
                        .unwrap_or_default()
                } else {
                    inner.to_string()
                };
                if let Some(v) = self.vars.get(&name).filter(|_| !env) {
                    for (k, item) in v.items.iter().enumerate() {
                        if k > 0 {
                            flush(&mut cur, &mut out);
                        }
                        // An element of several flags (`"-gencode arch=…"`): its words.
                        let words: Vec<&str> = item.text.split(is_sep).collect();
                        for (w, word) in words.iter().enumerate() {
                            if w > 0 {
                                flush(&mut cur, &mut out);
                            }
                            join(&mut cur, word, item);
                        }
                    }
                }
                i += skip + end + 1;
                continue;
            }
            let ch = rest.chars().next().unwrap_or(' ');
            if is_sep(ch) {
                flush(&mut cur, &mut out);
            } else {
                let mut buf = [0u8; 4];
                join(&mut cur, ch.encode_utf8(&mut buf), &here);
            }
            i += ch.len_utf8();
        }
        flush(&mut cur, &mut out);
        out
    }

    fn expand_args(&self, args: &[Arg], line: usize, conds: &[String]) -> Vec<Item> {
        args.iter()
            .flat_map(|a| self.expand_arg(a, line, conds))
            .collect()
    }

    /// Gives `name` the value `items`: replaced where the code runs for sure, joined to
    /// the old value where it runs under an undecided condition.
    fn assign(&mut self, name: &str, items: Vec<Item>, conds: &[String]) {
        if conds.is_empty() {
            let known = items.iter().all(|i| i.conds.is_empty());
            self.vars.insert(name.to_string(), Var { items, known });
            return;
        }
        let var = self.vars.entry(name.to_string()).or_insert(Var {
            items: Vec::new(),
            known: false,
        });
        var.known = false;
        for i in items {
            if !var
                .items
                .iter()
                .any(|o| o.text == i.text && o.line == i.line)
            {
                var.items.push(i);
            }
        }
    }

    fn unset(&mut self, name: &str, conds: &[String]) {
        if conds.is_empty() {
            self.vars.remove(name);
        } else if let Some(v) = self.vars.get_mut(name) {
            v.known = false;
        }
    }

    /// Runs `commands` from `start` to the end of the slice.
    fn exec(&mut self, commands: &[Command], start: usize) {
        let mut i = start;
        while i < commands.len() {
            let c = &commands[i];
            i += 1;
            match c.name.as_str() {
                "if" => {
                    let live = self.conds().is_some();
                    let (current, taken, undecided) = if !live {
                        (Branch::Off, false, Vec::new())
                    } else {
                        let desc = format!("if({})", describe(&c.args));
                        match self.condition(&c.args) {
                            Some(true) => (Branch::On, true, Vec::new()),
                            Some(false) => (Branch::Off, false, Vec::new()),
                            None => (Branch::Maybe(desc.clone()), false, vec![desc]),
                        }
                    };
                    self.ifs.push(IfFrame {
                        live,
                        taken,
                        undecided,
                        current,
                    });
                    continue;
                }
                "elseif" | "else" => {
                    let Some(f) = self.ifs.last() else { continue };
                    if !f.live || f.taken {
                        if let Some(f) = self.ifs.last_mut() {
                            f.current = Branch::Off;
                        }
                        continue;
                    }
                    let undecided = f.undecided.clone();
                    let value = if c.name == "else" {
                        Some(true)
                    } else {
                        // The enclosing branches, for the condition's own evaluation.
                        let saved = self.ifs.pop();
                        let v = self.condition(&c.args);
                        self.ifs.extend(saved);
                        v
                    };
                    let desc = if c.name == "else" {
                        format!("else() of {}", undecided.join(", "))
                    } else {
                        format!("elseif({})", describe(&c.args))
                    };
                    let Some(f) = self.ifs.last_mut() else {
                        continue;
                    };
                    f.current = match value {
                        Some(false) => Branch::Off,
                        Some(true) if undecided.is_empty() => {
                            f.taken = true;
                            Branch::On
                        }
                        _ => {
                            f.undecided.push(desc.clone());
                            Branch::Maybe(desc)
                        }
                    };
                    continue;
                }
                "endif" => {
                    self.ifs.pop();
                    continue;
                }
                "function" | "macro" => {
                    // A definition: its body runs where it is called, with arguments
                    // this reading does not follow.
                    i = block_end(commands, i, &c.name, &format!("end{}", c.name));
                    continue;
                }
                "foreach" => {
                    let end = block_end(commands, i, "foreach", "endforeach");
                    let body = &commands[i..end.saturating_sub(1).max(i)];
                    self.foreach(c, body);
                    i = end;
                    continue;
                }
                "while" => {
                    i = block_end(commands, i, "while", "endwhile");
                    continue;
                }
                _ => {}
            }
            let Some(conds) = self.conds() else {
                continue;
            };
            self.command(c, &conds);
        }
    }

    fn foreach(&mut self, c: &Command, body: &[Command]) {
        let Some(conds) = self.conds() else { return };
        if self.depth > 8 {
            return;
        }
        let Some(var) = c.args.first().map(|a| a.text.clone()) else {
            return;
        };
        let rest = &c.args[1..];
        let mut values: Vec<Item> = Vec::new();
        match rest.first().map(|a| a.text.as_str()) {
            Some("RANGE") => return,
            Some("IN") => {
                let mut mode = "";
                for a in &rest[1..] {
                    match a.text.as_str() {
                        "LISTS" | "ITEMS" | "ZIP_LISTS" if !a.quoted => mode = &a.text,
                        _ if mode == "LISTS" => {
                            if let Some(v) = self.vars.get(&a.text) {
                                values.extend(v.items.iter().cloned());
                            }
                        }
                        _ if mode == "ITEMS" => {
                            values.extend(self.expand_arg(a, c.line, &[]));
                        }
                        _ => return,
                    }
                }
            }
            _ => values = self.expand_args(rest, c.line, &[]),
        }
        self.depth += 1;
        let saved = self.vars.get(&var).cloned();
        for v in values.into_iter().take(64) {
            self.assign(&var, vec![v], &[]);
            // The body runs under the conditions around the loop.
            let ifs = std::mem::take(&mut self.ifs);
            if !conds.is_empty() {
                self.ifs.push(IfFrame {
                    live: true,
                    taken: false,
                    undecided: Vec::new(),
                    current: Branch::Maybe(conds.join(" and ")),
                });
            }
            self.exec(body, 0);
            self.ifs = ifs;
        }
        match saved {
            Some(v) => {
                self.vars.insert(var, v);
            }
            None => {
                self.vars.remove(&var);
            }
        }
        self.depth -= 1;
    }

    fn command(&mut self, c: &Command, conds: &[String]) {
        let args = &c.args;
        let first = args.first().map(|a| a.text.clone()).unwrap_or_default();
        match c.name.as_str() {
            "set" => {
                let mut values: &[Arg] = &args[args.len().min(1)..];
                let cache = values.iter().position(|a| !a.quoted && a.text == "CACHE");
                let parent = values
                    .iter()
                    .position(|a| !a.quoted && a.text == "PARENT_SCOPE");
                if parent.is_some() {
                    return;
                }
                if let Some(at) = cache {
                    let force = values[at..].iter().any(|a| !a.quoted && a.text == "FORCE");
                    values = &values[..at];
                    // A cache default: the value unless the variable is already set
                    // (on the command line too, which this reading cannot see).
                    if self.vars.contains_key(&first) && !force {
                        return;
                    }
                }
                if values.is_empty() {
                    self.unset(&first, conds);
                    return;
                }
                let items = self.expand_args(values, c.line, conds);
                self.assign(&first, items, conds);
            }
            "unset" => self.unset(&first, conds),
            "option" => {
                if self.vars.contains_key(&first) {
                    return;
                }
                let default = args.get(2).map_or("OFF".to_string(), |a| a.text.clone());
                let items = vec![Item {
                    text: default,
                    line: c.line,
                    conds: conds.to_vec(),
                }];
                self.assign(&first, items, conds);
            }
            "list" => {
                let Some(name) = args.get(1).map(|a| a.text.clone()) else {
                    return;
                };
                match first.as_str() {
                    "APPEND" | "PREPEND" | "INSERT" => {
                        let skip = if first == "INSERT" { 3 } else { 2 };
                        let new = self.expand_args(&args[skip.min(args.len())..], c.line, conds);
                        let mut items = self.vars.get(&name).map(|v| v.items.clone());
                        let known = self.vars.get(&name).is_none_or(|v| v.known);
                        let old = items.get_or_insert_with(Vec::new);
                        if first == "PREPEND" {
                            let mut all = new;
                            all.append(old);
                            *old = all;
                        } else {
                            old.extend(new);
                        }
                        let items = items.unwrap_or_default();
                        self.assign(&name, items, conds);
                        if !known {
                            if let Some(v) = self.vars.get_mut(&name) {
                                v.known = false;
                            }
                        }
                    }
                    "REMOVE_ITEM" if conds.is_empty() => {
                        let gone: Vec<String> = self
                            .expand_args(&args[2..], c.line, &[])
                            .into_iter()
                            .map(|i| i.text)
                            .collect();
                        if let Some(v) = self.vars.get_mut(&name) {
                            v.items.retain(|i| !gone.contains(&i.text));
                        }
                    }
                    "REMOVE_DUPLICATES" | "SORT" | "REVERSE" => {}
                    // Values this reading does not compute: the list, or the output
                    // variable, is no longer known.
                    "LENGTH" | "GET" | "JOIN" | "SUBLIST" | "FIND" => {
                        if let Some(out) = args.last() {
                            self.vars.remove(&out.text);
                        }
                    }
                    _ => {
                        self.vars.remove(&name);
                    }
                }
            }
            "string" => {
                let Some(name) = args.get(1).map(|a| a.text.clone()) else {
                    return;
                };
                match first.as_str() {
                    "APPEND" | "PREPEND" => {
                        let new: String = self
                            .expand_args(&args[2..], c.line, &[])
                            .iter()
                            .map(|i| i.text.as_str())
                            .collect();
                        let mut items = self
                            .vars
                            .get(&name)
                            .map(|v| v.items.clone())
                            .unwrap_or_default();
                        let item = Item {
                            text: new,
                            line: c.line,
                            conds: conds.to_vec(),
                        };
                        if first == "PREPEND" {
                            items.insert(0, item);
                        } else {
                            items.push(item);
                        }
                        self.assign(&name, items, conds);
                    }
                    "CONCAT" => {
                        let items = self.expand_args(&args[2..], c.line, conds);
                        self.assign(&name, items, conds);
                    }
                    _ => {
                        // `string(REPLACE a b OUT in)`, `string(REGEX … OUT …)`,
                        // `string(TOUPPER in OUT)`: outputs not computed here.
                        for a in &args[1..] {
                            if self.vars.contains_key(&a.text) && !a.quoted {
                                self.vars.remove(&a.text);
                                break;
                            }
                        }
                        let out = match first.as_str() {
                            "REPLACE" => args.get(3),
                            "REGEX" => {
                                args.get(if args.get(1).is_some_and(|a| a.text == "REPLACE") {
                                    4
                                } else {
                                    3
                                })
                            }
                            _ => args.get(2),
                        };
                        if let Some(o) = out {
                            self.vars.remove(&o.text);
                        }
                    }
                }
            }
            "cuda_select_nvcc_arch_flags" => {
                // FindCUDA's `cuda_select_nvcc_arch_flags(OUT 7.0 8.0+PTX)`: the
                // `-gencode` flags of the numbered architectures; `Auto` (the GPU of the
                // configuring machine), `Common`, `All` and names are not followed.
                let archs = self.expand_args(&args[args.len().min(1)..], c.line, conds);
                let mut flags = Vec::new();
                for a in &archs {
                    let (num, ptx) = match a.text.strip_suffix("+PTX") {
                        Some(n) => (n, true),
                        None => (a.text.as_str(), false),
                    };
                    let Some((major, minor)) = num.split_once('.') else {
                        self.vars.remove(&first);
                        return;
                    };
                    if !(major.chars().all(|c| c.is_ascii_digit())
                        && minor.chars().all(|c| c.is_ascii_alphanumeric()))
                    {
                        self.vars.remove(&first);
                        return;
                    }
                    let cc = format!("{major}{minor}");
                    let code = if ptx {
                        format!("sm_{cc},compute_{cc}")
                    } else {
                        format!("sm_{cc}")
                    };
                    for text in [
                        "-gencode".to_string(),
                        format!("arch=compute_{cc},code={code}"),
                    ] {
                        flags.push(Item {
                            text,
                            line: a.line,
                            conds: a.conds.clone(),
                        });
                    }
                }
                if flags.is_empty() {
                    self.vars.remove(&first);
                } else {
                    self.assign(&first, flags, conds);
                }
            }
            "target_compile_options"
            | "add_compile_options"
            | "add_definitions"
            | "cuda_add_library"
            | "cuda_add_executable"
            | "cuda_compile"
            | "cuda_compile_ptx"
            | "cuda_compile_fatbin"
            | "cuda_compile_cubin"
            | "cuda_wrap_srcs" => {
                let items = self.expand_args(args, c.line, conds);
                self.sinks.extend(items);
            }
            "set_target_properties" | "set_property" | "set_source_files_properties"
                if args
                    .iter()
                    .any(|a| a.text == "COMPILE_OPTIONS" || a.text == "COMPILE_FLAGS") =>
            {
                let items = self.expand_args(args, c.line, conds);
                self.sinks.extend(items);
            }
            "math"
            | "get_filename_component"
            | "get_property"
            | "get_target_property"
            | "get_directory_property"
            | "get_source_file_property"
            | "execute_process"
            | "file"
            | "cmake_path"
            | "find_program"
            | "find_library"
            | "find_path"
            | "find_file"
            | "try_compile"
            | "try_run"
            | "cmake_host_system_information"
            | "cmake_parse_arguments"
            | "cmake_dependent_option"
            | "include" => {
                // They set variables this reading does not compute: any variable they
                // name is no longer known (`include()` may set any: those it names
                // only are dropped, as a reading of the included file would be a guess).
                let named: Vec<String> = args
                    .iter()
                    .filter(|a| !a.quoted && self.vars.contains_key(&a.text))
                    .map(|a| a.text.clone())
                    .collect();
                for n in named {
                    self.vars.remove(&n);
                }
                if c.name == "cmake_dependent_option" {
                    self.vars.remove(&first);
                }
            }
            _ => {}
        }
    }

    /// The truth of an `if()` condition where the file decides it.
    fn condition(&self, args: &[Arg]) -> Option<bool> {
        let mut p = CondParser {
            ev: self,
            args,
            at: 0,
        };
        let v = p.or();
        if p.at != args.len() {
            return None;
        }
        v
    }

    /// The value of an operand of a comparison: a variable's value, or the literal.
    fn operand(&self, a: &Arg) -> Option<String> {
        let text = if a.bracket {
            a.text.clone()
        } else {
            self.expand_text(&a.text, &mut Vec::new(), true)?
        };
        if a.quoted {
            return Some(text);
        }
        if self.vars.contains_key(&text) {
            return self.var_text(&text);
        }
        if is_identifier(&text) && constant_truth(&text).is_none() {
            // A variable not set here (on the command line, by a module): not known.
            return None;
        }
        Some(text)
    }

    /// The truth of a lone value (`if(X)`).
    fn truth(&self, a: &Arg) -> Option<bool> {
        let text = if a.bracket {
            a.text.clone()
        } else {
            self.expand_text(&a.text, &mut Vec::new(), true)?
        };
        if let Some(t) = constant_truth(&text) {
            return Some(t);
        }
        if a.quoted {
            return Some(false);
        }
        // A variable: true unless its value is a false constant.
        let v = self.var_text(&text)?;
        Some(constant_truth(&v).unwrap_or(true))
    }
}

/// Where the first `}` closing a `${` is, in `s`.
fn find_ref_close(s: &str) -> Option<usize> {
    let open = s.find("${")?;
    s[open..].find('}').map(|c| open + c)
}

/// The index past the command that closes the block opened just before `from`.
fn block_end(commands: &[Command], from: usize, open: &str, close: &str) -> usize {
    let mut depth = 1;
    for (k, c) in commands.iter().enumerate().skip(from) {
        if c.name == open {
            depth += 1;
        } else if c.name == close {
            depth -= 1;
            if depth == 0 {
                return k + 1;
            }
        }
    }
    commands.len()
}

/// A condition as written: `BUILD_SM80`, `CUDA_VERSION VERSION_GREATER 11`.
fn describe(args: &[Arg]) -> String {
    args.iter()
        .map(|a| {
            if a.quoted {
                format!("\"{}\"", a.text)
            } else {
                a.text.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
        .replace("( ", "(")
        .replace(" )", ")")
}

/// `if()`'s grammar over three truth values: `OR` of `AND`s of `NOT`s of primaries.
struct CondParser<'a> {
    ev: &'a Eval,
    args: &'a [Arg],
    at: usize,
}

impl CondParser<'_> {
    fn peek(&self, word: &str) -> bool {
        self.args
            .get(self.at)
            .is_some_and(|a| !a.quoted && a.text == word)
    }

    fn or(&mut self) -> Option<bool> {
        let mut v = self.and();
        while self.peek("OR") {
            self.at += 1;
            let r = self.and();
            v = match (v, r) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            };
        }
        v
    }

    fn and(&mut self) -> Option<bool> {
        let mut v = self.not();
        while self.peek("AND") {
            self.at += 1;
            let r = self.not();
            v = match (v, r) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
        }
        v
    }

    fn not(&mut self) -> Option<bool> {
        if self.peek("NOT") {
            self.at += 1;
            return self.not().map(|v| !v);
        }
        self.primary()
    }

    fn primary(&mut self) -> Option<bool> {
        if self.peek("(") {
            self.at += 1;
            let v = self.or();
            if self.peek(")") {
                self.at += 1;
            } else {
                self.at = self.args.len() + 1;
            }
            return v;
        }
        let Some(a) = self.args.get(self.at) else {
            self.at = self.args.len() + 1;
            return None;
        };
        self.at += 1;
        if !a.quoted {
            match a.text.as_str() {
                "DEFINED" => {
                    let name = self.args.get(self.at)?.text.clone();
                    self.at += 1;
                    // Set here for sure: defined; otherwise the command line may.
                    return match self.ev.vars.get(&name) {
                        Some(v) if v.known => Some(true),
                        _ => None,
                    };
                }
                "EXISTS" | "COMMAND" | "TARGET" | "POLICY" | "TEST" | "IS_DIRECTORY"
                | "IS_ABSOLUTE" | "IS_SYMLINK" | "IS_READABLE" | "IS_WRITABLE"
                | "IS_EXECUTABLE" => {
                    self.at += 1;
                    return None;
                }
                _ => {}
            }
        }
        if let Some(op) = self.args.get(self.at).filter(|o| !o.quoted) {
            let op = op.text.clone();
            let numeric = ["EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL"];
            let strings = [
                "STREQUAL",
                "STRLESS",
                "STRGREATER",
                "STRLESS_EQUAL",
                "STRGREATER_EQUAL",
            ];
            let other = [
                "MATCHES",
                "IN_LIST",
                "IS_NEWER_THAN",
                "PATH_EQUAL",
                "VERSION_EQUAL",
                "VERSION_LESS",
                "VERSION_GREATER",
                "VERSION_LESS_EQUAL",
                "VERSION_GREATER_EQUAL",
            ];
            if numeric.contains(&op.as_str())
                || strings.contains(&op.as_str())
                || other.contains(&op.as_str())
            {
                self.at += 1;
                let b = self.args.get(self.at)?;
                self.at += 1;
                if op == "IN_LIST" {
                    // The right side names a list variable.
                    let x = self.ev.operand(a)?;
                    let list = self.ev.var_text(&b.text)?;
                    return Some(list.split(';').any(|v| v == x));
                }
                let (x, y) = (self.ev.operand(a)?, self.ev.operand(b)?);
                return match op.as_str() {
                    "STREQUAL" => Some(x == y),
                    "EQUAL" | "LESS" | "GREATER" | "LESS_EQUAL" | "GREATER_EQUAL" => {
                        let (x, y) = (x.parse::<f64>().ok()?, y.parse::<f64>().ok()?);
                        Some(match op.as_str() {
                            "EQUAL" => x == y,
                            "LESS" => x < y,
                            "GREATER" => x > y,
                            "LESS_EQUAL" => x <= y,
                            _ => x >= y,
                        })
                    }
                    _ => None,
                };
            }
        }
        self.ev.truth(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str) -> String {
        gencode_targets(text)
            .iter()
            .map(|(t, line, conds)| {
                if conds.is_empty() {
                    format!("{t}@{line}")
                } else {
                    format!("{t}@{line} [{}]", conds.join(" & "))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn a_source_list_in_full_decides_what_is_built() {
        use super::cmake_builds;
        let listed = "project(p LANGUAGES CUDA)\ninclude(CheckLanguage)\nset(SRC a.cu src/b.cu)\nlist(APPEND SRC c.cu)\nadd_executable(app main.cpp ${SRC})\n";
        assert_eq!(cmake_builds(listed, "b.cu", None), Some(true));
        assert_eq!(cmake_builds(listed, "c.cu", None), Some(true));
        assert_eq!(cmake_builds(listed, "d.cu", None), Some(false));
        // Anything that may add sources the text does not spell out.
        for other in [
            "file(GLOB K *.cu)\n",
            "aux_source_directory(. K)\n",
            "target_sources(app PRIVATE ${EXTRA})\n",
            "function(add_kernel n)\n  add_library(${n} ${n}.cu)\nendfunction()\n",
            "macro(with_sources)\n  target_sources(app PRIVATE ${ARGN})\nendmacro()\n",
            "foreach(k 1 2)\nlist(APPEND SRC k${k}.cu)\nendforeach()\n",
            "pybind11_add_module(ext ext.cu)\n",
        ] {
            assert_eq!(
                cmake_builds(&format!("{listed}{other}"), "d.cu", None),
                None,
                "{other}"
            );
        }
        // A helper that only builds a flag string adds no source.
        let flags = "function(make_gencode out)\n  set(tmp \"\")\n  foreach(a IN LISTS ARGN)\n    set(tmp \"${tmp} -gencode arch=compute_${a},code=sm_${a}\")\n  endforeach()\n  set(${out} ${tmp} PARENT_SCOPE)\nendfunction()\nmake_gencode(GENCODE 86)\n";
        assert_eq!(
            cmake_builds(&format!("{listed}{flags}"), "d.cu", None),
            Some(false)
        );
        // A glob names only what its folders hold: `common/*.cu` cannot be `tools/d.cu`,
        // and may be `common/d.cu`; a pattern with a wildcard folder may be anything.
        let glob = format!("{listed}file(GLOB K ${{PROJECT_SOURCE_DIR}}/common/**/*.cu ${{PROJECT_SOURCE_DIR}}/common/*.cu)\n");
        assert_eq!(cmake_builds(&glob, "d.cu", Some("tools/d.cu")), Some(false));
        assert_eq!(cmake_builds(&glob, "d.cu", Some("common/d.cu")), None);
        assert_eq!(cmake_builds(&glob, "d.cu", None), None);
        let anywhere = format!("{listed}file(GLOB_RECURSE K */*.cu)\n");
        assert_eq!(cmake_builds(&anywhere, "d.cu", Some("tools/d.cu")), None);
        // A source list from a variable set elsewhere, or no target at all.
        assert_eq!(
            cmake_builds("add_library(k ${KERNELS})\n", "d.cu", None),
            None
        );
        assert_eq!(cmake_builds("project(p)\n", "d.cu", None), None);
    }

    #[test]
    fn options_decide_the_gencode_flags() {
        let t = r#"cmake_minimum_required(VERSION 3.10)
option(WITH_SM70 "Volta" OFF)
option(WITH_SM80 "Ampere" ON)
set(ARCH_FLAGS "")
if(WITH_SM70)
  set(ARCH_FLAGS ${ARCH_FLAGS} -gencode arch=compute_70,code=sm_70)
endif()
if(WITH_SM80)
  set(ARCH_FLAGS ${ARCH_FLAGS} -gencode arch=compute_80,code=sm_80)
endif(WITH_SM80)
if(NOT WITH_SM80)
  list(APPEND ARCH_FLAGS -gencode=arch=compute_75,code=sm_75)
endif()
set(CUDA_NVCC_FLAGS ${CUDA_NVCC_FLAGS} ${ARCH_FLAGS} -O3)
"#;
        assert_eq!(show(t), "sm_80@9");
    }

    #[test]
    fn undecided_conditions_give_the_union_with_the_condition() {
        let t = r#"set(FLAGS -gencode arch=compute_80,code=sm_80)
if(CUDA_VERSION VERSION_GREATER_EQUAL 12.0)
  list(APPEND FLAGS "-gencode arch=compute_90a,code=sm_90a")
else()
  list(APPEND FLAGS -gencode arch=compute_86,code=sm_86)
endif()
add_library(k k.cu)
target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${FLAGS}>)
"#;
        assert_eq!(
            show(t),
            "sm_80@1, sm_90a@3 [if(CUDA_VERSION VERSION_GREATER_EQUAL 12.0)], sm_86@5 [else() of if(CUDA_VERSION VERSION_GREATER_EQUAL 12.0)]"
        );
    }

    #[test]
    fn flags_that_never_reach_nvcc_name_no_target() {
        let t = "set(UNUSED -gencode arch=compute_70,code=sm_70)\nadd_library(k k.cu)\n";
        assert_eq!(show(t), "");
        // A variable the command line sets decides nothing; `DEFINED` of one set here does.
        let t = "if(DEFINED SM)\n  set(G -arch=sm_${SM})\nendif()\nset(SM 86)\nif(DEFINED SM)\n  string(APPEND CMAKE_CUDA_FLAGS \" -arch=sm_${SM}\")\nendif()\n";
        assert_eq!(show(t), "sm_86@6");
    }

    #[test]
    fn escaped_quotes_and_lists_of_architectures() {
        let t = r#"set(SM_SETS 70 80 90)
set(SM 80 CACHE STRING "target")
foreach(N IN LISTS SM_SETS)
  if(N IN_LIST SM)
    string(APPEND CMAKE_CUDA_FLAGS " -gencode=arch=compute_${N},code=\"sm_${N},compute_${N}\"")
  endif()
endforeach()
"#;
        assert_eq!(show(t), "sm_80@5");
    }

    #[test]
    fn find_cuda_arch_selection() {
        let t = "find_package(CUDA)\ncuda_select_nvcc_arch_flags(ARCH_FLAGS 7.5 8.6+PTX)\nlist(APPEND CUDA_NVCC_FLAGS ${ARCH_FLAGS})\n";
        assert_eq!(show(t), "sm_75@2, sm_86@2");
        // The GPU of the machine that configures: not known.
        let t = "cuda_select_nvcc_arch_flags(ARCH_FLAGS Auto)\nlist(APPEND CUDA_NVCC_FLAGS ${ARCH_FLAGS})\n";
        assert_eq!(show(t), "");
    }

    #[test]
    fn foreach_cache_defaults_and_comments() {
        let t = r#"set(GPU_ARCHS "80;90" CACHE STRING "archs")
# set(GPU_ARCHS 70)
#[[ set(GPU_ARCHS 60) ]]
foreach(a IN LISTS GPU_ARCHS)
  string(APPEND CMAKE_CUDA_FLAGS " --generate-code=arch=compute_${a},code=[sm_${a}]")
endforeach()
function(unused)
  set(CMAKE_CUDA_FLAGS -arch=sm_50)
endfunction()
"#;
        assert_eq!(show(t), "sm_80@5, sm_90@5");
        let t = "option(FAST \"x\" ON)\nif(FAST AND NOT WIN32)\n set(CMAKE_CUDA_FLAGS -arch=sm_75)\nendif()\n";
        assert_eq!(show(t), "sm_75@3 [if(FAST AND NOT WIN32)]");
        let t = "option(FAST \"x\" OFF)\nif(FAST AND NOT WIN32)\n set(CMAKE_CUDA_FLAGS -arch=sm_75)\nendif()\n";
        assert_eq!(show(t), "");
    }
}
