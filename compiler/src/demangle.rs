//! Itanium C++ names as a CUDA author reads them (through `cpp_demangle`).

use cpp_demangle::{DemangleOptions, Symbol};

/// The readable forms of one mangled symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Demangled {
    /// The whole signature: `void transpose<32, float>(float*, float const*, int)`.
    pub full: String,
    /// The qualified name without template arguments or parameters: `transpose`,
    /// `ops::scale`. This is the name the kernel's definition carries in the source.
    pub base: String,
}

/// Demangles `mangled`; a name that is not an Itanium symbol (an `extern "C"`
/// kernel, for instance) is returned as it is.
pub(crate) fn demangle(mangled: &str) -> Demangled {
    // ptxas numbers clones of a device function under -rdc: `_Z6helperPfi$1`.
    if let Some((name, suffix)) = mangled.rsplit_once('$') {
        if !suffix.is_empty() && suffix.chars().all(|c| c.is_ascii_digit()) {
            let d = demangle(name);
            return Demangled {
                full: format!("{}${suffix}", d.full),
                base: d.base,
            };
        }
    }
    let Ok(symbol) = Symbol::new(mangled) else {
        return Demangled {
            full: mangled.to_string(),
            base: mangled.to_string(),
        };
    };
    let full = symbol.demangle().unwrap_or_else(|_| mangled.to_string());
    let short = symbol
        .demangle_with_options(&DemangleOptions::new().no_params().no_return_type())
        .unwrap_or_else(|_| full.clone());
    // A kernel in an anonymous namespace is written without one.
    let base = strip_template_arguments(&short).replace("(anonymous namespace)::", "");
    Demangled { full, base }
}

/// Drops every top-level `<…>` group: `a::b<int>::c<3>` becomes `a::b::c`.
fn strip_template_arguments(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(mangled: &str, full: &str, base: &str) {
        let d = demangle(mangled);
        assert_eq!(d.full, full, "full name of {mangled}");
        assert_eq!(d.base, base, "base name of {mangled}");
    }

    #[test]
    fn plain_kernel() {
        check(
            "_Z5saxpyfPKfPfi",
            "saxpy(float, float const*, float*, int)",
            "saxpy",
        );
    }

    #[test]
    fn template_instantiation() {
        check(
            "_Z9transposeILi32EfEvPT0_PKS0_i",
            "void transpose<32, float>(float*, float const*, int)",
            "transpose",
        );
    }

    #[test]
    fn namespaced_kernel() {
        check(
            "_ZN3ops5scaleENS_6ParamsEPf",
            "ops::scale(ops::Params, float*)",
            "ops::scale",
        );
    }

    #[test]
    fn extern_c_kernel_keeps_its_name() {
        check("my_kernel", "my_kernel", "my_kernel");
    }
}
