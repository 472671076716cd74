//! Prints the generated CUDA file the benchmarks use: `gen_cuda [LINES] [clean]`
//! (default 10,000 lines of kernels that trip every rule; `clean` for the same
//! constructs written correctly).

fn main() {
    let mut args = std::env::args().skip(1);
    let lines = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let text = match args.next().as_deref() {
        Some("clean") => {
            kernaut_test_utils::gen::generated_with(lines, kernaut_test_utils::gen::clean_kernel)
        }
        _ => kernaut_test_utils::gen::generated(lines),
    };
    print!("{text}");
}
