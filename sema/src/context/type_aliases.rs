//! Type aliases a file declares (`using half_t = __half;`, `typedef __half2 h2;`), so that
//! rules that look for a type by name also see it through an alias.

use kernaut_syntax::SourceFile;

/// Every `using NAME = TYPE;` and `typedef TYPE NAME;` of `file` whose type is one word
/// (after `const`/`struct`), as `(alias, type)`, with chains of aliases resolved: an alias
/// of an alias maps to the first type that is not an alias.
pub fn type_aliases(file: &SourceFile) -> Vec<(String, String)> {
    let mut out = file.type_aliases();
    // Resolve chains (a few steps: aliases of aliases of aliases are rare).
    for _ in 0..4 {
        let snapshot = out.clone();
        for (_, ty) in &mut out {
            if let Some((_, t)) = snapshot.iter().find(|(a, _)| a == ty) {
                *ty = t.clone();
            }
        }
    }
    out
}
