//! A file cut into chunks (see `SourceFile::parse`: files of 32 KB and more are parsed as
//! runs of top-level items, on several threads) must answer every query exactly as the
//! same file parsed whole, and must keep doing so through edits.

use kernaut_syntax::SourceFile;

/// Real-looking CUDA sources: the wiki's probe kernels.
const SOURCES: &[(&str, &str)] = &[
    (
        "async_probe.cu",
        include_str!("../../wiki/probes/async-copy/async_probe.cu"),
    ),
    (
        "bank_probe.cu",
        include_str!("../../wiki/probes/bank-conflict/bank_probe.cu"),
    ),
    (
        "half_probe.cu",
        include_str!("../../wiki/probes/half-precision-math/half_probe.cu"),
    ),
    (
        "ilp_probe.cu",
        include_str!("../../wiki/probes/ilp/ilp_probe.cu"),
    ),
    (
        "kern_variant.cu",
        include_str!("../../wiki/probes/occupancy/kern_variant.cu"),
    ),
    (
        "occ_probe.cu",
        include_str!("../../wiki/probes/occupancy/occ_probe.cu"),
    ),
];

/// Everything a caller can see of a parsed file, as text.
fn observe(file: &SourceFile) -> Vec<String> {
    let facts = file.facts();
    let mut out = vec![
        format!("kernels {:?}", facts.kernels),
        format!("device {:?}", facts.device_functions),
        format!("shared {:?}", facts.shared),
        format!("carves {:?}", facts.carves),
        format!("launches {:?}", facts.launches),
        format!("attrs {:?}", facts.func_attributes),
        format!("constants {:?}", facts.constants),
        format!("aliases {:?}", facts.namespace_aliases),
        format!("usings {:?}", facts.using_namespaces),
        format!("macros {:?}", facts.macros),
        format!("errors {:?}", file.errors()),
        format!("accesses {:?}", file.shared_accesses()),
        format!("pragmas {:?}", file.unroll_pragmas()),
        format!("allows {:?}", file.allow_comments()),
        format!("calls {:?}", file.calls_in(usize::MAX)),
    ];
    let text = file.text();
    let bytes = text.as_bytes();
    // Every identifier start and a few offsets inside words.
    for (i, &b) in bytes.iter().enumerate() {
        let starts_word = (b.is_ascii_alphabetic() || b == b'_')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if starts_word || i % 97 == 0 {
            out.push(format!("symbol@{i} {:?}", file.symbol_at(i)));
        }
        if i % 211 == 0 {
            out.push(format!("enclosing@{i} {:?}", file.enclosing(i)));
            out.push(format!("calls_in@{i} {:?}", file.calls_in(i)));
        }
    }
    for f in &facts.kernels {
        out.push(format!("find_calls {:?}", file.find_calls(&f.name)));
    }
    out
}

fn assert_same(name: &str, chunked: &SourceFile, whole: &SourceFile) {
    assert!(
        chunked.chunk_count() > 1 || whole.text().len() < 200,
        "{name}: not cut"
    );
    let (a, b) = (observe(chunked), observe(whole));
    assert_eq!(a.len(), b.len(), "{name}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{name}: chunked (left) and whole (right) differ");
    }
}

#[test]
fn chunked_parse_answers_like_a_whole_parse() {
    for (name, text) in SOURCES {
        for target in [1, 512] {
            let chunked = SourceFile::parse_with_target(text, target);
            let whole = SourceFile::parse_with_target(text, 0);
            assert_same(name, &chunked, &whole);
        }
    }
}

#[test]
fn large_files_are_cut_and_answer_like_a_whole_parse() {
    let all: String = SOURCES
        .iter()
        .map(|(_, t)| *t)
        .collect::<Vec<_>>()
        .join("\n");
    let chunked = SourceFile::parse(&all);
    assert!(chunked.chunk_count() > 4, "{}", chunked.chunk_count());
    assert_same("all", &chunked, &SourceFile::parse_with_target(&all, 0));
}

/// A small deterministic generator, so that the edits are the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn edits_of_a_chunked_file_match_a_fresh_parse() {
    let inserts = [
        "x",
        "\n",
        "}",
        "{",
        ";",
        "/*",
        "*/",
        "// c\n",
        "\"",
        "#if X\n",
        "#endif\n",
        "__syncthreads();\n",
        "int q = 3;\n",
        "void f() {}\n",
        "__align__(16) ",
        "",
    ];
    for (name, text) in SOURCES {
        let mut rng = Lcg(text.len() as u64);
        let mut file = SourceFile::parse_with_target(text, 256);
        let original = observe(&SourceFile::parse_with_target(text, 0));
        let mut compared = 0;
        for step in 0..20 {
            // An edit, which may break the code...
            let len = file.text().len();
            let start = rng.next(len + 1);
            let mut end = (start + rng.next(40)).min(len);
            while !file.text().is_char_boundary(end) {
                end += 1;
            }
            let removed = file.text()[start..end].to_string();
            let insert = inserts[rng.next(inserts.len())];
            file.apply_edit(start..end, insert);
            let fresh = SourceFile::parse_with_target(file.text(), 0);
            // Broken code may be recovered differently when cut (an error stays inside its
            // chunk), so the answers are compared where both parses see the same errors.
            if file.errors() == fresh.errors() {
                compared += 1;
                let facts =
                    |f: &SourceFile| format!("{:?} {:?}", f.facts().kernels, f.facts().shared);
                assert_eq!(facts(&file), facts(&fresh), "{name} step {step}");
                if compared % 4 == 0 {
                    let (a, b) = (observe(&file), observe(&fresh));
                    for (x, y) in a.iter().zip(&b) {
                        assert_eq!(x, y, "{name} step {step}: edited (left) and fresh (right)");
                    }
                }
            }
            // ...then undone: the file must answer exactly as the original again.
            file.apply_edit(start..start + insert.len(), &removed);
            assert_eq!(file.text(), *text, "{name} step {step}");
            if step % 3 == 0 {
                let again = observe(&file);
                for (x, y) in again.iter().zip(&original) {
                    assert_eq!(
                        x, y,
                        "{name} step {step}: undone (left) and original (right)"
                    );
                }
            }
        }
        assert!(
            compared >= 5,
            "{name}: only {compared} edits left comparable code"
        );
    }
}

/// `blocks` copies of a kernel that reads a file-scope constant and a file-scope
/// `extern __shared__` buffer.
fn generated(blocks: usize) -> String {
    let mut text = String::from("#define TILE 32\nextern __shared__ float dyn_smem[];\n\n");
    for i in 0..blocks {
        text.push_str(&format!(
            "__global__ void k{i}(float* out) {{\n    __shared__ float tile[TILE][TILE + 1];\n    float* part = dyn_smem + 4;\n    tile[threadIdx.y][threadIdx.x] = part[threadIdx.x];\n    __syncthreads();\n    out[threadIdx.x] = tile[threadIdx.x][threadIdx.y];\n}}\n\nvoid launch{i}(float* out) {{\n    k{i}<<<1, dim3(TILE, 8)>>>(out);\n}}\n\n"
        ));
    }
    text
}

#[test]
fn an_edit_of_a_file_scope_constant_reaches_every_chunk() {
    let text = generated(60);
    let mut file = SourceFile::parse_with_target(&text, 512);
    assert!(file.chunk_count() > 10, "{}", file.chunk_count());
    assert_eq!(file.facts().shared.len(), 61);
    assert!(file.facts().shared[1..]
        .iter()
        .all(|s| s.static_bytes == Some(32 * 33 * 4)));
    assert_eq!(file.facts().carves.len(), 60);
    let before = file.shared_accesses();
    // Inside one kernel: only that chunk changes.
    let at = text.find("k30(float* out) {\n").unwrap() + "k30(float* out) {\n".len();
    file.apply_edit(at..at, "    tile[0][threadIdx.x] = 1.0f;\n");
    assert_eq!(file.shared_accesses().len(), before.len() + 1);
    assert_same(
        "inside a kernel",
        &file,
        &SourceFile::parse_with_target(file.text(), 0),
    );
    // The constant at the top: every chunk's shared sizes, launches and accesses change.
    file.apply_edit(8..15, "TILE 16");
    assert_eq!(&file.text()[..16], "#define TILE 16\n");
    assert!(file.facts().shared[1..]
        .iter()
        .all(|s| s.static_bytes == Some(16 * 17 * 4)));
    assert!(file
        .facts()
        .launches
        .iter()
        .all(|l| l.block.value == Some([16, 8, 1])));
    assert_same(
        "the constant",
        &file,
        &SourceFile::parse_with_target(file.text(), 0),
    );
    // The file-scope buffer renamed: the carves of every chunk lose their base.
    let at = file.text().find("dyn_smem[]").unwrap();
    file.apply_edit(at..at + "dyn_smem".len(), "other");
    assert!(file.facts().carves.is_empty());
    assert_same(
        "the buffer",
        &file,
        &SourceFile::parse_with_target(file.text(), 0),
    );
}
