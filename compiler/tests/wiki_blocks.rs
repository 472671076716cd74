//! Every ```` ```cuda ```` block of the built-in wiki compiles with the real toolkit
//! (issue 28): `nvcc -c` for the page's minimum architecture, or the block's own
//! (`sm_90a` on the fence), hidden lines (`#~ `, the declarations an excerpt needs)
//! included. Blocks marked `fragment` are excerpts and are not compiled; blocks marked
//! `deliberately-wrong` must fail, and the page must quote one of the errors nvcc gives for
//! them. The markers and hidden lines are described in `docs/WIKI_FORMAT.md` ("Code
//! blocks") and checked by `ktui wiki check`.
//!
//! The toolkit is found as in `real_toolkit.rs` (`Toolkit::discover`, or
//! `KERNAUT_TEST_NVCC`); without one the test prints why and passes without checking.
//! `.ci/run` runs it with NVIDIA's `nvidia-cuda-nvcc` wheels:
//! `VIRTUAL_ENV=/path/to/venv cargo test -p kernaut-compiler --test wiki_blocks -- --nocapture`.
//!
//! To keep the run short on small machines, the blocks that must compile are batched:
//! one translation unit per architecture, each block in its own namespace
//! behind a `#line` directive naming the page and line, its `#include`s hoisted to the top
//! and its macros undefined after it. nvcc's messages therefore point into the page.
//! At most two nvcc processes run at a time. Batches are compiled with `-rdc=true`, so every
//! `__device__` function is emitted and assembled by ptxas for the block's architecture, even
//! one nothing calls (an instruction newer than the page's minimum fails there, not only in a
//! kernel); a deliberately wrong block is compiled alone, with `-rdc=true` only when marked
//! `rdc`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use kernaut_compiler::{Toolkit, ToolkitConfig};
use kernaut_wiki::{CodeBlock, Page, Wiki, WikiConfig};

/// The oldest architecture the toolkit CI installs (CUDA 13) compiles for.
const LOWEST_ARCH: u32 = 75;

fn toolkit() -> Option<Toolkit> {
    let config = ToolkitConfig {
        nvcc: std::env::var_os("KERNAUT_TEST_NVCC").map(PathBuf::from),
        ..ToolkitConfig::default()
    };
    match Toolkit::discover(&config) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("wiki_blocks: skipped, no CUDA toolkit: {e}");
            None
        }
    }
}

/// `sm_XY[a|f]` for a page's `requires_sm` (`'>=9.0a'`, `8.0`, `sm_80`), no lower than
/// [`LOWEST_ARCH`]; `None` without one.
fn page_arch(page: &Page) -> Option<String> {
    let raw = page.frontmatter.requires_sm.as_deref()?.trim();
    let (major, minor, specific) = kernaut_wiki::parse_requires_sm(raw)?;
    let suffix = if specific {
        raw.chars().last().filter(|c| *c == 'a' || *c == 'f')
    } else {
        None
    };
    let number = (major * 10 + minor).max(LOWEST_ARCH);
    Some(format!(
        "sm_{number}{}",
        suffix.map(String::from).unwrap_or_default()
    ))
}

/// A block to compile, with where it comes from.
struct Block {
    /// `wiki/pages/<path>`, for messages and `#line`.
    file: String,
    block: CodeBlock,
}

/// One translation unit's source: hoisted includes, then each block in its namespace.
fn translation_unit(blocks: &[&Block]) -> String {
    let mut includes: Vec<String> = vec!["#include <cuda_runtime.h>".to_string()];
    let mut body = String::new();
    for (n, b) in blocks.iter().enumerate() {
        body.push_str(&format!("namespace wiki_block_{n} {{\n"));
        body.push_str(&format!("#line {} \"{}\"\n", b.block.line + 1, b.file));
        let mut macros = Vec::new();
        for line in b.block.source().lines() {
            let t = line.trim_start();
            if t.starts_with("#include") {
                if !includes.iter().any(|i| i == t) {
                    includes.push(t.to_string());
                }
                body.push('\n');
                continue;
            }
            if let Some(rest) = t.strip_prefix("#define") {
                let name: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    macros.push(name);
                }
            }
            body.push_str(line);
            body.push('\n');
        }
        for m in macros {
            body.push_str(&format!("#undef {m}\n"));
        }
        body.push_str("}\n");
    }
    let mut out = includes.join("\n");
    out.push('\n');
    out.push_str(&body);
    out
}

/// Runs `nvcc -c` on `source`; returns (success, stdout + stderr).
fn nvcc(
    toolkit: &Toolkit,
    dir: &Path,
    name: &str,
    source: &str,
    arch: &str,
    rdc: bool,
) -> (bool, String) {
    let cu = dir.join(format!("{name}.cu"));
    std::fs::write(&cu, source).expect("write the translation unit");
    let mut cmd = Command::new(&toolkit.nvcc);
    cmd.arg("-c")
        .arg("-std=c++17")
        // `-arch=sm_90a` alone also embeds `compute_90` PTX, which ptxas then rejects
        // for arch-specific instructions: name the virtual architecture explicitly.
        .arg("-gencode")
        .arg(format!(
            "arch=compute_{},code={arch}",
            arch.trim_start_matches("sm_")
        ))
        .arg(&cu)
        .arg("-o")
        .arg(dir.join(format!("{name}.o")));
    if rdc {
        cmd.arg("-rdc=true");
    }
    let out = cmd.output().expect("nvcc runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The messages of the errors in nvcc's output (front end and ptxas).
fn error_messages(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|l| {
            l.split_once("): error: ")
                .or_else(|| l.split_once("error   : "))
                .or_else(|| l.split_once("fatal   : "))
                // "matches these operands:" introduces the list of candidates.
                .map(|(_, m)| m.trim().trim_end_matches(':').to_string())
        })
        .collect()
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kernaut-wiki-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

#[test]
fn every_wiki_cuda_block_compiles() {
    let Some(toolkit) = toolkit() else { return };
    let wiki = Wiki::load(&WikiConfig::builtin());
    let mut groups: BTreeMap<String, Vec<Block>> = BTreeMap::new();
    let mut wrong: Vec<(Block, String, String)> = Vec::new();
    let mut fragments = 0;
    for page in wiki.pages() {
        let file = format!("wiki/pages/{}", page.path.trim_start_matches("builtin:"));
        for block in page.code_blocks() {
            if block.lang != "cuda" {
                continue;
            }
            if block.has("fragment") {
                fragments += 1;
                continue;
            }
            let arch = block
                .arch()
                .map(str::to_string)
                .or_else(|| page_arch(page))
                .unwrap_or_else(|| format!("sm_{LOWEST_ARCH}"));
            let b = Block {
                file: file.clone(),
                block,
            };
            if b.block.has("deliberately-wrong") {
                wrong.push((b, arch, page.body.clone()));
            } else {
                groups.entry(arch).or_default().push(b);
            }
        }
    }
    let dir = scratch_dir();
    let compiled: usize = groups.values().map(Vec::len).sum();
    let failures = Mutex::new(Vec::<String>::new());

    // Work items: each batch of compiling blocks, then each deliberately wrong block.
    enum Job<'a> {
        Batch(&'a str, &'a [Block]),
        Wrong(usize),
    }
    let mut jobs: Vec<Job> = groups.iter().map(|(k, v)| Job::Batch(k, v)).collect();
    jobs.extend((0..wrong.len()).map(Job::Wrong));
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(job) = jobs.get(i) else { break };
                match job {
                    Job::Batch(arch, blocks) => {
                        let refs: Vec<&Block> = blocks.iter().collect();
                        let name = format!("batch-{arch}");
                        let (ok, out) = nvcc(&toolkit, &dir, &name, &translation_unit(&refs), arch, true);
                        if !ok {
                            failures.lock().unwrap().push(format!(
                                "blocks for {arch} do not compile:\n{out}"
                            ));
                        }
                    }
                    Job::Wrong(w) => {
                        let (b, arch, body) = &wrong[*w];
                        let name = format!("wrong-{w}");
                        let (ok, out) = nvcc(&toolkit, &dir, &name, &translation_unit(&[b]), arch, b.block.has("rdc"));
                        let errors = error_messages(&out);
                        let page = squash(body);
                        let at = format!("{}:{}", b.file, b.block.line);
                        if ok {
                            failures.lock().unwrap().push(format!(
                                "{at}: the block is marked `deliberately-wrong` but compiles for {arch}"
                            ));
                        } else if !errors.iter().any(|e| page.contains(&squash(e))) {
                            failures.lock().unwrap().push(format!(
                                "{at}: the block fails, but the page quotes none of nvcc's errors: {errors:?}"
                            ));
                        }
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "wiki_blocks: {} ({}): {compiled} blocks compiled in {} batches, {} deliberately wrong, {fragments} fragments",
        toolkit.describe(),
        toolkit.nvcc.display(),
        groups.len(),
        wrong.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
