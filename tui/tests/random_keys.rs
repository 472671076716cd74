//! Random actions on every screen, drawn after each: nothing panics, whatever the order
//! (a pseudo-random sequence with fixed seeds, so a failure reproduces).
use kernaut_tui::app::model::{ArchChoice, Library};
use kernaut_tui::app::theme::Theme;
use kernaut_tui::app::{update, view, Action, Start, State};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const SOURCE: &str = "#include <cuda_pipeline.h>\n__global__ void k(float* o, const float* in) {\n\t__shared__ float tile[32][32];\n\ttile[threadIdx.x][threadIdx.y] = in[threadIdx.x];\n\tasm volatile(\"cp.async.wait_group 0;\");\n\t__syncthreads();\n\to[threadIdx.y] = tile[threadIdx.y][threadIdx.x]; /* é */\n}\nint main() { k<<<1, dim3(32, 32)>>>(0, 0); }\n";

struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn action(r: &mut Lcg) -> Action {
    use Action::*;
    let fixed = [
        Back,
        Help,
        Search,
        Up,
        Down,
        Left,
        Right,
        PageUp,
        PageDown,
        Top,
        Bottom,
        Open,
        Next,
        Prev,
        Filter,
        TogglePadded,
        NextChart,
        ThreadsUp,
        ThreadsDown,
        RegsUp,
        RegsDown,
        SmemUp,
        SmemDown,
        ArchNext,
        ResetInputs,
        NextDiagnostic,
        ClearInput,
        Erase,
        Jump,
        NextSection,
        PrevSection,
        PanelDown,
        PanelUp,
        NextWhatIf,
        PrevWhatIf,
        Undo,
        Zoom,
    ];
    match r.next(10) {
        0 => Input(b"ab #:kP3x q"[r.next(11) as usize] as char),
        1 => Click(r.next(90) as u16, r.next(30) as u16),
        2 => ScrollDown(r.next(90) as u16, r.next(30) as u16),
        3 if r.next(8) == 0 => Resize(10 + r.next(120) as u16, 3 + r.next(50) as u16),
        _ => fixed[r.next(fixed.len() as u64) as usize],
    }
}

#[test]
fn random_actions_never_panic() {
    let lib = Library::builtin().unwrap();
    for seed in 0..6u64 {
        let start = if seed % 2 == 0 {
            Start::Browse
        } else {
            Start::File {
                path: "k.cu".into(),
                text: SOURCE.into(),
                line: 4,
                col: Some(3),
                arch: Some(ArchChoice::parse("A100").unwrap()),
                background: false,
            }
        };
        let mut s = State::new(
            lib.clone(),
            start,
            (80, 24),
            Theme {
                color: seed % 3 != 0,
            },
        );
        let mut r = Lcg(seed);
        for step in 0..300 {
            let a = action(&mut r);
            if a == Action::Quit {
                continue;
            }
            update(&mut s, a);
            let (w, h) = s.size;
            let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
            t.draw(|f| view(&s, f))
                .unwrap_or_else(|e| panic!("seed {seed} step {step} {a:?}: {e}"));
        }
    }
}
