//! The term of an access's index that spreads the lanes of a warp: the one the stride of
//! a bank conflict or a strided access comes from, with the range it is written at.

use kernaut_gpu::expr::Valuation;
use kernaut_syntax::{IndexTerm, SharedAccess, SourceFile};

/// The one additive term of `access`'s indices whose value differs between the lanes of
/// warp 0 of a block of shape `block` (every other term the same for the whole warp):
/// `threadIdx.x * ld` in `s[threadIdx.x * ld + k]`. `None` when no term or several
/// terms differ, or a term's lanes have no value (the index as a whole is then what the
/// model reports).
pub fn lane_term(file: &SourceFile, access: &SharedAccess, block: [u32; 3]) -> Option<IndexTerm> {
    let valuation = Valuation::warp0(block.map(|d| Some(i64::from(d))));
    let terms = file.index_terms(&access.range);
    let mut varying = terms
        .iter()
        .filter(|t| t.expr.depends_on_thread())
        .filter(|t| {
            valuation
                .lanes(&t.expr)
                .is_none_or(|l| l.iter().any(|v| *v != l[0]))
        });
    let term = varying.next()?;
    varying.next().is_none().then(|| term.clone())
}

/// How a message names `term` of an access with `indices` indices: `` `2 * threadIdx.x` ``,
/// or `` `r` in the row index `` for a term of an outer index.
pub fn describe(term: &IndexTerm, indices: usize) -> String {
    if term.index + 1 < indices {
        format!("`{}` in the row index", term.text)
    } else {
        format!("`{}`", term.text)
    }
}

#[cfg(test)]
mod tests {
    use kernaut_syntax::SourceFile;
    use kernaut_test_utils::extract_markers;

    use super::{describe, lane_term};

    /// The term `lane_term` finds for the last access of the fixture's first kernel
    /// (`//! access` marks the line), checked against the range between the two `$0`.
    fn check(fixture: &str, block: [u32; 3], expected: &str) {
        let (text, markers) = extract_markers(fixture);
        let file = SourceFile::parse(&text);
        let line = text.find("// access").unwrap();
        let access = file
            .shared_accesses()
            .into_iter()
            .filter(|a| a.range.end <= line)
            .last()
            .unwrap();
        let term = lane_term(&file, &access, block);
        match (markers.as_slice(), term) {
            ([start, end], Some(t)) => {
                assert_eq!(t.range, *start..*end, "{t:?}");
                assert_eq!(describe(&t, access.indices.len()), expected);
            }
            ([], None) => assert_eq!(expected, "(none)"),
            (m, t) => panic!("markers {m:?}, term {t:?}"),
        }
    }

    #[test]
    fn the_term_that_spreads_the_lanes() {
        check(
            r#"
__global__ void k(float* out, int ld) {
    __shared__ float s[1024];
    for (int j = 0; j < 4; ++j)
        out[j] = s[j * 4 + $0threadIdx.x * ld$0 + 1]; // access
}
"#,
            [128, 1, 1],
            "`threadIdx.x * ld`",
        );
    }

    #[test]
    fn a_local_is_followed_to_its_initialiser() {
        check(
            r#"
__global__ void k(float* out) {
    __shared__ float s[32][33];
    int row = $0threadIdx.x % 32$0 + blockIdx.x;
    out[0] = s[row][threadIdx.y]; // access
}
"#,
            [32, 4, 1],
            "`threadIdx.x % 32` in the row index",
        );
    }

    #[test]
    fn two_terms_that_differ_between_lanes_name_neither() {
        check(
            r#"
__global__ void k(float* out) {
    __shared__ float s[32][33];
    out[0] = s[threadIdx.x][threadIdx.x * 2]; // access
}
"#,
            [32, 1, 1],
            "(none)",
        );
    }
}
