//! File-scope and local constants (`constexpr`, `const`, `#define`) and their folding.

use super::*;

pub(crate) fn constant_decl(
    tree: &Ancestry,
    node: Node,
    text: &str,
    constexpr: bool,
    facts: &mut FileFacts,
) {
    let scope = enclosing_function(tree, node).map(|f| f.byte_range());
    for d in named_children(node) {
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(name), Some(value)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        if name.kind_name() != "identifier" && name.kind_name() != "field_identifier" {
            continue;
        }
        let value = if value.kind_name() == "initializer_list" {
            match named_children(value).as_slice() {
                [one] => *one,
                _ => continue,
            }
        } else {
            value
        };
        let expr = from_node(value, text, 0);
        let name_text = node_text(name, text).to_string();
        facts.env.insert(&name_text, scope.clone(), expr);
        facts.constants.push(Constant {
            name: name_text,
            kind: if constexpr {
                ConstantKind::Constexpr
            } else {
                ConstantKind::Const
            },
            text: squash_ws(node_text(value, text)),
            value: None,
            range: name.byte_range(),
            scope: scope.clone(),
        });
    }
}

pub(crate) fn fold_u(env: &Env, e: &Expr, at: usize) -> Option<u64> {
    env.fold(e, at).and_then(|v| u64::try_from(v).ok())
}
