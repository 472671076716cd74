//! Function facts: kernels and device functions with their qualifiers, parameters,
//! template parameters and launch bounds.

use super::*;

pub(crate) const QUALIFIER_KINDS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__forceinline__",
    "__noinline__",
];

pub(crate) fn function_facts(
    tree: &Ancestry,
    def: Node,
    file: &SourceFile,
    env: &Env,
) -> Option<Function> {
    let text = file.text();
    let name = function_name(def)?;
    let outer = match tree.ancestors(def).first() {
        Some(&p) if p.kind_name() == "template_declaration" => p,
        _ => def,
    };
    let body = def.field("body");
    let header_end = body.map_or(def.end_byte(), |b| b.start_byte());
    let mut qualifiers = Vec::new();
    let mut is_kernel = false;
    let mut is_device = false;
    for c in children(def) {
        let k = c.kind_name();
        if QUALIFIER_KINDS.contains(&k) || k == "storage_class_specifier" {
            if k == "__global__" {
                is_kernel = true;
            }
            if k == "__device__" {
                is_device = true;
            }
            qualifiers.push(node_text(c, text).to_string());
        }
    }
    let mut cluster_dims = None;
    let mut third_bound: Option<(String, usize)> = None;
    for m in masks_in(file, outer.start_byte()..header_end) {
        if m.name == "__launch_bounds__" {
            third_bound = m.args.clone().map(|a| (a, m.range.start));
        } else if m.name == "__cluster_dims__" {
            let args: Vec<Option<i64>> = m
                .args
                .as_deref()
                .unwrap_or("")
                .split(',')
                .map(|a| env.fold(&from_text(a), m.range.start))
                .collect();
            let get = |i: usize| args.get(i).copied().unwrap_or(Some(1));
            cluster_dims = Some([get(0), get(1), get(2)]);
        } else if m.args.is_none() {
            if m.replacement == Some("__global__") {
                is_kernel = true;
            }
            if m.replacement == Some("__device__") {
                is_device = true;
            }
            if !qualifiers.contains(&m.name) {
                qualifiers.push(m.name.clone());
            }
        }
    }
    let launch_bounds = children(def)
        .into_iter()
        .find(|c| c.kind_name() == "launch_bounds")
        .map(|lb| {
            let args: Vec<Node> = named_children(lb)
                .into_iter()
                .filter(|n| n.kind_name() != "comment")
                .collect();
            let fold = |i: usize| {
                args.get(i)
                    .and_then(|a| env.fold(&from_node(*a, text, 0), lb.start_byte()))
            };
            let mut shown: Vec<String> = args
                .iter()
                .map(|a| squash_ws(node_text(*a, text)))
                .collect();
            let mut max_cluster = fold(2);
            if let Some((third, at)) = &third_bound {
                shown.push(squash_ws(third));
                max_cluster = env.fold(&from_text(third), *at);
            }
            LaunchBounds {
                args: shown,
                max_threads: fold(0),
                min_blocks: fold(1),
                max_cluster,
                range: lb.byte_range(),
            }
        });
    let params = function_declarator(def)
        .and_then(|fd| fd.field("parameters"))
        .map(|pl| {
            named_children(pl)
                .into_iter()
                .filter(|p| p.kind_name().contains("parameter_declaration"))
                .map(|p| {
                    let n = p.field("declarator").and_then(declarator_name);
                    let whole = node_text(p, text);
                    let ty = match n {
                        Some(n) => {
                            let s = n.start_byte() - p.start_byte();
                            let e = n.end_byte() - p.start_byte();
                            format!(
                                "{} {}",
                                whole.get(..s).unwrap_or(""),
                                whole.get(e..).unwrap_or("")
                            )
                        }
                        None => whole.to_string(),
                    };
                    Param {
                        name: n
                            .map(|n| node_text(n, text).to_string())
                            .unwrap_or_default(),
                        ty: squash_ws(&ty).replace(" *", "*").replace(" &", "&"),
                        range: p.byte_range(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let template_params = if outer.kind_name() == "template_declaration" {
        template_params(outer, text, env)
    } else {
        Vec::new()
    };
    Some(Function {
        name: node_text(name, text).to_string(),
        name_range: name.byte_range(),
        range: outer.byte_range(),
        body_range: body.map(|b| b.byte_range()),
        is_kernel,
        is_device: is_device && !is_kernel,
        qualifiers,
        params,
        template_params,
        launch_bounds,
        cluster_dims,
    })
}

pub(crate) fn template_params(decl: Node, text: &str, env: &Env) -> Vec<TemplateParam> {
    let Some(list) = decl.field("parameters") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in named_children(list) {
        let kind = p.kind_name();
        let is_type = kind.contains("type_parameter");
        let name_node = if is_type {
            named_children(p)
                .into_iter()
                .find(|c| c.kind_name() == "type_identifier")
        } else {
            p.field("declarator").and_then(declarator_name)
        };
        let Some(name_node) = name_node else {
            continue;
        };
        let default = p.field("default_value").or_else(|| p.field("default_type"));
        let ty = if is_type {
            children(p)
                .first()
                .map(|c| node_text(*c, text).to_string())
                .unwrap_or_else(|| "typename".into())
        } else {
            p.field("type")
                .map(|t| squash_ws(node_text(t, text)))
                .unwrap_or_default()
        };
        out.push(TemplateParam {
            name: node_text(name_node, text).to_string(),
            ty,
            is_type,
            default: default.map(|d| squash_ws(node_text(d, text))),
            default_value: default
                .filter(|_| !is_type)
                .and_then(|d| env.fold(&from_node(d, text, 0), decl.start_byte())),
        });
    }
    out
}
