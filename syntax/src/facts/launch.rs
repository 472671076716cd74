//! Launch facts: `<<<...>>>` launch sites with their grid and block dimensions,
//! `dim3` initialisers, and `cudaFuncSetAttribute` calls.

use super::*;

/// Folds a launch dimension: an integer, `dim3(x, y, z)`, or a local `dim3` variable.
pub(crate) fn fold_dim(
    e: &Expr,
    at: usize,
    env: &Env,
    dim3_vars: &[(String, Vec<Expr>, TextRange)],
) -> Option<[i64; 3]> {
    let from_args = |args: &[Expr]| -> Option<[i64; 3]> {
        let mut v = [1i64; 3];
        for (i, a) in args.iter().take(3).enumerate() {
            v[i] = env.fold(a, at)?;
        }
        Some(v)
    };
    match e {
        Expr::Call { callee, args } if callee == "dim3" => from_args(args),
        Expr::Name(n) => {
            if let Some((_, args, _)) = dim3_vars
                .iter()
                .filter(|(name, _, scope)| name == n && scope.contains(&at))
                .min_by_key(|(_, _, s)| s.len())
            {
                return from_args(args);
            }
            env.fold(e, at).map(|v| [v, 1, 1])
        }
        _ => env.fold(e, at).map(|v| [v, 1, 1]),
    }
}

pub(crate) fn call_facts<'t>(
    tree: &Ancestry<'t>,
    call: Node<'t>,
    text: &str,
    declarations: &[Node<'t>],
    env: &Env,
    facts: &mut FileFacts,
) {
    let Some(f) = call.field("function") else {
        return;
    };
    let at = call.start_byte();
    let config = children(call)
        .into_iter()
        .find(|c| c.kind_name() == "kernel_call_syntax");
    let args: Vec<Node> = call
        .field("arguments")
        .map(|a| {
            named_children(a)
                .into_iter()
                .filter(|n| n.kind_name() != "comment")
                .collect()
        })
        .unwrap_or_default();
    let function = enclosing_function(tree, call);
    if let Some(config) = config {
        let cfg: Vec<Node> = named_children(config)
            .into_iter()
            .filter(|n| n.kind_name() != "comment")
            .collect();
        // Local `dim3` variables, looked up only when a dimension is a plain name.
        let needs_vars = cfg.iter().take(2).any(|n| n.kind_name() == "identifier");
        let dim3_vars: Vec<(String, Vec<Expr>, TextRange)> = match function.filter(|_| needs_vars) {
            Some(func) => declarations
                .iter()
                .filter(|d| func.byte_range().contains(&d.start_byte()))
                .filter(|d| {
                    d.field("type")
                        .is_some_and(|t| node_text(t, text) == "dim3")
                })
                .flat_map(|d| dim3_inits(tree, *d, text))
                .collect(),
            None => Vec::new(),
        };
        let dim = |i: usize| {
            cfg.get(i).map_or(
                LaunchDim {
                    text: String::new(),
                    value: None,
                },
                |n| LaunchDim {
                    text: squash_ws(node_text(*n, text)),
                    value: fold_dim(&from_node(*n, text, 0), at, env, &dim3_vars),
                },
            )
        };
        // `CHECK(x, …)` with no `;` before `k<<<…>>>(…)`: the macro call parses as the
        // callee and the kernel's name as an error node before the configuration.
        let after_macro = children(call)
            .into_iter()
            .take_while(|c| c.kind_name() != "kernel_call_syntax")
            .filter(|c| c.is_error())
            .last()
            .filter(|_| f.kind_name() == "call_expression")
            .map(|e| squash_ws(node_text(e, text)).replace(' ', ""))
            .filter(|t| {
                t.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            });
        let (kernel, template_args) = match f.kind_name() {
            _ if after_macro.is_some() => {
                let t = after_macro.unwrap_or_default();
                match t.find('<').filter(|_| t.ends_with('>')) {
                    Some(open) => (t[..open].to_string(), Some(t[open..].to_string())),
                    None => (t, None),
                }
            }
            "template_function" => (
                f.field("name")
                    .map(|n| node_text(n, text).to_string())
                    .unwrap_or_default(),
                f.field("arguments").map(|a| squash_ws(node_text(a, text))),
            ),
            _ => (squash_ws(&strip_template_args(node_text(f, text))), None),
        };
        let grid = dim(0);
        let block = dim(1);
        facts.launches.push(LaunchSite {
            kernel,
            template_args,
            range: call.byte_range(),
            grid,
            block,
            shared_bytes_text: cfg.get(2).map(|n| squash_ws(node_text(*n, text))),
            shared_bytes: cfg
                .get(2)
                .and_then(|n| env.fold(&from_node(*n, text, 0), at)),
            stream: cfg.get(3).map(|n| squash_ws(node_text(*n, text))),
            args: args
                .iter()
                .map(|a| squash_ws(node_text(*a, text)))
                .collect(),
            function: function
                .and_then(function_name)
                .map(|n| node_text(n, text).to_string()),
        });
        return;
    }
    let callee = squash_ws(node_text(f, text));
    if callee.trim_start_matches("::") == "cudaFuncSetAttribute" && args.len() >= 3 {
        let k = squash_ws(node_text(args[0], text));
        let k = k
            .trim_start_matches('&')
            .trim_start_matches("(void*)")
            .trim_start_matches("(const void*)")
            .trim_start_matches('&')
            .trim();
        facts.func_attributes.push(FuncAttributeCall {
            kernel: strip_template_args(k).trim().to_string(),
            attribute: squash_ws(node_text(args[1], text)),
            value_text: squash_ws(node_text(args[2], text)),
            value: env.fold(&from_node(args[2], text, 0), at),
            range: call.byte_range(),
        });
    }
}

/// `dim3 b(32, 8);`, `dim3 b = dim3(32, 8);` and `dim3 b{32, 8};` declarators.
pub(crate) fn dim3_inits(
    tree: &Ancestry,
    decl: Node,
    text: &str,
) -> Vec<(String, Vec<Expr>, TextRange)> {
    let scope = scope_of(tree, decl);
    let mut out = Vec::new();
    for d in declarators(decl) {
        if d.kind_name() == "function_declarator" {
            // `dim3 block(TILE, ROWS);` parses as a function declaration.
            let (Some(n), Some(params)) = (d.field("declarator"), d.field("parameters")) else {
                continue;
            };
            let args = named_children(params)
                .into_iter()
                .map(|p| from_text(node_text(p, text)))
                .collect();
            out.push((node_text(n, text).to_string(), args, scope.clone()));
            continue;
        }
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(n), Some(v)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        let args = match v.kind_name() {
            "argument_list" | "initializer_list" => named_children(v)
                .into_iter()
                .map(|a| from_node(a, text, 0))
                .collect(),
            _ => match from_node(v, text, 0) {
                Expr::Call { callee, args } if callee == "dim3" => args,
                other => vec![other],
            },
        };
        out.push((node_text(n, text).to_string(), args, scope.clone()));
    }
    out
}
