//! Facts from the SASS that `cuobjdump -sass` prints: async-copy modes, local-memory
//! traffic and the instruction mix of each kernel, plus its SASS text.
//!
//! ```text
//!     code for sm_80
//!         Function : _Z6copy16PK6float4PS_
//!         /*00a0*/                   LDGSTS.E.BYPASS.128 [R7], [R2.64] ;   /* 0x0000000002077fae */
//!                                                                          /* 0x000fe8000b921844 */
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::demangle::demangle;

/// How the kernel's `cp.async` copies were compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AsyncCopyMode {
    /// No `LDGSTS` at all (no `cp.async`, or an architecture before sm_80, where it
    /// becomes a load and a store).
    None,
    /// Every `LDGSTS` is `.BYPASS`: the copies skip L1 (16-byte `cp.async.cg`).
    Bypass,
    /// No `LDGSTS` is `.BYPASS`: every copy goes through L1 (4- or 8-byte copies,
    /// or `.ca`).
    ThroughL1,
    /// Some of each.
    Mixed,
}

/// What one function's SASS says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SassKernel {
    /// Demangled signature.
    pub name: String,
    /// The symbol as printed after `Function :`.
    pub mangled: String,
    /// The architecture of the cubin (`sm_80`).
    pub arch: String,
    /// Instructions, not counting `NOP` padding.
    pub instructions: u32,
    /// `LDGSTS` instructions with `.BYPASS`.
    pub ldgsts_bypass: u32,
    /// `LDGSTS` instructions without `.BYPASS`.
    pub ldgsts_l1: u32,
    /// Local-memory loads (`LDL`): spills read back, local arrays.
    pub ldl: u32,
    /// Local-memory stores (`STL`).
    pub stl: u32,
    /// Instruction counts by base opcode (`LDGSTS.E.BYPASS.128` counts as `LDGSTS`),
    /// most frequent first, ties by name; `NOP` is left out.
    pub opcode_counts: Vec<(String, u32)>,
    /// The function's SASS: one instruction a line (`/*00a0*/ LDGSTS.E [R7], [R2.64] ;`),
    /// labels kept, encodings and trailing `NOP`s dropped.
    pub text: String,
}

impl SassKernel {
    /// How the async copies were compiled.
    pub fn async_copy_mode(&self) -> AsyncCopyMode {
        match (self.ldgsts_bypass, self.ldgsts_l1) {
            (0, 0) => AsyncCopyMode::None,
            (_, 0) => AsyncCopyMode::Bypass,
            (0, _) => AsyncCopyMode::ThroughL1,
            _ => AsyncCopyMode::Mixed,
        }
    }

    /// The `n` most frequent opcodes with their share of [`SassKernel::instructions`]
    /// in percent, for a one-line summary (`FFMA 41%, LDG 12%, …`).
    pub fn top_opcodes(&self, n: usize) -> Vec<(String, u32, f32)> {
        let total = self.instructions.max(1) as f32;
        self.opcode_counts
            .iter()
            .take(n)
            .map(|(op, c)| (op.clone(), *c, *c as f32 * 100.0 / total))
            .collect()
    }
}

/// Parses `cuobjdump -sass` output (every cubin and function in it).
pub fn parse_cuobjdump_sass(text: &str) -> Vec<SassKernel> {
    let mut out = Vec::new();
    let mut arch = String::new();
    let mut current: Option<Builder> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(a) = t.strip_prefix("arch = ") {
            arch = a.trim().to_string();
            continue;
        }
        if let Some(a) = t.strip_prefix("code for ") {
            arch = a.trim().to_string();
            continue;
        }
        if let Some(name) = t.strip_prefix("Function : ") {
            if let Some(b) = current.take() {
                out.push(b.finish());
            }
            current = Some(Builder::new(name.trim(), &arch));
            continue;
        }
        if t.starts_with("Fatbin ") || t.starts_with("..........") {
            if let Some(b) = current.take() {
                out.push(b.finish());
            }
            continue;
        }
        if let Some(b) = current.as_mut() {
            b.line(t);
        }
    }
    if let Some(b) = current.take() {
        out.push(b.finish());
    }
    out
}

struct Builder {
    mangled: String,
    arch: String,
    counts: BTreeMap<String, u32>,
    instructions: u32,
    bypass: u32,
    l1: u32,
    ldl: u32,
    stl: u32,
    lines: Vec<String>,
    /// Lines since the last instruction that was not a NOP (dropped if only NOPs follow).
    trailing_nops: usize,
}

impl Builder {
    fn new(mangled: &str, arch: &str) -> Builder {
        Builder {
            mangled: mangled.to_string(),
            arch: arch.to_string(),
            counts: BTreeMap::new(),
            instructions: 0,
            bypass: 0,
            l1: 0,
            ldl: 0,
            stl: 0,
            lines: Vec::new(),
            trailing_nops: 0,
        }
    }

    fn line(&mut self, t: &str) {
        if t.starts_with(".L") && t.ends_with(':') {
            self.lines.push(t.to_string());
            self.trailing_nops = 0;
            return;
        }
        // `/*00a0*/  @!P0 LDGSTS.E [R7], [R2.64] ;  /* 0x… */`
        let Some(rest) = t.strip_prefix("/*") else {
            return;
        };
        let Some((addr, rest)) = rest.split_once("*/") else {
            return;
        };
        if addr.starts_with(" 0x") || addr.starts_with("0x") {
            return; // an encoding-only line
        }
        let insn = match rest.find("/*") {
            Some(k) => &rest[..k],
            None => rest,
        }
        .trim();
        if insn.is_empty() {
            return;
        }
        let mut words = insn.split_whitespace();
        let mut op = words.next().unwrap_or_default();
        if op.starts_with('@') {
            op = words.next().unwrap_or_default();
        }
        let op = op.trim_end_matches(';');
        let base = op.split('.').next().unwrap_or(op);
        self.lines.push(format!("/*{addr}*/ {insn}"));
        if base == "NOP" {
            self.trailing_nops += 1;
            return;
        }
        self.trailing_nops = 0;
        self.instructions += 1;
        *self.counts.entry(base.to_string()).or_default() += 1;
        match base {
            "LDGSTS" if op.split('.').any(|m| m == "BYPASS") => self.bypass += 1,
            "LDGSTS" => self.l1 += 1,
            "LDL" => self.ldl += 1,
            "STL" => self.stl += 1,
            _ => {}
        }
    }

    fn finish(mut self) -> SassKernel {
        let keep = self.lines.len() - self.trailing_nops.min(self.lines.len());
        self.lines.truncate(keep);
        let mut counts: Vec<(String, u32)> = self.counts.into_iter().collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut text = self.lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        SassKernel {
            name: demangle(&self.mangled).full,
            mangled: self.mangled,
            arch: self.arch,
            instructions: self.instructions,
            ldgsts_bypass: self.bypass,
            ldgsts_l1: self.l1,
            ldl: self.ldl,
            stl: self.stl,
            opcode_counts: counts,
            text,
        }
    }
}
