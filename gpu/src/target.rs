//! Compilation targets as a build names them, and GPU products.
//!
//! A file is compiled for one or more targets. Each is a compute capability with a
//! variant: the generic `sm_90`, the architecture-specific `sm_90a` (instructions such
//! as `wgmma` that only that chip has), the family-specific `sm_100f` (the features one
//! family shares), or a virtual `compute_90` (PTX kept in the binary and compiled for
//! the GPU at run time). [`Target::parse`] reads every spelling a build uses:
//! `sm_90a`, `compute_90`, `90a`, `9.0a`, `90-real`, `90-virtual` (CMake), `8.6+PTX`
//! (`TORCH_CUDA_ARCH_LIST`), and the names of GPU products (`H200`, `A100`, `RTX 4090`).
//!
//! A target need not be one the occupancy tables know ([`crate::arch`]): `sm_103a` is a
//! target the architecture checks understand, while [`Target::arch`] is `None` for it.
//!
//! ```
//! use kernaut_gpu::target::{Target, Variant};
//! let t = Target::parse("sm_90a").unwrap();
//! assert_eq!((t.major, t.minor, t.variant), (9, 0, Variant::ArchSpecific));
//! assert_eq!(t.cuda_arch(), 900);
//! assert_eq!(Target::parse("H200").unwrap().to_string(), "sm_90");
//! assert_eq!(Target::parse("8.6+PTX").unwrap().to_string(), "sm_86");
//! assert!(Target::parse("H2000").unwrap_err().to_string().contains("did you mean `H200`"));
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::arch::{Arch, ComputeCapability};

/// Which feature set of a compute capability a target compiles for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Variant {
    /// `sm_90`: features every later GPU also has.
    Generic,
    /// `sm_100f`: the features shared by one family (`sm_100f` runs on 10.0 and 10.3).
    FamilySpecific,
    /// `sm_90a`: every feature of exactly that chip (`wgmma`, `setmaxnreg`).
    ArchSpecific,
}

/// One compilation target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Target {
    /// Major compute capability (9 for sm_90).
    pub major: u32,
    /// Minor compute capability (0 for sm_90).
    pub minor: u32,
    /// The feature set.
    pub variant: Variant,
    /// Only PTX for this capability is built (`compute_90`, `90-virtual`, `+PTX` on its
    /// own): the code is compiled at run time, for this capability's features.
    pub virtual_only: bool,
}

/// Compute capabilities that nvcc accepts as targets (CUDA 13), oldest first. Wider than
/// [`ComputeCapability::ALL`], whose rows carry measured limits.
pub const KNOWN_CAPABILITIES: &[(u32, u32)] = &[
    (5, 0),
    (5, 2),
    (5, 3),
    (6, 0),
    (6, 1),
    (6, 2),
    (7, 0),
    (7, 2),
    (7, 5),
    (8, 0),
    (8, 6),
    (8, 7),
    (8, 8),
    (8, 9),
    (9, 0),
    (10, 0),
    (10, 1),
    (10, 3),
    (11, 0),
    (12, 0),
    (12, 1),
];

/// Compute capabilities that older nvcc releases built for and CUDA 13 no longer does
/// (1.x and 2.x until CUDA 8, 3.0 and 3.2 until CUDA 10, 3.5 and 3.7 until CUDA 11):
/// builds written for them are still read, as what they name. None has a row in the
/// occupancy tables, and none schedules the lanes of a warp independently.
pub const LEGACY_CAPABILITIES: &[(u32, u32)] = &[
    (1, 0),
    (1, 1),
    (1, 2),
    (1, 3),
    (2, 0),
    (2, 1),
    (3, 0),
    (3, 2),
    (3, 5),
    (3, 7),
];

/// GPU products people name instead of an architecture, lower-case, with the compute
/// capability of each (NVIDIA's CUDA GPUs table, developer.nvidia.com/cuda-gpus).
pub const PRODUCTS: &[(&str, &str)] = &[
    ("gb300", "sm_103"),
    ("b300", "sm_103"),
    ("gb200", "sm_100"),
    ("b200", "sm_100"),
    ("b100", "sm_100"),
    ("gh200", "sm_90"),
    ("h200", "sm_90"),
    ("h100", "sm_90"),
    ("h800", "sm_90"),
    ("h20", "sm_90"),
    ("l40s", "sm_89"),
    ("l40", "sm_89"),
    ("l4", "sm_89"),
    ("6000ada", "sm_89"),
    ("5090", "sm_120"),
    ("5080", "sm_120"),
    ("5070", "sm_120"),
    ("4090", "sm_89"),
    ("4080", "sm_89"),
    ("4070", "sm_89"),
    ("4060", "sm_89"),
    ("a100", "sm_80"),
    ("a800", "sm_80"),
    ("a30", "sm_80"),
    ("a10", "sm_86"),
    ("a40", "sm_86"),
    ("a6000", "sm_86"),
    ("3090", "sm_86"),
    ("3080", "sm_86"),
    ("3070", "sm_86"),
    ("3060", "sm_86"),
    ("t4", "sm_75"),
    ("2080", "sm_75"),
    ("v100", "sm_70"),
    ("p100", "sm_60"),
];

/// Why a target was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not an architecture in any spelling, nor a GPU this table knows.
    #[error(
        "`{text}` is not an architecture (sm_90, sm_90a, compute_90, 9.0, 90) or a known GPU (H200, A100, 4090){}",
        suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
    )]
    Syntax {
        /// The text as written.
        text: String,
        /// The closest GPU name, upper-case, when one is close.
        suggestion: Option<String>,
    },
    /// Well formed, but no GPU has this compute capability.
    #[error("`{text}` names no CUDA architecture (known: {known})")]
    Unknown {
        /// The text as written.
        text: String,
        /// The known capabilities, comma-separated.
        known: String,
    },
}

impl Target {
    /// The generic target of a compute capability.
    pub fn new(major: u32, minor: u32) -> Target {
        Target {
            major,
            minor,
            variant: Variant::Generic,
            virtual_only: false,
        }
    }

    /// The target an [`Arch`] names.
    pub fn of_arch(arch: Arch) -> Target {
        Target {
            major: arch.cc.major(),
            minor: arch.cc.minor(),
            variant: if arch.arch_specific {
                Variant::ArchSpecific
            } else {
                Variant::Generic
            },
            virtual_only: false,
        }
    }

    /// Parses a target in any spelling a build or a user writes (see the module docs).
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let syntax = || TargetError::Syntax {
            text: text.to_string(),
            suggestion: None,
        };
        let lower = text.trim().to_ascii_lowercase();
        let mut rest = lower.as_str();
        let mut virtual_only = false;
        if let Some(r) = rest.strip_suffix("+ptx") {
            rest = r;
        }
        if let Some(r) = rest.strip_suffix("-virtual") {
            rest = r;
            virtual_only = true;
        } else if let Some(r) = rest.strip_suffix("-real") {
            rest = r;
        }
        let mut prefixed = false;
        for (prefix, virt) in [
            ("compute_", true),
            ("compute", true),
            ("sm_", false),
            ("sm", false),
        ] {
            if let Some(r) = rest.strip_prefix(prefix) {
                rest = r;
                virtual_only |= virt;
                prefixed = true;
                break;
            }
        }
        let (rest, variant) = if let Some(r) = rest.strip_suffix('a') {
            (r, Variant::ArchSpecific)
        } else if let Some(r) = rest.strip_suffix('f') {
            (r, Variant::FamilySpecific)
        } else {
            (rest, Variant::Generic)
        };
        let numbers = if let Some((ma, mi)) = rest.split_once('.') {
            digits(ma).zip(digits(mi))
        } else if rest.len() >= 2 {
            let (ma, mi) = rest.split_at(rest.len() - 1);
            digits(ma).zip(digits(mi))
        } else {
            None
        };
        let Some((major, minor)) = numbers else {
            if prefixed {
                return Err(syntax());
            }
            return product(text).ok_or_else(|| TargetError::Syntax {
                text: text.to_string(),
                suggestion: closest_product(text),
            });
        };
        if !KNOWN_CAPABILITIES.contains(&(major, minor))
            && !LEGACY_CAPABILITIES.contains(&(major, minor))
        {
            // `4090` reads as 409.0: a product, not an architecture.
            if let Some(t) = (!prefixed).then(|| product(text)).flatten() {
                return Ok(t);
            }
            return Err(TargetError::Unknown {
                text: text.trim().to_string(),
                known: KNOWN_CAPABILITIES
                    .iter()
                    .map(|(a, b)| format!("sm_{a}{b}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(Target {
            major,
            minor,
            variant,
            virtual_only,
        })
    }

    /// A comma-separated list of targets (`sm_80,sm_90a`, `A100, H200`), as `--arch`
    /// takes it.
    pub fn parse_list(text: &str) -> Result<Vec<Target>, TargetError> {
        text.split(',').map(|t| Target::parse(t.trim())).collect()
    }

    /// Whether code compiled for this target runs with independent thread scheduling
    /// (compute capability 7.0 and newer): the lanes of a warp are not in lock-step, so
    /// warp-synchronous code needs `__syncwarp()`. Older targets run a warp's lanes in
    /// lock-step, also where their PTX is compiled at run time for a newer GPU (the CUDA
    /// programming guide's independent thread scheduling section: `-arch=compute_60
    /// -code=sm_70` keeps Pascal's scheduling).
    pub fn schedules_lanes_independently(&self) -> bool {
        self.major >= 7
    }

    /// The value of `__CUDA_ARCH__` while compiling for this target (900 for sm_90).
    pub fn cuda_arch(&self) -> u32 {
        self.major * 100 + self.minor * 10
    }

    /// The architecture with its limits, when the occupancy tables have its row.
    pub fn arch(&self) -> Option<Arch> {
        ComputeCapability::from_major_minor(self.major, self.minor).map(|cc| Arch {
            cc,
            arch_specific: self.variant != Variant::Generic,
        })
    }

    /// Whether code compiled for this target may use a feature that needs
    /// `major.minor`, arch-specific (`9.0a`) when `specific` is set: `Some(true)` or
    /// `Some(false)` where the capabilities decide, `None` where they do not. A generic
    /// requirement is met by every newer capability. An arch-specific one is met by an
    /// `a` or `f` target of the same major version at or above the minor one (`tcgen05`
    /// needs `sm_100a`, and `sm_103a` has it too), never by a generic target or an older
    /// one; whether an `a`/`f` target of a later major version keeps the instruction
    /// differs per instruction (`wgmma` is gone on sm_100a, `setmaxnreg` is not), so
    /// that is `None`.
    ///
    /// For a target older than CUDA 13 builds for (sm_35, sm_13), a generic requirement
    /// at or below sm_50 says nothing: the tables were written for the GPUs CUDA 13
    /// supports (sm_50 stands for "every one of them", and an older floor such as sm_20
    /// for `__syncthreads` was never checked against 1.x), so that is `None` too. A
    /// newer requirement (sm_60 for `atomicAdd` on `double`) is surely unmet.
    pub fn meets(&self, major: u32, minor: u32, specific: bool) -> Option<bool> {
        if !specific {
            let met = (self.major, self.minor) >= (major, minor);
            let legacy = LEGACY_CAPABILITIES.contains(&(self.major, self.minor));
            if !met
                && legacy
                && KNOWN_CAPABILITIES
                    .first()
                    .is_some_and(|f| (major, minor) <= *f)
            {
                return None;
            }
            return Some(met);
        }
        if self.variant == Variant::Generic || (self.major, self.minor) < (major, minor) {
            return Some(false);
        }
        if self.major == major {
            return Some(true);
        }
        None
    }

    /// The feature macros nvcc defines for this target besides `__CUDA_ARCH__`, as
    /// (name, value): `__CUDA_ARCH_FEAT_SM90_ALL` for sm_90a,
    /// `__CUDA_ARCH_SPECIFIC__`/`__CUDA_ARCH_FAMILY_SPECIFIC__` (the capability times
    /// ten, as in `1000`) for `a` and `f` targets.
    pub fn feature_macros(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let value = u64::from(self.cuda_arch());
        match self.variant {
            Variant::ArchSpecific => {
                out.push((
                    format!("__CUDA_ARCH_FEAT_SM{}{}_ALL", self.major, self.minor),
                    1,
                ));
                out.push(("__CUDA_ARCH_SPECIFIC__".to_string(), value));
                out.push(("__CUDA_ARCH_FAMILY_SPECIFIC__".to_string(), value));
            }
            Variant::FamilySpecific => {
                out.push(("__CUDA_ARCH_FAMILY_SPECIFIC__".to_string(), value));
            }
            Variant::Generic => {}
        }
        out
    }
}

impl fmt::Display for Target {
    /// `sm_90`, `sm_90a`, `sm_100f`, or `compute_90` for a PTX-only target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if self.virtual_only { "compute" } else { "sm" };
        let suffix = match self.variant {
            Variant::Generic => "",
            Variant::ArchSpecific => "a",
            Variant::FamilySpecific => "f",
        };
        write!(f, "{prefix}_{}{}{suffix}", self.major, self.minor)
    }
}

impl std::str::FromStr for Target {
    type Err = TargetError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Target::parse(s)
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The words of a product name that do not identify it.
const NOISE: [&str; 6] = ["nvidia", "rtx", "geforce", "tesla", "quadro", "pro"];

/// A product name reduced to its key: `NVIDIA RTX 4090` → `4090`, `H100-SXM` → `h100`.
fn product_key(text: &str) -> String {
    let key: String = text
        .to_ascii_lowercase()
        .split_whitespace()
        .filter(|w| !NOISE.contains(w))
        .collect::<Vec<_>>()
        .join("");
    let key = key.trim_start_matches("rtx");
    key.trim_end_matches("-sxm").to_string()
}

/// The product a name means, if the table knows it (`H100 PCIe`, `h100-sxm5`, `A100`).
pub fn product_name(text: &str) -> Option<&'static str> {
    let key = product_key(text);
    PRODUCTS.iter().map(|(n, _)| *n).find(|name| {
        key == *name
            || key
                .strip_prefix(name)
                .is_some_and(|r| r.starts_with(['-', 'p', 'n', 's']))
    })
}

fn product(text: &str) -> Option<Target> {
    let name = product_name(text)?;
    let sm = PRODUCTS.iter().find(|(n, _)| *n == name)?.1;
    Target::parse(sm).ok()
}

fn closest_product(text: &str) -> Option<String> {
    let key = product_key(text);
    if key.is_empty() {
        return None;
    }
    // The first of equally close names: the table lists the commoner product first.
    let mut best: Option<(f64, &str)> = None;
    for (name, _) in PRODUCTS {
        let score = similarity(&key, name);
        if score >= 0.75 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, name));
        }
    }
    best.map(|(_, n)| n.to_ascii_uppercase())
}

/// 1 − the edit distance over the longer length.
fn similarity(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            row.push(sub.min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    let longest = a.len().max(b.len()).max(1);
    1.0 - prev[b.len()] as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        match Target::parse(text) {
            Ok(t) => t.to_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn every_spelling_a_build_uses() {
        for (text, want) in [
            ("sm_90a", "sm_90a"),
            ("SM_80", "sm_80"),
            ("compute_90", "compute_90"),
            ("compute_90a", "compute_90a"),
            ("90a", "sm_90a"),
            ("9.0a", "sm_90a"),
            ("100f", "sm_100f"),
            ("sm_103a", "sm_103a"),
            ("80-real", "sm_80"),
            ("90-virtual", "compute_90"),
            ("8.6+PTX", "sm_86"),
            ("12.0", "sm_120"),
            ("H200", "sm_90"),
            ("NVIDIA GeForce RTX 4090", "sm_89"),
            ("h100-sxm5", "sm_90"),
            ("A100", "sm_80"),
            ("GH200", "sm_90"),
            ("B200", "sm_100"),
            ("sm_35", "sm_35"),
            ("compute_30", "compute_30"),
        ] {
            assert_eq!(shown(text), want, "{text}");
        }
    }

    #[test]
    fn unknown_names_say_what_is_known_or_what_was_meant() {
        assert_eq!(
            shown("H2000"),
            "error: `H2000` is not an architecture (sm_90, sm_90a, compute_90, 9.0, 90) or a known GPU (H200, A100, 4090); did you mean `H200`?"
        );
        assert!(shown("sm_999")
            .starts_with("error: `sm_999` names no CUDA architecture (known: sm_50,"));
        assert!(shown("pizza").ends_with("4090)"));
    }

    #[test]
    fn requirements_by_variant() {
        let t = |s| Target::parse(s).unwrap();
        assert_eq!(t("sm_90").meets(8, 0, false), Some(true));
        assert_eq!(t("sm_90").meets(9, 0, true), Some(false));
        assert_eq!(t("sm_90a").meets(9, 0, true), Some(true));
        assert_eq!(t("sm_100a").meets(9, 0, true), None);
        assert_eq!(t("sm_100").meets(9, 0, true), Some(false));
        assert_eq!(t("sm_80").meets(9, 0, true), Some(false));
        assert_eq!(t("sm_103a").meets(10, 0, true), Some(true));
        // An older build than CUDA 13 knows: the tables' floor of sm_50 says nothing
        // about it, a newer requirement is unmet, and its lanes run in lock-step.
        assert_eq!(t("sm_35").meets(5, 0, false), None);
        assert_eq!(t("sm_35").meets(3, 0, false), Some(true));
        assert_eq!(t("sm_13").meets(2, 0, false), None);
        assert_eq!(t("sm_35").meets(6, 0, false), Some(false));
        assert!(!t("sm_61").schedules_lanes_independently());
        assert!(t("sm_70").schedules_lanes_independently());
        assert_eq!(t("sm_100f").meets(10, 0, true), Some(true));
        assert_eq!(t("sm_120a").meets(10, 0, true), None);
        assert_eq!(
            t("sm_90a").feature_macros()[0].0,
            "__CUDA_ARCH_FEAT_SM90_ALL"
        );
        assert_eq!(t("sm_103a").arch(), None);
        assert_eq!(t("sm_90a").arch().unwrap().to_string(), "sm_90a");
    }
}
