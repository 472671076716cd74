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
            arm: if is_extern || !(text.contains("#else") || text.contains("#elif")) {
                None
            } else {
                crate::macros::preprocessor_arm(text, decl.start_byte())
            },
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

/// An integer type that holds an address (`reinterpret_cast<uintptr_t>(smem) + 16` counts
/// bytes): its arithmetic is in units of `char`.
fn address_int(ty: &str) -> Option<&'static str> {
    let t = ty.trim().trim_start_matches("std::");
    matches!(
        t,
        "uintptr_t"
            | "intptr_t"
            | "size_t"
            | "uint64_t"
            | "int64_t"
            | "unsigned long long"
            | "long long"
            | "unsigned long"
            | "long"
    )
    .then_some("char")
}

/// `node` without the parentheses and pointer casts around it (`(T*)x`,
/// `reinterpret_cast<T*>(x)`, `static_cast<T*>(x)`, or to an address-sized integer, which
/// counts bytes), and the pointee of the outermost cast.
fn strip_cast_nodes<'t>(mut node: Node<'t>, text: &str) -> (Node<'t>, Option<String>) {
    let mut ty: Option<String> = None;
    for _ in 0..8 {
        match node.kind_name() {
            "parenthesized_expression" => match named_children(node).as_slice() {
                [one] => node = *one,
                _ => break,
            },
            "cast_expression" => {
                let (Some(t), Some(v)) = (node.field("type"), node.field("value")) else {
                    break;
                };
                let t = squash_ws(node_text(t, text));
                let Some(pointee) = t.strip_suffix('*').or_else(|| address_int(&t)) else {
                    break;
                };
                ty.get_or_insert_with(|| pointee.trim().to_string());
                node = v;
            }
            "call_expression" => {
                let Some(f) = node
                    .field("function")
                    .filter(|f| f.kind_name() == "template_function")
                else {
                    break;
                };
                let is_cast = f
                    .field("name")
                    .is_some_and(|n| node_text(n, text).ends_with("_cast"));
                let args = node
                    .field("arguments")
                    .map(named_children)
                    .unwrap_or_default();
                let (true, [arg]) = (is_cast, args.as_slice()) else {
                    break;
                };
                let Some(pointee) = f
                    .field("arguments")
                    .and_then(|a| named_children(a).first().copied())
                    .map(|t| squash_ws(node_text(t, text)))
                    .and_then(|t| {
                        t.strip_suffix('*')
                            .or_else(|| address_int(&t))
                            .map(|p| p.trim().to_string())
                    })
                else {
                    break;
                };
                ty.get_or_insert(pointee);
                node = *arg;
            }
            _ => break,
        }
    }
    (node, ty)
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
        let (inner, cast_type) = strip_cast_nodes(value, text);
        let (base_node, offset_node, unit_cast) = match inner.kind_name() {
            "identifier" => (inner, None, None),
            "binary_expression"
                if inner
                    .field("operator")
                    .is_some_and(|o| node_text(o, text) == "+") =>
            {
                let (Some(l), Some(r)) = (inner.field("left"), inner.field("right")) else {
                    continue;
                };
                let (l, cast) = strip_cast_nodes(l, text);
                (l, Some(r), cast)
            }
            "pointer_expression"
                if inner
                    .field("operator")
                    .is_some_and(|o| node_text(o, text) == "&") =>
            {
                let Some(sub) = inner
                    .field("argument")
                    .filter(|a| a.kind_name() == "subscript_expression")
                else {
                    continue;
                };
                let index = sub
                    .field("indices")
                    .and_then(|l| named_children(l).first().copied())
                    .or_else(|| sub.field("index"));
                let (Some(b), Some(i)) = (sub.field("argument"), index) else {
                    continue;
                };
                (b, Some(i), None)
            }
            _ => continue,
        };
        if base_node.kind_name() != "identifier" {
            continue;
        }
        let base = node_text(base_node, text).to_string();
        let offset_elems = Some(offset_node.map_or(Expr::Int(0), |o| from_node(o, text, 0)));
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
        let unit = match &unit_cast {
            Some(t) => type_size(t),
            None => base_elem,
        };
        let offset_bytes = match (base_offset, offset, unit) {
            (Some(b), Some(o), Some(sz)) => o.checked_mul(sz as i64).and_then(|o| o.checked_add(b)),
            _ => None,
        };
        let element_type = base_type.clone();
        facts.carves.push(SharedCarve {
            name: node_text(name, text).to_string(),
            name_range: name.byte_range(),
            offset_range: offset_node.map(|o| o.byte_range()),
            offset_unit: unit,
            base_offset_bytes: base_offset,
            cast_type,
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

#[cfg(test)]
mod tests {
    use crate::SourceFile;

    #[test]
    fn a_carve_counts_its_offset_in_the_type_the_base_is_cast_to() {
        let text = "__global__ void k() {\n    extern __shared__ unsigned char smem[];\n    float2* a = (float2*)smem + 3;\n    float* b = reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(smem) + 20);\n    float4* c = reinterpret_cast<float4*>(&smem[130]);\n}\n";
        let f = SourceFile::parse(text);
        let shown: Vec<String> = f
            .facts()
            .carves
            .iter()
            .map(|c| {
                format!(
                    "{} @{} +{:?} unit {:?} cast {:?} offset `{}`",
                    c.name,
                    &text[c.name_range.clone()],
                    c.offset_bytes,
                    c.offset_unit,
                    c.cast_type,
                    c.offset_range.clone().map_or("", |r| &text[r])
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                "a @a +Some(24) unit Some(8) cast None offset `3`",
                "b @b +Some(20) unit Some(1) cast Some(\"float\") offset `20`",
                "c @c +Some(130) unit Some(1) cast Some(\"float4\") offset `130`",
            ]
        );
    }
}
