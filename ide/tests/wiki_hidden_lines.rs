//! The hidden lines of the wiki's code blocks (`#~ `, context for the compile test) never
//! reach what editors show: the page and section Markdown that the server writes for
//! clients, and the hover.

use std::sync::Arc;

use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::{AnalysisConfig, AnalysisHost, Knowledge};

#[test]
fn pages_written_for_editors_and_hovers_leave_hidden_lines_out() {
    let k = Arc::new(Knowledge::load(&WikiConfig::builtin()).expect("the wiki loads"));
    let mut host = AnalysisHost::new(AnalysisConfig::default());
    host.set_knowledge(k.clone());
    let analysis = host.analysis();
    let mut pages = 0;
    for page in k.wiki.pages().iter().filter(|p| !p.hidden_lines.is_empty()) {
        pages += 1;
        let md = analysis
            .wiki_page(&page.id)
            .expect("the page renders")
            .markdown;
        assert!(!md.contains("#~"), "{}", page.id);
        for s in &page.sections {
            let target = format!("{}#{}", page.id, s.anchor);
            let md = analysis
                .wiki_page(&target)
                .expect("the section renders")
                .markdown;
            assert!(!md.contains("#~"), "{target}");
        }
    }
    assert!(pages > 40, "{pages}");
    // One excerpt whose function and declarations are hidden: the statements show, the
    // stub the compiler needs does not.
    let md = analysis
        .wiki_page("pitfall-async-copy#P3")
        .expect("the section renders")
        .markdown;
    assert!(md.contains("__pipeline_wait_prior(stages - 1);"), "{md}");
    assert!(!md.contains("pick_stages(int n) {"), "{md}");

    // The hover on `__syncthreads` shows its page's text, never a hidden line.
    let code = "__global__ void k(float* s) {\n    __syncthreads();\n}\n";
    let f = host.set_file("/k.cu", code);
    let at = code.find("__syncthreads").unwrap() + 2;
    let hover = host
        .analysis()
        .hover(f, at)
        .expect("the hover query answers")
        .expect("a hover");
    assert!(!hover.markdown.contains("#~"), "{}", hover.markdown);
}
