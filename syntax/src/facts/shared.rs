//! Shared declarations: `__shared__` buffers and the pointers carved from dynamic shared
//! memory.

use super::*;

pub(crate) fn shared_decls(
    tree: &Ancestry,
    decl: Node,
    file: &SourceFile,
    env: &Env,
    facts: &mut FileFacts,
) {
    let text = file.text();
    let is_extern = children(decl)
        .iter()
        .any(|c| c.kind_name() == "storage_class_specifier" && node_text(*c, text) == "extern");
    let element_type = decl
        .field("type")
        .map(|t| squash_ws(node_text(t, text)))
        .unwrap_or_default();
    let mut alignment = None;
    for m in masks_in(file, decl.byte_range()) {
        if m.name == "__align__" {
            alignment = m
                .args
                .as_deref()
                .and_then(|a| fold_u(env, &from_text(a), decl.start_byte()));
        }
    }
    if let Some(spec) = children(decl).into_iter().find(|c| {
        c.kind_name() == "alignas_qualifier" || node_text(*c, text).starts_with("alignas")
    }) {
        let inner = node_text(spec, text)
            .trim_start_matches("alignas")
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')');
        alignment = fold_u(env, &from_text(inner), decl.start_byte());
    }
    let function = enclosing_function(tree, decl)
        .and_then(function_name)
        .map(|n| node_text(n, text).to_string());
    for d in declarators(decl) {
        let Some(name) = declarator_name(d) else {
            continue;
        };
        let mut dims_nodes = Vec::new();
        let mut cur = if d.kind_name() == "init_declarator" {
            d.field("declarator").unwrap_or(d)
        } else {
            d
        };
        let mut pointer = false;
        for _ in 0..16 {
            match cur.kind_name() {
                "array_declarator" => {
                    dims_nodes.push(cur.field("size"));
                }
                "pointer_declarator" => pointer = true,
                _ => break,
            }
            match cur.field("declarator") {
                Some(n) => cur = n,
                None => break,
            }
        }
        dims_nodes.reverse();
        let dims_text: Vec<String> = dims_nodes
            .iter()
            .map(|n| n.map(|n| squash_ws(node_text(n, text))).unwrap_or_default())
            .collect();
        let dims: Vec<Option<u64>> = dims_nodes
            .iter()
            .map(|n| n.and_then(|n| fold_u(env, &from_node(n, text, 0), n.start_byte())))
            .collect();
        let element_size = if pointer {
            Some(8)
        } else {
            type_size(&strip_template_args(&element_type))
        };
        let static_bytes = if is_extern {
            None
        } else {
            element_size.and_then(|e| dims.iter().try_fold(e, |acc, d| acc.checked_mul((*d)?)))
        };
        facts.shared.push(SharedDecl {
            name: node_text(name, text).to_string(),
            name_range: name.byte_range(),
            range: decl.byte_range(),
            element_type: element_type.clone(),
            element_size,
            dims_text,
            dims,
            static_bytes,
            is_extern,
            alignment,
            function: function.clone(),
        });
    }
}

/// Strips casts and parentheses, returning the innermost expression and the last cast type.
pub(crate) fn strip_casts(mut e: &Expr) -> (&Expr, Option<&str>) {
    let mut ty = None;
    while let Expr::Cast(t, inner) = e {
        ty.get_or_insert(t.as_str());
        e = inner;
    }
    (e, ty)
}

pub(crate) fn carve(
    tree: &Ancestry,
    decl: Node,
    text: &str,
    env: &Env,
    globals: &[SharedDecl],
    facts: &mut FileFacts,
) {
    // Only an initialised pointer can be a carve: skip the rest before any tree walk.
    if !node_text(decl, text).contains('*') || !node_text(decl, text).contains('=') {
        return;
    }
    let Some(func) = enclosing_function(tree, decl) else {
        return;
    };
    let function = function_name(func).map(|n| node_text(n, text).to_string());
    let base_type = decl
        .field("type")
        .map(|t| squash_ws(node_text(t, text)))
        .unwrap_or_default();
    for d in declarators(decl) {
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(target), Some(value)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        if target.kind_name() != "pointer_declarator" {
            continue;
        }
        let Some(name) = declarator_name(target) else {
            continue;
        };
        let expr = from_node(value, text, 0);
        let (inner, _) = strip_casts(&expr);
        let (base, offset_elems) = match inner {
            Expr::Name(b) => (b.clone(), Some(Expr::Int(0))),
            Expr::Binary(l, "+", r) => match strip_casts(l).0 {
                Expr::Name(b) => (b.clone(), Some((**r).clone())),
                _ => continue,
            },
            Expr::Unary("&", sub) => match &**sub {
                Expr::Subscript(b, i) => match &**b {
                    Expr::Name(b) => (b.clone(), Some((**i).clone())),
                    _ => continue,
                },
                _ => continue,
            },
            _ => continue,
        };
        // The base must be an `extern __shared__` buffer or an earlier carve in this function.
        let (root, base_offset, base_elem) = if let Some(s) = globals
            .iter()
            .filter(|g| g.range.start < decl.start_byte())
            .chain(&facts.shared)
            .find(|s| {
                s.is_extern
                    && s.name == base
                    && s.function
                        .as_ref()
                        .is_none_or(|f| Some(f) == function.as_ref())
            }) {
            (s.name.clone(), Some(0), s.element_size)
        } else if let Some(c) = facts
            .carves
            .iter()
            .rev()
            .find(|c| c.name == base && c.function == function)
        {
            (c.root.clone(), c.offset_bytes, c.element_size)
        } else {
            continue;
        };
        let at = decl.start_byte();
        let offset = offset_elems.and_then(|o| env.fold(&o, at));
        let offset_bytes = match (base_offset, offset, base_elem) {
            (Some(b), Some(o), Some(sz)) => o.checked_mul(sz as i64).and_then(|o| o.checked_add(b)),
            _ => None,
        };
        let element_type = base_type.clone();
        facts.carves.push(SharedCarve {
            name: node_text(name, text).to_string(),
            range: decl.byte_range(),
            base,
            root,
            element_size: type_size(&element_type),
            element_type,
            offset_bytes,
            function: function.clone(),
        });
    }
}
