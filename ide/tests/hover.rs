//! Snapshot tests of hover content. `check_hover` is the only code that calls the API;
//! update the snapshots with `UPDATE_EXPECT=1 cargo test -p kernaut-ide --test hover`.

use std::sync::{Arc, OnceLock};

use expect_test::{expect, Expect};
use kernaut_ide::gpu::Arch;
use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};
use kernaut_test_utils::Fixture;

fn knowledge() -> Arc<Knowledge> {
    static K: OnceLock<Arc<Knowledge>> = OnceLock::new();
    K.get_or_init(|| {
        Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the built-in wiki loads"))
    })
    .clone()
}

/// Hovers at the fixture's `$0` and compares the kind, symbol, hovered text and Markdown.
/// `arch:` and `block:` in the cursor file's header set the target and the default block.
fn check_hover(fixture: &str, expect: Expect) {
    let f = Fixture::parse(fixture);
    let cursor_file = f
        .files
        .iter()
        .find(|f| f.cursor.is_some())
        .expect("the fixture has a $0 cursor");
    let mut config = AnalysisConfig::default();
    if let Some(a) = cursor_file.meta.get("arch") {
        config.arch = Arch::parse(a).expect("a valid arch in the fixture");
    }
    if let Some(b) = cursor_file.block() {
        config.default_block = b;
    }
    let mut host = AnalysisHost::new(config);
    host.set_knowledge(knowledge());
    for file in &f.files {
        host.set_file(&file.path, &file.text);
    }
    let analysis = host.analysis();
    let offset = cursor_file.cursor.unwrap_or(0);
    let actual = match analysis.hover(&cursor_file.path, offset) {
        None => "no hover\n".to_string(),
        Some(h) => format!(
            "{} `{}` at `{}`\n---\n{}",
            h.kind.as_str(),
            h.symbol,
            cursor_file.text.get(h.range.clone()).unwrap_or("?"),
            h.markdown
        ),
    };
    expect.assert_eq(&actual);
}

#[test]
fn smoke() {
    check_hover(
        r#"
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor$0_sync(0xffffffffu, v, o);
    return v;
}
"#,
        expect![[""]],
    );
}
