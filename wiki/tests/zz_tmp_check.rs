use kernaut_wiki::{check, CheckConfig, Wiki, WikiConfig};
#[test]
fn builtin_check() {
    let wiki = Wiki::load(&WikiConfig::builtin());
    for d in wiki.diagnostics.iter() {
        println!("LOAD {d}");
    }
    for d in check(&wiki, CheckConfig { strict: false }) {
        println!("CHECK {d}");
    }
}
