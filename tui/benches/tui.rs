//! Speed budgets of the interactive `ktui` (issue 15): drawing a frame < 5 ms, a
//! search-as-you-type update on the built-in wiki < 10 ms, opening a 10,000-line file
//! < 100 ms. Run with `cargo bench -p kernaut-tui --bench tui`; the numbers are in
//! `docs/BENCHMARKS.md`.
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use kernaut_tui::app::model::{ArchChoice, Library, Workspace};
use kernaut_tui::app::theme::Theme;
use kernaut_tui::app::{update, view, Action, Start, State};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// One block of code: a conflicting transpose, a reduction, a launch (25 lines).
fn block(i: usize) -> String {
    format!(
        r#"// Block {i}: a transpose whose column read conflicts.
__global__ void transpose_{i}(float* out, const float* in, int n) {{
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}}

__device__ float warp_sum_{i}(float v) {{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}}

/* A block comment
   over two lines. */
void launch_{i}(float* out, const float* in, int n) {{
    dim3 block(32, 32);
    dim3 grid(n / 32, n / 32);
    transpose_{i}<<<grid, block>>>(out, in, n);
}}


"#
    )
}

fn ten_thousand_lines() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.lines().count() < 10_000 {
        s.push_str(&block(i));
        i += 1;
    }
    s
}

fn file_state(lib: &Library, text: String, line: usize, col: usize) -> State {
    file_state_with(lib, text, line, col, false)
}

fn file_state_with(
    lib: &Library,
    text: String,
    line: usize,
    col: usize,
    background: bool,
) -> State {
    State::new(
        lib.clone(),
        Start::File {
            path: "big.cu".into(),
            text,
            line,
            col: Some(col),
            arch: Some(ArchChoice::parse("sm_90").unwrap()),
            background,
        },
        (80, 24),
        Theme { color: true },
    )
}

fn benches(c: &mut Criterion) {
    let lib = Library::builtin().unwrap();
    let big = ten_thousand_lines();

    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let bank = file_state(&lib, block(0), 8, 22);
    c.bench_function("frame: file with bank map, 80x24", |b| {
        b.iter(|| {
            term.draw(|f| view(black_box(&bank), f)).unwrap();
        })
    });
    let kernel = file_state(&lib, block(0), 2, 18);
    c.bench_function("frame: file with occupancy chart, 80x24", |b| {
        b.iter(|| {
            term.draw(|f| view(black_box(&kernel), f)).unwrap();
        })
    });
    let mut page = State::new(lib.clone(), Start::Browse, (80, 24), Theme { color: true });
    page.open_page("pitfall-bank-conflict");
    c.bench_function("frame: wiki page, 80x24", |b| {
        b.iter(|| {
            term.draw(|f| view(black_box(&page), f)).unwrap();
        })
    });

    let mut search = State::new(lib.clone(), Start::Browse, (80, 24), Theme { color: true });
    update(&mut search, Action::Search);
    for ch in "my async copy is slower than the plain loo".chars() {
        update(&mut search, Action::Input(ch));
    }
    c.bench_function(
        "search update: a key typed and erased (two searches)",
        |b| {
            b.iter(|| {
                update(&mut search, Action::Input('p'));
                update(&mut search, Action::Erase);
            })
        },
    );

    c.bench_function("open a 10,000-line file, diagnostics included", |b| {
        b.iter_batched(
            || big.clone(),
            |text| file_state(&lib, text, 5_000, 8),
            BatchSize::LargeInput,
        )
    });
    // What `ktui big.cu` does: the rules run on a worker thread and the file is shown
    // before they finish. Only the time to the first frame's state is counted; each
    // iteration then waits for its worker, so workers never overlap the next one.
    c.bench_function(
        "open a 10,000-line file, to the first frame (rules in the background)",
        |b| {
            b.iter_custom(|iters| {
                let mut total = std::time::Duration::ZERO;
                for _ in 0..iters {
                    let text = big.clone();
                    let start = std::time::Instant::now();
                    let mut s = file_state_with(&lib, text, 5_000, 8, true);
                    total += start.elapsed();
                    while !s.poll_background() {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }
                total
            })
        },
    );
    c.bench_function(
        "open a 10,000-line file: the analysis alone (model::Workspace::open)",
        |b| {
            b.iter_batched(
                || big.clone(),
                |text| Workspace::open(&lib, "big.cu", text, ArchChoice::parse("sm_90").unwrap()),
                BatchSize::LargeInput,
            )
        },
    );

    // The cursor on a conflicting `tile[threadIdx.x][threadIdx.y]` read in the middle of
    // the file: each move asks for the hover there, with its bank report.
    let line = big
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("= tile[threadIdx.x]"))
        .nth(200)
        .map(|(i, _)| i)
        .unwrap();
    let col = big.lines().nth(line).unwrap().find("tile").unwrap() + 2;
    let mut opened = file_state(&lib, big.clone(), line + 1, col + 1);
    assert!(matches!(
        opened.screen,
        kernaut_tui::app::Screen::File(ref f) if !f.panels.is_empty()
    ));
    c.bench_function(
        "cursor move on a shared access, 10,000-line file (two moves)",
        |b| {
            b.iter(|| {
                update(&mut opened, Action::Right);
                update(&mut opened, Action::Left);
            })
        },
    );
}

criterion_group! {
    name = tui;
    config = Criterion::default().sample_size(20);
    targets = benches
}
criterion_main!(tui);
