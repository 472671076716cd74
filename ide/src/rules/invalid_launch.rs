//! `launch/invalid-configuration`: a launch whose block or grid, as the file fixes it, is
//! outside what the device accepts: more than 1024 threads per block, `blockDim.x` or
//! `.y` above 1024, `blockDim.z` above 64, `gridDim.y` or `.z` above 65535, a block or a
//! grid of zero, or more threads than the kernel's own `__launch_bounds__` maximum.
//!
//! Such a launch runs nothing: on an H100 with CUDA 13.0 it returns
//! `cudaErrorInvalidValue` ("invalid argument"), which only a `cudaGetLastError()` right
//! after the launch sees (`pitfall-launch-configuration#P4`, measured in
//! `wiki/probes/launch-configuration`). The rule reads only dimensions the file folds to
//! numbers (literals, constants, a `dim3` whose value the file determines); a size
//! computed at run time is left alone.
//!
//! ```cuda
//! // Before: 4096 threads per block
//! dim3 block(64, 64);
//! transpose<<<grid, block>>>(out, in);
//! // After
//! dim3 block(32, 32);
//! transpose<<<grid, block>>>(out, in);
//! ```

use super::over_capacity::base_kernel;
use super::{Rule, RuleContext, RuleDiagnostic};
use crate::config::Severity;

pub(crate) const RULE: Rule = Rule {
    source: include_str!("invalid_launch.rs"),
    id: "launch/invalid-configuration",
    severity: Severity::Error,
    wiki: &["pitfall-launch-configuration#P4"],
    run,
};

/// The largest `blockDim.x` and `.y` (every compute capability from 2.0).
const MAX_BLOCK_XY: i64 = 1024;
/// The largest `blockDim.z`.
const MAX_BLOCK_Z: i64 = 64;
/// The largest `gridDim.x`.
const MAX_GRID_X: i64 = 2_147_483_647;
/// The largest `gridDim.y` and `.z`.
const MAX_GRID_YZ: i64 = 65_535;

const OUTCOME: &str = "the launch returns cudaErrorInvalidValue (\"invalid argument\") and the kernel never runs, which only a `cudaGetLastError()` right after the launch shows";

fn shape(d: [i64; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}×{y}"),
        [x, y, z] => format!("{x}×{y}×{z}"),
    }
}

/// A block as its threads: `256 threads`, `64×64 (4096 threads)`.
fn threads_of(b: [i64; 3]) -> String {
    let threads = b.iter().product::<i64>();
    if b[1] == 1 && b[2] == 1 {
        format!("{threads} threads")
    } else {
        format!("{} ({threads} threads)", shape(b))
    }
}

fn run(ctx: &RuleContext, out: &mut Vec<RuleDiagnostic>) {
    let max_threads = i64::from(ctx.arch.limits().max_threads_per_block);
    let bounds = launch_bounds(ctx);
    for l in &ctx.facts.launches {
        let name = base_kernel(&l.kernel);
        let short = kernaut_syntax::short_name(name);
        let bound = bounds.iter().find(|(n, _)| *n == short).map(|(_, b)| *b);
        let mut problems: Vec<String> = Vec::new();
        if let Some(b) = l
            .block
            .value
            .filter(|b| outside_limits(*b, max_threads, bound) && !from_a_caller(l, &l.block))
        {
            let threads = b.iter().product::<i64>();
            if b.iter().any(|d| *d < 1) {
                problems.push(format!("a block of {} has no threads", shape(b)));
            } else if b[0] > MAX_BLOCK_XY || b[1] > MAX_BLOCK_XY || b[2] > MAX_BLOCK_Z {
                let (axis, value, limit) = if b[0] > MAX_BLOCK_XY {
                    ("x", b[0], MAX_BLOCK_XY)
                } else if b[1] > MAX_BLOCK_XY {
                    ("y", b[1], MAX_BLOCK_XY)
                } else {
                    ("z", b[2], MAX_BLOCK_Z)
                };
                problems.push(format!(
                    "its block of {} has `blockDim.{axis}` = {value}, over the device's {limit}",
                    shape(b)
                ));
            } else if threads > max_threads {
                problems.push(format!(
                    "its block of {} is over the device's {max_threads} threads per block",
                    threads_of(b)
                ));
            } else if let Some(bound) = bound.filter(|m| threads > *m) {
                problems.push(format!(
                    "its block of {} is over the {bound} of `{name}`'s `__launch_bounds__`",
                    threads_of(b)
                ));
            }
        }
        if let Some(g) = l.grid.value.filter(|g| {
            (g.iter().any(|d| *d < 1)
                || g[0] > MAX_GRID_X
                || g[1] > MAX_GRID_YZ
                || g[2] > MAX_GRID_YZ)
                && !from_a_caller(l, &l.grid)
        }) {
            if g.iter().any(|d| *d < 1) {
                problems.push(format!("a grid of {} has no blocks", shape(g)));
            } else if g[0] > MAX_GRID_X {
                problems.push(format!(
                    "its grid has `gridDim.x` = {}, over the device's {MAX_GRID_X}",
                    g[0]
                ));
            } else if g[1] > MAX_GRID_YZ || g[2] > MAX_GRID_YZ {
                let (axis, value) = if g[1] > MAX_GRID_YZ {
                    ("y", g[1])
                } else {
                    ("z", g[2])
                };
                problems.push(format!(
                    "its grid of {} has `gridDim.{axis}` = {value}, over the device's {MAX_GRID_YZ}; put the largest extent in `gridDim.x`",
                    shape(g)
                ));
            }
        }
        if problems.is_empty() {
            continue;
        }
        out.push(RuleDiagnostic {
            rule: RULE.id,
            severity: RULE.severity,
            range: l.range.clone(),
            message: format!("launch of `{name}`: {}: {OUTCOME}", problems.join("; ")),
            wiki: RULE.wiki[0].to_string(),
            fixes: Vec::new(),
        });
    }
}

/// Whether the block `b` breaks a limit: a dimension below 1 or above its maximum, more
/// threads than the device allows, or more than the kernel's `__launch_bounds__`.
fn outside_limits(b: [i64; 3], max_threads: i64, bound: Option<i64>) -> bool {
    let threads = b.iter().product::<i64>();
    b.iter().any(|d| *d < 1)
        || b[0] > MAX_BLOCK_XY
        || b[1] > MAX_BLOCK_XY
        || b[2] > MAX_BLOCK_Z
        || threads > max_threads
        || bound.is_some_and(|m| threads > m)
}

/// Whether the dimension `d` of the launch `l` reads a parameter of the function around
/// it (`<<<1, N>>>` in `void scan(float* a, int N)`): its value then comes from a call,
/// which may sit on a path that never runs (`if (N <= 1024) scan(a, N); else …`), so the
/// launch's own code does not fix it.
fn from_a_caller(l: &kernaut_syntax::LaunchSite, d: &kernaut_syntax::LaunchDim) -> bool {
    let words = std::iter::once(d.text.as_str()).chain(d.parts.iter().map(String::as_str));
    words.flat_map(identifiers).any(|w| {
        l.caller_value_params.iter().any(|p| p == w) || l.caller_params.iter().any(|p| p == w)
    })
}

/// The identifiers of `text`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// The `__launch_bounds__` maxima of the file's kernels, by short name, where they fold
/// to a number and the name is one kernel's.
fn launch_bounds<'c>(ctx: &'c RuleContext) -> Vec<(&'c str, i64)> {
    let mut out: Vec<(&str, Option<i64>)> = Vec::new();
    for k in &ctx.facts.kernels {
        let short = kernaut_syntax::short_name(&k.name);
        let bound = k
            .launch_bounds
            .as_ref()
            .and_then(|b| b.max_threads)
            .filter(|m| *m > 0);
        match out.iter_mut().find(|(n, _)| *n == short) {
            // Two kernels of one name: which one a launch means is not known.
            Some(seen) => seen.1 = None,
            None if bound.is_some() => out.push((short, bound)),
            None => {}
        }
    }
    out.into_iter().filter_map(|(n, b)| Some((n, b?))).collect()
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::check;

    const RULE: &str = "launch/invalid-configuration";

    #[test]
    fn blocks_and_grids_over_the_limits() {
        check(
            RULE,
            r#"
__global__ void k(float* out) { out[threadIdx.x] = 0.0f; }
__global__ void __launch_bounds__(128) bounded(float* out) { out[threadIdx.x] = 0.0f; }
#define SIDE 64
void run(float* out, int rows) {
    dim3 block(SIDE, SIDE);
    k<<<1, block>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^ error: launch of `k`: its block of 64×64 (4096 threads) is over the device's 1024 threads per block: the launch returns cudaErrorInvalidValue ("invalid argument") and the kernel never runs
    k<<<1, dim3(1, 1, 65)>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k`: its block of 1×1×65 has `blockDim.z` = 65, over the device's 64
    k<<<dim3(1, 70000), 32>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k`: its grid of 1×70000 has `gridDim.y` = 70000, over the device's 65535; put the largest extent in `gridDim.x`
    bounded<<<4, 256>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `bounded`: its block of 256 threads is over the 128 of `bounded`'s `__launch_bounds__`
    k<<<0, 32>>>(out);
 // ^^^^^^^^^^^^^^^^^ error: launch of `k`: a grid of 0 has no blocks
}
"#,
        );
    }

    /// Sizes a helper fills through non-`const` references (`pick(n, threads, blocks)`)
    /// or through the address of a `dim3` (`grid_for(&grid, block, n)`) are not their
    /// initial zeros; one passed by value or by `const` reference, or to
    /// `printf`, still is.
    #[test]
    fn sizes_a_helper_writes_through_references_are_not_their_initialisers() {
        check(
            RULE,
            r#"
__global__ void k(float* out) { out[threadIdx.x] = 0.0f; }
static void pick(unsigned n, unsigned& threads, unsigned &blocks) { blocks = n / 256 + 1; threads = 256; }
static void show(unsigned threads, const unsigned& blocks) {}
void run(float* out, unsigned n) {
    unsigned threads = 0, blocks = 0;
    pick(n, threads, blocks);
    k<<<blocks, threads>>>(out);
}
template <class T> void config(int n, int& blocks, int& threads) { threads = 256; blocks = n / threads + 1; }
void run_template(float* out, int n) {
    int blocks = 0, threads = 0;
    // a template's call: config<float>(n, blocks, threads) fills both
    config<float>(n, blocks, threads);
    k<<<blocks, threads>>>(out);
}
static void grid_for(dim3* g, dim3 b, int n) { g->x = (n + b.x - 1) / b.x; }
void run_dim3(float* out, int n) {
    dim3 block(256);
    dim3 grid(0);
    grid_for(&grid, block, n);
    k<<<grid, block>>>(out);
}
void run_by_value(float* out) {
    unsigned threads = 0, blocks = 4;
    show(threads, blocks);
    printf("%u\n", threads);
    k<<<blocks, threads>>>(out);
 // ^^^^^^^^^^^^^^^^^^^^^^^^^^^ error: launch of `k`: a block of 0 has no threads
}
"#,
        );
    }

    /// Sizes the file does not fix, and launches inside the limits, say nothing.
    #[test]
    fn runtime_sizes_and_valid_launches_stay_silent() {
        check(
            RULE,
            r#"
__global__ void k(float* out) { out[threadIdx.x] = 0.0f; }
__global__ void __launch_bounds__(256) bounded(float* out) { out[threadIdx.x] = 0.0f; }
void run(float* out, int threads, int rows) {
    k<<<1, 1024>>>(out);
    k<<<1, dim3(32, 32)>>>(out);
    k<<<1, dim3(1, 1, 64)>>>(out);
    k<<<dim3(2147483647), 32>>>(out);
    k<<<dim3(1, rows), threads>>>(out);
    bounded<<<4, 256>>>(out);
    dim3 block(64, 64);
    if (threads < 1024)
        block = dim3(threads);
    k<<<1, block>>>(out);
}
// The size comes from the caller, whose call may never run.
void scan_one(float* out, const int N) { k<<<1, N>>>(out); }
void scan(float* out, const int N) {
    if (N <= 1024)
        scan_one(out, N);
}
int main() { scan(nullptr, 100000); }
"#,
        );
    }
}
