//! Per-kernel resources from `ptxas -v` / `nvcc --resource-usage` output, and from
//! `cuobjdump --dump-resource-usage` (the cross-check).
//!
//! The text this parses looks like this (nvcc 13.5, `-arch=sm_80`):
//!
//! ```text
//! ptxas info    : 0 bytes gmem, 256 bytes cmem[3]
//! ptxas info    : Compiling entry function '_Z5saxpyfPKfPfi' for 'sm_80'
//! ptxas info    : Function properties for _Z5saxpyfPKfPfi
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 10 registers, used 0 barriers, 380 bytes cmem[0]
//! ```

use serde::{Deserialize, Serialize};

use crate::demangle::demangle;

/// One bank of constant memory (`cmem[N]`) and the bytes used in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstantBank {
    /// The bank number: 0 holds kernel parameters and driver constants; user
    /// `__constant__` data sits in another bank (3 on sm_80).
    pub bank: u32,
    /// Bytes used in the bank.
    pub bytes: u64,
}

/// What ptxas reported for one kernel (`__global__` entry function) on one
/// architecture. A template kernel gives one of these per instantiation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelResources {
    /// Demangled signature: `void transpose<32, float>(float*, float const*, int)`.
    pub name: String,
    /// Qualified name without template arguments or parameters (`transpose`,
    /// `ops::scale`): what the kernel's definition is called in the source.
    pub base_name: String,
    /// The symbol as ptxas printed it: `_Z9transposeILi32EfEvPT0_PKS0_i`.
    pub mangled: String,
    /// The real architecture this was compiled for: `sm_80`.
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Named barriers used (`used N barriers`; newer toolkits only).
    pub barriers: Option<u32>,
    /// Bytes written to local memory because registers ran out.
    pub spill_store_bytes: u64,
    /// Bytes read back from local memory because registers ran out.
    pub spill_load_bytes: u64,
    /// Per-thread stack frame in bytes (local arrays, spills, call frames).
    pub stack_frame_bytes: u64,
    /// Stack including callees (`N bytes cumulative stack size`; newer toolkits).
    pub cumulative_stack_bytes: Option<u64>,
    /// Statically declared `__shared__` bytes per block (`smem`).
    pub static_shared_bytes: u64,
    /// Constant memory this kernel uses, summed over [`KernelResources::constant_banks`].
    pub constant_bytes: u64,
    /// Constant memory by bank, as printed (`380 bytes cmem[0]`).
    pub constant_banks: Vec<ConstantBank>,
}

impl KernelResources {
    /// Whether ptxas had to spill registers to local memory.
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// A non-entry `__device__` function compiled on its own (`__noinline__`, recursion,
/// separate compilation): ptxas prints its frame and spills but no register count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFunctionResources {
    /// Demangled signature.
    pub name: String,
    /// The symbol as ptxas printed it.
    pub mangled: String,
    /// The architecture of the compilation that printed it.
    pub arch: String,
    /// Per-thread stack frame in bytes.
    pub stack_frame_bytes: u64,
    /// Spill stores in bytes.
    pub spill_store_bytes: u64,
    /// Spill loads in bytes.
    pub spill_load_bytes: u64,
}

/// Module-wide figures of one architecture (`0 bytes gmem, 256 bytes cmem[3]`):
/// `__device__` globals and `__constant__` data shared by all kernels of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleResources {
    /// The architecture; empty when ptxas did not say (its first line comes before
    /// the first `Compiling entry function … for 'sm_XX'`).
    pub arch: String,
    /// Bytes of `__device__` globals.
    pub global_bytes: u64,
    /// Module constant memory by bank (user `__constant__` data).
    pub constant_banks: Vec<ConstantBank>,
}

/// Everything parsed from one ptxas verbose log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceReport {
    /// One entry per kernel, per instantiation, per architecture, in ptxas's order.
    pub kernels: Vec<KernelResources>,
    /// Non-entry device functions ptxas reported separately.
    pub device_functions: Vec<DeviceFunctionResources>,
    /// Module-wide figures, one per architecture compiled.
    pub modules: Vec<ModuleResources>,
}

/// Parses the `ptxas info` lines of nvcc's output (stdout and stderr may be passed
/// together; other lines are ignored). Never fails: unknown lines are skipped.
pub fn parse_ptxas_resources(text: &str) -> ResourceReport {
    let mut report = ResourceReport::default();
    // The entry being compiled, and the architecture ptxas is on.
    let mut current_entry: Option<String> = None;
    let mut arch = String::new();
    // The function whose "properties" line came last, and the entry's properties.
    let mut props_for: Option<String> = None;
    let mut entry_props: Option<(u64, u64, u64)> = None;
    // Modules and device functions seen before their architecture is known (ptxas
    // names it only with the next entry) get it filled in later.
    let mut pending_module: Option<usize> = None;
    let mut pending_devices: Vec<usize> = Vec::new();

    for raw in text.lines() {
        let line = raw.trim();
        let Some(info) = ptxas_info(line) else {
            if let Some(p) = parse_properties(line) {
                if let Some(func) = props_for.take() {
                    if current_entry.as_deref() == Some(func.as_str()) {
                        entry_props = Some(p);
                    } else {
                        // A device function: its properties come without a
                        // "Compiling entry function" line and without "Used".
                        let d = demangle(&func);
                        report.device_functions.push(DeviceFunctionResources {
                            name: d.full,
                            mangled: func,
                            arch: arch.clone(),
                            stack_frame_bytes: p.0,
                            spill_store_bytes: p.1,
                            spill_load_bytes: p.2,
                        });
                        if arch.is_empty() || pending_module.is_some() {
                            pending_devices.push(report.device_functions.len() - 1);
                        }
                    }
                }
            }
            continue;
        };
        if let Some(rest) = info.strip_prefix("Compiling entry function ") {
            let (name, for_arch) = parse_compiling(rest);
            if let Some(a) = for_arch {
                arch = a;
                if let Some(i) = pending_module.take() {
                    report.modules[i].arch = arch.clone();
                }
                for i in pending_devices.drain(..) {
                    report.device_functions[i].arch = arch.clone();
                }
            }
            current_entry = name;
            props_for = None;
            entry_props = None;
        } else if let Some(rest) = info.strip_prefix("Function properties for ") {
            props_for = Some(rest.trim().to_string());
        } else if let Some(rest) = info.strip_prefix("Used ") {
            let Some(mangled) = current_entry.take() else {
                continue;
            };
            let used = parse_used(rest);
            let (stack, stores, loads) = entry_props.take().unwrap_or_default();
            let d = demangle(&mangled);
            report.kernels.push(KernelResources {
                name: d.full,
                base_name: d.base,
                mangled,
                arch: arch.clone(),
                registers: used.registers,
                barriers: used.barriers,
                spill_store_bytes: stores,
                spill_load_bytes: loads,
                stack_frame_bytes: stack,
                cumulative_stack_bytes: used.cumulative_stack,
                static_shared_bytes: used.shared,
                constant_bytes: used.constant.iter().map(|b| b.bytes).sum(),
                constant_banks: used.constant,
            });
            props_for = None;
        } else if info.contains("bytes gmem") {
            let mut module = ModuleResources {
                arch: String::new(),
                global_bytes: 0,
                constant_banks: Vec::new(),
            };
            for part in info.split(',') {
                let part = part.trim();
                if let Some(n) = part.strip_suffix("bytes gmem") {
                    module.global_bytes = n.trim().parse().unwrap_or(0);
                } else if let Some(bank) = parse_cmem(part) {
                    module.constant_banks.push(bank);
                }
            }
            report.modules.push(module);
            // ptxas prints the module line first; its architecture comes with the
            // next "Compiling entry function".
            pending_module = Some(report.modules.len() - 1);
        }
    }
    report
}

/// The text after `ptxas info    :`, if this is such a line.
fn ptxas_info(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("ptxas")?.trim_start();
    let rest = rest.strip_prefix("info")?.trim_start();
    Some(rest.strip_prefix(':')?.trim())
}

/// `'_Z5saxpyfPKfPfi' for 'sm_80'` → (name, arch).
fn parse_compiling(rest: &str) -> (Option<String>, Option<String>) {
    let mut quoted = rest.split('\'').skip(1).step_by(2);
    let name = quoted.next().map(str::to_string);
    let arch = quoted.next().map(str::to_string);
    (name, arch)
}

/// `0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads`.
fn parse_properties(line: &str) -> Option<(u64, u64, u64)> {
    if !line.contains("bytes stack frame") {
        return None;
    }
    let (mut stack, mut stores, mut loads) = (0, 0, 0);
    for part in line.split(',') {
        let part = part.trim();
        let Some((n, what)) = part.split_once(" bytes ") else {
            continue;
        };
        let n: u64 = n.trim().parse().unwrap_or(0);
        match what.trim() {
            "stack frame" => stack = n,
            "spill stores" => stores = n,
            "spill loads" => loads = n,
            _ => {}
        }
    }
    Some((stack, stores, loads))
}

#[derive(Default)]
struct Used {
    registers: u32,
    barriers: Option<u32>,
    cumulative_stack: Option<u64>,
    shared: u64,
    constant: Vec<ConstantBank>,
}

/// `10 registers, used 1 barriers, 4224 bytes smem, 372 bytes cmem[0]`.
fn parse_used(rest: &str) -> Used {
    let mut used = Used::default();
    for part in rest.split(',') {
        let part = part.trim();
        let part = part.strip_prefix("used ").unwrap_or(part);
        if let Some(n) = part.strip_suffix(" registers") {
            used.registers = n.trim().parse().unwrap_or(0);
        } else if let Some(n) = part.strip_suffix(" barriers") {
            used.barriers = n.trim().parse().ok();
        } else if let Some(n) = part.strip_suffix(" bytes smem") {
            used.shared = n.trim().parse().unwrap_or(0);
        } else if let Some(n) = part.strip_suffix(" bytes cumulative stack size") {
            used.cumulative_stack = n.trim().parse().ok();
        } else if let Some(bank) = parse_cmem(part) {
            used.constant.push(bank);
        }
    }
    used
}

/// `380 bytes cmem[0]`.
fn parse_cmem(part: &str) -> Option<ConstantBank> {
    let (n, bank) = part.split_once(" bytes cmem[")?;
    let bank = bank.strip_suffix(']')?;
    Some(ConstantBank {
        bank: bank.trim().parse().ok()?,
        bytes: n.trim().parse().ok()?,
    })
}

/// One function of `cuobjdump --dump-resource-usage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpedResources {
    /// The architecture of the ELF the function sits in.
    pub arch: String,
    /// The symbol.
    pub mangled: String,
    /// `REG`.
    pub registers: u32,
    /// `STACK`.
    pub stack_bytes: u64,
    /// `SHARED`: includes memory the driver reserves (1 KiB per block from sm_80
    /// on in some layouts), so it can exceed ptxas's `smem`.
    pub shared_bytes: u64,
    /// `LOCAL`.
    pub local_bytes: u64,
    /// `CONSTANT[N]` entries.
    pub constant_banks: Vec<ConstantBank>,
}

/// Parses `cuobjdump --dump-resource-usage` output.
pub fn parse_cuobjdump_resource_usage(text: &str) -> Vec<DumpedResources> {
    let mut out = Vec::new();
    let mut arch = String::new();
    let mut function: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(a) = line.strip_prefix("arch = ") {
            arch = a.trim().to_string();
        } else if let Some(f) = line.strip_prefix("Function ") {
            function = Some(f.trim_end_matches(':').trim().to_string());
        } else if line.starts_with("REG:") {
            let Some(mangled) = function.take() else {
                continue;
            };
            let mut d = DumpedResources {
                arch: arch.clone(),
                mangled,
                registers: 0,
                stack_bytes: 0,
                shared_bytes: 0,
                local_bytes: 0,
                constant_banks: Vec::new(),
            };
            for field in line.split_whitespace() {
                let Some((key, value)) = field.split_once(':') else {
                    continue;
                };
                let Ok(n) = value.parse::<u64>() else {
                    continue;
                };
                match key {
                    "REG" => d.registers = n as u32,
                    "STACK" => d.stack_bytes = n,
                    "SHARED" => d.shared_bytes = n,
                    "LOCAL" => d.local_bytes = n,
                    _ => {
                        if let Some(bank) = key
                            .strip_prefix("CONSTANT[")
                            .and_then(|b| b.strip_suffix(']'))
                            .and_then(|b| b.parse().ok())
                        {
                            d.constant_banks.push(ConstantBank { bank, bytes: n });
                        }
                    }
                }
            }
            out.push(d);
        }
    }
    out
}
