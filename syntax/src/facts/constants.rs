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
    let class = enclosing_class(tree, node, text, facts);
    // `static constexpr int X = 4;` in a class: the member has a default value.
    if let (Some(class), Some(name), Some(value)) = (
        &class,
        node.field("declarator"),
        node.field("default_value"),
    ) {
        if name.kind_name() == "field_identifier" {
            let name = node_text(name, text);
            let expr = from_node(value, text, 0);
            facts
                .env
                .insert(&format!("{}::{name}", class.0), scope.clone(), expr.clone());
            // For its siblings' initialisers, folded inside the class.
            facts.env.insert(name, Some(class.1.clone()), expr);
        }
        return;
    }
    // `constexpr dim3 kBlock(128, 2);`: its parts as `kBlock.x`, `kBlock.y`, `kBlock.z`,
    // for launches that name it.
    if node
        .field("type")
        .is_some_and(|t| node_text(t, text).trim() == "dim3")
    {
        for (name, args, _) in super::launch::dim3_inits(tree, node, text) {
            if args.is_empty() || args.len() > 3 {
                continue;
            }
            for (i, axis) in ["x", "y", "z"].iter().enumerate() {
                let part = args.get(i).map_or(Expr::Int(1), |a| from_text(a));
                facts
                    .env
                    .insert(&format!("{name}.{axis}"), scope.clone(), part);
            }
        }
        return;
    }
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

/// The name and body range of the `struct`/`class` whose member `node` (a
/// `field_declaration`) is, recorded in the environment with its template parameter names
/// (an unnamed one as `""`, so that the arguments line up; none for a plain class).
fn enclosing_class(
    tree: &Ancestry,
    node: Node,
    text: &str,
    facts: &mut FileFacts,
) -> Option<(String, TextRange)> {
    if node.kind_name() != "field_declaration" {
        return None;
    }
    let up = tree.ancestors(node);
    let body = up
        .first()
        .filter(|n| n.kind_name() == "field_declaration_list")?;
    let spec = up
        .get(1)
        .filter(|n| matches!(n.kind_name(), "struct_specifier" | "class_specifier"))?;
    let name = spec
        .field("name")
        .filter(|n| n.kind_name() == "type_identifier")?;
    let name = node_text(name, text).to_string();
    let template = up[2..]
        .iter()
        .take_while(|n| matches!(n.kind_name(), "declaration" | "template_declaration"))
        .find(|n| n.kind_name() == "template_declaration");
    let params = template
        .and_then(|t| t.field("parameters"))
        .map(|params| {
            named_children(params)
                .into_iter()
                .filter(|p| p.kind_name() != "comment")
                .map(|p| {
                    let n = if p.kind_name().contains("type_parameter") {
                        named_children(p)
                            .into_iter()
                            .find(|c| c.kind_name() == "type_identifier")
                    } else {
                        p.field("declarator").and_then(declarator_name)
                    };
                    n.map(|n| node_text(n, text).to_string())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    facts.env.insert_class(&name, body.byte_range(), params);
    Some((name, body.byte_range()))
}

pub(crate) fn fold_u(env: &Env, e: &Expr, at: usize) -> Option<u64> {
    env.fold(e, at).and_then(|v| u64::try_from(v).ok())
}
