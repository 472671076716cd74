//! Reading the targets out of the files a build keeps: a compile command's words,
//! `CMakeLists.txt` and `*.cmake`, `setup.py`/`pyproject.toml` and
//! `TORCH_CUDA_ARCH_LIST`, Makefiles, Visual Studio projects and `xmake.lua`. Pure functions of text, so each format is tested
//! on its own; [`crate::ProjectLoader`] finds the files.
//!
//! Values a build computes at configure time (`native`, `all`, `${SOME_VAR}` the file
//! does not set) are not known: such a statement gives no targets, and a later source
//! is tried.

use kernaut_ide::gpu::Target;

/// Targets found in one file, with the 1-based line of the first statement that named
/// them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The targets, in order, without repeats.
    pub targets: Vec<Target>,
    /// Where the first of them is written.
    pub line: usize,
    /// What some of them depend on, where the file does not decide it (`sm_90a only
    /// under if(CUDA_VERSION VERSION_GREATER_EQUAL 12.0) (line 7)`).
    pub note: Option<String>,
    /// The targets built only under such a condition.
    pub conditional: Vec<Target>,
}

fn push_unique(out: &mut Vec<Target>, t: Target) {
    if !out.contains(&t) {
        out.push(t);
    }
}

/// The targets of one compile command (its words, as `compile_commands.json` or a
/// Makefile gives them): `-arch=sm_80`, `-arch sm_80`, `--gpu-architecture=compute_90a`,
/// `-code=sm_80,sm_86`, every `-gencode arch=compute_XX,code=[sm_XX,compute_XX]`
/// (also `--generate-code=…`), and clang's `--cuda-gpu-arch=sm_80`/`--offload-arch`.
/// `-arch=native`, `all` and `all-major` name no target the text can know.
pub fn targets_in_command(words: &[String]) -> Vec<Target> {
    let mut arch: Vec<Target> = Vec::new();
    let mut code: Vec<Target> = Vec::new();
    let mut gencode: Vec<Target> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        let mut value_of = |names: &[&str]| -> Option<String> {
            for n in names {
                if let Some(v) = w.strip_prefix(n) {
                    if let Some(v) = v.strip_prefix('=') {
                        return Some(v.to_string());
                    }
                    if v.is_empty() {
                        let v = words.get(i).cloned();
                        i += 1;
                        return v;
                    }
                }
            }
            None
        };
        if let Some(v) = value_of(&["-gencode", "--generate-code"]) {
            for t in gencode_targets(&v) {
                push_unique(&mut gencode, t);
            }
        } else if let Some(v) = value_of(&["-arch", "--gpu-architecture"]) {
            for t in v.split(',').filter_map(|s| Target::parse(s).ok()) {
                push_unique(&mut arch, t);
            }
        } else if let Some(v) = value_of(&["-code", "--gpu-code"]) {
            for t in v.split(',').filter_map(|s| Target::parse(s).ok()) {
                push_unique(&mut code, t);
            }
        } else if let Some(v) = value_of(&["--cuda-gpu-arch", "--offload-arch"]) {
            for t in v.split(',').filter_map(|s| Target::parse(s).ok()) {
                push_unique(&mut arch, t);
            }
        }
    }
    let mut out = gencode;
    // `-arch=compute_80 -code=sm_80,sm_86` compiles for the codes; `-arch=sm_80` alone
    // for sm_80 (and embeds compute_80 PTX, which has the same features).
    let plain = if code.is_empty() { arch } else { code };
    for t in plain {
        push_unique(&mut out, t);
    }
    // A PTX-only target next to the real one of the same capability adds nothing.
    let reals: Vec<(u32, u32, kernaut_ide::gpu::Variant)> = out
        .iter()
        .filter(|t| !t.virtual_only)
        .map(|t| (t.major, t.minor, t.variant))
        .collect();
    out.retain(|t| !t.virtual_only || !reals.contains(&(t.major, t.minor, t.variant)));
    out
}

/// The targets of one `-gencode` value: `arch=compute_90a,code=[sm_90a,compute_90a]`,
/// `arch=compute_80,code=sm_80`, `arch=compute_80,code="sm_80,compute_80"`.
pub fn gencode_targets(value: &str) -> Vec<Target> {
    let v = value.trim_matches(['"', '\'']);
    let mut out = Vec::new();
    let Some(code) = v.split_once("code=").map(|(_, c)| c) else {
        // `arch=` alone: the virtual architecture, compiled at run time.
        if let Some(a) = v.strip_prefix("arch=") {
            if let Ok(t) = Target::parse(a.split(',').next().unwrap_or(a)) {
                out.push(t);
            }
        }
        return out;
    };
    for c in code
        .trim_matches(['[', ']', '"', '\''])
        .split(',')
        .map(|c| c.trim_matches(['[', ']', '"', '\'', ' ']))
    {
        if let Ok(t) = Target::parse(c) {
            push_unique(&mut out, t);
        }
    }
    out
}

/// Every `arch=compute_XX,code=…` written in a text (a `setup.py`'s flag lists, a
/// Makefile's `GENCODE` variables), as one command's `-gencode` values.
fn gencodes_in_text(text: &str) -> Vec<(usize, Vec<Target>)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("arch=compute_") {
            let tail = &rest[at..];
            // `-arch=compute_80` is nvcc's own flag, not a `-gencode` value.
            if rest[..at].ends_with('-') {
                rest = &tail[1..];
                continue;
            }
            let end = tail
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')'))
                .unwrap_or(tail.len());
            // `code=[a,b]` may hold spaces: take the bracket whole.
            let end = match (tail.find('['), tail.find(']')) {
                (Some(o), Some(c)) if o < end && c > o => c + 1,
                _ => end,
            };
            let targets = gencode_targets(&tail[..end]);
            if !targets.is_empty() {
                out.push((n + 1, targets));
            }
            rest = &tail[end.max(1)..];
        }
    }
    out
}

/// One rule of a Makefile: its prerequisites (expanded) and the 0-based lines of its
/// recipe.
struct MakeRule {
    prerequisites: Vec<String>,
    recipe: Vec<usize>,
}

/// The rules of a Makefile: a line `targets: prerequisites` (not a `:=` assignment)
/// and the tab-indented lines after it.
fn makefile_rules(text: &str, expand: &dyn Fn(&str) -> String) -> Vec<MakeRule> {
    let mut rules: Vec<MakeRule> = Vec::new();
    let mut open = false;
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        // A header continued with `\` goes on over the next lines, whatever they start
        // with (make joins them before it looks for a recipe's tab).
        let mut joined;
        let mut line = line;
        if !line.starts_with('\t') && line.trim_end().ends_with('\\') {
            joined = line.trim_end().trim_end_matches('\\').to_string();
            for (_, next) in lines.by_ref() {
                let more = next.trim_end();
                joined.push(' ');
                joined.push_str(more.trim_end_matches('\\'));
                if !more.ends_with('\\') {
                    break;
                }
            }
            line = &joined;
        }
        if line.starts_with('\t') {
            if open {
                if let Some(r) = rules.last_mut() {
                    r.recipe.push(n);
                }
            }
            continue;
        }
        let code = line.split('#').next().unwrap_or("");
        if code.trim().is_empty() {
            continue;
        }
        open = false;
        let Some(colon) = code.find(':') else {
            continue;
        };
        let after = &code[colon + 1..];
        if after.starts_with('=') || after.starts_with(":=") || code[..colon].contains('=') {
            continue;
        }
        // `target: prereqs ; recipe` keeps its recipe on the same line.
        let prereqs = after.split(';').next().unwrap_or("");
        rules.push(MakeRule {
            prerequisites: expand(prereqs)
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            recipe: if after.contains(';') {
                vec![n]
            } else {
                Vec::new()
            },
        });
        open = true;
    }
    rules
}

/// `text` with the lines that continue a header or an assignment (after a line ending
/// in `\\` that is no recipe line) starting with a space where they started with a tab:
/// make joins such lines before it looks for a recipe's tab, so `tri: a.cu \\` then
/// `\tb.cu` names `b.cu` as a prerequisite, not a command. Every line keeps its place
/// and length.
pub fn makefile_untab_continuations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let header = continued || !line.starts_with('\t');
        match line.strip_prefix('\t') {
            Some(rest) if continued => {
                out.push(' ');
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
        continued = header && body.trim_end().ends_with('\\');
    }
    out
}

/// A CMake list: `80;90a`, `80 90a`, `"80-real;90a-virtual"`. `None` where a value is
/// computed at configure time (`native`, `all`, `all-major`, `OFF`, a variable).
fn cmake_list(values: &str) -> Option<Vec<Target>> {
    let mut out = Vec::new();
    for v in values
        .split(|c: char| c == ';' || c.is_whitespace())
        .map(|v| v.trim_matches(['"', '\'']))
        .filter(|v| !v.is_empty())
    {
        if v.contains("${") || v.contains("$ENV") || v.contains("$<") {
            return None;
        }
        match Target::parse(v) {
            Ok(t) => push_unique(&mut out, t),
            Err(_) => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The text of a CMake command's arguments from `open` (the `(`), to its `)`.
fn cmake_args(text: &str, open: usize) -> Option<&str> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[open + 1..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// `${VAR}` replaced by what `set(VAR …)` in the same text gives it, where it does.
fn expand_cmake_vars(args: &str, text: &str) -> String {
    let mut out = args.to_string();
    for _ in 0..4 {
        let Some(start) = out.find("${") else { break };
        let Some(len) = out[start..].find('}') else {
            break;
        };
        let name = out[start + 2..start + len].to_string();
        let Some(value) = cmake_set_value(text, &name) else {
            break;
        };
        out.replace_range(start..start + len + 1, &value);
    }
    out
}

/// The value of `set(NAME value…)` in `text`, when it is set exactly once.
fn cmake_set_value(text: &str, name: &str) -> Option<String> {
    let mut found = None;
    for (at, _) in text.match_indices("set(") {
        let Some(args) = cmake_args(text, at + 3) else {
            continue;
        };
        let mut words = args.split_whitespace();
        if words.next() != Some(name) {
            continue;
        }
        let rest: Vec<&str> = words
            .take_while(|w| !matches!(*w, "CACHE" | "PARENT_SCOPE"))
            .collect();
        if found.is_some() {
            return None;
        }
        found = Some(rest.join(";"));
    }
    found
}

/// The targets a `CMakeLists.txt` or `*.cmake` text names: `set(CMAKE_CUDA_ARCHITECTURES
/// …)`, `CUDA_ARCHITECTURES …` in `set_target_properties`/`set_property`. Where several
/// statements name different lists (per target, or per CUDA version), only the targets
/// every one of them names are sure: their intersection.
///
/// Without such a list, the `-gencode`/`-arch` flags that reach nvcc
/// (`CUDA_NVCC_FLAGS`, `CMAKE_CUDA_FLAGS`, `target_compile_options`, …), through the
/// variables, options and `if()`s the file sets and decides ([`crate::cmake`]). Targets
/// of a branch the file does not decide are kept, and the note says what they depend
/// on.
pub fn cmake_targets(text: &str) -> Option<Found> {
    architectures_targets(text).or_else(|| cmake_flag_targets(text))
}

/// The targets of the `-gencode`/`-arch` flags a CMake text hands nvcc, with a note for
/// those that depend on a condition the file does not decide.
fn cmake_flag_targets(text: &str) -> Option<Found> {
    found_under_conditions(crate::cmake::gencode_targets(text))
}

/// Targets, each with its line and the undecided conditions it depends on (empty:
/// always), as one [`Found`] whose note says which targets depend on what.
fn found_under_conditions(found: Vec<(Target, usize, Vec<String>)>) -> Option<Found> {
    let (_, line, _) = found.first()?;
    let line = *line;
    let mut notes: Vec<String> = Vec::new();
    // The conditional targets grouped by what they depend on.
    let mut groups: Vec<(String, Vec<String>, usize)> = Vec::new();
    for (t, l, conds) in &found {
        if conds.is_empty() {
            continue;
        }
        let key = conds.join(" and ");
        match groups.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, ts, _)) => ts.push(t.to_string()),
            None => groups.push((key, vec![t.to_string()], *l)),
        }
    }
    for (key, ts, l) in groups {
        notes.push(format!(
            "{} only under {key} (line {l}), which the file does not decide",
            ts.join(", ")
        ));
    }
    let conditional = found
        .iter()
        .filter(|(t, _, conds)| {
            !conds.is_empty() && !found.iter().any(|(u, _, c)| u == t && c.is_empty())
        })
        .map(|(t, _, _)| *t)
        .collect();
    Some(Found {
        targets: found.into_iter().map(|(t, _, _)| t).collect(),
        line,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        conditional,
    })
}

/// The targets of the `CUDA_ARCHITECTURES` lists of a CMake text ([`cmake_targets`]).
fn architectures_targets(text: &str) -> Option<Found> {
    let mut lists: Vec<(usize, Vec<Target>)> = Vec::new();
    let code = strip_cmake_comments(text);
    for key in ["CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES"] {
        for (at, _) in code.match_indices(key) {
            // The whole key, not `CMAKE_CUDA_ARCHITECTURES` found again as its tail.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let after = &code[at + key.len()..];
            if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            // The statement: from the command's `(` to its `)`.
            let Some(open) = code[..at].rfind('(') else {
                continue;
            };
            let Some(args) = cmake_args(&code, open) else {
                continue;
            };
            let command = code[..open]
                .trim_end()
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if !matches!(
                command.as_str(),
                "set" | "set_target_properties" | "set_property"
            ) {
                continue;
            }
            // A source file's property (`set_source_files_properties(k_sm120.cu
            // PROPERTIES CUDA_ARCHITECTURES 120f)`, `set_property(SOURCE …)`) holds for
            // the files it names, not for the project's other sources.
            if command == "set_property" && args.trim_start().starts_with("SOURCE") {
                continue;
            }
            let offset_in_args = at - (open + 1);
            let Some(values) = args.get(offset_in_args + key.len()..) else {
                continue;
            };
            // Up to the next property name or keyword.
            let values: Vec<&str> = values
                .split_whitespace()
                .take_while(|w| {
                    !w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                        || w.trim_matches('"').chars().any(|c| c.is_ascii_digit())
                })
                .filter(|w| !matches!(*w, "CACHE" | "STRING" | "PARENT_SCOPE" | "FORCE"))
                .collect();
            let values = expand_cmake_vars(&values.join(" "), &code);
            if let Some(list) = cmake_list(&values) {
                let line = text[..at].matches('\n').count() + 1;
                lists.push((line, list));
            }
        }
    }
    let (line, first) = lists.first()?.clone();
    let sure: Vec<Target> = first
        .into_iter()
        .filter(|t| lists.iter().all(|(_, l)| l.contains(t)))
        .collect();
    if sure.is_empty() {
        // Lists set only in branches the file does not decide (per host processor, per
        // option): each is built under its condition.
        return found_under_conditions(crate::cmake::architectures_by_branch(text));
    }
    Some(Found {
        targets: sure,
        line,
        note: None,
        conditional: Vec::new(),
    })
}

/// Whether a CMake text names the way down to the folder `rel` (its path below the
/// CMake file's folder, `/`-separated): a path in its code that runs along `rel`
/// (`add_subdirectory(src)`, a source `src/k.cu`, a glob `src/*.cu`), not one that only
/// shares its first folder (`contrib/other` does not build `contrib/mine`).
pub fn cmake_mentions(text: &str, rel: &str) -> bool {
    let mut code = strip_cmake_comments(text);
    // Folders where headers are found or libraries linked are no way down to sources
    // (`include_directories("src/ops")` compiles nothing below `src/ops`).
    let lower = code.to_ascii_lowercase();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    for command in [
        "include_directories",
        "link_directories",
        "target_link_directories",
    ] {
        for (at, _) in lower.match_indices(command) {
            let Some(open) = lower[at + command.len()..]
                .find(|c: char| !c.is_whitespace())
                .map(|i| at + command.len() + i)
                .filter(|&i| lower.as_bytes()[i] == b'(')
            else {
                continue;
            };
            let end = lower[open..].find(')').map_or(lower.len(), |i| open + i);
            blank.push((open, end));
        }
    }
    for (from, to) in blank {
        code.replace_range(from..to, &" ".repeat(to - from));
    }
    let want: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
    if want.is_empty() {
        return true;
    }
    let is_path = |c: char| c.is_ascii_alphanumeric() || "_-./*${}".contains(c);
    // A path (`src/k.cu`, `src/*.cu`), or a folder named alone by `add_subdirectory`: a
    // bare word elsewhere (`"Build the contrib library"`) names no folder.
    // CMake's command names are case-insensitive (`ADD_SUBDIRECTORY(src)`), and the
    // legacy `subdirs(src)` adds folders too; lowering keeps every offset.
    let lower = code.to_ascii_lowercase();
    // (`add_subdirectory`'s first argument; every one of `subdirs`).
    let subdirs: Vec<&str> = [("add_subdirectory", 1), ("subdirs", usize::MAX)]
        .iter()
        .flat_map(|&(command, count)| {
            lower
                .match_indices(command)
                .filter(|(at, _)| {
                    !lower[..*at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
                .map(move |(at, _)| (at + command.len(), count))
        })
        .filter_map(|(end, count)| {
            let rest = code[end..].trim_start().strip_prefix('(')?;
            let args = &rest[..rest.find(')').unwrap_or(rest.len())];
            Some(
                args.split(|c: char| !is_path(c))
                    .filter(|t| !t.is_empty())
                    .take(count)
                    .map(|t| t.trim_start_matches("${CMAKE_CURRENT_SOURCE_DIR}/")),
            )
        })
        .flatten()
        .collect();
    code.split(|c: char| !is_path(c))
        .filter(|t| t.contains('/') || subdirs.contains(t))
        .any(|token| {
            // `${EXTERNAL}/src/k.cu` with `set(EXTERNAL "external")` once.
            let expanded;
            let token = if token.starts_with("${")
                && !token.starts_with("${CMAKE_")
                && !token.starts_with("${PROJECT_")
            {
                expanded = expand_cmake_vars(token, &code).replace('"', "");
                expanded.as_str()
            } else {
                token
            };
            let token = token
                .trim_start_matches("${CMAKE_CURRENT_SOURCE_DIR}/")
                .trim_start_matches("${PROJECT_SOURCE_DIR}/")
                .trim_start_matches("${CMAKE_SOURCE_DIR}/")
                .trim_start_matches("./");
            let parts: Vec<&str> = token.split('/').filter(|c| !c.is_empty()).collect();
            let n = parts.len().min(want.len());
            n > 0
                && parts[0] == want[0]
                && parts[..n]
                    .iter()
                    .zip(&want[..n])
                    .all(|(p, w)| p == w || p.contains('*'))
        })
}

/// `text` with `# …` comments blanked (kept in length, so offsets and lines hold, also
/// with CRLF line ends and multi-byte characters in comments).
fn strip_cmake_comments(text: &str) -> String {
    text.split('\n')
        .map(|l| match l.find('#') {
            Some(i) => {
                let tail = if l.ends_with('\r') { "\r" } else { "" };
                format!("{}{}{tail}", &l[..i], " ".repeat(l.len() - i - tail.len()))
            }
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `TORCH_CUDA_ARCH_LIST`'s value: `8.0;8.6+PTX;9.0a`, spaces or semicolons.
pub fn torch_arch_list(value: &str) -> Vec<Target> {
    let mut out = Vec::new();
    for v in value
        .split(|c: char| c == ';' || c.is_whitespace() || c == ',')
        .filter(|v| !v.is_empty())
    {
        if let Ok(t) = Target::parse(v) {
            push_unique(&mut out, t);
        }
    }
    out
}

/// The targets a Python build script (`setup.py`, `pyproject.toml`) names: the
/// `-gencode` values it passes (`arch=compute_90a,code=sm_90a`, in one string or
/// appended in pieces), else a `TORCH_CUDA_ARCH_LIST` it sets.
pub fn python_build_targets(text: &str) -> Option<Found> {
    python_targets(text).or_else(|| python_nvcc_words(text))
}

/// The targets of a Python script that runs nvcc itself (`build.py`, `compile.py`) or
/// through torch's JIT build (`torch.utils.cpp_extension.load(…, extra_cuda_cflags=[…])`,
/// `load_inline`): `-arch`, `-gencode`, `--gpu-architecture` among its string literals
/// (`['nvcc', '--cubin', '-arch', 'sm_35']`, `"nvcc -arch=sm_80 -c k.cu"`,
/// `"-gencode=arch=compute_100a,code=sm_100a"`), read as one command's words. `None` where
/// the script mentions neither nvcc nor CUDA flags for torch, or names no target.
pub fn python_nvcc_words(text: &str) -> Option<Found> {
    if !text.contains("nvcc") && !text.contains("extra_cuda_cflags") {
        return None;
    }
    nvcc_words_in_strings(text, &|line| Box::new(python_strings(line)))
}

/// The targets of a Rust build script (`build.rs`) that compiles CUDA: nvcc run as a
/// command (`Command::new("nvcc").args(["--gpu-architecture=sm_86", …])`) or the `cc`
/// crate's `.cuda(true)` with its `.flag("-arch=sm_86")`, read from its string literals
/// as one command's words. `None` where the script runs no CUDA compiler or names no
/// target.
pub fn rust_build_targets(text: &str) -> Option<Found> {
    if !text.contains("nvcc") && !text.contains(".cuda(true)") {
        return None;
    }
    nvcc_words_in_strings(text, &|line| Box::new(rust_strings(line)))
}

/// The nvcc commands of a shell script (`build.sh`, `run.sh`, a job script): each
/// command's words after `nvcc` (or a path ending in `/nvcc`), with its line. Lines
/// continued with `\` are joined; `#` comments, `&&`, `||`, `;` and `|` end a command.
pub fn shell_nvcc_commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut joined = String::new();
    let mut start = 0;
    for (n, line) in text.lines().enumerate() {
        if joined.is_empty() {
            start = n + 1;
        }
        let code = match line.trim_start().starts_with('#') {
            true => "",
            false => line.split(" #").next().unwrap_or_default(),
        };
        if let Some(body) = code.trim_end().strip_suffix('\\') {
            joined.push_str(body);
            joined.push(' ');
            continue;
        }
        joined.push_str(code);
        for command in joined.split(['&', '|', ';']) {
            let words: Vec<String> = command
                .split_whitespace()
                .map(|w| w.trim_matches(['"', '\'']).to_string())
                .collect();
            if let Some(at) = words
                .iter()
                .position(|w| w == "nvcc" || w.ends_with("/nvcc"))
            {
                out.push((start, words[at + 1..].to_vec()));
            }
        }
        joined.clear();
    }
    out
}

/// The targets a shell script's nvcc commands name (`nvcc -arch=sm_80 k.cu`), with the
/// line of the first that names one; `None` where none does.
pub fn shell_nvcc_targets(text: &str) -> Option<Found> {
    if !text.contains("nvcc") {
        return None;
    }
    let commands = shell_nvcc_commands(text);
    let mut targets = Vec::new();
    let mut line = None;
    for (n, words) in &commands {
        let found = targets_in_command(words);
        if !found.is_empty() {
            line.get_or_insert(*n);
        }
        for t in found {
            push_unique(&mut targets, t);
        }
    }
    (!targets.is_empty()).then(|| Found {
        targets,
        line: line.unwrap_or(1),
        note: None,
        conditional: Vec::new(),
    })
}

/// The CUDA sources a shell script's nvcc commands compile, as written (paths from the
/// folder the script runs in): `Some` where each is spelled out and the script does
/// not change folder; `None` where a name is computed (`$f`, `*.cu`, a command
/// substitution), the script runs `cd` or `pushd`, or no nvcc command names a `.cu`.
pub fn shell_cuda_sources(text: &str) -> Option<Vec<String>> {
    let commands = shell_nvcc_commands(text);
    if commands.is_empty()
        || text.lines().any(|l| {
            let l = l.trim_start();
            !l.starts_with('#')
                && l.split(['&', '|', ';', '(', ' '])
                    .any(|w| w == "cd" || w == "pushd")
        })
    {
        return None;
    }
    // Options whose value is the next word.
    const VALUED: [&str; 14] = [
        "-o",
        "-I",
        "-L",
        "-l",
        "-D",
        "-U",
        "-x",
        "-arch",
        "-code",
        "-gencode",
        "-ccbin",
        "-Xcompiler",
        "-Xptxas",
        "-Xlinker",
    ];
    let mut sources = Vec::new();
    for (_, words) in &commands {
        let mut skip = false;
        for w in words {
            if std::mem::take(&mut skip) {
                continue;
            }
            if w.starts_with('-') {
                skip = VALUED.contains(&w.as_str());
                continue;
            }
            if w.contains(['$', '*', '`', '?']) {
                return None;
            }
            if w.ends_with(".cu") {
                sources.push(w.trim_start_matches("./").to_string());
            }
        }
    }
    (!sources.is_empty()).then_some(sources)
}

/// The double-quoted string literals of one line of Rust, before a `//` comment.
fn rust_strings(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line.split("//").next().unwrap_or_default();
    std::iter::from_fn(move || {
        let q = rest.find('"')?;
        let len = rest[q + 1..].find('"')?;
        let literal = &rest[q + 1..q + 1 + len];
        rest = &rest[q + 2 + len..];
        Some(literal)
    })
}

type Strings<'t> = Box<dyn Iterator<Item = &'t str> + 't>;

/// The targets of the words of every string literal `strings` finds in `text`'s lines,
/// read as one command, with the line of the first that names one.
fn nvcc_words_in_strings<'t>(
    text: &'t str,
    strings: &dyn Fn(&'t str) -> Strings<'t>,
) -> Option<Found> {
    let mut words: Vec<String> = Vec::new();
    let mut first = None;
    for (n, line) in text.lines().enumerate() {
        let before = words.len();
        for literal in strings(line) {
            words.extend(literal.split_whitespace().map(str::to_string));
        }
        let added = &words[before..];
        if first.is_none()
            && added.iter().any(|w| {
                w.starts_with("-arch")
                    || w.starts_with("--gpu-architecture")
                    || w.contains("gencode")
            })
        {
            first = Some(n + 1);
        }
    }
    let targets = targets_in_command(&words);
    (!targets.is_empty()).then(|| Found {
        targets,
        line: first.unwrap_or(1),
        note: None,
        conditional: Vec::new(),
    })
}

/// [`python_build_targets`] from `-gencode` values and `TORCH_CUDA_ARCH_LIST`.
fn python_targets(text: &str) -> Option<Found> {
    let gencodes = gencodes_in_text(text);
    if let Some((line, _)) = gencodes.first() {
        let mut targets = Vec::new();
        for t in gencodes.iter().flat_map(|(_, t)| t) {
            push_unique(&mut targets, *t);
        }
        return Some(Found {
            targets,
            line: *line,
            note: None,
            conditional: Vec::new(),
        });
    }
    for (n, line) in text.lines().enumerate() {
        let Some(at) = line.find("TORCH_CUDA_ARCH_LIST") else {
            continue;
        };
        // An assignment (`…["TORCH_CUDA_ARCH_LIST"] = "…"`, `TORCH_CUDA_ARCH_LIST = "…"`)
        // or a default (`get("TORCH_CUDA_ARCH_LIST", "…")`, `setdefault`); never a
        // comparison or a membership test.
        let rest =
            line[at + "TORCH_CUDA_ARCH_LIST".len()..].trim_start_matches(['"', '\'', ']', ' ']);
        let value = if let Some(v) = rest.strip_prefix('=') {
            if v.starts_with('=') {
                continue;
            }
            v.trim()
        } else if let Some(v) = rest.strip_prefix(',') {
            if !line[..at].trim_end().ends_with(['(', '"', '\'']) {
                continue;
            }
            v.trim()
        } else {
            continue;
        };
        let Some(q) = value.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some(end) = value[1..].find(q) else {
            continue;
        };
        let targets = torch_arch_list(&value[1..1 + end]);
        if !targets.is_empty() {
            return Some(Found {
                targets,
                line: n + 1,
                note: None,
                conditional: Vec::new(),
            });
        }
    }
    None
}

/// Whether a Visual Studio project compiles the CUDA source at `rel` (relative to the
/// project's folder): `Some(true)` where a `<CudaCompile Include="…">` item names it,
/// `Some(false)` where the project lists its CUDA sources one by one and not this one,
/// `None` where it lists none or through a wildcard or property.
pub fn vcxproj_builds(text: &str, rel: &str) -> Option<bool> {
    let rel = rel
        .trim_start_matches("./")
        .replace('\\', "/")
        .to_ascii_lowercase();
    let mut listed = false;
    let mut from = 0;
    while let Some(at) = text[from..].find("<CudaCompile ").map(|i| i + from) {
        from = at + 1;
        let tag_end = text[at..].find('>').map_or(text.len(), |e| at + e);
        let tag = &text[at..tag_end];
        let Some(include) = tag
            .find("Include=\"")
            .map(|i| &tag[i + "Include=\"".len()..])
        else {
            continue;
        };
        let item = include.split('"').next().unwrap_or_default();
        if item.contains(['*', '?', '$', '%']) {
            return None;
        }
        let item = item
            .trim_start_matches(".\\")
            .replace('\\', "/")
            .to_ascii_lowercase();
        if item == rel {
            return Some(true);
        }
        listed = true;
    }
    listed.then_some(false)
}

/// The string literals of one line of Python (`'…'` or `"…"`), before a `#` comment.
fn python_strings(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line.split('#').next().unwrap_or_default();
    std::iter::from_fn(move || {
        let q = rest.find(['"', '\''])?;
        let quote = rest.as_bytes()[q] as char;
        let len = rest[q + 1..].find(quote)?;
        let literal = &rest[q + 1..q + 1 + len];
        rest = &rest[q + 2 + len..];
        Some(literal)
    })
}

/// What a `setup.py`'s extensions say about one source file ([`python_extension_targets`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtensionTargets {
    /// The targets of the extensions that list the file among their sources.
    Of(Found),
    /// No extension lists it (it may be compiled as another source's include).
    NotListed,
}

/// The targets of the torch extensions (`CUDAExtension(…)`) of a `setup.py` that list the
/// source at `rel` (relative to the script's folder), where each extension spells out its
/// own sources and its own nvcc flags inside its call (`sources=["src/a.cu"]`,
/// `extra_compile_args={'nvcc': ['-gencode', 'arch=compute_80,code=sm_80']}`): each is
/// compiled with its own flags only. `None` where some extension's sources or flags come
/// from elsewhere (a variable, a glob): the script's targets then count for every file.
pub fn python_extension_targets(text: &str, rel: &str) -> Option<ExtensionTargets> {
    let rel = rel.trim_start_matches("./");
    let mut extensions = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("CUDAExtension(").map(|i| i + from) {
        let open = at + "CUDAExtension".len();
        let end = call_end(text, open)?;
        let call = &text[open..end];
        from = end;
        // The quoted strings of the call, comments left out.
        let mut words: Vec<String> = Vec::new();
        for line in call.lines() {
            words.extend(python_strings(line).map(str::to_string));
        }
        let sources: Vec<&String> = words
            .iter()
            .filter(|w| {
                [".cu", ".cpp", ".cc", ".cxx", ".c"]
                    .iter()
                    .any(|e| w.ends_with(e))
            })
            .collect();
        let split: Vec<String> = words
            .iter()
            .flat_map(|w| w.split_whitespace().map(str::to_string))
            .collect();
        let mut targets = targets_in_command(&split);
        for (_, t) in gencodes_in_text(call) {
            for t in t {
                push_unique(&mut targets, t);
            }
        }
        if sources.is_empty() || targets.is_empty() || call.contains("glob") {
            return None;
        }
        let line = text[..open].matches('\n').count() + 1;
        let lists = sources.iter().any(|s| {
            let s = s.trim_start_matches("./");
            rel == s || rel.ends_with(&format!("/{s}"))
        });
        extensions.push((lists, targets, line));
    }
    if extensions.is_empty() {
        return None;
    }
    let mut targets = Vec::new();
    let mut line = None;
    for (_, t, l) in extensions.iter().filter(|(lists, _, _)| *lists) {
        line.get_or_insert(*l);
        for t in t {
            push_unique(&mut targets, *t);
        }
    }
    Some(match line {
        Some(line) => ExtensionTargets::Of(Found {
            targets,
            line,
            note: None,
            conditional: Vec::new(),
        }),
        None => ExtensionTargets::NotListed,
    })
}

/// The target a Visual Studio project compiles for where it sets no `<CodeGeneration>`:
/// the default of the CUDA toolkit whose build customisation it imports
/// (`BuildCustomizations\CUDA 8.0.props`), which is nvcc's default architecture of that
/// release: sm_10 up to CUDA 6.0, sm_20 from 6.5 to 8.0, sm_30 for 9.x and 10.x, sm_52
/// for 11.x and 12.x, sm_75 from 13.0 (`nvcc --help`, `--gpu-architecture`).
fn toolkit_default_of_vcxproj(text: &str) -> Option<Found> {
    // A property sheet of the project's own (`<Import Project="..\cuda.props" />`) may
    // set `<CodeGeneration>` for it: not known.
    let own_sheet = text.lines().any(|l| {
        l.split("<Import Project=\"").skip(1).any(|p| {
            let path = p.split('"').next().unwrap_or("");
            path.ends_with(".props") && !path.starts_with("$(")
        })
    });
    if own_sheet {
        return None;
    }
    for (n, line) in text.lines().enumerate() {
        if !line.contains("<Import") {
            continue;
        }
        let Some(at) = line.find("CUDA ") else {
            continue;
        };
        let rest = &line[at + "CUDA ".len()..];
        let Some((version, _)) = rest.split_once(".props") else {
            continue;
        };
        let Some((major, minor)) = version.split_once('.') else {
            continue;
        };
        let (Ok(major), Ok(minor)) = (major.trim().parse::<u32>(), minor.trim().parse::<u32>())
        else {
            continue;
        };
        let target = match (major, minor) {
            (..=5, _) | (6, 0) => "sm_10",
            (6, _) | (7 | 8, _) => "sm_20",
            (9 | 10, _) => "sm_30",
            (11 | 12, _) => "sm_52",
            _ => "sm_75",
        };
        return Some(Found {
            targets: vec![Target::parse(target).ok()?],
            line: n + 1,
            note: Some(format!(
                "the default of the CUDA {major}.{minor} build customisation the project imports: no `<CodeGeneration>` is set"
            )),
            conditional: Vec::new(),
        });
    }
    None
}

/// The targets a Visual Studio project (`*.vcxproj`) with CUDA's build customisation
/// compiles for: every `<CodeGeneration>` value (`compute_35,sm_35;compute_50,sm_50`,
/// each pair `virtual,real`), over all its configurations. A value through a property
/// (`$(CudaArchs)`, `%(CodeGeneration)`) names no target the text can know.
pub fn vcxproj_targets(text: &str) -> Option<Found> {
    const OPEN: &str = "<CodeGeneration>";
    let mut targets = Vec::new();
    let mut first = None;
    let mut values: Vec<&str> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(at) = line.find(OPEN) else {
            continue;
        };
        let rest = &line[at + OPEN.len()..];
        let Some(end) = rest.find("</CodeGeneration>") else {
            continue;
        };
        let value = rest[..end].trim();
        let mut any = false;
        for pair in value.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (virt, real) = pair.split_once(',').unwrap_or((pair, pair));
            let found = Target::parse(real.trim()).or_else(|_| Target::parse(virt.trim()));
            if let Ok(t) = found {
                push_unique(&mut targets, t);
                any = true;
            }
        }
        if any {
            first.get_or_insert(n + 1);
            if !values.contains(&value) {
                values.push(value);
            }
        }
    }
    if first.is_none() && !text.contains(OPEN) {
        return toolkit_default_of_vcxproj(text);
    }
    Some(Found {
        targets,
        line: first?,
        note: (values.len() > 1).then(|| {
            format!(
                "the configurations compile for different lists ({}); all are kept",
                values.join(" / ")
            )
        }),
        conditional: Vec::new(),
    })
}

/// The targets an xmake project (`xmake.lua`) compiles its CUDA for: the values of
/// `add_cugencodes(…)` (`"sm_80"`, `"compute_90"`) and the `-arch`/`-gencode` flags of
/// `add_cuflags(…)`; `native` names no target the text can know.
pub fn xmake_targets(text: &str) -> Option<Found> {
    let mut targets = Vec::new();
    let mut first = None;
    for (n, line) in text.lines().enumerate() {
        let code = line.split("--").next().unwrap_or(line);
        let strings = |call: &str| -> Vec<String> {
            let Some(at) = code.find(call) else {
                return Vec::new();
            };
            // The quoted arguments up to the closing parenthesis.
            let args = &code[at + call.len()..];
            let mut out = Vec::new();
            let mut rest = args;
            while let Some(q) = rest.find(['"', '\'', ')']) {
                let quote = rest.as_bytes()[q] as char;
                if quote == ')' {
                    break;
                }
                let Some(end) = rest[q + 1..].find(quote) else {
                    break;
                };
                out.push(rest[q + 1..q + 1 + end].to_string());
                rest = &rest[q + 1 + end + 1..];
            }
            out
        };
        let mut found: Vec<Target> = strings("add_cugencodes(")
            .iter()
            .filter_map(|v| Target::parse(v).ok())
            .collect();
        let flags: Vec<String> = strings("add_cuflags(")
            .iter()
            .flat_map(|f| f.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect();
        found.extend(targets_in_command(&flags));
        for t in found {
            first.get_or_insert(n + 1);
            push_unique(&mut targets, t);
        }
    }
    Some(Found {
        targets,
        line: first?,
        note: None,
        conditional: Vec::new(),
    })
}

/// For each line of a Makefile, whether make reads it when run as `make` with no
/// variables given: `Some(true)` outside conditionals and in the branch taken,
/// `Some(false)` in a branch not taken and on the directives themselves, `None` inside a
/// block whose condition make decides at run time. A test whether a variable the
/// Makefile never sets is empty or defined is decided (`ifeq ($(CUARCH),)`, `ifndef
/// ARCH`: the default build); anything else (`ifeq ($(GPU),H100)`, a variable the file
/// sets, `$(shell …)`) is not.
fn makefile_active_lines(text: &str) -> Vec<Option<bool>> {
    makefile_active_lines_forced(text, &|_| None)
}

/// [`makefile_active_lines`] with `force` deciding the conditions the file does not:
/// given the 0-based line of such a directive, `Some(true)` takes its branch,
/// `Some(false)` skips it, `None` leaves it undecided. Reading a Makefile once with every
/// undecided condition holding and once with every one failing gives the two builds at
/// the ends (`ifeq ($(TARGET_ARCH),armv7l)` and its `else`, which both set `SMS`).
fn makefile_active_lines_forced(
    text: &str,
    force: &dyn Fn(usize) -> Option<bool>,
) -> Vec<Option<bool>> {
    // Each variable the Makefile sets, with the first line that sets it: a test for "not
    // given" before that line sees it unset (`ifeq ($(GENCODE_FLAGS),)` ahead of the
    // lines that fill it).
    let mut set: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let l = line.trim_start();
        let l = l
            .strip_prefix("export ")
            .or_else(|| l.strip_prefix("override "))
            .unwrap_or(l);
        if let Some(name) = l.strip_prefix("define ") {
            set.entry(name.trim().to_string()).or_insert(n);
            continue;
        }
        // `$(eval VAR += …)` inside a `$(foreach …)` sets VAR too.
        let l = l.rsplit("$(eval ").next().unwrap_or(l);
        if let Some((name, _)) = l.split_once('=') {
            let name = name.trim_end_matches([':', '?', '+', '!']).trim();
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                set.entry(name.to_string()).or_insert(n);
            }
        }
    }
    // The value of one side of a comparison at line `at`, where it is known.
    let side = |t: &str, at: usize| -> Option<String> {
        let t = t.trim().trim_matches(|c| c == '"' || c == '\'');
        if !t.contains('$') {
            return Some(t.to_string());
        }
        let name = t
            .strip_prefix("$(")
            .and_then(|r| r.strip_suffix(')'))
            .or_else(|| t.strip_prefix("${").and_then(|r| r.strip_suffix('}')))?;
        (set.get(name).is_none_or(|first| *first > at)
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(String::new)
    };
    let decide = |directive: &str, rest: &str, at: usize| -> Option<bool> {
        let rest = rest.split('#').next().unwrap_or("").trim();
        match directive {
            "ifdef" | "ifndef" => {
                let defined = set.get(rest).is_some_and(|first| *first < at);
                // An unset variable is undefined; one the Makefile sets may be set only
                // in a branch: not decided.
                (!defined).then_some(directive == "ifndef")
            }
            _ => {
                let (a, b) = match rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
                    Some(inner) => inner.split_once(',')?,
                    None => {
                        let mut parts = rest.split_whitespace();
                        (parts.next()?, parts.next().unwrap_or(""))
                    }
                };
                // Only a test for "not given" (`ifeq ($(CUARCH),)`) picks the default
                // branch; a comparison with a value (`ifeq ($(GPU),H100)`) names what
                // `make GPU=H100` builds instead: not decided.
                let blank = |t: &str| t.trim().trim_matches(|c| c == '"' || c == '\'').is_empty();
                if !blank(a) && !blank(b) {
                    return None;
                }
                let (a, b) = (side(a, at)?, side(b, at)?);
                Some((a == b) == (directive == "ifeq"))
            }
        }
    };
    // Three-valued logic over "taken", `None` for not known.
    let or3 = |a: Option<bool>, b: Option<bool>| match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    };
    let and3 = |a: Option<bool>, b: Option<bool>| match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    };
    let condition =
        |directive: &str, rest: &str, at: usize| decide(directive, rest, at).or_else(|| force(at));
    // Each open block: whether an earlier branch of it was taken, and whether the
    // current branch is.
    let mut stack: Vec<(Option<bool>, Option<bool>)> = Vec::new();
    let mut out = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let l = line.trim_start();
        let directive = l.split_whitespace().next().unwrap_or("");
        match directive {
            "ifeq" | "ifneq" | "ifdef" | "ifndef" => {
                let taken = condition(directive, &l[directive.len()..], at);
                stack.push((taken, taken));
                out.push(Some(false));
                continue;
            }
            "else" => {
                if let Some((any, current)) = stack.last_mut() {
                    // `else ifeq …` chains another condition, taken where no earlier
                    // branch was and it holds.
                    let rest = l["else".len()..].trim();
                    let chained = rest.split_whitespace().next().unwrap_or("");
                    let holds = if rest.is_empty() {
                        Some(true)
                    } else if ["ifeq", "ifneq", "ifdef", "ifndef"].contains(&chained) {
                        condition(chained, &rest[chained.len()..], at)
                    } else {
                        None
                    };
                    *current = and3(any.map(|a| !a), holds);
                    *any = or3(*any, *current);
                }
                out.push(Some(false));
                continue;
            }
            "endif" => {
                stack.pop();
                out.push(Some(false));
                continue;
            }
            _ => {}
        }
        let mut state = Some(true);
        for (_, frame) in &stack {
            state = match (state, frame) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (None, _) | (_, None) => None,
                _ => Some(true),
            };
        }
        out.push(state);
    }
    out
}

/// The offset of the `)` that closes the Makefile call or reference starting at `start`
/// (its `$(`), nested parentheses counted.
fn call_end(line: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in line[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(start + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `line` with each `$(foreach v,LIST,BODY)` replaced by BODY once per word of LIST (its
/// variables expanded), `$(v)` taking the word, and `$(eval VAR += VALUE)` in BODY by
/// VALUE: the CUDA samples' `$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode
/// arch=compute_$(sm),code=sm_$(sm)))` gives one `-gencode` per SM.
fn expand_foreach(vars: &[(String, String)], line: &str) -> String {
    let mut out = line.to_string();
    for _ in 0..8 {
        let Some(start) = out.find("$(foreach ") else {
            break;
        };
        let Some(end) = call_end(&out, start) else {
            break;
        };
        let inner = &out[start + "$(foreach ".len()..end];
        let Some((var, rest)) = inner.split_once(',') else {
            break;
        };
        let Some((list, body)) = rest.split_once(',') else {
            break;
        };
        let list = makefile_expand_or(vars, list, "");
        let mut body = body.trim().to_string();
        if let Some(eval) = body
            .strip_prefix("$(eval ")
            .and_then(|b| b.strip_suffix(')'))
        {
            body = eval
                .split_once('=')
                .map_or(eval, |(_, v)| v)
                .trim()
                .to_string();
        }
        let var = var.trim();
        let words: Vec<String> = list
            .split_whitespace()
            .map(|w| {
                body.replace(&format!("$({var})"), w)
                    .replace(&format!("${{{var}}}"), w)
            })
            .collect();
        out.replace_range(start..=end, &words.join(" "));
    }
    out
}

/// A Makefile's simple variables (`VAR = value`, `:=`, `?=`, `+=`), each logical line
/// (`\`-continued lines joined); one set inside an `ifeq`/`ifdef` block is chosen when make
/// runs, so it is not known and left out.
fn makefile_vars(text: &str) -> Vec<(String, String)> {
    makefile_vars_in(text, &makefile_active_lines(text), false)
}

/// A Makefile's variables as the lines `active` reads them. With `union`, a line make may
/// or may not read (`None`) counts too, and every assignment adds its words to the
/// variable's value: the names any build of the file may give it
/// (`X86SRC0 = const-a.asm …` under `ifneq ($(AS),)`), for asking whether a source is
/// named at all.
fn makefile_vars_in(text: &str, active: &[Option<bool>], union: bool) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut logical = String::new();
    let mut logical_start = None;
    for (n, line) in text.lines().enumerate() {
        let start = *logical_start.get_or_insert(n);
        if let Some(head) = line.strip_suffix('\\') {
            logical.push_str(head);
            logical.push(' ');
            continue;
        }
        logical.push_str(line);
        logical_start = None;
        let l = std::mem::take(&mut logical);
        let read = match active.get(start) {
            Some(Some(true)) => true,
            Some(None) => union,
            _ => false,
        };
        if !read {
            continue;
        }
        // `$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += …))` appends to GENCODE_FLAGS.
        let l = match l.trim_start().strip_prefix("$(foreach ") {
            Some(rest) => match rest
                .split_once("$(eval ")
                .and_then(|(_, e)| e.split_once("+="))
            {
                Some((name, _)) => format!("{} += {}", name.trim(), expand_foreach(&vars, &l)),
                None => continue,
            },
            None => l,
        };
        let Some((name, value)) = l.split_once('=') else {
            continue;
        };
        // `+=` appends, `?=` sets only an unset variable, `=` and `:=` set it again (a
        // reference to its own old value, `X := $(X) more`, reads the old value).
        // The operator's character sits right before `=`; a name may hold `+` itself
        // (`G++ = g++ -O2`).
        let append = union || name.ends_with('+');
        let only_unset = name.ends_with('?');
        let name = match name.chars().last() {
            Some('+' | '?' | '!') => &name[..name.len() - 1],
            _ => name,
        };
        let name = name.trim_end_matches(':').trim();
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+-.".contains(c))
        {
            let value = value.trim();
            match vars.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) if append => {
                    v.push(' ');
                    v.push_str(value);
                }
                Some(_) if only_unset => {}
                Some((_, v)) => {
                    *v = value
                        .replace(&format!("$({name})"), v)
                        .replace(&format!("${{{name}}}"), v);
                }
                None => vars.push((name.to_string(), value.to_string())),
            }
        }
    }
    vars
}

/// The files a Makefile includes (`include make.defs`, `-include $(ROOT)/common.mk`,
/// `sinclude …`), as written, with `$(VAR)`/`${VAR}` replaced by a simple `VAR = value`
/// of the same text; a name still holding a `$` is left out.
pub fn makefile_includes(text: &str) -> Vec<String> {
    let vars = makefile_vars(text);
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let Some(rest) = ["include ", "-include ", "sinclude "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
        else {
            continue;
        };
        for word in rest.split_whitespace() {
            let mut w = word.to_string();
            for (name, value) in &vars {
                w = w
                    .replace(&format!("$({name})"), value)
                    .replace(&format!("${{{name}}}"), value);
            }
            if !w.contains('$') {
                out.push(w);
            }
        }
    }
    out
}

/// The targets a Makefile names: `-arch=sm_80`, `-arch sm_80`, `--gpu-architecture`,
/// `-gencode …` in any variable or rule, with `$(VAR)`/`${VAR}` replaced by a simple
/// `VAR = value` (`:=`, `?=`) of the same file.
pub fn makefile_targets(text: &str) -> Option<Found> {
    makefile_targets_for(text, None)
}

/// `line` with the Makefile's `$(VAR)`/`${VAR}` references replaced by `vars`' values.
/// Make expands references recursively (`CCOMPILE = $(CC) -c`, `CC = $(NVCC) $(EXTRA)`,
/// `EXTRA = $(ARCH)`, …): every reference, up to a bound that a variable defined through
/// itself cannot pass; one the Makefile does not set is empty.
fn makefile_expand(vars: &[(String, String)], line: &str) -> String {
    makefile_expand_or(vars, line, "")
}

/// [`makefile_expand`] with `unset` for each reference to a variable the Makefile does
/// not set.
fn makefile_expand_or(vars: &[(String, String)], line: &str, unset: &str) -> String {
    makefile_expand_to(vars, line, unset, 8)
}

/// [`makefile_expand_or`], substitution references followed `depth` levels deep (a
/// variable substituted through itself cannot pass the bound).
fn makefile_expand_to(vars: &[(String, String)], line: &str, unset: &str, depth: usize) -> String {
    let mut out = line.to_string();
    // Where the next reference is looked for: past each `unset` put in, which is not
    // expanded again (it may itself read as a reference, `$(?)`).
    let mut from = 0;
    for _ in 0..64 {
        if out.len() > 16 * 1024 {
            break;
        }
        let next = |open: &str| out[from..].find(open).map(|i| from + i);
        let Some(start) = [next("$("), next("${")].into_iter().flatten().min() else {
            break;
        };
        let close = if out[start + 1..].starts_with('(') {
            ')'
        } else {
            '}'
        };
        let Some(len) = out[start..].find(close) else {
            break;
        };
        let name = &out[start + 2..start + len];
        let lookup = |name: &str| vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let value = match name.split_once(':') {
            // `$(SRCS:%.c=%.o)`: the variable's words, each substituted.
            Some((var, subst)) if subst.contains('=') && lookup(var).is_some() && depth > 0 => {
                let (from, to) = subst.split_once('=').unwrap_or_default();
                makefile_expand_to(vars, &lookup(var).unwrap_or_default(), unset, depth - 1)
                    .split_whitespace()
                    .map(|w| substituted(w, from, to))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            _ => lookup(name).unwrap_or_else(|| unset.to_string()),
        };
        let unset_put = lookup(name.split_once(':').map_or(name, |(v, _)| v)).is_none();
        out.replace_range(start..start + len + 1, &value);
        if unset_put {
            from = start + value.len();
        }
    }
    out
}

/// A word of a substitution reference `$(VAR:FROM=TO)`: with a `%` in FROM, a word that
/// matches the pattern becomes TO with its stem for `%` (`$(SRCS:%=common/x86/%)`);
/// without one, a word that ends in FROM has it replaced by TO (`$(SRCS:.c=.o)`). Other
/// words stay.
fn substituted(word: &str, from: &str, to: &str) -> String {
    let (head, tail) = from.split_once('%').unwrap_or(("", from));
    if from.contains('%') || !from.is_empty() {
        if let Some(stem) = word
            .strip_prefix(head)
            .and_then(|w| w.strip_suffix(tail))
            .filter(|_| word.len() >= head.len() + tail.len())
        {
            return match (from.contains('%'), to.split_once('%')) {
                (true, Some((a, b))) => format!("{a}{stem}{b}"),
                (true, None) => to.to_string(),
                (false, _) => format!("{stem}{}", to.trim_start_matches('%')),
            };
        }
    }
    word.to_string()
}

/// The include folders a Makefile hands the compiler (`-I./include`, `-I $(ROOT)/inc`,
/// through its variables), as written after expansion, relative to the folder make runs
/// in; a folder that still names an unset variable or a shell command is left out.
pub fn makefile_include_dirs(text: &str) -> Vec<String> {
    let vars = makefile_vars(text);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        if !line.contains("-I") && !line.contains("$(") && !line.contains("${") {
            continue;
        }
        let expanded = makefile_expand_or(&vars, line, "\u{1}");
        let words: Vec<&str> = expanded.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            let dir = match words[i].strip_prefix("-I") {
                Some("") => {
                    i += 1;
                    words.get(i).copied()
                }
                Some(d) => Some(d),
                None => None,
            };
            i += 1;
            let Some(dir) = dir.map(|d| d.trim_matches(['"', '\''])) else {
                continue;
            };
            if dir.is_empty() || dir.contains(['$', '`', '(', ')', '\u{1}']) {
                continue;
            }
            if !out.iter().any(|d| d == dir) {
                out.push(dir.to_string());
            }
        }
    }
    out
}

/// Whether the Makefile `text` compiles the source called `file` (a name without
/// folders): `Some(true)` where it names the file, its stem or an object of its stem
/// (`stale`, `stale.o`); `Some(false)` where it names the CUDA sources it compiles one by one
/// (`app: live.cu`, `OBJS = a.o b.o` beside a `.cu` named) and not this one; `None` where
/// it names none, or computes a list (`$(wildcard *.cu)`, `$(shell find …)`, a variable
/// it does not set), which may take the file in.
pub fn makefile_builds(text: &str, file: &str) -> Option<bool> {
    makefile_builds_in(text, file, None)
}

/// [`makefile_builds`] for a Makefile in an ancestor folder of the file: `folder` is the
/// file's folder relative to the Makefile's (`common/cuda`). Only a CUDA source the
/// Makefile names in that folder (`common/cuda/search.cu`) says that it lists the
/// folder's sources one by one; one named elsewhere says nothing about this file.
pub fn makefile_builds_in(text: &str, file: &str, folder: Option<&str>) -> Option<bool> {
    // Every branch make may read counts: a name in any of them may be built.
    let active = makefile_active_lines(text);
    let raw = makefile_vars_in(text, &active, true);
    let folder = folder.map(|f| f.trim_start_matches("./").trim_end_matches('/'));
    let path = folder.map_or(file.to_string(), |f| format!("{f}/{file}"));
    let vars: Vec<(String, String)> = raw
        .iter()
        .map(|(n, v)| {
            let v = resolved_wildcards(&raw, &without_non_cuda_wildcards(v), &path);
            (
                n.clone(),
                without_tool_variables(&raw, &without_list_functions(&v)),
            )
        })
        .collect();
    // The name without its extension: `matcher_cuda.memory_tile.cu` is not the
    // `matcher_cuda.cu` that `matcher_cuda.o` is built from.
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    // Whether the Makefile runs make elsewhere (`$(MAKE) -C kernels`): then sources in
    // folders below the ones it names may be another Makefile's.
    let recurses = ["$(MAKE)", "${MAKE}", "make -C", "make -f", "MAKE) -C"]
        .iter()
        .any(|m| text.contains(m));
    // Whether naming CUDA sources in `dir` says this file's folder is listed source by
    // source: the folder itself, or, where nothing runs make on its own, any folder below
    // the Makefile's (`$(SRCDIR)/main.cu` with `SRCDIR = ./Src_working` leaves a sibling
    // `Src_old/` unbuilt: no other make run reaches it).
    // A Makefile that includes another (`include config.mak`, which may add sources)
    // says so only for the folders it names and those below them.
    let includes = text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("include ") || l.starts_with("-include ") || l.starts_with("sinclude ")
    });
    let covers = |dir: &str| {
        let dir = dir.trim_start_matches("./").trim_end_matches('/');
        folder.is_none_or(|f| {
            f == dir
                || (!recurses && (!includes || dir.is_empty() || f.starts_with(&format!("{dir}/"))))
        })
    };
    // Whether make can build the bare stem from the file: a pattern or suffix rule from
    // `%.cu` and no explicit rule whose target is the stem.
    let headers: Vec<(&str, &str)> = text
        .lines()
        .filter(|l| !l.starts_with('\t'))
        .filter_map(|l| l.split('#').next()?.split_once(':'))
        .filter(|(_, after)| !after.starts_with('='))
        .filter(|(targets, _)| !targets.contains('='))
        .collect();
    let stem_built_from_cu = headers.iter().any(|(t, after)| {
        (t.contains('%') && after.contains("%.cu")) || t.trim().starts_with(".cu")
    }) && !headers.iter().any(|(t, _)| {
        t.split_whitespace()
            .any(|w| w.rsplit('/').next() == Some(stem))
    });
    let mut cuda_named = false;
    let mut unknown = false;
    let echo_only = recipe_lines_compiling_nothing(text);
    for (n, line) in text.lines().enumerate() {
        // A branch make does not read names nothing.
        if active.get(n) == Some(&Some(false)) {
            continue;
        }
        let code = line.split('#').next().unwrap_or_default();
        // A condition (`ifeq ($(HAVE_CUDA),yes)`) names no source.
        let directive = code.split_whitespace().next().unwrap_or_default();
        if [
            "ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "include", "-include",
        ]
        .contains(&directive)
        {
            continue;
        }
        if echo_only.contains(&n) {
            continue;
        }
        // A recipe line that runs a file utility (`rm -f *.o`, `mkdir -p obj`) compiles
        // nothing.
        if line.starts_with('\t') {
            let command = code
                .trim_start()
                .trim_start_matches(['@', '-', '+'])
                .split_whitespace()
                .next()
                .unwrap_or_default();
            if [
                "rm", "cp", "mv", "mkdir", "rmdir", "echo", "printf", "touch", "ln", "cat", "tar",
                "zip", "ls", "cd",
            ]
            .contains(&command)
                && !code.contains("&&")
                && !code.contains(';')
            {
                continue;
            }
        }
        // Special targets (`.PHONY: install-* lib-*`) name targets that are no files.
        if [
            ".PHONY",
            ".SUFFIXES",
            ".PRECIOUS",
            ".SECONDARY",
            ".INTERMEDIATE",
        ]
        .iter()
        .any(|t| code.trim_start().starts_with(t))
        {
            continue;
        }
        // A variable that only conditions read (`CONFIG := $(shell cat config.h)` for
        // `ifneq ($(findstring HAVE_GPL 1, $(CONFIG)),)`) lists no source.
        if let Some((name, _)) = code.split_once('=') {
            let name = name.trim_end_matches([':', '?', '+', '!']).trim();
            if !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && only_conditions_read(text, name)
            {
                continue;
            }
        }
        let code = resolved_wildcards(&raw, &without_non_cuda_wildcards(code), &path);
        let code = without_tool_variables(&vars, &without_list_functions(&code));
        let expanded = makefile_expand_or(&vars, &code, "$(?)");
        // A line make reads in a way not followed (a glob, an unset variable) may name
        // any source; a later line that names the file still decides. An unset variable
        // inside a flag (`-I${CUDA_HOME}/include`) names none.
        if ["wildcard", "shell", "foreach", "*"]
            .iter()
            .any(|w| expanded.contains(w))
            || expanded
                .split_whitespace()
                .any(|w| w.contains("$(?)") && !w.starts_with('-'))
        {
            unknown = true;
            continue;
        }
        for word in expanded.split(|c: char| c.is_whitespace() || "=:;,()\"'".contains(c)) {
            let name = word.rsplit('/').next().unwrap_or(word);
            if name.is_empty() {
                continue;
            }
            // A bare stem names it too (`APPS = sum` with a pattern rule `%: %.cu`),
            // unless a rule of its own builds that stem from other files (`onemax:
            // main.cu kernels.o`).
            if name == file
                || (name == stem && stem_built_from_cu)
                || name
                    .strip_prefix(stem)
                    .is_some_and(|rest| rest.starts_with('.'))
            {
                return Some(true);
            }
            let dir = word.rsplit_once('/').map_or("", |(d, _)| d);
            cuda_named |= name.ends_with(".cu") && !name.contains('%') && covers(dir);
        }
    }
    (cuda_named && !unknown).then_some(false)
}

/// The lines of recipe commands (continuation lines joined) that only run shell
/// keywords and utilities that compile nothing: `@for f in src/*.cu; do echo "$(NVCC)
/// -c $$f" >> db.json; done` writes a compile database and runs no compiler.
fn recipe_lines_compiling_nothing(text: &str) -> Vec<usize> {
    const QUIET: &[&str] = &[
        "for", "do", "done", "if", "then", "else", "elif", "fi", "while", "in", "echo", "printf",
        "true", "false", "test", "[", "rm", "mkdir", "touch", "cat", "cp", "mv", "ls", "cd", "ln",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('\t') {
            i += 1;
            continue;
        }
        // The logical command: this line and those its trailing `\` continues onto.
        let first = i;
        let mut command = String::new();
        while i < lines.len() {
            let l = lines[i].trim_end();
            i += 1;
            match l.strip_suffix('\\') {
                Some(head) => {
                    command.push_str(head);
                    command.push(' ');
                }
                None => {
                    command.push_str(l);
                    break;
                }
            }
        }
        // Split on `;`, `&&`, `||` and `|` outside quotes; each part's first word, past
        // `@`, `-`, `+` and the keywords that open a body, must be a quiet one.
        let mut parts = Vec::new();
        let (mut quote, mut start) = (None, 0);
        let b = command.as_bytes();
        for (at, &c) in b.iter().enumerate() {
            match (quote, c) {
                (None, b'\'' | b'"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, b';' | b'|' | b'&') => {
                    parts.push(&command[start..at]);
                    start = at + 1;
                }
                _ => {}
            }
        }
        parts.push(&command[start..]);
        let quiet = parts.iter().all(|p| {
            let mut words = p
                .trim_start()
                .trim_start_matches(['@', '-', '+'])
                .split_whitespace();
            let mut w = words.next();
            while matches!(w, Some("do" | "then" | "else")) {
                w = words.next();
            }
            w.is_none_or(|w| QUIET.contains(&w))
        });
        if quiet {
            out.extend(first..i);
        }
    }
    out
}

/// `line` with the Makefile variables that name a tool or its flags and that the file
/// does not set (`$(CC)`, `$(NVCCFLAGS)`, `$(LDFLAGS)` from an included `config.mak`)
/// taken out: they hold no source names. Substitution references of set variables
/// (`$(SRCS:%.c=%.o)`) are expanded.
fn without_tool_variables(vars: &[(String, String)], line: &str) -> String {
    without_tool_variables_to(vars, line, 8)
}

/// [`without_tool_variables`], substitution references inside the values it expands
/// (`ASMSRC = $(X86SRC:-32.asm=-64.asm)` read through `$(ASMSRC:%.asm=%.o)`) followed
/// `depth` levels deep.
fn without_tool_variables_to(vars: &[(String, String)], line: &str, depth: usize) -> String {
    let line = braces_as_parens(line);
    let mut out = String::with_capacity(line.len());
    let mut rest = line.as_str();
    while let Some(start) = rest.find("$(") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find(')') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &rest[start + 2..start + len];
        let whole = &rest[start..start + len + 1];
        let set = |n: &str| vars.iter().find(|(v, _)| v == n).map(|(_, v)| v.clone());
        match inner.split_once(':') {
            // `$(SRCS:%.c=%.o)` or `$(SRCS:.c=.o)`: each word's suffix replaced.
            Some((name, subst)) if set(name).is_some() && subst.contains('=') => {
                let (from, to) = subst.split_once('=').unwrap_or_default();
                let value = set(name).unwrap_or_default();
                let value = match depth {
                    0 => value,
                    _ => makefile_expand_or(
                        vars,
                        &without_tool_variables_to(vars, &value, depth - 1),
                        "$(?)",
                    ),
                };
                let words: Vec<String> = value
                    .split_whitespace()
                    .map(|w| substituted(w, from, to))
                    .collect();
                out.push_str(&words.join(" "));
            }
            _ if set(inner).is_none() && tool_variable(inner) => {}
            _ => out.push_str(whole),
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// `line` with each `$(wildcard …)` whose patterns the Makefile's variables spell out
/// replaced, for asking whether the source at `path` is named: a pattern that matches
/// `path` by `path` itself, any other by the pattern with its wildcard characters
/// written `\u{2}` (`src/\u{2}.cu`: a CUDA source of `src` that is not this one).
fn resolved_wildcards(vars: &[(String, String)], line: &str, path: &str) -> String {
    let mut code = braces_as_parens(line);
    // `$(shell nvidia-smi | grep "CUDA Version" | …)`: a command that lists no files (no
    // `find`, `ls`, glob or source name) gives no source names.
    let mut from = 0;
    while let Some(at) = code[from..].find("$(shell ").map(|i| i + from) {
        let Some(end) = call_end(&code, at) else {
            break;
        };
        let command = &code[at + "$(shell ".len()..end];
        let lists = command.contains(['*', '?', '$', '`'])
            || [
                ".cu", ".cpp", ".c ", ".o", "find", "ls", "cat", "echo", "dir",
            ]
            .iter()
            .any(|w| command.contains(w));
        if lists {
            from = end;
        } else {
            code.replace_range(at..=end, "");
            from = at;
        }
    }
    let mut from = 0;
    while let Some(at) = code[from..].find("$(wildcard ").map(|i| i + from) {
        let Some(end) = call_end(&code, at) else {
            break;
        };
        let inner = &code[at + "$(wildcard ".len()..end];
        let patterns = makefile_expand_or(vars, &without_tool_variables(vars, inner), "$(?)");
        if patterns.contains('$') || patterns.contains('(') {
            from = end;
            continue;
        }
        let words: Vec<String> = patterns
            .split_whitespace()
            .map(|p| match glob_matches(p, path) {
                true => path.to_string(),
                false => p.replace(['*', '?'], "\u{2}"),
            })
            .collect();
        let words = words.join(" ");
        code.replace_range(at..=end, &words);
        from = at + words.len();
    }
    code
}

/// Whether the make wildcard `pattern` (`src/*.cu`, `./k?.cu`; `*` and `?` within one
/// folder) matches the relative `path`.
fn glob_matches(pattern: &str, path: &str) -> bool {
    fn segment(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => segment(&p[1..], s) || (!s.is_empty() && segment(p, &s[1..])),
            (Some(b'?'), Some(_)) => segment(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => segment(&p[1..], &s[1..]),
            _ => false,
        }
    }
    let clean = |t: &str| -> Vec<String> {
        t.split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::to_string)
            .collect()
    };
    let (p, s) = (clean(pattern), clean(path));
    p.len() == s.len()
        && p.iter()
            .zip(&s)
            .all(|(p, s)| segment(p.as_bytes(), s.as_bytes()))
}

/// `line` with each `${…}` reference written `$(…)`, as make reads both alike.
fn braces_as_parens(line: &str) -> String {
    let mut out = line.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("${").map(|i| i + from) {
        let Some(end) = call_end_any(&out, at) else {
            break;
        };
        out.replace_range(end..=end, ")");
        out.replace_range(at + 1..at + 2, "(");
        from = at + 2;
    }
    out
}

/// Whether every reference to the variable `name` in the Makefile `text` is on a
/// conditional directive's line (`ifneq ($(findstring X, $(CONFIG)),)`), and there is one.
fn only_conditions_read(text: &str, name: &str) -> bool {
    let refs = [format!("$({name})"), format!("${{{name}}}")];
    let mut read = false;
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or_default();
        if !refs.iter().any(|r| code.contains(r.as_str())) {
            continue;
        }
        let directive = code.split_whitespace().next().unwrap_or_default();
        if !["ifeq", "ifneq", "else"].contains(&directive) {
            return false;
        }
        read = true;
    }
    read
}

/// `line` without its `$(wildcard …)` calls whose patterns all end in an extension no
/// CUDA source or object has (`$(wildcard $(SRCPATH)/common/opencl/*.cl)`).
fn without_non_cuda_wildcards(line: &str) -> String {
    let mut out = line.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("$(wildcard ").map(|i| i + from) {
        let Some(end) = call_end(&out, at) else {
            break;
        };
        let patterns = &out[at + "$(wildcard ".len()..end];
        let harmless = patterns.split_whitespace().all(|p| {
            p.rsplit_once('.').is_some_and(|(_, ext)| {
                !ext.is_empty()
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && !["cu", "cuh", "o", "obj", "cpp", "cc", "cxx", "c", "h", "hpp"]
                        .contains(&ext)
            })
        });
        if harmless {
            out.replace_range(at..=end, "");
            from = at;
        } else {
            from = end;
        }
    }
    out
}

/// `line` with the functions that only pick, rearrange or decorate the names they are
/// given replaced by those names, for asking which sources a line may name:
/// `$(foreach v,LIST,BODY)` by LIST and BODY without its references to `v` (the
/// `.depend` recipe's `$(foreach SRC, $(SRCS), … "$(SRC)" …)`), `$(if COND,THEN,ELSE)`
/// by THEN and ELSE, `$(addprefix P,LIST)`, `$(patsubst P,R,LIST)`, `$(filter-out
/// P,LIST)`, `$(notdir LIST)`, … by LIST.
fn without_list_functions(line: &str) -> String {
    // Each function with the number of leading arguments that are not names.
    const FUNCTIONS: [(&str, usize); 16] = [
        ("abspath", 0),
        ("realpath", 0),
        ("foreach", 1),
        ("if", 1),
        ("addprefix", 1),
        ("addsuffix", 1),
        ("patsubst", 2),
        ("filter", 1),
        ("filter-out", 1),
        ("notdir", 0),
        ("dir", 0),
        ("basename", 0),
        ("sort", 0),
        ("strip", 0),
        ("firstword", 0),
        ("lastword", 0),
    ];
    let mut out = line.to_string();
    let mut from = 0;
    for _ in 0..64 {
        let Some(at) = out[from..].find("$(").map(|i| i + from) else {
            break;
        };
        let head = &out[at + 2..];
        let Some((function, skip)) = FUNCTIONS.iter().find(|(f, _)| {
            head.strip_prefix(f)
                .is_some_and(|r| r.starts_with([' ', '\t']))
        }) else {
            from = at + 2;
            continue;
        };
        let Some(end) = call_end(&out, at) else {
            break;
        };
        let inner = out[at + 2 + function.len()..end].to_string();
        let mut args = Vec::new();
        let mut rest = inner.as_str();
        while let Some((arg, more)) = split_top_comma(rest) {
            args.push(arg);
            rest = more;
        }
        args.push(rest);
        let replacement = if *function == "foreach" && args.len() == 3 {
            format!(
                " {} {} ",
                args[1],
                without_references_to(args[2], args[0].trim())
            )
        } else {
            format!(
                " {} ",
                args.iter()
                    .skip(*skip)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        out.replace_range(at..=end, &replacement);
        from = at;
    }
    out
}

/// `text` split at its first comma outside parentheses.
fn split_top_comma(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return Some((&text[..i], &text[i + 1..])),
            _ => {}
        }
    }
    None
}

/// `text` without its references to the variable `var` (`$(SRC)`, `${SRC}`,
/// `$(SRC:%.c=%.o)`, `$V` for a one-letter name).
fn without_references_to(text: &str, var: &str) -> String {
    let mut out = text.to_string();
    for open in ["$(", "${"] {
        let mut from = 0;
        while let Some(at) = out[from..].find(open).map(|i| i + from) {
            let after = &out[at + 2..];
            let named = after
                .strip_prefix(var)
                .is_some_and(|r| r.starts_with([')', '}', ':']));
            match (named, call_end_any(&out, at)) {
                (true, Some(end)) => out.replace_range(at..=end, ""),
                (_, Some(end)) => from = end,
                _ => break,
            }
        }
    }
    if var.len() == 1 {
        out = out.replace(&format!("${var}"), "");
    }
    out
}

/// [`call_end`] for a reference opened by `$(` or `${`.
fn call_end_any(line: &str, start: usize) -> Option<usize> {
    if line[start..].starts_with("${") {
        let mut depth = 0usize;
        for (i, c) in line[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(start + i);
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    call_end(line, start)
}

/// Whether a Makefile variable's name says it holds a tool or options, not sources.
fn tool_variable(name: &str) -> bool {
    const TOOLS: [&str; 18] = [
        "CC",
        "CXX",
        "NVCC",
        "LD",
        "AR",
        "RANLIB",
        "RM",
        "STRIP",
        "INSTALL",
        "MKDIR",
        "ECHO",
        "SHELL",
        "MAKE",
        "CP",
        "MV",
        "HOSTCC",
        "MAKEFILE_LIST",
        "CURDIR",
    ];
    const ENDS: [&str; 10] = [
        "FLAGS", "LIBS", "LDFLAGS", "DIR", "PATH", "OPT", "OPTS", "OPTIONS", "ARCH", "PREFIX",
    ];
    TOOLS.contains(&name) || ENDS.iter().any(|e| name.ends_with(e))
}

/// The targets a Makefile compiles the source file `file` (a file name) for. A rule that
/// names the file among its prerequisites (`scan: scan.cu` with its own `nvcc
/// -arch=sm_30` recipe) decides alone, as make runs that rule's recipe for it and no
/// pattern rule; without one, the recipes of rules written for other source files are
/// left out. With `None`, every line counts.
///
/// Where the default build (no variables given) names no targets because the flags are
/// set only inside conditions the file does not decide, the two ends are read, every
/// such condition holding and every one failing: where both name targets, those are the
/// targets, each named by one end only conditional, with a note that names the condition
/// (`SMS ?= 20 30 32 …` and `SMS ?= 20 30 …` in the two branches of `ifeq
/// ($(TARGET_ARCH),armv7l)`). Where either end names none, the targets are not known.
pub fn makefile_targets_for(text: &str, file: Option<&str>) -> Option<Found> {
    let default = makefile_active_lines(text);
    if let Some(found) = makefile_targets_read(text, file, &default) {
        return Some(found);
    }
    let undecided = std::cell::RefCell::new(Vec::new());
    let hold_lines = makefile_active_lines_forced(text, &|at| {
        undecided.borrow_mut().push(at);
        Some(true)
    });
    let undecided = undecided.into_inner();
    if undecided.is_empty() {
        return None;
    }
    let hold = makefile_targets_read(text, file, &hold_lines)?;
    let fail = makefile_targets_read(
        text,
        file,
        &makefile_active_lines_forced(text, &|_| Some(false)),
    )?;
    let mut targets = hold.targets.clone();
    for t in &fail.targets {
        push_unique(&mut targets, *t);
    }
    let conditional: Vec<Target> = targets
        .iter()
        .filter(|t| !(hold.targets.contains(t) && fail.targets.contains(t)))
        .copied()
        .collect();
    let note = (!conditional.is_empty()).then(|| {
        // The conditions that change the targets alone, each flipped with the others
        // holding.
        let lines: Vec<&str> = text.lines().collect();
        let deciding: Vec<String> = undecided
            .iter()
            .take(64)
            .filter(|d| {
                let flipped = makefile_active_lines_forced(text, &|at| Some(at != **d));
                makefile_targets_read(text, file, &flipped)
                    .is_none_or(|f| f.targets != hold.targets)
            })
            .map(|d| format!("`{}` (line {})", lines[*d].trim(), d + 1))
            .collect();
        let names: Vec<String> = conditional.iter().map(Target::to_string).collect();
        match deciding.is_empty() {
            true => format!(
                "{} only under conditions the Makefile does not decide",
                names.join(", ")
            ),
            false => format!(
                "{} only under one branch of {}, which the Makefile does not decide",
                names.join(", "),
                deciding.join(" or ")
            ),
        }
    });
    Some(Found {
        targets,
        line: hold.line.min(fail.line),
        note,
        conditional,
    })
}

/// [`makefile_targets_for`] as the lines `active` reads the Makefile.
fn makefile_targets_read(text: &str, file: Option<&str>, active: &[Option<bool>]) -> Option<Found> {
    let vars = makefile_vars_in(text, active, false);
    let expand = |line: &str| makefile_expand(&vars, line);
    // Which rule each recipe line belongs to, and which rules name `file` or another
    // source file among their prerequisites.
    let rules = makefile_rules(text, &expand);
    let source = |w: &str| {
        let name = w.rsplit('/').next().unwrap_or(w);
        !name.contains('%')
            && [".cu", ".cuh", ".cpp", ".cc", ".c"]
                .iter()
                .any(|e| name.ends_with(e))
    };
    let names_file = |r: &MakeRule| {
        file.is_some_and(|f| {
            r.prerequisites
                .iter()
                .any(|w| w.rsplit('/').next() == Some(f))
        })
    };
    let own: Vec<&MakeRule> = rules.iter().filter(|r| names_file(r)).collect();
    // `sum.cubin: NVCCFLAGS += -arch=sm_13`: a variable set for some targets only; it
    // counts for the file whose name, up to the first `.`, is a target's.
    let stem = |name: &str| -> String {
        let name = name.rsplit('/').next().unwrap_or(name);
        name.split('.').next().unwrap_or(name).to_string()
    };
    let lines: Vec<&str> = text.lines().collect();
    let target_specific = |n: usize| -> Option<Vec<String>> {
        let code = lines.get(n)?.split('#').next()?;
        if code.starts_with('\t') {
            return None;
        }
        let (targets, rest) = code.split_once(':')?;
        let (var, _) = rest.split_once('=')?;
        let var = var.trim().trim_end_matches(['+', '?', ':']).trim();
        (!var.is_empty()
            && !rest.trim_start().starts_with('=')
            && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| targets.split_whitespace().map(stem).collect())
    };
    let counts = |n: usize| -> bool {
        let rule = rules.iter().find(|r| r.recipe.contains(&n));
        if file.is_none() {
            return true;
        }
        if let Some(targets) = target_specific(n) {
            return file.is_some_and(|f| targets.contains(&stem(f)));
        }
        if !own.is_empty() {
            return rule.is_some_and(&names_file);
        }
        rule.is_none_or(|r| !r.prerequisites.iter().any(|w| source(w)))
    };
    let mut targets = Vec::new();
    let mut first = None;
    // Lines inside `ifeq`/`ifdef` blocks hold one branch's flags, chosen when make runs:
    // not known, unless the condition reads only variables the Makefile never sets.
    for (n, line) in text.lines().enumerate() {
        if !counts(n) || active.get(n) != Some(&Some(true)) {
            continue;
        }
        let line = line.split('#').next().unwrap_or("");
        if !(line.contains("-arch")
            || line.contains("gpu-architecture")
            || line.contains("gencode")
            || line.contains("generate-code")
            || line.contains("$(")
            || line.contains("${"))
        {
            continue;
        }
        // `code=\"sm_52,compute_52\"`: quotes escaped for the shell that make runs.
        let expanded = expand(&expand_foreach(&vars, line)).replace("\\\"", "\"");
        let words: Vec<String> = expanded.split_whitespace().map(str::to_string).collect();
        let found = targets_in_command(&words);
        let mut found = found;
        for (_, t) in gencodes_in_text(&expanded) {
            for t in t {
                push_unique(&mut found, t);
            }
        }
        if !found.is_empty() {
            first.get_or_insert(n + 1);
            for t in found {
                push_unique(&mut targets, t);
            }
        }
    }
    Some(Found {
        targets,
        line: first?,
        note: None,
        conditional: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &[Target]) -> String {
        t.iter()
            .map(Target::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// A source file's `CUDA_ARCHITECTURES` property is that file's, not the project's:
    /// the project's own list (an unknown `native` here) decides for the rest.
    #[test]
    fn a_source_property_is_not_the_projects_targets() {
        let t = "set(CUDA_ARCH native)\nset_source_files_properties(k120.cu PROPERTIES CUDA_ARCHITECTURES \"120f\")\nset(CMAKE_CUDA_ARCHITECTURES ${CUDA_ARCH})\nadd_library(l SHARED kernel.cu k120.cu)\n";
        assert!(cmake_targets(t).is_none_or(|f| f.targets.is_empty()));
        let t = "set_property(SOURCE k120.cu PROPERTY CUDA_ARCHITECTURES 120f)\nset(CMAKE_CUDA_ARCHITECTURES 80)\n";
        assert_eq!(names(&cmake_targets(t).unwrap().targets), "sm_80");
    }

    /// Windows line ends and multi-byte comments keep offsets and lines: the list's line
    /// is the one it is written on.
    #[test]
    fn cmake_with_crlf_and_multibyte_comments() {
        let t = "cmake_minimum_required(VERSION 3.18)\r\nproject(r LANGUAGES CXX CUDA)\r\n\r\nset(CMAKE_CXX_STANDARD 17)\r\n\r\n\r\n# 编译选项编译选项\r\nset(CMAKE_CUDA_ARCHITECTURES 90) # 架构\r\nadd_executable(r kernel.cu)\r\n";
        let f = cmake_targets(t).unwrap();
        assert_eq!((names(&f.targets), f.line), ("sm_90".to_string(), 8));
    }

    #[test]
    fn python_scripts_that_run_nvcc() {
        let t = "import subprocess\nflags = ['nvcc', '--cubin', '-arch', 'sm_35', '-O3']\nsubprocess.call(flags + ['-o', 'k.cubin', 'k.cu'])\n";
        let f = python_build_targets(t).unwrap();
        assert_eq!((names(&f.targets), f.line), ("sm_35".to_string(), 2));
        let t = "os.system(\"nvcc -arch=sm_80 -c k.cu\")\n";
        assert_eq!(names(&python_build_targets(t).unwrap().targets), "sm_80");
        // No nvcc: a string that looks like a flag names nothing.
        assert_eq!(python_build_targets("help = '-arch sm_35'\n"), None);
    }

    #[test]
    fn torch_extensions_keep_their_own_flags() {
        let t = "setup(ext_modules=[\n    CUDAExtension(name='volta',\n        sources=[os.path.join(here, 'src/volta/v.cu')],\n        extra_compile_args={'cxx': [], 'nvcc': ['-gencode', 'arch=compute_70,code=sm_70']}),\n    CUDAExtension(name='ampere', sources=['src/ampere/a.cu', 'src/ampere/b.cpp'],\n        extra_compile_args={'nvcc': ['-arch=sm_80']}),\n])\n";
        let of = |rel| match python_extension_targets(t, rel) {
            Some(ExtensionTargets::Of(f)) => format!("{} line {}", names(&f.targets), f.line),
            other => format!("{other:?}"),
        };
        assert_eq!(of("src/volta/v.cu"), "sm_70 line 2");
        assert_eq!(of("src/ampere/a.cu"), "sm_80 line 5");
        assert_eq!(of("src/ampere/tf32.cu"), "Some(NotListed)");
        // Flags from a variable: not per extension.
        let t = "nvcc_args = ['-gencode', 'arch=compute_80,code=sm_80']\nCUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': nvcc_args})\n";
        assert_eq!(python_extension_targets(t, "k.cu"), None);
    }

    #[test]
    fn visual_studio_project_sources() {
        let t = "<ItemGroup>\n    <CudaCompile Include=\"kernel.cu\" />\n    <CudaCompile Include=\"src\\Bitwise.cu\">\n    </CudaCompile>\n    <ClInclude Include=\"defs.h\" />\n</ItemGroup>\n";
        assert_eq!(vcxproj_builds(t, "kernel.cu"), Some(true));
        assert_eq!(vcxproj_builds(t, "src/bitwise.cu"), Some(true));
        assert_eq!(vcxproj_builds(t, "notbitwise_vector.cu"), Some(false));
        assert_eq!(
            vcxproj_builds("<CudaCompile Include=\"*.cu\" />", "a.cu"),
            None
        );
        assert_eq!(
            vcxproj_builds("<ClCompile Include=\"main.cpp\" />", "a.cu"),
            None
        );
    }

    #[test]
    fn visual_studio_projects() {
        let debug = "  <ItemDefinitionGroup Condition=\"'$(Configuration)|$(Platform)'=='Debug|x64'\">\n    <CudaCompile>\n      <CodeGeneration>compute_30,sm_30;compute_50,sm_50</CodeGeneration>\n    </CudaCompile>\n  </ItemDefinitionGroup>\n";
        let release = debug
            .replace("Debug", "Release")
            .replace("compute_50,sm_50", "compute_61,sm_61");
        let found = vcxproj_targets(debug).unwrap();
        assert_eq!(names(&found.targets), "sm_30 sm_50");
        assert_eq!((found.line, found.note), (3, None));
        let both = vcxproj_targets(&format!("{debug}{release}")).unwrap();
        assert_eq!(names(&both.targets), "sm_30 sm_50 sm_61");
        assert_eq!(
            both.note.as_deref(),
            Some("the configurations compile for different lists (compute_30,sm_30;compute_50,sm_50 / compute_30,sm_30;compute_61,sm_61); all are kept")
        );
        // A property's value is not in the text; a project without CUDA names nothing.
        assert_eq!(
            vcxproj_targets("<CodeGeneration>$(CudaArchs)</CodeGeneration>\n"),
            None
        );
        assert_eq!(vcxproj_targets("<ClCompile Include=\"a.cpp\" />\n"), None);
        // No `<CodeGeneration>`: the default of the toolkit whose customisation it imports.
        let legacy = "<ImportGroup Label=\"ExtensionSettings\">\n  <Import Project=\"$(VCTargetsPath)\\BuildCustomizations\\CUDA 8.0.props\" />\n</ImportGroup>\n<ItemGroup><CudaCompile Include=\"k.cu\" /></ItemGroup>\n";
        let found = vcxproj_targets(legacy).unwrap();
        assert_eq!(found.targets, [Target::parse("sm_20").unwrap()]);
        assert_eq!(found.line, 2);
        assert!(found.note.unwrap().contains("CUDA 8.0 build customisation"));
        let found = vcxproj_targets(&legacy.replace("8.0", "12.4")).unwrap();
        assert_eq!(found.targets, [Target::parse("sm_52").unwrap()]);
        // A property sheet of its own may set the code generation: not known.
        let sheet = format!(
            "{legacy}<ImportGroup><Import Project=\"..\\common\\cuda.props\" /></ImportGroup>\n"
        );
        assert_eq!(vcxproj_targets(&sheet), None);
        // A value through a property still names nothing known.
        assert_eq!(
            vcxproj_targets(&format!(
                "{legacy}<CodeGeneration>$(CudaArchs)</CodeGeneration>\n"
            )),
            None
        );
    }

    #[test]
    fn xmake_projects() {
        let text = "target(\"ops\")\n    set_kind(\"shared\")\n    -- add_cugencodes(\"sm_70\")\n    add_cugencodes(\"sm_80\", \"compute_80\")\n    add_cuflags(\"-gencode arch=compute_90a,code=sm_90a\")\n";
        let found = xmake_targets(text).unwrap();
        assert_eq!(names(&found.targets), "sm_80 compute_80 sm_90a");
        assert_eq!(found.line, 4);
        assert_eq!(xmake_targets("add_cugencodes(\"native\")\n"), None);
    }

    #[test]
    fn compile_commands_words() {
        assert_eq!(
            names(&targets_in_command(&words("nvcc -arch=sm_80 -c k.cu"))),
            "sm_80"
        );
        assert_eq!(
            names(&targets_in_command(&words("nvcc -arch sm_90a k.cu"))),
            "sm_90a"
        );
        assert_eq!(
            names(&targets_in_command(&words(
                "nvcc -gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=[sm_90a,compute_90a] k.cu"
            ))),
            "sm_80 sm_90a"
        );
        assert_eq!(
            names(&targets_in_command(&words(
                "nvcc --generate-code=arch=compute_100a,code=sm_100a"
            ))),
            "sm_100a"
        );
        assert_eq!(
            names(&targets_in_command(&words(
                "nvcc -arch=compute_80 -code=sm_80,sm_86"
            ))),
            "sm_80 sm_86"
        );
        assert_eq!(
            names(&targets_in_command(&words("nvcc -arch=native k.cu"))),
            ""
        );
        assert_eq!(
            names(&targets_in_command(&words(
                "clang++ --cuda-gpu-arch=sm_80 k.cu"
            ))),
            "sm_80"
        );
    }

    #[test]
    fn cmake_forms() {
        let t = "cmake_minimum_required(VERSION 3.24)\nproject(p LANGUAGES CXX CUDA)\nadd_library(k k.cu)\nset_target_properties(k PROPERTIES CUDA_ARCHITECTURES \"80;90a\" POSITION_INDEPENDENT_CODE ON)\n";
        let f = cmake_targets(t).unwrap();
        assert_eq!((names(&f.targets), f.line), ("sm_80 sm_90a".to_string(), 4));
        let t = "# archs\nset(CMAKE_CUDA_ARCHITECTURES 80 90a)\n";
        assert_eq!(names(&cmake_targets(t).unwrap().targets), "sm_80 sm_90a");
        let t = "set(ARCHS 80-real 90-virtual)\nset(CMAKE_CUDA_ARCHITECTURES ${ARCHS})\n";
        assert_eq!(
            names(&cmake_targets(t).unwrap().targets),
            "sm_80 compute_90"
        );
        let t = "set_property(TARGET k PROPERTY CUDA_ARCHITECTURES 90a 100a)\n";
        assert_eq!(names(&cmake_targets(t).unwrap().targets), "sm_90a sm_100a");
        // Computed at configure time: not known.
        assert_eq!(
            cmake_targets("set(CMAKE_CUDA_ARCHITECTURES native)\n"),
            None
        );
        assert_eq!(
            cmake_targets("set(CMAKE_CUDA_ARCHITECTURES ${GPU_ARCHS})\n"),
            None
        );
        // Two lists: only what both name is sure.
        let t = "if(CUDA_VERSION VERSION_GREATER 12.0)\n  set(CMAKE_CUDA_ARCHITECTURES 80 90a)\nelse()\n  set(CMAKE_CUDA_ARCHITECTURES 80)\nendif()\n";
        assert_eq!(names(&cmake_targets(t).unwrap().targets), "sm_80");
        // Lists with nothing in common, each set only in a branch the file does not
        // decide (the host's processor): every target is built under its condition.
        let t = "if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES \"aarch64\")\n  set(CMAKE_CUDA_ARCHITECTURES \"87\") # Orin\nelse()\n  set(CMAKE_CUDA_ARCHITECTURES \"86;89\")\nendif()\n";
        let f = cmake_targets(t).unwrap();
        assert_eq!(
            (names(&f.targets), f.line),
            ("sm_87 sm_86 sm_89".to_string(), 2)
        );
        assert_eq!(names(&f.conditional), "sm_87 sm_86 sm_89");
        assert_eq!(
            f.note.as_deref(),
            Some("sm_87 only under if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES \"aarch64\") (line 2), which the file does not decide; sm_86, sm_89 only under else() of if(CMAKE_HOST_SYSTEM_PROCESSOR MATCHES \"aarch64\") (line 4), which the file does not decide")
        );
        // A list set for every build, then replaced under a condition: which one holds
        // is not known.
        let t = "set(CMAKE_CUDA_ARCHITECTURES 80)\nif(WITH_HOPPER)\n  set(CMAKE_CUDA_ARCHITECTURES 90a)\nendif()\n";
        assert_eq!(cmake_targets(t), None);
    }

    #[test]
    fn python_build_scripts() {
        let t = "cc_flag = []\ncc_flag.append(\"-gencode\")\ncc_flag.append(\"arch=compute_90a,code=sm_90a\")\nif True:\n    cc_flag += [\"-gencode\", \"arch=compute_100a,code=sm_100a\"]\n";
        let f = python_build_targets(t).unwrap();
        assert_eq!(
            (names(&f.targets), f.line),
            ("sm_90a sm_100a".to_string(), 3)
        );
        let t = "import os\nos.environ[\"TORCH_CUDA_ARCH_LIST\"] = \"8.0;8.6+PTX;9.0a\"\n";
        assert_eq!(
            names(&python_build_targets(t).unwrap().targets),
            "sm_80 sm_86 sm_90a"
        );
        assert_eq!(names(&torch_arch_list("7.5 8.0 9.0")), "sm_75 sm_80 sm_90");
        let t = "arch_list = os.environ.get(\"TORCH_CUDA_ARCH_LIST\", \"9.0a;10.0a\")\n";
        assert_eq!(
            names(&python_build_targets(t).unwrap().targets),
            "sm_90a sm_100a"
        );
        assert_eq!(
            python_build_targets("if os.environ[\"TORCH_CUDA_ARCH_LIST\"] != '9.0':\n    pass\n"),
            None
        );
        // torch's JIT build names its flags without nvcc.
        let t = "import torch.utils.cpp_extension\nm = torch.utils.cpp_extension.load(\n    'k',\n    sources=['k.cu'],\n    extra_cuda_cflags=['-O3', '-gencode=arch=compute_100a,code=sm_100a'],\n)\n";
        let f = python_nvcc_words(t).unwrap();
        assert_eq!((names(&f.targets), f.line), ("sm_100a".to_string(), 5));
        assert_eq!(
            python_nvcc_words("import torch\nx = load('k', sources=['k.cu'])\n"),
            None
        );
        // A Rust build script: nvcc as a command, or the `cc` crate.
        let t = "fn main() {\n    // nvcc -arch=sm_70 (old)\n    Command::new(\"nvcc\")\n        .args([\"--gpu-architecture=sm_86\", \"-O3\", \"-c\", \"src/k.cu\"])\n        .status();\n}\n";
        let f = rust_build_targets(t).unwrap();
        assert_eq!((names(&f.targets), f.line), ("sm_86".to_string(), 4));
        let t =
            "cc::Build::new().cuda(true).flag(\"-arch=sm_80\").file(\"k.cu\").compile(\"k\");\n";
        assert_eq!(names(&rust_build_targets(t).unwrap().targets), "sm_80");
        assert_eq!(
            rust_build_targets("fn main() { println!(\"cargo:rerun-if-changed=k.cu\"); }\n"),
            None
        );
        assert!(cmake_mentions("add_subdirectory(src)\n# contrib\n", "src"));
        assert!(cmake_mentions("ADD_SUBDIRECTORY(src)\n", "src"));
        assert!(!cmake_mentions(
            "include_directories(\"src/ops\")\nadd_library(core src/ops/core/core.cu)\n",
            "src/ops/ext"
        ));
        assert!(cmake_mentions(
            "target_include_directories(core PRIVATE src/ops)\nadd_library(core src/ops/ext/a.cu)\n",
            "src/ops/ext"
        ));
        // A folder through a variable the file sets once.
        let external = "set(EXTERNAL \"external\")\nset(SRC ${SRC} \"${EXTERNAL}/src/vp/k.cu\")\ncuda_add_executable(app ${SRC} OPTIONS -arch=sm_30)\n";
        assert!(cmake_mentions(external, "external/src/vp"));
        assert!(!cmake_mentions(external, "external/src/other"));
        assert!(!cmake_mentions(
            &external.replace("set(EXTERNAL", "set(OTHER"),
            "external/src/vp"
        ));
        let make = "all: app\napp: live.cu\n\tnvcc -arch=sm_80 live.cu -o app\n";
        assert_eq!(makefile_builds(make, "live.cu"), Some(true));
        assert_eq!(makefile_builds(make, "stale_copy.cu"), Some(false));
        let objs = "OBJS = main.o kern.o\nSRC = kern.cu\n%.o: %.cu\n\tnvcc -c $< -o $@\n";
        assert_eq!(makefile_builds(objs, "main.cu"), Some(true));
        assert_eq!(makefile_builds(objs, "old.cu"), Some(false));
        // Shell scripts: the nvcc commands, their targets and the sources they spell out.
        let sh = "#!/bin/bash\nset -e\n# nvcc old.cu\nmkdir -p build && nvcc -O2 \\\n  -arch=sm_86 main.cu -o build/app\nnvcc -I inc ./lib/k.cu -c # -arch=sm_50\n";
        assert_eq!(names(&shell_nvcc_targets(sh).unwrap().targets), "sm_86");
        assert_eq!(shell_nvcc_targets(sh).unwrap().line, 4);
        assert_eq!(
            shell_cuda_sources(sh),
            Some(vec!["main.cu".to_string(), "lib/k.cu".to_string()])
        );
        assert_eq!(
            shell_cuda_sources("for f in *.cu; do nvcc $f; done\n"),
            None
        );
        assert_eq!(shell_cuda_sources("cd src\nnvcc k.cu\n"), None);
        assert_eq!(shell_nvcc_targets("nvcc -O2 main.cu\n"), None);
        // A variant whose name adds a dotted part is another file than the one built.
        let variant = "all: m.o\nm.o: matchers/matcher.cu\n\tnvcc -c $< -o $@\n";
        assert_eq!(makefile_builds(variant, "matcher.cu"), Some(true));
        assert_eq!(makefile_builds(variant, "matcher.tile.cu"), Some(false));
        // A wildcard matches the file or names its folder's sources.
        assert_eq!(
            makefile_builds("SRC = $(wildcard *.cu)\nkern.o: kern.cu\n", "old.cu"),
            Some(true)
        );
        let glob = "DIR_SRC = ./src\nCU_SRC = $(wildcard ${DIR_SRC}/*.cu)\nCU_OBJ = $(patsubst %.cu,obj/%.o,$(notdir ${CU_SRC}))\nlib.a: $(CU_OBJ)\n\tnvcc -lib $^ -o $@\n";
        assert_eq!(makefile_builds_in(glob, "rsa.cu", Some("src")), Some(true));
        assert_eq!(
            makefile_builds_in(glob, "old.cu", Some("src/useless")),
            Some(false)
        );
        // A recipe that only echoes a compile line (a compile database written over a
        // glob) compiles nothing: the Makefile still names its sources in full.
        let echo = "CFLAGS = -arch=sm_89\nbuild/p: src/plain.cu\n\tnvcc $(CFLAGS) -o $@ $<\ndb:\n\t@for s in src/*.cu; do \\\n\t\techo '{\"command\": \"nvcc $(CFLAGS) -c '$$s'\"},' >> db.json; \\\n\tdone\n";
        assert_eq!(makefile_builds(echo, "tma.cu"), Some(false));
        assert_eq!(makefile_builds(echo, "plain.cu"), Some(true));
        // A loop that compiles is no echo.
        let each = "all:\n\tfor s in *.cu; do nvcc -c $$s; done\nx: a.cu\n";
        assert_eq!(makefile_builds(each, "b.cu"), None);
        // A variable the Makefile never sets (`$(CUDA_HOME)` from the environment) does
        // not hide a rule that names the file.
        let env = "INC = -I$(CUDA_HOME)/include\nSRC = tma.cu\nbin/t: $(SRC)\n\tnvcc -arch=sm_90 $(INC) -o $@ $<\n";
        assert_eq!(makefile_builds(env, "tma.cu"), Some(true));
        // Nor, inside a flag (`-I$(CUDA_HOME)/include`), does it name any other source.
        assert_eq!(makefile_builds(env, "other.cu"), Some(false));
        // Also on the compile line itself, before a set variable that names the source
        // (`-I${CUDA_HOME}/… $(file1).cu`): the line names its one source, and no other.
        let flag = "#file1 = tile_v2\nfile1 = tile_v3\nall:\n\tnvcc -I${CUDA_HOME}/samples/common/inc -lineinfo $(file1).cu -o $(file1)\n";
        assert_eq!(makefile_builds(flag, "tile_v3.cu"), Some(true));
        assert_eq!(makefile_builds(flag, "tile_v2.cu"), Some(false));
        // Unset where a source may be (`$(EXTRA)`, a word of its own): any source may be
        // named.
        let word = "all:\n\tnvcc -arch=sm_80 $(EXTRA) main.cu -o app\n";
        assert_eq!(makefile_builds(word, "other.cu"), None);
        // Unless the Makefile runs make in other folders.
        let sub = format!("{glob}sub:\n\t$(MAKE) -C src/useless\n");
        assert_eq!(
            makefile_builds_in(&sub, "old.cu", Some("src/useless")),
            None
        );
        // A rule of its own builds `onemax` from other files; a `G++` variable, a
        // `$(shell …)` that lists no files and `rm -f *.o` name no source.
        let own = "NVCC = nvcc -arch=sm_52\nG++ = g++ -O2\nV := $(shell nvidia-smi | grep Version)\nAPPS = onemax\nall: $(APPS)\nonemax: main.cu kernels.o\n\t$(NVCC) $^ -o $@\nkernels.o: kernels.cu\n\t$(NVCC) -c $<\ncpu:\n\t$(G++) cpu.cpp\nclean:\n\trm -f *.o\n";
        assert_eq!(makefile_builds(own, "onemax.cu"), Some(false));
        assert_eq!(makefile_builds(own, "kernels.cu"), Some(true));
        assert_eq!(
            makefile_builds("app: $(SOURCES)\nx: a.cu\n", "old.cu"),
            None
        );
        assert_eq!(
            makefile_builds("CFLAGS = -O2\napp: main.cpp\n", "old.cu"),
            None
        );
        let apps = "APPS = sum shfl\nshfl: shfl.cu\n\tnvcc -o $@ $<\n%: %.cu\n\tnvcc -o $@ $<\n";
        assert_eq!(makefile_builds(apps, "sum.cu"), Some(true));
        // The CUDA samples' Makefile: `SMS` through `$(foreach …)` under a test for
        // `GENCODE_FLAGS` not given, which the lines after it fill.
        let samples = "SMS ?= 30 35 50 52\nifeq ($(GENCODE_FLAGS),)\n$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode arch=compute_$(sm),code=sm_$(sm)))\nHIGHEST_SM := $(lastword $(sort $(SMS)))\nGENCODE_FLAGS += -gencode arch=compute_$(HIGHEST_SM),code=compute_$(HIGHEST_SM)\nendif\nred: red.cu\n\tnvcc $(GENCODE_FLAGS) -o $@ $<\n";
        let found = makefile_targets_for(samples, Some("red.cu")).unwrap();
        assert_eq!(names(&found.targets), "sm_30 sm_35 sm_50 sm_52");
        assert_eq!(found.line, 8);
        // A top-level Makefile (tools and flags from an included `config.mak`) that compiles
        // one file of `common/cuda` under a condition: the folder's other `.cu` files are
        // not built; a file of another folder is not judged.
        let top = "include config.mak\nSRCS = common/frame.c\nifeq ($(HAVE_CUDA),yes)\ncommon/cuda/search.o: common/cuda/search.cu\n\tnvcc -G -c -o $@ $<\nOBJS += common/cuda/search.o\nendif\nOBJS += $(SRCS:%.c=%.o)\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS) $(LDFLAGS)\n";
        assert_eq!(
            makefile_builds_in(top, "search.cu", Some("common/cuda")),
            Some(true)
        );
        assert_eq!(
            makefile_builds_in(top, "search_old.cu", Some("common/cuda")),
            Some(false)
        );
        assert_eq!(makefile_builds_in(top, "other.cu", Some("tools")), None);
        // With no include and no other make run, a sibling folder's file is not built.
        let working = "SRCDIR = ./Src_working\nS = ${SRCDIR}\napp: $S/main.o\n\tnvcc -o app $S/main.o\n$S/main.o: $S/main.cu\n\tnvcc -c -o $@ $S/main.cu\n";
        assert_eq!(
            makefile_builds_in(working, "main.cu", Some("Src_working")),
            Some(true)
        );
        assert_eq!(
            makefile_builds_in(working, "wave.cu", Some("Src_old")),
            Some(false)
        );
        assert_eq!(
            makefile_builds_in("app: $(MYSRCS)\nx: a.cu\n", "b.cu", Some("")),
            None
        );
        // x264's Makefile: the configuration read by `$(shell …)` only for conditions,
        // OpenCL kernels through `$(wildcard …*.cl)`.
        let x264 = format!(
            "CONFIG := $(shell cat config.h)\nifneq ($(findstring HAVE_GPL 1, $(CONFIG)),)\nSRCS += gpl.c\nendif\ncommon/oclobj.h: common/opencl/x264-cl.h $(wildcard $(SRCPATH)/common/opencl/*.cl)\n\tcat $^ > $@\n{top}"
        );
        assert_eq!(
            makefile_builds_in(&x264, "search_old.cu", Some("common/cuda")),
            Some(false)
        );
        assert_eq!(
            makefile_builds_in("K = $(wildcard *.cu)\nx: a.cu\n", "b.cu", None),
            Some(true)
        );
        assert_eq!(
            makefile_builds_in("K = $(wildcard $(UNSET)/*.cu)\nx: a.cu\n", "b.cu", None),
            None
        );

        assert!(cmake_mentions(
            "SUBDIRS(${CMAKE_SOURCE_DIR}/kernels)\n",
            "kernels"
        ));
        assert!(cmake_mentions("subdirs(kernels tools)\n", "tools"));
        assert!(!cmake_mentions("my_subdirs(kernels)\n", "kernels"));
        assert!(!cmake_mentions(
            "add_subdirectory(src)\n# contrib\n",
            "contrib"
        ));
    }

    #[test]
    fn makefile_include_folders() {
        let text = "INC = -I ../common/inc\nROOT = ..\nall:\n\tnvcc -I./include -I$(ROOT)/third_party $(INC) -I$(CUDA_HOME)/include -I`pwd`/x -o main main.cu\n";
        assert_eq!(
            makefile_include_dirs(text),
            ["../common/inc", "./include", "../third_party"]
        );
    }

    #[test]
    fn makefile_references_expand_through_every_level() {
        // NAS-style: a rule for one file whose recipe reaches the flags four variables down.
        let text = "ARCH = -gencode arch=compute_61,code=sm_61\nEXTRA = ${ARCH} -O3\nNVCC = nvcc\nCC = ${NVCC} ${EXTRA}\nCFLAGS = -O3\nCOMPILE = $(CC) -c $(C_INC) $(CFLAGS)\n\nbt.o: bt.cu\n\t${COMPILE} -maxrregcount 50 bt.cu\n";
        let found = makefile_targets_for(text, Some("bt.cu")).unwrap();
        assert_eq!((names(&found.targets).as_str(), found.line), ("sm_61", 9));
        // A variable defined through itself (make refuses it) ends the expansion.
        let found = makefile_targets_for("X = $(X) -arch=sm_80\nall:\n\tnvcc $(X) k.cu\n", None);
        assert_eq!(found.map(|f| names(&f.targets)).as_deref(), Some("sm_80"));
    }

    #[test]
    fn makefiles() {
        let t = "NVCC ?= nvcc\nARCH := sm_86\nNVCCFLAGS = -O3 -arch=$(ARCH)\nall:\n\t$(NVCC) $(NVCCFLAGS) k.cu\n";
        let f = makefile_targets(t).unwrap();
        assert_eq!((names(&f.targets), f.line), ("sm_86".to_string(), 3));
        let t =
            "GENCODE = -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90\n";
        assert_eq!(names(&makefile_targets(t).unwrap().targets), "sm_80 sm_90");
        assert_eq!(makefile_targets("all:\n\tgcc x.c\n"), None);
        // One branch's flags are chosen when make runs: both are targets, each under the
        // condition that picks it.
        let t = "ifeq ($(GPU),H100)\nNVCCFLAGS += -arch=sm_90a\nelse\nNVCCFLAGS += -arch=sm_80\nendif\n";
        let f = makefile_targets(t).unwrap();
        assert_eq!(names(&f.targets), "sm_90a sm_80");
        assert_eq!(names(&f.conditional), "sm_90a sm_80");
        assert_eq!(
            f.note.as_deref(),
            Some("sm_90a, sm_80 only under one branch of `ifeq ($(GPU),H100)` (line 1), which the Makefile does not decide")
        );
        // Only one branch sets flags: the other builds nvcc's default, not known.
        let t = "ifeq ($(GPU),H100)\nNVCCFLAGS += -arch=sm_90a\nendif\nk: k.cu\n\tnvcc $(NVCCFLAGS) k.cu\n";
        assert_eq!(makefile_targets(t), None);
        // The CUDA samples' Makefile: `SMS` set in both branches of an undecided `ifeq`;
        // the SMs both name are certain.
        let t = "ifeq ($(TARGET_ARCH),armv7l)\n    SMS ?= 30 32 35\nelse\n    SMS ?= 30 35\nendif\nifeq ($(GENCODE_FLAGS),)\n$(foreach sm,$(SMS),$(eval GENCODE_FLAGS += -gencode arch=compute_$(sm),code=sm_$(sm)))\nendif\nred: red.cu\n\tnvcc $(GENCODE_FLAGS) -o $@ $<\n";
        let f = makefile_targets_for(t, Some("red.cu")).unwrap();
        assert_eq!(names(&f.targets), "sm_30 sm_32 sm_35");
        assert_eq!(names(&f.conditional), "sm_32");
        assert_eq!(
            f.note.as_deref(),
            Some("sm_32 only under one branch of `ifeq ($(TARGET_ARCH),armv7l)` (line 1), which the Makefile does not decide")
        );
        // `else ifeq` chains: a branch after a taken one is not; one after branches not
        // taken is, where its own test holds.
        let t = "ifdef UNSET_A\nARCH = -arch=sm_70\nelse ifndef UNSET_B\nARCH = -arch=sm_75\nelse\nARCH = -arch=sm_80\nendif\n";
        assert_eq!(names(&makefile_targets(t).unwrap().targets), "sm_75");
        // A variable set again takes the later value; `?=` keeps an earlier one; `:=`
        // reads the old value of a reference to itself.
        let t = "ARCH = -arch=sm_70\nARCH = -arch=sm_80\nARCH ?= -arch=sm_90\nFLAGS := -O3\nFLAGS := $(FLAGS) $(ARCH)\nk: k.cu\n\tnvcc $(FLAGS) k.cu\n";
        assert_eq!(
            names(&makefile_targets_for(t, Some("k.cu")).unwrap().targets),
            "sm_80"
        );
        // Unless the test is whether a variable the Makefile never sets was given: plain
        // `make` builds the default branch. One the file sets stays undecided.
        let t = "ifeq ($(CUARCH),)\n  CUFLAGS += -gencode arch=compute_80,code=sm_80\nelse\n  CUFLAGS += -arch=$(CUARCH)\nendif\nk: k.cu\n\tnvcc $(CUFLAGS) k.cu\n";
        assert_eq!(names(&makefile_targets(t).unwrap().targets), "sm_80");
        let t = "ifndef SM\nARCH = -arch=sm_75\nelse\nARCH = -arch=sm_$(SM)\nendif\n";
        assert_eq!(names(&makefile_targets(t).unwrap().targets), "sm_75");
        let t = "CUARCH ?= sm_86\nifeq ($(CUARCH),)\n  CUFLAGS += -arch=sm_80\nendif\n";
        assert_eq!(makefile_targets(t), None);
        // An automake `Makefile.am`: the shell's escaped quotes around the code list.
        let t = "nvcc_ARCH = -gencode=arch=compute_52,code=\\\"sm_52,compute_52\\\"\nnvcc_FLAGS = $(nvcc_ARCH) -O3\n";
        assert_eq!(names(&makefile_targets(t).unwrap().targets), "sm_52");
        // A rule written for one file decides its targets; the pattern rule the rest.
        let t = "APPS = scan sum\nall: $(APPS)\n\nscan: scan.cu util.h\n\tnvcc -O2 -arch=sm_30 -o $@ $<\n\n%: %.cu\n\tnvcc -O2 -arch=sm_20 -o $@ $<\n";
        let for_file = |f| names(&makefile_targets_for(t, Some(f)).unwrap().targets);
        assert_eq!(for_file("scan.cu"), "sm_30");
        assert_eq!(for_file("sum.cu"), "sm_20");
        assert_eq!(names(&makefile_targets(t).unwrap().targets), "sm_30 sm_20");
        // A variable set only inside `ifeq` blocks is not known where it is used.
        let t = "ifeq ($(CUDA_MAJOR),13)\nGEN ?= -gencode=arch=compute_75,code=sm_75 \\\n  -gencode=arch=compute_90,code=sm_90\nendif\nFLAGS := $(GEN)\nk: k.cu\n\tnvcc $(FLAGS) k.cu\n";
        assert_eq!(makefile_targets_for(t, Some("k.cu")), None);
        // Flags set for one target only count for its file.
        let t = "all: sum.cubin dsum.cubin\nsum.cubin: NVCCFLAGS += -code=sm_11,sm_13 -arch=compute_11\ndsum.cubin: NVCCFLAGS += -code=sm_13 -arch=compute_13\n%.cubin: %.cu\n\tnvcc $(NVCCFLAGS) -cubin -o $@ $<\n";
        let for_file = |f| names(&makefile_targets_for(t, Some(f)).unwrap().targets);
        assert_eq!(for_file("dsum.cu"), "sm_13");
        assert_eq!(for_file("sum.cu"), "sm_11 sm_13");
        assert_eq!(
            makefile_includes(
                "ROOT = ..\ninclude $(ROOT)/make.defs extra.mk\n-include $(UNSET)/x.mk\n"
            ),
            ["../make.defs", "extra.mk"]
        );
        // Sources named through substitution references of lists set under undecided
        // conditions, list functions and recipes that loop over the sources: the one
        // CUDA source named in `cuda/` is the folder's only one built.
        let t = "SRCS = main.c\nifneq ($(AS),no)\nASM0 = a.asm b-32.asm\nASMS = $(ASM0:%=common/x86/%)\nendif\nifeq ($(ARCH),X86_64)\nASMSRC = $(ASMS:-32.asm=-64.asm)\nendif\nOBJASM = $(ASMSRC:%.asm=%.o)\n.PHONY: all install-*\nifeq ($(HAVE_CUDA),yes)\ncuda/search.o: cuda/search.cu\n\tnvcc -c -o $@ $<\nendif\nOBJS += $(OBJASM) $(if $(RC), res.o) $(addprefix obj/, $(notdir $(SRCS:.c=.o)))\ndepend:\n\t@$(foreach SRC, $(addprefix $(SRCPATH)/, $(SRCS)), $(CC) $(CFLAGS) $(SRC) -MT $(SRC:%.c=%.o) >> .depend;)\n";
        assert_eq!(makefile_builds_in(t, "search.cu", Some("cuda")), Some(true));
        assert_eq!(
            makefile_builds_in(t, "search_old.cu", Some("cuda")),
            Some(false)
        );
        // A name still unknown (`$(EXTRA_SRCS)` from an included file) keeps it unknown.
        let t = format!("{t}lib: $(EXTRA_SRCS)\n");
        assert_eq!(makefile_builds_in(&t, "search_old.cu", Some("cuda")), None);
        // A rule with no target flags for its file: nvcc's default, not known.
        let t = "one: one.cu\n\tnvcc -o one one.cu\nrest: rest.cu\n\tnvcc -arch=sm_80 rest.cu\n";
        assert_eq!(makefile_targets_for(t, Some("one.cu")), None);
    }
}
