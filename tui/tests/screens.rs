//! Every screen of the interactive `ktui` at 80x24, drawn by the real `view` on
//! ratatui's `TestBackend` after key events sent through the real `update`.
//! Snapshots: `tui/tests/snapshots/`; after an intended change, rerun with
//! `INSTA_UPDATE=always` and review the diff.
use std::sync::OnceLock;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::Knowledge;
use kernaut_tui::app::model::{hover_at, ArchChoice, Library};
use kernaut_tui::app::theme::Theme;
use kernaut_tui::app::{update, view, Action, Start, State};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::Terminal;

const TRANSPOSE: &str = r#"#include <cuda_runtime.h>

// A naive transpose through shared memory: the column read conflicts.
__global__ void transpose(float* out, const float* in, int n) {
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[threadIdx.x][threadIdx.y]; // kernaut: allow(coalescing)
}

int main() {
    float *out, *in;
    dim3 block(32, 32);
    transpose<<<dim3(64, 64), block>>>(out, in, 2048);
    return 0;
}
"#;

fn lib() -> Library {
    static LIB: OnceLock<Library> = OnceLock::new();
    LIB.get_or_init(|| Library::builtin().expect("the built-in wiki loads"))
        .clone()
}

fn browse() -> State {
    State::new(lib(), Start::Browse, (80, 24), Theme { color: true })
}

fn file(line: usize, col: usize, color: bool) -> State {
    State::new(
        lib(),
        Start::File {
            path: "transpose.cu".into(),
            text: TRANSPOSE.into(),
            line,
            col: Some(col),
            arch: Some(ArchChoice::parse("H200").unwrap()),
            background: false,
        },
        (80, 24),
        Theme { color },
    )
}

/// Sends keys: characters as typed, `<Enter>`, `<Tab>`, `<Esc>`, `<Down>`, `<Up>`,
/// `<BS>`, `<S-Tab>` as named.
fn keys(s: &mut State, keys: &str) {
    let mut rest = keys;
    while let Some(c) = rest.chars().next() {
        let (code, len) = if c == '<' {
            let end = rest.find('>').expect("a closed <key>");
            let code = match &rest[1..end] {
                "Enter" => KeyCode::Enter,
                "Tab" => KeyCode::Tab,
                "S-Tab" => KeyCode::BackTab,
                "Esc" => KeyCode::Esc,
                "Down" => KeyCode::Down,
                "Up" => KeyCode::Up,
                "Right" => KeyCode::Right,
                "BS" => KeyCode::Backspace,
                other => panic!("unknown key <{other}>"),
            };
            (code, end + 1)
        } else {
            (KeyCode::Char(c), c.len_utf8())
        };
        rest = &rest[len..];
        let ev = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
        if let Some(a) = s.action_for(&ev) {
            update(s, a);
        }
    }
}

/// The screen as text, one row a line, trailing blanks trimmed.
fn screen(s: &State) -> String {
    let mut t = Terminal::new(TestBackend::new(s.size.0, s.size.1)).unwrap();
    t.draw(|f| view(s, f)).unwrap();
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn browse_lists_every_page_with_group_counts() {
    insta::assert_snapshot!(screen(&browse()));
}

#[test]
fn browse_groups_narrow_the_list() {
    let mut s = browse();
    keys(&mut s, "<Tab>jjj");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn browse_filter_by_tag_and_architecture() {
    let mut s = browse();
    keys(&mut s, "ftag:tma sm:90<Enter>");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn page_renders_markdown_with_its_header() {
    let mut s = browse();
    keys(&mut s, "<Tab>jj<Enter>");
    keys(&mut s, "<Enter>");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn search_updates_as_you_type() {
    let mut s = browse();
    keys(&mut s, "/my async copy is slower");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn search_filters_by_kind() {
    let mut s = browse();
    keys(&mut s, "/kind:api barrier");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn a_search_hit_opens_at_its_anchor_and_links_follow() {
    let mut s = browse();
    keys(&mut s, "/column read of my transpose tile is slow<Enter>");
    let opened = screen(&s);
    insta::assert_snapshot!("hit_opened_at_anchor", opened);
    keys(&mut s, "<Tab>");
    insta::assert_snapshot!("link_selected", screen(&s));
    keys(&mut s, "<Enter>");
    insta::assert_snapshot!("link_followed", screen(&s));
    keys(&mut s, "<Esc>");
    assert_eq!(
        screen(&s).lines().nth(1),
        opened.lines().nth(1),
        "back returns to the page"
    );
}

#[test]
fn a_page_jumps_to_an_anchor_typed_after_hash() {
    let mut s = browse();
    keys(&mut s, "/slow transpose column bank conflict<Enter>");
    keys(&mut s, "#p4");
    insta::assert_snapshot!("anchor_typed", screen(&s));
    keys(&mut s, "<Enter>");
    let text = screen(&s);
    assert!(text.lines().nth(3).unwrap().contains("P4:"), "{text}");
    keys(&mut s, "]");
    let next = screen(&s);
    assert!(next.lines().nth(3).unwrap().contains("P5:"), "{next}");
    keys(&mut s, "#P9<Enter>");
    assert!(screen(&s).contains("no anchor `P9`"));
}

#[test]
fn help_shows_the_key_table() {
    let mut s = browse();
    keys(&mut s, "?");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn file_bank_map_and_its_padded_layout() {
    let mut s = file(10, 22, true);
    insta::assert_snapshot!("bank_map", screen(&s));
    keys(&mut s, "p");
    insta::assert_snapshot!("bank_map_padded", screen(&s));
}

#[test]
fn file_bank_map_without_colour() {
    let s = file(10, 22, false);
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn file_diagnostic_with_wiki_text_and_fix_diff() {
    let mut s = file(10, 22, true);
    keys(&mut s, "<Tab>");
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn file_occupancy_calculator_with_edited_inputs() {
    let mut s = file(4, 17, true);
    insta::assert_snapshot!("occupancy", screen(&s));
    keys(&mut s, "TTTTrrrc");
    insta::assert_snapshot!("occupancy_edited", screen(&s));
    keys(&mut s, "c");
    insta::assert_snapshot!("occupancy_smem_chart", screen(&s));
}

/// On a kernel with a costed finding, Tab after the occupancy calculator shows the
/// kernel report: the ranked costs and the what-ifs, the figures of the hover and of
/// `kernaut-lsp report`.
#[test]
fn the_kernel_report_follows_the_occupancy_panel() {
    let mut s = file(4, 17, true);
    update(&mut s, Action::Resize(100, 40));
    keys(&mut s, "<Tab>");
    insta::assert_snapshot!(screen(&s));
}

/// A template kernel whose shared tile the launch sizes (`TILE = 32`).
const TEMPLATE: &str = r#"// The launch's template argument sizes the shared tile.
template <int TILE>
__global__ void smooth(float* out, const float* in) {
    __shared__ float tile[TILE][TILE + 1];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * TILE + threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

void run(float* out, const float* in) {
    smooth<32><<<dim3(64), dim3(32, 8)>>>(out, in);
}
"#;

/// The panel starts from the model's answer: the static shared memory of the launched
/// instantiation and the occupancy at it are the figures of the kernel hover.
#[test]
fn the_occupancy_panel_of_a_template_kernel_shows_the_hovers_figures() {
    let arch = ArchChoice::parse("H200").unwrap();
    let s = State::new(
        lib(),
        Start::File {
            path: "smooth.cu".into(),
            text: TEMPLATE.into(),
            line: 3,
            col: Some(17),
            arch: Some(arch),
            background: false,
        },
        (80, 24),
        Theme { color: false },
    );
    let shown = screen(&s);
    insta::assert_snapshot!(shown);
    let knowledge = Knowledge::load(&WikiConfig::builtin()).unwrap();
    let offset = TEMPLATE.find("smooth(").unwrap();
    let (hover, _) = hover_at(
        knowledge,
        WikiConfig::builtin(),
        arch,
        "smooth.cu",
        TEMPLATE,
        offset,
    )
    .unwrap()
    .expect("a hover on the kernel");
    let o = hover.occupancy.expect("the kernel hover has occupancy");
    assert_eq!(o.static_smem, 32 * 33 * 4, "the launch binds TILE = 32");
    let r = o.result.expect("the model answers");
    for expected in [
        format!("{} B static + {} B dyn", o.static_smem, o.dynamic_smem),
        format!("threads  {}", o.block.iter().product::<u32>()),
        format!(
            "{:.0}%  {} blocks/SM · {}/{} warps",
            r.occupancy * 100.0,
            r.blocks_per_sm,
            r.active_warps,
            r.max_warps_per_sm
        ),
    ] {
        assert!(shown.contains(&expected), "{expected:?} not in\n{shown}");
    }
}

#[test]
fn a_tall_terminal_shows_all_three_occupancy_charts() {
    let mut s = file(4, 17, true);
    update(&mut s, Action::Resize(100, 40));
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn the_side_panel_scrolls_with_shift_j_and_the_wheel() {
    let mut s = file(9, 6, true);
    let top = screen(&s);
    keys(&mut s, "JJJ");
    let down = screen(&s);
    assert_ne!(top.lines().nth(2), down.lines().nth(2), "{down}");
    keys(&mut s, "KKK");
    assert_eq!(screen(&s), top);
    update(&mut s, Action::ScrollDown(70, 10));
    assert_eq!(screen(&s), down, "the wheel over the panel scrolls it");
    update(&mut s, Action::ScrollUp(70, 10));
    assert_eq!(screen(&s), top);
}

#[test]
fn file_symbol_shows_its_wiki_entry() {
    let s = file(9, 6, true);
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn no_color_means_no_colour_in_any_screen() {
    let mut states = Vec::new();
    let mut s = State::new(lib(), Start::Browse, (80, 24), Theme { color: false });
    states.push(screen_cells(&s));
    keys(&mut s, "/transpose bank conflict");
    states.push(screen_cells(&s));
    keys(&mut s, "<Enter><Tab>");
    states.push(screen_cells(&s));
    for (line, col, k) in [(10, 22, ""), (10, 22, "<Tab>"), (4, 17, ""), (9, 6, "")] {
        let mut f = file(line, col, false);
        keys(&mut f, k);
        states.push(screen_cells(&f));
    }
    for cells in states {
        for (fg, bg) in cells {
            assert_eq!((fg, bg), (Color::Reset, Color::Reset));
        }
    }
}

fn screen_cells(s: &State) -> Vec<(Color, Color)> {
    let mut t = Terminal::new(TestBackend::new(s.size.0, s.size.1)).unwrap();
    t.draw(|f| view(s, f)).unwrap();
    t.backend()
        .buffer()
        .content
        .iter()
        .map(|c| (c.fg, c.bg))
        .collect()
}

#[test]
fn diagnostics_from_the_background_arrive_in_the_gutter_and_panel() {
    let mut s = State::new(
        lib(),
        Start::File {
            path: "transpose.cu".into(),
            text: TRANSPOSE.into(),
            line: 10,
            col: Some(22),
            arch: Some(ArchChoice::parse("H200").unwrap()),
            background: true,
        },
        (80, 24),
        Theme { color: true },
    );
    let before = screen(&s);
    assert!(before.contains("rules running…"), "{before}");
    assert!(!before.contains("10●"), "{before}");
    let start = std::time::Instant::now();
    while !s.poll_background() {
        assert!(
            start.elapsed().as_secs() < 60,
            "the diagnostics never arrived"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let after = screen(&s);
    assert!(after.contains("10●"), "{after}");
    assert!(!after.contains("rules running…"), "{after}");
    let at_once = file(10, 22, true);
    assert_eq!(
        after,
        screen(&at_once),
        "the same screen as with the rules run at once"
    );
}

#[test]
fn file_cursor_moves_and_the_panel_follows() {
    let mut s = file(1, 1, true);
    keys(&mut s, "n");
    let text = screen(&s);
    assert!(
        text.contains("banks · tile") || text.contains("bank-conflict"),
        "{text}"
    );
}

#[test]
fn resizing_redraws_at_any_size() {
    let mut s = browse();
    keys(&mut s, "<Enter>");
    for (w, h) in [(40, 12), (120, 40), (20, 6), (80, 24)] {
        update(&mut s, Action::Resize(w, h));
        let text = screen(&s);
        assert_eq!(text.lines().count(), usize::from(h));
    }
    let mut f = file(10, 22, true);
    update(&mut f, Action::Resize(50, 14));
    screen(&f);
}

#[test]
fn q_quits_and_esc_goes_back() {
    let mut s = browse();
    keys(&mut s, "<Enter>");
    keys(&mut s, "<Esc>");
    assert!(!s.quit);
    assert!(screen(&s).contains("all pages"));
    keys(&mut s, "/q");
    assert!(!s.quit, "q types into the search box");
    keys(&mut s, "<Esc>q");
    assert!(s.quit);
}

#[test]
fn mouse_clicks_select_and_the_wheel_scrolls() {
    let mut s = browse();
    update(&mut s, Action::Click(40, 4));
    update(&mut s, Action::Click(40, 4));
    let text = screen(&s);
    assert!(
        text.contains("wiki ›"),
        "a second click opens the page:\n{text}"
    );
    update(&mut s, Action::ScrollDown(40, 10));
    assert!(screen(&s).contains("4/") || screen(&s).contains("/"));
}

// Issue 28: nonsense got confident hits in the `/` search too.
#[test]
fn search_says_no_good_match_for_nonsense() {
    let mut s = browse();
    keys(&mut s, "/pizza recipe");
    let text = screen(&s);
    assert!(
        text.contains("no good match: try other words, a symbol or a page id"),
        "{text}"
    );
    keys(&mut s, "<Esc>/skill-occupancy");
    let text = screen(&s);
    assert!(text.contains("▶ skill-occupancy  Occupancy"), "{text}");
}

fn file_at(path: &str, text: &str, line: usize, col: usize) -> State {
    State::new(
        lib(),
        Start::File {
            path: path.into(),
            text: text.into(),
            line,
            col: Some(col),
            arch: Some(ArchChoice::parse("H200").unwrap()),
            background: false,
        },
        (80, 24),
        Theme { color: false },
    )
}

fn text_shown(s: &State) -> String {
    match &s.screen {
        kernaut_tui::app::Screen::File(f) => f.ws.text().to_string(),
        _ => panic!("not a file screen"),
    }
}

/// Issue 27: the report's what-ifs are a list; Enter applies the selected fix to the text
/// shown (in memory: the title says it is modified), the report is computed again on the
/// new text, and `u` undoes it.
#[test]
fn a_what_if_applies_and_undoes_in_the_report_panel() {
    let mut s = file(4, 17, false);
    keys(&mut s, "<Tab>");
    let before = screen(&s);
    insta::assert_snapshot!("what_if_before", before);
    assert!(before.contains("▶ Pad the rows of tile to 33"), "{before}");
    keys(&mut s, "<Enter>");
    let after = screen(&s);
    insta::assert_snapshot!("what_if_applied", after);
    assert!(text_shown(&s).contains("__shared__ float tile[32][33];"));
    assert!(after.contains("(modified: w writes, u undoes)"), "{after}");
    assert!(after.contains("applied: Pad the rows of tile"), "{after}");
    // The report of the fixed kernel no longer has the conflict to fix.
    assert!(!after.contains("▶ Pad the rows"), "{after}");
    keys(&mut s, "u");
    let undone = screen(&s);
    insta::assert_snapshot!("what_if_undone", undone);
    assert_eq!(text_shown(&s), TRANSPOSE);
    assert!(undone.contains("undone: Pad the rows of tile"), "{undone}");
    // Apart from the status line, the screen is the one before the fix.
    let body = |t: &str| t.lines().take(23).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&undone), body(&before));
}

/// The applied fix reaches the disk only through `w`.
#[test]
fn w_writes_the_fixed_file_and_nothing_before() {
    let dir = std::env::temp_dir().join(format!("ktui-whatif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("transpose.cu");
    std::fs::write(&path, TRANSPOSE).unwrap();
    let p = path.display().to_string();
    let mut s = file_at(&p, TRANSPOSE, 4, 17);
    keys(&mut s, "<Tab><Enter>");
    assert!(text_shown(&s).contains("tile[32][33]"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TRANSPOSE);
    // No reload from disk drops the change while it is not written.
    s.poll_background();
    assert!(text_shown(&s).contains("tile[32][33]"));
    keys(&mut s, "w");
    assert!(screen(&s).contains(&format!("wrote {p}")), "{}", screen(&s));
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("__shared__ float tile[32][33];"));
    assert!(!screen(&s).contains("(modified"));
    keys(&mut s, "u");
    assert!(
        screen(&s).contains("(modified"),
        "undoing a written fix is a change"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A reduction whose loop lost its barrier.
const REDUCE: &str = r#"// A tree reduction whose loop lost its barrier.
__global__ void reduce(float* out, const float* in) {
    __shared__ float s[256];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 256 + tid];
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

int main() {
    float *o, *i;
    reduce<<<128, 256>>>(o, i);
}
"#;

/// Issue 26: anywhere in a kernel, a panel lists its barrier intervals and marks the
/// accesses that race inside one, with the two threads.
#[test]
fn the_barrier_intervals_of_the_kernel_around_the_cursor() {
    let s = file_at("reduce.cu", REDUCE, 4, 5);
    let shown = screen(&s);
    insta::assert_snapshot!(shown);
    assert!(shown.contains("barrier intervals · reduce"), "{shown}");
}

/// Issue 28: at 80×24 the status line keeps "? keys", the panel's title keeps the
/// underscores of `__global__`, and `z` gives the source the whole width.
#[test]
fn eighty_columns_keep_the_keys_hint_and_underscores() {
    let mut s = file(4, 2, false);
    let shown = screen(&s);
    let status = shown.lines().last().unwrap_or("");
    assert!(status.contains("? keys"), "{status}");
    assert!(shown.contains("__global__"), "{shown}");
    keys(&mut s, "z");
    let wide = screen(&s);
    assert!(
        wide.contains("out[x * n + y] = tile[threadIdx.x][threadIdx.y]; // kernaut: allow"),
        "{wide}"
    );
    keys(&mut s, "z");
    insta::assert_snapshot!("panel_zoomed", screen(&s));
}

/// Up and Down keep the cursor's column across a shorter line.
#[test]
fn up_and_down_keep_the_column() {
    let mut s = file(8, 40, false);
    keys(&mut s, "<Down><Down>");
    let pos = |s: &State| {
        screen(s)
            .lines()
            .last()
            .unwrap_or("")
            .trim_end()
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(pos(&s), "10:40");
    keys(&mut s, "<Down>");
    assert_eq!(pos(&s), "11:2", "line 11 is `}}`");
    keys(&mut s, "<Up>");
    assert_eq!(pos(&s), "10:40", "back to the column it had");
}
