//! Launch facts: `<<<...>>>` launch sites with their grid and block dimensions,
//! `dim3` initialisers, and `cudaFuncSetAttribute` calls.

use super::*;
use crate::lex::list_end;

/// The x, y, z of a launch dimension as written: the arguments of `dim3(x, y, z)` or of
/// a local `dim3` variable's initialiser, or the expression itself.
pub(crate) fn dim_parts(
    n: Node,
    text: &str,
    at: usize,
    dim3_vars: &[(String, Vec<String>, TextRange)],
) -> Vec<String> {
    if let Some(args) = dim3_call_args(n, text) {
        return args;
    }
    if n.kind_name() == "identifier" {
        let name = node_text(n, text);
        if let Some((_, args, _)) = dim3_vars
            .iter()
            .filter(|(v, _, scope)| v == name && scope.contains(&at))
            .min_by_key(|(_, _, s)| s.len())
        {
            return args.clone();
        }
    }
    vec![squash_ws(node_text(n, text))]
}

/// The last assignment `name = dim3(…)` (or `= {…}`) in `function` before `at`, which
/// wins over the variable's initialiser: `Some(Some(parts))` when every block around the
/// assignment also holds `at` (it runs on the way to the launch), `Some(None)` when it
/// sits in a branch or loop that ends before `at` (the value at the launch is not
/// known), `None` without such an assignment.
fn last_dim3_assignment(
    function: Node,
    name: &str,
    at: usize,
    text: &str,
) -> Option<Option<Vec<String>>> {
    let mut last: Option<Node> = None;
    preorder(function, |n| {
        if n.start_byte() >= at {
            return false;
        }
        if n.kind_name() == "assignment_expression"
            && n.field("operator")
                .is_some_and(|o| node_text(o, text) == "=")
            && n.field("left")
                .is_some_and(|l| l.kind_name() == "identifier" && node_text(l, text) == name)
        {
            last = Some(n);
        }
        true
    });
    let assignment = last?;
    if !on_the_way_to(assignment, function, at, &[]) {
        return Some(None);
    }
    let value = assignment.field("right")?;
    Some(match dim3_call_args(value, text) {
        Some(args) => Some(args),
        None if value.kind_name() == "initializer_list" => Some(
            named_children(value)
                .into_iter()
                .filter(|a| a.kind_name() != "comment")
                .map(|a| squash_ws(node_text(a, text)))
                .collect(),
        ),
        // `b = b2;` or `b = n;`: the other variable (a `dim3` the caller follows) or the
        // value as x.
        None if value.kind_name() == "identifier" => Some(vec![node_text(value, text).to_string()]),
        None => None,
    })
}

/// Whether `node`, in `function`, runs on the way to `at`: no block, branch or loop
/// around it (nor a construct of `also`'s kinds) ends before `at`.
fn on_the_way_to(node: Node, function: Node, at: usize, also: &[&str]) -> bool {
    let mut up = node.parent();
    while let Some(p) = up {
        if p == function {
            break;
        }
        let kind = p.kind_name();
        if (matches!(
            kind,
            "compound_statement"
                | "if_statement"
                | "for_statement"
                | "while_statement"
                | "do_statement"
                | "switch_statement"
                | "case_statement"
        ) || also.contains(&kind))
            && !(p.start_byte() <= at && at < p.end_byte())
        {
            return false;
        }
        up = p.parent();
    }
    true
}

/// The fields of the `dim3` local `name` that `function` sets one by one before `at`
/// (`b.x = b.y = 16;`), in order, each as (axis, value as written); `None` where one is
/// set inside a block, branch or loop that ends before `at` (the value at the launch is
/// not known).
fn dim3_field_assignments(
    function: Node,
    name: &str,
    at: usize,
    text: &str,
) -> Option<Vec<(usize, String)>> {
    let mut found: Vec<Node> = Vec::new();
    preorder(function, |n| {
        if n.start_byte() >= at {
            return false;
        }
        if n.kind_name() == "assignment_expression"
            && n.field("operator")
                .is_some_and(|o| node_text(o, text) == "=")
            && n.field("left").is_some_and(|l| {
                l.kind_name() == "field_expression"
                    && l.field("argument")
                        .is_some_and(|a| node_text(a, text) == name)
            })
        {
            found.push(n);
        }
        true
    });
    let mut out = Vec::new();
    for assignment in found {
        if !on_the_way_to(assignment, function, at, &["conditional_expression"]) {
            return None;
        }
        let axis = match assignment
            .field("left")
            .and_then(|l| l.field("field"))
            .map(|f| node_text(f, text))
        {
            Some("x") => 0,
            Some("y") => 1,
            Some("z") => 2,
            _ => return None,
        };
        // `b.x = b.y = 16`: the value is the innermost right side.
        let mut value = assignment.field("right")?;
        while value.kind_name() == "assignment_expression" {
            if value.field("operator").map(|o| node_text(o, text)) != Some("=") {
                return None;
            }
            value = value.field("right")?;
        }
        out.push((axis, squash_ws(node_text(value, text))));
    }
    Some(out)
}

/// The arguments of `dim3(x, y, z)` or `dim3{x, y, z}`, as written.
pub(crate) fn dim3_call_args(n: Node, text: &str) -> Option<Vec<String>> {
    let (callee, args) = match n.kind_name() {
        "call_expression" => (n.field("function")?, n.field("arguments")?),
        "compound_literal_expression" => (n.field("type")?, n.field("value")?),
        _ => return None,
    };
    (node_text(callee, text) == "dim3").then(|| {
        named_children(args)
            .into_iter()
            .filter(|a| a.kind_name() != "comment")
            .map(|a| squash_ws(node_text(a, text)))
            .collect()
    })
}

/// Folds a launch dimension from its x, y, z ([`dim_parts`]); missing ones are 1.
pub(crate) fn fold_dim(parts: &[String], at: usize, env: &Env) -> Option<[i64; 3]> {
    let mut v = [1i64; 3];
    for (i, a) in parts.iter().take(3).enumerate() {
        v[i] = env.fold(&from_text(a), at)?;
    }
    Some(v)
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
    let args: Vec<Node> = crate::util::call_arguments(call);
    let function = enclosing_function(tree, call);
    let cx = DimContext {
        tree,
        text,
        declarations,
        env,
        function,
    };
    if let Some(config) = config {
        let cfg: Vec<Node> = named_children(config)
            .into_iter()
            .filter(|n| n.kind_name() != "comment")
            .collect();
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
        let chosen = match lambda_parameter_calls(tree, call, &kernel, text, &cx) {
            Some(chosen) if !chosen.is_empty() => chosen,
            _ => vec![Chosen {
                kernel: match kernel_alias(&cx, &kernel, at) {
                    Some(alias) => alias,
                    None => (kernel, template_args),
                },
                site: None,
                bound: Vec::new(),
            }],
        };
        for Chosen {
            kernel: (kernel, template_args),
            site,
            bound,
        } in chosen
        {
            let site_at = site.map_or(at, |s| s.start_byte());
            let names: Vec<String> = bound.iter().map(|(p, _)| p.clone()).collect();
            let values: Vec<String> = bound
                .iter()
                .map(|(_, a)| squash_ws(node_text(*a, text)))
                .collect();
            let passed = |n: Node| {
                (n.kind_name() == "identifier")
                    .then(|| node_text(n, text))
                    .and_then(|name| bound.iter().find(|(p, _)| p == name))
                    .map(|(_, a)| *a)
            };
            let dim = |i: usize| match cfg.get(i) {
                Some(n) => match passed(*n) {
                    Some(arg) => launch_dim(&cx, arg, site_at),
                    None => {
                        let d = launch_dim(&cx, *n, at);
                        if d.value.is_some() || bound.is_empty() {
                            return d;
                        }
                        // A part naming a parameter of the lambda: its argument.
                        let parts: Vec<String> = d
                            .parts
                            .iter()
                            .map(|p| substitute(p, &names, &values))
                            .collect();
                        LaunchDim {
                            value: fold_dim(&parts, site_at, env),
                            text: d.text,
                            parts,
                        }
                    }
                },
                None => LaunchDim {
                    text: String::new(),
                    value: None,
                    parts: Vec::new(),
                },
            };
            let grid = dim(0);
            let block = dim(1);
            let shared = cfg.get(2).map(|n| match passed(*n) {
                Some(arg) => (arg, site_at),
                None => (*n, at),
            });
            facts.launches.push(LaunchSite {
                kernel,
                template_args,
                range: site.unwrap_or(call).byte_range(),
                grid,
                block,
                shared_bytes_text: cfg.get(2).map(|n| squash_ws(node_text(*n, text))),
                shared_bytes: shared.and_then(|(n, at)| {
                    env.fold(&from_node(n, text, 0), at)
                        .or_else(|| cx.fold_local(n, at))
                }),
                stream: cfg.get(3).map(|n| squash_ws(node_text(*n, text))),
                args: args
                    .iter()
                    .map(|a| substitute(&squash_ws(node_text(*a, text)), &names, &values))
                    .collect(),
                arg_locals: args
                    .iter()
                    .map(|a| {
                        (names.is_empty() && a.kind_name() == "identifier")
                            .then(|| cx.fold_local(*a, at))
                            .flatten()
                    })
                    .collect(),
                written: cfg
                    .first()
                    .filter(|_| site.is_none() && bound.is_empty())
                    .map(|g| crate::LaunchWritten {
                        grid: g.byte_range(),
                        args: args.iter().map(|a| a.byte_range()).collect(),
                    }),
                function: function
                    .and_then(function_name)
                    .map(|n| node_text(n, text).to_string()),
                caller_params: function
                    .and_then(|func| tree.ancestors(func).first().copied())
                    .filter(|p| p.kind_name() == "template_declaration")
                    .map(|p| {
                        template_params(p, text, env)
                            .into_iter()
                            .map(|t| t.name)
                            .collect()
                    })
                    .unwrap_or_default(),
                caller_bound: Vec::new(),
                caller_value_params: function.map(|f| value_params(f, text)).unwrap_or_default(),
            });
        }
        return;
    }
    if f.kind_name() == "template_function" {
        if let (Some(n), Some(a)) = (f.field("name"), f.field("arguments")) {
            facts.template_calls.push(TemplateCall {
                name: squash_ws(node_text(n, text)),
                args: split_template_args(node_text(a, text)),
                range: call.byte_range(),
            });
        }
    }
    let callee = squash_ws(node_text(f, text));
    if callee.trim_start_matches("::") == "cudaLaunchKernelEx" && args.len() >= 2 {
        if let Some(mut l) = launch_ex(call, &args, text, function, env) {
            if l.template_args.is_none() {
                if let Some((kernel, template_args)) = kernel_alias(&cx, &l.kernel, at) {
                    (l.kernel, l.template_args) = (kernel, template_args);
                }
            }
            facts.launches.push(l);
        }
        return;
    }
    if callee.trim_start_matches("::") == "cudaFuncSetAttribute" && args.len() >= 3 {
        let k = squash_ws(node_text(args[0], text));
        let k = k
            .trim_start_matches('&')
            .trim_start_matches("(void*)")
            .trim_start_matches("(const void*)")
            .trim_start_matches('&')
            .trim();
        let kernel = strip_template_args(k).trim().to_string();
        // `auto fn = scale<float>; cudaFuncSetAttribute(fn, …)` opts `scale` in.
        let kernel = kernel_alias(&cx, &kernel, at).map_or(kernel, |(k, _)| k);
        facts.func_attributes.push(FuncAttributeCall {
            kernel,
            attribute: squash_ws(node_text(args[1], text)),
            value_text: squash_ws(node_text(args[2], text)),
            value: env
                .fold(&from_node(args[2], text, 0), at)
                .or_else(|| cx.fold_local(args[2], at)),
            range: call.byte_range(),
        });
    }
}

/// What a launch's dimensions are read in: the file's tree, text, declarations and
/// constants, and the function around the launch.
struct DimContext<'a, 't> {
    tree: &'a Ancestry<'t>,
    text: &'a str,
    declarations: &'a [Node<'t>],
    env: &'a Env,
    function: Option<Node<'t>>,
}

/// A launch dimension written as `n`, read at `at`: its x, y, z ([`dim_parts`], or the
/// last `dim3` assignment to a named variable before `at`) folded through constants,
/// locals holding constants and `dim3` constants of the file.
fn launch_dim(cx: &DimContext, n: Node, at: usize) -> LaunchDim {
    let DimContext {
        tree,
        text,
        declarations,
        env,
        function,
    } = *cx;
    // Local `dim3` variables, looked up only when the dimension is a plain name.
    let dim3_vars: Vec<(String, Vec<String>, TextRange)> =
        match function.filter(|_| n.kind_name() == "identifier") {
            Some(func) => declarations
                .iter()
                .filter(|d| func.byte_range().contains(&d.start_byte()))
                .filter(|d| {
                    d.field("type")
                        .is_some_and(|t| matches!(node_text(t, text), "dim3" | "auto"))
                })
                .flat_map(|d| dim3_inits(tree, *d, text))
                .collect(),
            None => Vec::new(),
        };
    let parts = match function
        .filter(|_| n.kind_name() == "identifier")
        .and_then(|f| last_dim3_assignment(f, node_text(n, text), at, text))
    {
        // `b = b2;` with `dim3 b2(16, 1, 1)`: b2's parts.
        Some(Some(parts)) => match parts.as_slice() {
            [one] => dim3_vars
                .iter()
                .find(|(name, _, _)| name == one)
                .map_or(parts.clone(), |(_, args, _)| args.clone()),
            _ => parts,
        },
        // Assigned in a branch the launch is not in: not known here.
        Some(None) => vec![squash_ws(node_text(n, text))],
        None => dim_parts(n, text, at, &dim3_vars),
    };
    // Fields set one by one (`dim3 b; b.x = b.y = 16; b.z = 1;`) on the way to the
    // launch; one set in a branch the launch is not in leaves the dimension unknown.
    let mut parts = parts;
    if let Some(func) = function.filter(|_| n.kind_name() == "identifier") {
        let name = node_text(n, text);
        // Its address handed to a call before the launch (`grid_for(&grid, block, n)`),
        // or the variable itself to one that takes it by reference: the callee may
        // write any field.
        let before = crate::lex::blank_comments(
            text.get(func.start_byte()..at.min(func.end_byte()))
                .unwrap_or_default(),
        );
        if address_taken(&before, name) || passed_by_reference(text, &before, name) {
            parts = vec![squash_ws(node_text(n, text))];
        }
        match dim3_field_assignments(func, name, at, text) {
            Some(sets) if !sets.is_empty() => {
                let declared_bare = declarations.iter().any(|d| {
                    func.byte_range().contains(&d.start_byte())
                        && d.start_byte() < at
                        && d.field("type")
                            .is_some_and(|t| node_text(t, text) == "dim3")
                        && declarators(*d)
                            .iter()
                            .any(|x| x.kind_name() == "identifier" && node_text(*x, text) == name)
                });
                if declared_bare {
                    parts = vec!["1".into(), "1".into(), "1".into()];
                }
                if parts.len() <= 3 && !(parts.len() == 1 && parts[0] == name) {
                    parts.resize(3, "1".into());
                    for (axis, value) in sets {
                        parts[axis] = value;
                    }
                } else {
                    parts = vec![squash_ws(node_text(n, text))];
                }
            }
            Some(_) => {}
            None => {
                parts = vec![format!(
                    "{} (set in a branch)",
                    squash_ws(node_text(n, text))
                )]
            }
        }
    }
    // A part that names a local holding a constant (`int threads = 32;
    // dim3 block(threads);`) folds through the local.
    let value = fold_dim(&parts, at, env).or_else(|| {
        let mut v = [1i64; 3];
        for (i, p) in parts.iter().take(3).enumerate() {
            v[i] = env
                .fold(&from_text(p), at)
                .or_else(|| cx.fold_local_name(p, at))
                .or_else(|| cx.fold_param(p.trim(), 2))?;
        }
        Some(v)
    });
    // A `dim3` constant of the file (`constexpr dim3 kBlock(128);`, also in
    // a namespace: `cfg::kBlock`).
    let value = value.or_else(|| {
        if !matches!(n.kind_name(), "identifier" | "qualified_identifier") {
            return None;
        }
        let name = squash_ws(node_text(n, text)).replace(' ', "");
        let mut v = [1i64; 3];
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            v[i] = env.fold(&Expr::Name(format!("{name}.{axis}")), at)?;
        }
        Some(v)
    });
    LaunchDim {
        text: squash_ws(node_text(n, text)),
        value,
        parts,
    }
}

/// The kernel a launch launches, with the call that chose it where that is not the
/// launch itself.
struct Chosen<'t> {
    /// The kernel's name and template arguments as written.
    kernel: (String, Option<String>),
    /// The call of a lambda whose parameter the launch names as its kernel.
    site: Option<Node<'t>>,
    /// The lambda's parameters, each with that call's argument.
    bound: Vec<(String, Node<'t>)>,
}

/// The kernel a local variable named `name` holds at `at`: `auto k = scale<float>;`,
/// `void (*k)(float*) = &scale;` declared before `at` in the launch's function and never
/// assigned again. `None` where `name` is no such variable.
fn kernel_alias(cx: &DimContext, name: &str, at: usize) -> Option<(String, Option<String>)> {
    let value = cx.local_initializer(name, at)?;
    kernel_named(value, cx.text)
}

/// The kernel an expression names: `scale`, `ns::scale`, `scale<float, 4>`, `&scale`,
/// `(scale)`; `None` for anything else.
fn kernel_named(mut n: Node, text: &str) -> Option<(String, Option<String>)> {
    for _ in 0..4 {
        match n.kind_name() {
            "parenthesized_expression" => n = *named_children(n).first()?,
            "pointer_expression" if node_text(n, text).starts_with('&') => {
                n = n.field("argument")?
            }
            _ => break,
        }
    }
    match n.kind_name() {
        "identifier" | "qualified_identifier" => {
            Some((squash_ws(node_text(n, text)).replace(' ', ""), None))
        }
        "template_function" => Some((
            node_text(n.field("name")?, text).to_string(),
            n.field("arguments").map(|a| squash_ws(node_text(a, text))),
        )),
        _ => None,
    }
}

/// Where the launch's kernel is a parameter of the lambda around it (`auto run =
/// [&](auto kernel, dim3 block) { kernel<<<1, block>>>(x); };`): each call of that
/// lambda after it, in the scope of its variable, with the kernel its
/// argument names (also through a local alias) and its parameters bound to the call's
/// arguments. `None` where the launch names no such parameter.
fn lambda_parameter_calls<'t>(
    tree: &Ancestry<'t>,
    launch: Node<'t>,
    name: &str,
    text: &str,
    cx: &DimContext<'_, 't>,
) -> Option<Vec<Chosen<'t>>> {
    let lambda = tree
        .ancestors(launch)
        .into_iter()
        .find(|n| matches!(n.kind_name(), "lambda_expression" | "function_definition"))
        .filter(|n| n.kind_name() == "lambda_expression")?;
    let params: Vec<String> = named_children(lambda.field("declarator")?.field("parameters")?)
        .into_iter()
        .filter(|p| p.kind_name().contains("parameter_declaration"))
        .map(|p| {
            p.field("declarator")
                .and_then(crate::declarator::declarator_name)
                .map(|n| node_text(n, text).to_string())
                .unwrap_or_default()
        })
        .collect();
    let slot = params.iter().position(|p| p == name)?;
    let binder = lambda
        .parent()
        .filter(|p| p.kind_name() == "init_declarator")?;
    let var = binder
        .field("declarator")
        .filter(|d| d.kind_name() == "identifier")?;
    let var = node_text(var, text);
    // The calls after the lambda in the block that declares its variable (the walk
    // that found the launch keeps no other calls).
    let block = binder.parent().and_then(|d| d.parent())?;
    let mut calls = Vec::new();
    preorder(block, |n| {
        if n.end_byte() <= lambda.end_byte() {
            return false;
        }
        if n.kind_name() == "call_expression"
            && n.start_byte() >= lambda.end_byte()
            && n.field("function")
                .is_some_and(|f| f.kind_name() == "identifier" && node_text(f, text) == var)
        {
            calls.push(n);
        }
        true
    });
    let mut out = Vec::new();
    for c in &calls {
        let args: Vec<Node> = crate::util::call_arguments(*c);
        let Some(kernel) = args.get(slot).and_then(|a| {
            let named = kernel_named(*a, text)?;
            match named {
                (alias, None) => {
                    Some(kernel_alias(cx, &alias, c.start_byte()).unwrap_or((alias, None)))
                }
                named => Some(named),
            }
        }) else {
            continue;
        };
        out.push(Chosen {
            kernel,
            site: Some(*c),
            bound: params
                .iter()
                .cloned()
                .zip(args.iter().copied())
                .filter(|(p, _)| !p.is_empty())
                .collect(),
        });
    }
    Some(out)
}

/// The launch `cudaLaunchKernelEx(&cfg, kernel, args…)` makes, its grid, block and
/// dynamic shared memory read from the last assignments to `cfg.gridDim`,
/// `cfg.blockDim` and `cfg.dynamicSmemBytes` (or `cfg->…`, or designated initialisers
/// `.dynamicSmemBytes = …` in `cfg`'s declaration) before the call in its function.
fn launch_ex(
    call: Node,
    args: &[Node],
    text: &str,
    function: Option<Node>,
    env: &Env,
) -> Option<LaunchSite> {
    let at = call.start_byte();
    let cfg = squash_ws(node_text(args[0], text));
    let cfg = cfg.trim_start_matches('&').trim();
    if cfg.is_empty() || !cfg.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let written = squash_ws(node_text(args[1], text));
    let k = written
        .trim_start_matches('&')
        .trim_start_matches("(void*)")
        .trim_start_matches("(const void*)")
        .trim_start_matches('&')
        .trim();
    let (kernel, template_args) = match k.find('<').filter(|_| k.ends_with('>')) {
        Some(open) => (k[..open].trim().to_string(), Some(k[open..].to_string())),
        None => (k.to_string(), None),
    };
    if kernel.is_empty()
        || !kernel
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
    {
        return None;
    }
    let func = function?;
    let before = text.get(func.start_byte()..at)?;
    // The last `cfg.field = value;` (or `cfg->field`, or `.field = value` inside the
    // declaration of `cfg`) before the call.
    let field = |name: &str| -> Option<String> {
        let mut found = None;
        for (i, _) in before.match_indices(name) {
            let head = before[..i].trim_end();
            let owned = head.ends_with(&format!("{cfg}."))
                || head.ends_with(&format!("{cfg}->"))
                || (head.ends_with('.')
                    && before[..i].rfind(cfg).is_some_and(|d| {
                        !before[d..i].contains(';') && before[d..i].contains('{')
                    }));
            let end = i + name.len();
            if !owned || before[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = before[end..].trim_start();
            let Some(value) = rest.strip_prefix('=').filter(|r| !r.starts_with('=')) else {
                continue;
            };
            let stop = value.find([';', '}']).unwrap_or(value.len());
            let value = value[..stop].trim().trim_end_matches(',').trim();
            found = Some(squash_ws(value));
        }
        found
    };
    let range = Some(func.byte_range());
    let dim = |name: &str| match field(name) {
        Some(written) => {
            let parts = dim_parts_of_text(&written, text, at, range.clone());
            LaunchDim {
                value: fold_dim(&parts, at, env),
                text: written,
                parts,
            }
        }
        None => LaunchDim {
            text: String::new(),
            value: None,
            parts: Vec::new(),
        },
    };
    let shared_bytes_text = field("dynamicSmemBytes");
    Some(LaunchSite {
        kernel,
        template_args,
        range: call.byte_range(),
        grid: dim("gridDim"),
        block: dim("blockDim"),
        shared_bytes: shared_bytes_text
            .as_deref()
            .and_then(|t| env.fold(&from_text(t), at)),
        shared_bytes_text,
        stream: field("stream"),
        args: args[2..]
            .iter()
            .map(|a| squash_ws(node_text(*a, text)))
            .collect(),
        arg_locals: Vec::new(),
        written: None,
        function: function_name(func).map(|n| node_text(n, text).to_string()),
        caller_params: Vec::new(),
        caller_bound: Vec::new(),
        caller_value_params: function.map(|f| value_params(f, text)).unwrap_or_default(),
    })
}

impl<'t> DimContext<'_, 't> {
    /// The value of `n` when it names a local that is not `const` but holds a constant:
    /// declared with a foldable initialiser before `at`, in the function and in a scope
    /// around `at`, and never assigned, incremented or address-taken anywhere in the
    /// function (see [`mutated`]). `size_t bytes = 64 * 1024; k<<<g, b, bytes>>>(…);`
    /// folds; a local reassigned (in a branch or not) or declared without an initialiser
    /// stays unknown.
    fn fold_local(&self, n: Node, at: usize) -> Option<i64> {
        if n.kind_name() != "identifier" {
            return None;
        }
        self.fold_local_name(node_text(n, self.text), at)
    }

    /// [`DimContext::fold_local`] for a name read from text (a launch dimension's part).
    /// The value of `name` where it is a by-value parameter of the host function around
    /// the launch that the function never assigns, and every call of that function in the
    /// file passes an argument that folds to one value (`driver(A, n, ntcol)` with
    /// `const int ntcol = 1` in its only caller), followed through `depth` more callers.
    fn fold_param(&self, name: &str, depth: usize) -> Option<i64> {
        let text = self.text;
        if name.is_empty() || !name.bytes().all(crate::util::is_ident_byte) {
            return None;
        }
        let func = self.function?;
        let declarator = func.field("declarator")?;
        if declarator.kind_name() != "function_declarator" {
            return None;
        }
        let fname = node_text(declarator.field("declarator")?, text);
        let fname = fname.rsplit("::").next().unwrap_or(fname).trim();
        let index = named_children(declarator.field("parameters")?)
            .into_iter()
            .filter(|p| p.kind_name() == "parameter_declaration")
            .position(|p| {
                p.field("declarator")
                    .is_some_and(|d| d.kind_name() == "identifier" && node_text(d, text) == name)
            })?;
        let body = func.field("body")?;
        if super::written_anywhere(&text[body.byte_range()], name) {
            return None;
        }
        let bytes = text.as_bytes();
        let mut value = None;
        let mut from = 0;
        while let Some(at) = text[from..].find(fname).map(|i| i + from) {
            from = at + fname.len();
            let end = at + fname.len();
            if (at > 0 && crate::util::is_ident_byte(bytes[at - 1]))
                || bytes
                    .get(end)
                    .is_some_and(|b| crate::util::is_ident_byte(*b))
                || declarator.byte_range().contains(&at)
            {
                continue;
            }
            let node = self.tree.node_spanning(&(at..end))?;
            let call = self
                .tree
                .ancestors(node)
                .into_iter()
                .take(4)
                .find(|n| n.kind_name() == "call_expression");
            let Some(call) = call else {
                // A declaration of the function (`static void driver(…);`) calls nothing;
                // any other use (its address taken) hides the calls.
                let declares = self
                    .tree
                    .ancestors(node)
                    .into_iter()
                    .take(3)
                    .any(|n| n.kind_name() == "function_declarator");
                if declares {
                    continue;
                }
                return None;
            };
            let args: Vec<Node> = named_children(call.field("arguments")?)
                .into_iter()
                .filter(|c| c.kind_name() != "comment")
                .collect();
            let arg = *args.get(index)?;
            let caller = self
                .tree
                .ancestors(call)
                .into_iter()
                .find(|n| n.kind_name() == "function_definition");
            let cx = DimContext {
                function: caller,
                ..*self
            };
            let arg_text = node_text(arg, text).trim();
            let v = self
                .env
                .fold(&from_node(arg, text, 0), call.start_byte())
                .or_else(|| cx.fold_local_name(arg_text, call.start_byte()))
                .or_else(|| {
                    (depth > 0)
                        .then(|| cx.fold_param(arg_text, depth - 1))
                        .flatten()
                })?;
            if *value.get_or_insert(v) != v {
                return None;
            }
        }
        value
    }

    fn fold_local_name(&self, name: &str, at: usize) -> Option<i64> {
        let value = self.local_initializer(name, at)?;
        let value = match value.kind_name() {
            // `size_t bytes{…}` and `size_t bytes(…)`.
            "initializer_list" | "argument_list" => match named_children(value)
                .into_iter()
                .filter(|c| c.kind_name() != "comment")
                .collect::<Vec<_>>()
                .as_slice()
            {
                [one] => *one,
                _ => return None,
            },
            _ => value,
        };
        self.env.fold(&from_node(value, self.text, 0), at)
    }

    /// The initialiser of the local `name` as it holds at `at`: the innermost declaration
    /// of `name` in the function before `at` whose scope holds `at` (`int threads = 32;`,
    /// `auto k = scale<4>;`, `void (*k)(float*) = &scale;`), where nothing in the function
    /// assigns `name` again or takes its address. `None` for anything else.
    fn local_initializer(&self, name: &str, at: usize) -> Option<Node<'t>> {
        let text = self.text;
        if name.is_empty() || !name.bytes().all(crate::util::is_ident_byte) {
            return None;
        }
        let func = self.function?;
        // (value, scope, name at) of the innermost declaration so far.
        let mut found: Option<(Node<'t>, TextRange, usize)> = None;
        for d in self
            .declarations
            .iter()
            .filter(|d| func.byte_range().contains(&d.start_byte()) && d.end_byte() <= at)
        {
            for decl in declarators(*d) {
                if decl.kind_name() != "init_declarator" {
                    continue;
                }
                let (Some(id), Some(value)) = (
                    decl.field("declarator")
                        .and_then(crate::declarator::declarator_name),
                    decl.field("value"),
                ) else {
                    continue;
                };
                if id.kind_name() != "identifier" || node_text(id, text) != name {
                    continue;
                }
                let scope = scope_of(self.tree, *d);
                if scope.contains(&at)
                    && found
                        .as_ref()
                        .is_none_or(|(_, s, _)| scope.len() <= s.len())
                {
                    found = Some((value, scope, id.start_byte()));
                }
            }
        }
        let (value, _, name_at) = found?;
        // A mention in a comment changes nothing.
        let body = crate::lex::blank_comments(text.get(func.byte_range())?);
        if mutated(&body, name, name_at - func.start_byte())
            || passed_by_reference(text, &body, name)
        {
            return None;
        }
        Some(value)
    }
}

/// Whether `body` may change the variable `name` anywhere but at its declaration (the
/// word at byte `declared`): an assignment (`=`, `+=`, `<<=`, …), `++`/`--` on either side,
/// or `&name` (its address taken, so a callee may write it). Textual and cautious: a
/// bitwise `x & name` also counts (the caller blanks comments first).
fn mutated(body: &str, name: &str, declared: usize) -> bool {
    let bytes = body.as_bytes();
    let is_ident = crate::util::is_ident_byte;
    for (i, _) in body.match_indices(name) {
        let end = i + name.len();
        if i == declared
            || (i > 0 && is_ident(bytes[i - 1]))
            || bytes.get(end).is_some_and(|&b| is_ident(b))
        {
            continue;
        }
        let before = body[..i].trim_end();
        let after = body[end..].trim_start();
        let assigns = [
            "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
        ]
        .iter()
        .any(|op| after.starts_with(op) && !after[op.len()..].starts_with('='));
        let steps = after.starts_with("++")
            || after.starts_with("--")
            || before.ends_with("++")
            || before.ends_with("--");
        let address = before.ends_with('&') && !before.ends_with("&&");
        if assigns || steps || address {
            return true;
        }
    }
    false
}

/// Whether `body` takes the address of the variable `name` (`&name`, not `a && name`).
fn address_taken(body: &str, name: &str) -> bool {
    let n = name.len().max(1);
    std::iter::successors(crate::lex::find_word(body, name, 0), |&at| {
        crate::lex::find_word(body, name, at + n)
    })
    .any(|i| takes_address(&body[..i]))
}

/// Whether the text `before` a name ends in a unary `&` (after an operator or an
/// opening: `f(&n)`, `p = &n`), not a bit-and (`a & n`) or `&&`.
fn takes_address(before: &str) -> bool {
    let before = before.trim_end();
    before.ends_with('&') && !before.ends_with("&&") && {
        let prev = before[..before.len() - 1].trim_end();
        prev.is_empty() || prev.ends_with(['(', ',', '=', '{', ';', '?', ':', '['])
    }
}

/// Callees known to take their arguments by value (or to be no call at all).
const BY_VALUE: [&str; 24] = [
    "printf", "fprintf", "sprintf", "snprintf", "puts", "assert", "sizeof", "min", "max", "fmin",
    "fmax", "fminf", "fmaxf", "ceil", "floor", "abs", "sqrt", "pow", "exit", "malloc", "calloc",
    "dim3", "return", "if",
];

/// Whether `body` (of a function of the file `text`) passes the variable `name` whole to
/// a call that may take it by non-`const` reference and write it (`pick(n, threads,
/// blocks)` with `void pick(unsigned n, unsigned& threads, unsigned& blocks)`): the
/// callee's parameter at that place is such a reference where the file defines or
/// declares it, or the file does not show the callee (a library's or another file's
/// function, other than the C and CUDA runtime's and `std::`'s, which take values).
/// Launch arguments and configurations are values.
fn passed_by_reference(text: &str, body: &str, name: &str) -> bool {
    use crate::lex::find_word;
    // Each whole-word occurrence of `word` in `s`.
    let words = |s: &'_ str, word: &str| {
        let n = word.len().max(1);
        std::iter::successors(find_word(s, word, 0), move |&at| find_word(s, word, at + n))
            .collect::<Vec<usize>>()
    };
    let bytes = body.as_bytes();
    for i in words(body, name) {
        let end = i + name.len();
        let before = body[..i].trim_end();
        let after = body[end..].trim_start();
        if !(before.ends_with('(') || before.ends_with(','))
            || !(after.starts_with(',') || after.starts_with(')'))
        {
            continue;
        }
        // The open parenthesis of the list the argument is in, and its place in it.
        let mut depth = 0i32;
        let mut index = 0usize;
        let mut open = None;
        for (k, &b) in bytes[..i].iter().enumerate().rev() {
            match b {
                b')' | b']' | b'}' => depth += 1,
                b'(' | b'[' | b'{' if depth > 0 => depth -= 1,
                b'(' => {
                    open = Some(k);
                    break;
                }
                b'[' | b'{' | b';' => break,
                b',' if depth == 0 => index += 1,
                _ => {}
            }
        }
        let Some(open) = open else {
            continue;
        };
        let head = body[..open].trim_end();
        // A launch's arguments (`k<<<g, b>>>(x)`) are values.
        if head.ends_with(">>>") || head.ends_with("> > >") {
            continue;
        }
        // A template's call (`config<T>(n, blocks)`): the callee is the name before its
        // template arguments.
        let head = match trailing_template_args(head) {
            Some(k) if head[..k].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') => {
                head[..k].trim_end()
            }
            _ => head,
        };
        let callee_start = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |p| p + 1);
        let callee = &head[callee_start..];
        // `dim3 block(threads)`: a declaration's initialiser, not a call.
        if head[..callee_start]
            .trim_end()
            .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '>')
        {
            continue;
        }
        let short = callee.rsplit("::").next().unwrap_or(callee);
        if short.is_empty()
            || callee.starts_with("std::")
            || short.starts_with("cuda")
            || short.starts_with("__")
            || BY_VALUE.contains(&short)
        {
            continue;
        }
        // The callee's parameter lists in the file: a definition or declaration.
        let mut seen = false;
        for at in words(text, short) {
            let rest = &text[at + short.len()..];
            let Some(paren) = rest
                .find(|c: char| !c.is_whitespace())
                .filter(|&p| rest.as_bytes()[p] == b'(')
            else {
                continue;
            };
            let open_at = at + short.len() + paren;
            let Some(close) = crate::lex::matching_paren(text, open_at) else {
                continue;
            };
            // A parameter list is followed by `{`, `;`, `const` or an attribute, and
            // its items have types: at least two words or a `&`/`*`.
            let tail = text[close + 1..].trim_start();
            if !(tail.starts_with('{') || tail.starts_with(';') || tail.starts_with("const")) {
                continue;
            }
            let params = join_template_args(split_args(&text[open_at + 1..close]));
            let Some(p) = params.get(index) else {
                continue;
            };
            let typed = p.split_whitespace().count() >= 2 || p.contains(['&', '*']);
            if !typed {
                continue;
            }
            seen = true;
            let reference = p.contains('&') && !p.contains("&&") && !p.contains("const");
            if reference {
                return true;
            }
        }
        if !seen {
            return true;
        }
    }
    false
}

/// `dim3 b(32, 8);`, `dim3 b = dim3(32, 8);` and `dim3 b{32, 8};` declarators.
pub(crate) fn dim3_inits(
    tree: &Ancestry,
    decl: Node,
    text: &str,
) -> Vec<(String, Vec<String>, TextRange)> {
    let scope = scope_of(tree, decl);
    let is_auto = decl
        .field("type")
        .is_some_and(|t| node_text(t, text) == "auto");
    let texts = |n: Node| -> Vec<String> {
        named_children(n)
            .into_iter()
            .filter(|a| a.kind_name() != "comment")
            .map(|a| squash_ws(node_text(a, text)))
            .collect()
    };
    let mut out = Vec::new();
    for d in declarators(decl) {
        if d.kind_name() == "function_declarator" {
            // `dim3 block(TILE, ROWS);` parses as a function declaration.
            let (Some(n), Some(params), false) =
                (d.field("declarator"), d.field("parameters"), is_auto)
            else {
                continue;
            };
            out.push((node_text(n, text).to_string(), texts(params), scope.clone()));
            continue;
        }
        if d.kind_name() != "init_declarator" {
            continue;
        }
        let (Some(n), Some(v)) = (d.field("declarator"), d.field("value")) else {
            continue;
        };
        let args = match (dim3_call_args(v, text), v.kind_name()) {
            (Some(args), _) => args,
            // `auto cfg = make_config(128);` is not known to be a `dim3`.
            (None, _) if is_auto => continue,
            (None, "argument_list" | "initializer_list") => texts(v),
            (None, _) => vec![squash_ws(node_text(v, text))],
        };
        out.push((node_text(n, text).to_string(), args, scope.clone()));
    }
    out
}

/// A macro whose body is a launch, `#define LAUNCH(k, g, b) k<<<g, b>>>(x)` (or written
/// `k< < <g, b> > >(x)`): the kernel, the configuration and the kernel's arguments as the
/// body writes them, in terms of the macro's parameters.
struct Launcher {
    kernel: String,
    config: Vec<String>,
    args: Vec<String>,
}

/// The launch in `def`'s body, if its body has one.
fn launcher(def: &crate::MacroDef) -> Option<Launcher> {
    if !def.body.contains('<') {
        return None;
    }
    let body = crate::macros::squash_chevrons(&def.body);
    let open = body.find("<<<")?;
    let close = open + 3 + body[open + 3..].find(">>>")?;
    let before = body[..open].trim_end();
    // Template arguments written after the kernel's name, `k<(K) / 4>`.
    let name_end = match before.ends_with('>') {
        true => trailing_template_args(before)?,
        false => before.len(),
    };
    let name_part = before[..name_end].trim_end();
    let start = name_part
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .map_or(0, |i| i + 1);
    if start == name_part.len() {
        return None;
    }
    let kernel = format!("{}{}", &name_part[start..], &before[name_end..]);
    if kernel.is_empty() {
        return None;
    }
    let config = split_args(&body[open + 3..close]);
    let after = body[close + 3..].trim_start().strip_prefix('(')?;
    let args = split_args(&after[..list_end(after, 0)?]);
    Some(Launcher {
        kernel,
        config,
        args,
    })
}

/// Where the template arguments that end `s` start (`config<T>` → the `<`): `None`
/// unless `s` ends with a `>` that a `<` before it opens.
fn trailing_template_args(s: &str) -> Option<usize> {
    let inner = s.strip_suffix('>')?;
    let mut depth = 1i32;
    for (k, c) in inner.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The function definition around `at` (a host function too), by the tree.
fn function_around<'t>(file: &'t SourceFile, at: usize) -> Option<Node<'t>> {
    let mut n = file.root_at(at)?.descendant_for_byte_range(at, at)?;
    loop {
        if n.kind_name() == "function_definition" {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// A launch dimension written as `written` in a macro's text, used at `at` in
/// `function`: its parts ([`dim_parts_of_text`]) and their folded value.
fn written_dim(
    written: &str,
    text: &str,
    at: usize,
    function: Option<TextRange>,
    env: &Env,
) -> LaunchDim {
    let parts = dim_parts_of_text(written, text, at, function);
    LaunchDim {
        value: fold_dim(&parts, at, env),
        text: written.to_string(),
        parts,
    }
}

/// `s` split at its top-level commas (parentheses, brackets and braces nest), squashed.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(squash_ws(&cur));
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(squash_ws(&cur));
    }
    out
}

/// Arguments split at commas inside a template's angle brackets joined again:
/// `cudaFuncSetAttribute(k<A, B>, attr, bytes)` has three arguments, not four. An
/// argument with more `<` than `>` (shifts and `<<<` aside) takes the next ones until they
/// balance.
fn join_template_args(args: Vec<String>) -> Vec<String> {
    let open = |s: &str| {
        let t = s.replace("<<", "").replace(">>", "");
        t.matches('<').count() as i64 - t.matches('>').count() as i64
    };
    let mut out: Vec<String> = Vec::with_capacity(args.len());
    let mut depth = 0;
    for a in args {
        if depth > 0 {
            if let Some(last) = out.last_mut() {
                last.push_str(", ");
                last.push_str(&a);
                depth += open(&a);
                continue;
            }
        }
        depth = open(&a).max(0);
        out.push(a);
    }
    out
}

/// `text` with each whole-word parameter replaced by its argument (`__VA_ARGS__` by the
/// arguments left over).
fn substitute(text: &str, params: &[String], args: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let replaced = if word == "__VA_ARGS__" {
            params
                .iter()
                .position(|p| p == "...")
                .map(|i| args.get(i..).unwrap_or_default().join(", "))
        } else {
            params
                .iter()
                .position(|p| p == word)
                .and_then(|i| args.get(i).cloned())
        };
        out.push_str(replaced.as_deref().unwrap_or(word));
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The x, y, z of a launch dimension written in a macro's argument: the arguments of
/// `dim3(x, y)` or `dim3{x, y}`, the initialiser of a `dim3` variable declared before
/// `at` in `function` (`dim3 block(16, 16);`), or the expression itself.
fn dim_parts_of_text(dim: &str, text: &str, at: usize, function: Option<TextRange>) -> Vec<String> {
    let d = dim.trim();
    if let Some(inner) = d.strip_prefix("dim3").map(str::trim_start).and_then(|r| {
        r.strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .or_else(|| r.strip_prefix('{').and_then(|r| r.strip_suffix('}')))
    }) {
        return split_args(inner);
    }
    let is_name = !d.is_empty() && d.chars().all(|c| c.is_alphanumeric() || c == '_');
    if let (true, Some(f)) = (is_name, function) {
        // Comments blanked: a word in one is no declaration or assignment.
        let scope =
            crate::lex::blank_comments(text.get(f.start..at.min(f.end)).unwrap_or_default());
        let scope = scope.as_str();
        // The last `dim3 NAME(…)`, `dim3 NAME{…}` or `dim3 NAME = dim3(…)` before the use.
        let declared_at = |i: usize| -> Option<Vec<String>> {
            let rest = scope[i + 4..].trim_start();
            let rest = rest.strip_prefix(d)?;
            if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                return None;
            }
            let rest = rest.trim_start();
            let rest = rest
                .strip_prefix('=')
                .map(|r| {
                    r.trim_start()
                        .strip_prefix("dim3")
                        .unwrap_or(r)
                        .trim_start()
                })
                .unwrap_or(rest);
            let (open, close) = match rest.chars().next()? {
                '(' => ('(', ')'),
                '{' => ('{', '}'),
                _ => return None,
            };
            let inner = rest.strip_prefix(open)?;
            let end = if open == '(' {
                list_end(inner, 0)?
            } else {
                inner.find(close)?
            };
            Some(split_args(&inner[..end]))
        };
        let declared = scope
            .match_indices("dim3")
            .filter_map(|(i, _)| Some((i, declared_at(i)?)))
            .last();
        // A later `NAME = dim3(…)` (or `= {…}`) before the use: its value, when it is a
        // statement of a block the use is still inside; one inside a branch that closed
        // before the use leaves the value unknown.
        let assigned = scope
            .match_indices(d)
            .filter_map(|(i, _)| {
                let before = scope[..i].trim_end();
                if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
                    || before.ends_with("->")
                    || scope[i + d.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    return None;
                }
                let rest = scope[i + d.len()..].trim_start();
                let rest = rest.strip_prefix('=').filter(|r| !r.starts_with('='))?;
                Some((i, dim3_value(rest.trim_start())))
            })
            .last();
        let declared_pos = declared.as_ref().map(|(j, _)| *j);
        // A field written after the value was given (`threads.x = …;` on each path of
        // an `if`): that part is not the one given, and stays a name nothing folds.
        let fields_written = |mut parts: Vec<String>, from: usize| -> Vec<String> {
            for (k, axis) in ["x", "y", "z"].iter().enumerate() {
                let field = format!("{d}.{axis}");
                if mutated(&scope[from..], &field, usize::MAX) {
                    parts.resize(parts.len().max(k + 1), "1".to_string());
                    parts[k] = field;
                }
            }
            parts
        };
        match (declared, assigned) {
            (_, Some((i, value))) if declared_pos.is_none_or(|j| i > j) => {
                let mut depth = 0i32;
                for b in scope[i..].bytes() {
                    match b {
                        b'{' => depth += 1,
                        b'}' => depth -= 1,
                        _ => {}
                    }
                    if depth < 0 {
                        return vec![squash_ws(d)];
                    }
                }
                if let Some(parts) = value {
                    return fields_written(parts, i);
                }
            }
            (Some((j, parts)), _) => return fields_written(parts, j),
            _ => {}
        }
    }
    vec![squash_ws(d)]
}

/// The parts of `dim3(…)`, `dim3{…}` or `{…}` at the start of `rest`.
fn dim3_value(rest: &str) -> Option<Vec<String>> {
    let rest = rest.strip_prefix("dim3").unwrap_or(rest).trim_start();
    let (open, close) = match rest.chars().next()? {
        '(' => ('(', ')'),
        '{' => ('{', '}'),
        _ => return None,
    };
    let inner = rest.strip_prefix(open)?;
    let end = if open == '(' {
        list_end(inner, 0)?
    } else {
        inner.find(close)?
    };
    Some(split_args(&inner[..end]))
}

/// The uses of macro `def` in `text` outside `#` lines and line comments: where each
/// starts, its arguments (none for an object-like macro) and where it ends.
/// Where each `#define` of the text is in force, in order: (name, from the end of its
/// directive to the next `#define` or `#undef` of the name, or the end of the text).
fn definition_spans(text: &str) -> Vec<(String, TextRange)> {
    let mut out: Vec<(String, TextRange)> = Vec::new();
    let name_of = |rest: &str| -> String {
        rest.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (start, end, d) in crate::macros::directives(text) {
        let (name, define) = if let Some(rest) = d.strip_prefix("define") {
            (name_of(rest), true)
        } else if let Some(rest) = d.strip_prefix("undef") {
            (name_of(rest), false)
        } else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        if let Some((_, r)) = out
            .iter_mut()
            .rev()
            .find(|(n, r)| *n == name && r.end == text.len())
        {
            r.end = start;
        }
        if define {
            out.push((name, end..text.len()));
        }
    }
    out
}

fn macro_uses(text: &str, def: &crate::MacroDef) -> Vec<(usize, Vec<String>, usize)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(def.name.as_str()) {
        let end = at + def.name.len();
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        if text[..at].ends_with(ident) || text[end..].starts_with(ident) {
            continue;
        }
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &text[line_start..at];
        if line.trim_start().starts_with('#') || line.contains("//") {
            continue;
        }
        match &def.params {
            Some(_) => {
                let Some(rest) = text[end..].trim_start().strip_prefix('(') else {
                    continue;
                };
                let open = text.len() - rest.len();
                let Some(close) = list_end(rest, 0) else {
                    continue;
                };
                out.push((at, split_args(&rest[..close]), open + close + 1));
            }
            None => out.push((at, Vec::new(), end)),
        }
    }
    out
}

/// The `cudaFuncSetAttribute(k, attribute, value)` calls written in macros (the file's
/// own and its headers'), as [`FuncAttributeCall`]s at each use of the macro, the use's
/// arguments substituted for the parameters: `SET_SMEM(my_kernel, 64 * 1024);` with
/// `#define SET_SMEM(k, n) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n)`
/// opts `my_kernel` in, as does a launch macro that raises the attribute before its
/// `<<<>>>`.
pub(crate) fn macro_func_attributes(file: &SourceFile, facts: &mut FileFacts) {
    const CALL: &str = "cudaFuncSetAttribute";
    let text = file.text();
    let own = if text.contains("define") && text.contains(CALL) {
        crate::macros::macro_definitions(text)
    } else {
        Vec::new()
    };
    let mut defs: Vec<&crate::MacroDef> = own.iter().filter(|m| m.body.contains(CALL)).collect();
    if let Some(prelude) = &facts.prelude {
        for m in &prelude.macros {
            if m.body.contains(CALL) && !own.iter().any(|o| o.name == m.name) {
                defs.push(m);
            }
        }
    }
    let mut found = Vec::new();
    for def in defs {
        // Each call in the body: its three arguments as written.
        let calls: Vec<Vec<String>> = def
            .body
            .match_indices(CALL)
            .filter_map(|(i, _)| {
                let rest = def.body[i + CALL.len()..].trim_start().strip_prefix('(')?;
                let args = join_template_args(split_args(&rest[..list_end(rest, 0)?]));
                (args.len() >= 3).then_some(args)
            })
            .collect();
        if calls.is_empty() {
            continue;
        }
        let params = def.params.clone().unwrap_or_default();
        for (at, args, end) in macro_uses(text, def) {
            for call in &calls {
                let sub = |s: &str| squash_ws(&substitute(s, &params, &args));
                let k = sub(&call[0]);
                let k = k
                    .trim_start_matches('&')
                    .trim_start_matches("(void*)")
                    .trim_start_matches("(const void*)")
                    .trim_start_matches('&')
                    .trim();
                let value_text = sub(&call[2]);
                found.push(FuncAttributeCall {
                    kernel: strip_template_args(k).trim().to_string(),
                    attribute: sub(&call[1]),
                    value: facts.env.fold(&from_text(&value_text), at),
                    value_text,
                    range: at..end,
                });
            }
        }
    }
    if !found.is_empty() {
        facts.func_attributes.extend(found);
        facts.func_attributes.sort_by_key(|a| a.range.start);
    }
}

/// Launches written inside the file's macros or its headers' (`#define LAUNCH(k, g, b)
/// k<<<g, b>>>(…)`): each use of such a macro outside a directive is a [`LaunchSite`]
/// whose kernel and dimensions are the body's with the call's arguments in place of the
/// parameters, folded at the call. The file's own definition of a name wins.
pub(crate) fn macro_launches(file: &SourceFile, facts: &mut FileFacts) {
    let text = file.text();
    let own = if text.contains("define") && text.contains('<') {
        crate::macros::macro_definitions(text)
    } else {
        Vec::new()
    };
    // Each of the file's own definitions holds from its `#define` to the next `#define`
    // or `#undef` of its name: a use is expanded with the definition in force there.
    let spans = definition_spans(text);
    let mut launchers: Vec<(crate::MacroDef, Launcher, Option<TextRange>)> = own
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let k = own[..i].iter().filter(|o| o.name == m.name).count();
            let span = spans
                .iter()
                .filter(|(n, _)| *n == m.name)
                .nth(k)
                .map(|(_, r)| r.clone());
            Some((m.clone(), launcher(m)?, span))
        })
        .collect();
    if let Some(prelude) = &facts.prelude {
        for m in &prelude.macros {
            if own.iter().any(|o| o.name == m.name)
                || launchers.iter().any(|(d, _, _)| d.name == m.name)
            {
                continue;
            }
            if let Some(l) = launcher(m) {
                launchers.push((m.clone(), l, None));
            }
        }
    }
    if launchers.is_empty() {
        return;
    }
    let mut found = Vec::new();
    for (def, l, span) in &launchers {
        for (at, args, range_end) in macro_uses(text, def) {
            if span.as_ref().is_some_and(|r| !r.contains(&at)) {
                continue;
            }
            let ident = |c: char| c.is_alphanumeric() || c == '_';
            let params = def.params.clone().unwrap_or_default();
            let sub = |s: &str| squash_ws(&substitute(s, &params, &args));
            let kernel_text = sub(&l.kernel);
            let (kernel, template_args) = match kernel_text.find('<') {
                Some(i) => (
                    kernel_text[..i].trim().to_string(),
                    Some(kernel_text[i..].to_string()),
                ),
                None => (kernel_text.clone(), None),
            };
            if kernel.is_empty() || !kernel.chars().all(|c| ident(c) || c == ':') {
                continue;
            }
            // The function around the use (a host function too), by the tree.
            let function = function_around(file, at).map(|f| {
                let name = function_name(f)
                    .map(|n| node_text(n, text).to_string())
                    .unwrap_or_default();
                (name, f.byte_range())
            });
            let dim = |i: usize| match l.config.get(i) {
                Some(c) => written_dim(
                    &sub(c),
                    text,
                    at,
                    function.as_ref().map(|f| f.1.clone()),
                    &facts.env,
                ),
                None => LaunchDim {
                    text: String::new(),
                    value: None,
                    parts: Vec::new(),
                },
            };
            let shared_bytes_text = l.config.get(2).map(|c| sub(c));
            found.push(LaunchSite {
                kernel,
                template_args,
                range: at..range_end,
                grid: dim(0),
                block: dim(1),
                shared_bytes: shared_bytes_text
                    .as_deref()
                    .and_then(|t| facts.env.fold(&from_text(t), at)),
                shared_bytes_text,
                stream: l.config.get(3).map(|c| sub(c)),
                args: l.args.iter().map(|a| sub(a)).collect(),
                arg_locals: Vec::new(),
                written: None,
                function: function.map(|f| f.0),
                caller_params: Vec::new(),
                caller_bound: Vec::new(),
                caller_value_params: Vec::new(),
            });
        }
    }
    facts.launches.extend(found);
    facts.launches.sort_by_key(|l| l.range.start);
}

/// Launches whose configuration is one call of a function-like macro that writes two to
/// four parts (`k<<<LAUNCH_1D(n, 256)>>>(…)` with `#define LAUNCH_1D(n, b) CEIL_DIV(n, b),
/// b, 0, stream`): their grid, block, shared bytes and stream, from the macro's body with
/// the call's arguments. The macro is the file's own or one of its headers'.
pub(crate) fn macro_configurations(file: &SourceFile, facts: &mut FileFacts) {
    let written = |l: &LaunchSite| l.block.text.is_empty() && l.grid.text.ends_with(')');
    if !facts.launches.iter().any(written) {
        return;
    }
    let text = file.text();
    let own = crate::macros::macro_definitions(text);
    let env = facts.env.clone();
    let mut found: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, l) in facts.launches.iter().enumerate() {
        if !written(l) {
            continue;
        }
        let g = &l.grid.text;
        let Some(open) = g.find('(') else { continue };
        let name = g[..open].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let after = &g[open + 1..];
        // The call is the whole configuration: its `)` is the text's last.
        if list_end(after, 0).is_none_or(|end| end + 1 != after.len()) {
            continue;
        }
        let def = own.iter().rfind(|m| m.name == name).or_else(|| {
            facts
                .prelude
                .as_ref()
                .and_then(|p| p.macros.iter().find(|m| m.name == name))
        });
        let Some((def, params)) = def.and_then(|d| Some((d, d.params.as_ref()?))) else {
            continue;
        };
        let args = split_args(&after[..after.len() - 1]);
        let parts = split_args(&substitute(&def.body, params, &args));
        if (2..=4).contains(&parts.len()) {
            found.push((i, parts));
        }
    }
    for (i, parts) in found {
        let at = facts.launches[i].range.start;
        let function = function_around(file, at).map(|f| f.byte_range());
        let dim = |w: &String| written_dim(w, text, at, function.clone(), &env);
        let l = &mut facts.launches[i];
        l.grid = dim(&parts[0]);
        l.block = dim(&parts[1]);
        l.shared_bytes = parts.get(2).and_then(|t| env.fold(&from_text(t), at));
        l.shared_bytes_text = parts.get(2).cloned();
        l.stream = parts.get(3).cloned();
    }
}

impl crate::SourceFile {
    /// The name (as written) of the function definition around `offset`, with its
    /// parameters in order, each by name where its body never writes it and it is no
    /// reference, else empty (as [`LaunchSite::caller_value_params`] gives them for a
    /// launch); `None` outside every function.
    pub fn value_params_at(&self, offset: usize) -> Option<(String, Vec<String>)> {
        let root = self.root_at(offset)?;
        let f = crate::util::chain_at(root, offset)
            .into_iter()
            .find(|n| n.kind_name() == "function_definition")?;
        let name = crate::declarator::function_name(f).map(|n| node_text(n, self.text()))?;
        Some((name.to_string(), value_params(f, self.text())))
    }
}

/// The parameters of function definition `def`, in order, each by name where the body
/// never writes it, else empty ([`LaunchSite::caller_value_params`]).
fn value_params(def: Node, text: &str) -> Vec<String> {
    let body = def
        .field("body")
        .map(|b| node_text(b, text))
        .unwrap_or_default();
    crate::declarator::function_declarator(def)
        .and_then(|fd| fd.field("parameters"))
        .map(|pl| {
            named_children(pl)
                .into_iter()
                .filter(|p| p.kind_name().contains("parameter_declaration"))
                .map(|p| {
                    let name = p
                        .field("declarator")
                        .and_then(crate::declarator::declarator_name)
                        .map(|n| node_text(n, text).to_string())
                        .unwrap_or_default();
                    // A reference parameter aliases the caller's variable.
                    let reference = node_text(p, text).contains('&');
                    if name.is_empty() || reference || written_in(body, &name) {
                        String::new()
                    } else {
                        name
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `body` may write the variable `name`: an assignment (`=`, `+=`, `<<=`, …), an
/// increment or decrement, or its address taken.
fn written_in(body: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    body.match_indices(name).any(|(at, _)| {
        let before = body[..at].trim_end();
        let after = body[at + name.len()..].trim_start();
        if body[..at].chars().next_back().is_some_and(is_word)
            || body[at + name.len()..].chars().next().is_some_and(is_word)
        {
            return false;
        }
        // A member (`p.n`, `p->n`) is another variable.
        if before.ends_with('.') || before.ends_with("->") {
            return false;
        }
        if before.ends_with("++") || before.ends_with("--") {
            return true;
        }
        if takes_address(before) {
            return true;
        }
        if after.starts_with("++") || after.starts_with("--") {
            return true;
        }
        let ops = ["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="];
        if ops.iter().any(|o| after.starts_with(o)) {
            return true;
        }
        after.starts_with('=') && !after.starts_with("==")
    })
}
