//! `for`-header lowering: a loop's variable, start, bound and step, read from its header.

use super::*;

/// The start (expression and node), the variable, the exclusive end, the constant step,
/// and the node of a step that is not a constant (`i += blockDim.x`).
pub(crate) type ForHeader<'t> = (
    Option<(Expr, Node<'t>)>,
    String,
    Option<i64>,
    Option<i64>,
    Option<Node<'t>>,
);

/// The header of a `for` loop over `n` (or over its declared variable when `n` is empty):
/// the start expression, the variable, the exclusive end and the step, when `n` is the
/// variable the loop initialises.
pub(crate) fn for_header<'t>(
    node: Node<'t>,
    text: &str,
    facts: &FileFacts,
    n: &str,
) -> Option<ForHeader<'t>> {
    let init = node.field("initializer")?;
    let (var, start) = match init.kind_name() {
        "declaration" => {
            let d = init.field("declarator")?;
            let name = d.field("declarator")?;
            // `ulong n{blockDim.x >> 1}`: the one value of the braces.
            let value =
                d.field("value")
                    .map(|v| match (v.kind_name(), named_children(v).as_slice()) {
                        ("initializer_list", [one]) => *one,
                        _ => v,
                    });
            (node_text(name, text).to_string(), value)
        }
        "assignment_expression" => {
            let l = init.field("left")?;
            (node_text(l, text).to_string(), init.field("right"))
        }
        _ => return None,
    };
    if !n.is_empty() && var != n {
        return None;
    }
    let at = node.start_byte();
    let mut end = None;
    if let Some(cond) = node.field("condition") {
        if let Expr::Binary(l, op, r) = from_node(cond, text, 0) {
            if matches!(&*l, Expr::Name(v) if *v == var) {
                let bound = facts.env.fold(&r, at);
                end = match op {
                    "<" | "!=" => bound,
                    "<=" => bound.and_then(|b| b.checked_add(1)),
                    _ => None,
                };
            }
        }
    }
    let mut step = None;
    let mut stride = None;
    if let Some(update) = node.field("update") {
        let t = squash_ws(node_text(update, text)).replace(' ', "");
        let is = |op: &str| {
            t.strip_prefix(op) == Some(var.as_str()) || t.strip_suffix(op) == Some(var.as_str())
        };
        if is("++") {
            step = Some(1);
        } else if is("--") {
            step = Some(-1);
        } else if update.kind_name() == "assignment_expression" {
            let op = update.field("operator").map(|o| node_text(o, text));
            let r = update
                .field("right")
                .map(|r| facts.env.fold(&from_node(r, text, 0), at));
            if let (Some("+="), Some(None)) = (op, r) {
                stride = update.field("right");
            }
            step = match (op, r) {
                (Some("+="), Some(Some(v))) => Some(v),
                (Some("-="), Some(Some(v))) => v.checked_neg(),
                (Some("<<="), Some(Some(_))) | (Some("*="), Some(Some(_))) => None,
                _ => None,
            };
        }
    }
    Some((
        start.map(|s| (from_node(s, text, 0), s)),
        var,
        end,
        step,
        stride,
    ))
}

/// A `while` or `do` loop that counts like a `for`: the variable it compares is declared
/// with a start value by the statement just before the loop, and is changed only by the
/// last statement of the body (`while (s > 0) { …; s >>= 1; }`), with no `continue` of the
/// loop skipping that update. The header in [`for_header`]'s form, the update statement
/// and whether the condition is checked before the first iteration (`while`) or after it
/// (`do`).
pub(crate) struct WhileHeader<'t> {
    /// Start, variable, exclusive end and step, as [`for_header`] gives them.
    pub(crate) header: ForHeader<'t>,
    /// The body's last statement, which updates the variable.
    pub(crate) update_stmt: Node<'t>,
    /// The update expression inside it.
    pub(crate) update: Node<'t>,
    /// The condition's value.
    pub(crate) condition: Node<'t>,
    /// `true` for `while`, `false` for `do … while`.
    pub(crate) check_first: bool,
}

/// [`WhileHeader`] of `node` over `n` (over whichever variable it counts when `n` is
/// empty).
pub(crate) fn while_header<'t>(
    node: Node<'t>,
    text: &str,
    facts: &FileFacts,
    n: &str,
) -> Option<WhileHeader<'t>> {
    let check_first = match node.kind_name() {
        "while_statement" => true,
        "do_statement" => false,
        _ => return None,
    };
    let cond = node.field("condition")?;
    // `while (c)` holds a condition clause; `do … while (c)` a parenthesised expression.
    let condition = cond
        .field("value")
        .or_else(|| named_children(cond).into_iter().next())
        .unwrap_or(cond);
    let body = node.field("body")?;
    if body.kind_name() != "compound_statement" {
        return None;
    }
    let stmts: Vec<Node<'t>> = named_children(body)
        .into_iter()
        .filter(|c| c.kind_name() != "comment")
        .collect();
    let update_stmt = *stmts.last()?;
    if update_stmt.kind_name() != "expression_statement" {
        return None;
    }
    let update = named_children(update_stmt).into_iter().next()?;
    let var = match update.kind_name() {
        "update_expression" => update.field("argument")?,
        "assignment_expression" => update.field("left")?,
        _ => return None,
    };
    if var.kind_name() != "identifier" {
        return None;
    }
    let var = node_text(var, text).to_string();
    if !n.is_empty() && var != n {
        return None;
    }
    // The condition compares the variable.
    let Expr::Binary(l, op, r) = from_node(condition, text, 0) else {
        return None;
    };
    if !matches!(&*l, Expr::Name(v) if *v == var) {
        return None;
    }
    // Declared with its start value just before the loop.
    let mut before = node.prev_named_sibling();
    while let Some(b) = before.filter(|b| b.kind_name() == "comment") {
        before = b.prev_named_sibling();
    }
    let decl = before.filter(|b| b.kind_name() == "declaration")?;
    let declarators: Vec<Node<'t>> = named_children(decl)
        .into_iter()
        .filter(|c| c.kind_name() == "init_declarator")
        .collect();
    let [d] = declarators.as_slice() else {
        return None;
    };
    if d.field("declarator").map(|x| node_text(x, text)) != Some(var.as_str()) {
        return None;
    }
    let start = d.field("value")?;
    // Nothing else in the loop changes it, and no `continue` skips the update.
    let mut other_write = false;
    let mut skips_update = false;
    preorder(body, |x| {
        if update_stmt.byte_range().contains(&x.start_byte()) {
            return false;
        }
        match x.kind_name() {
            "assignment_expression" | "update_expression" => {
                let target = x.field("left").or_else(|| x.field("argument"));
                if target.is_some_and(|t| node_text(t, text) == var) {
                    other_write = true;
                }
            }
            "pointer_expression"
                if x.field("operator").map(|o| node_text(o, text)) == Some("&")
                    && x.field("argument")
                        .is_some_and(|a| node_text(a, text) == var) =>
            {
                other_write = true;
            }
            "continue_statement" => {
                // Whether the nearest loop around it is this one.
                let mut p = x.parent();
                while let Some(q) = p {
                    if q.id() == node.id() {
                        skips_update = true;
                        break;
                    }
                    if matches!(
                        q.kind_name(),
                        "for_statement" | "while_statement" | "do_statement" | "for_range_loop"
                    ) {
                        break;
                    }
                    p = q.parent();
                }
            }
            _ => {}
        }
        true
    });
    if other_write || skips_update {
        return None;
    }
    let at = node.start_byte();
    let bound = facts.env.fold(&r, at);
    let end = match op {
        "<" | "!=" => bound,
        "<=" => bound.and_then(|b| b.checked_add(1)),
        _ => None,
    };
    let t = squash_ws(node_text(update, text)).replace(' ', "");
    let mut stride = None;
    let step = if t == format!("++{var}") || t == format!("{var}++") {
        Some(1)
    } else if t == format!("--{var}") || t == format!("{var}--") {
        Some(-1)
    } else if update.kind_name() == "assignment_expression" {
        let op = update.field("operator").map(|o| node_text(o, text));
        let r = update
            .field("right")
            .map(|r| facts.env.fold(&from_node(r, text, 0), at));
        if let (Some("+="), Some(None)) = (op, r) {
            stride = update.field("right");
        }
        match (op, r) {
            (Some("+="), Some(Some(v))) => Some(v),
            (Some("-="), Some(Some(v))) => v.checked_neg(),
            _ => None,
        }
    } else {
        None
    };
    Some(WhileHeader {
        header: (
            Some((from_node(start, text, 0), start)),
            var,
            end,
            step,
            stride,
        ),
        update_stmt,
        update,
        condition,
        check_first,
    })
}

/// How `update` (a `for` header's update, or the statement that updates a counting
/// `while`'s or a local's value once per iteration) changes `var` when it multiplies or
/// divides it by a constant: `v <<= 1`, `v *= 2`, `v = v * 2`, `v >>= 1`, `v /= 2`, `v =
/// v >> 1` (constants folded with the file's values at `at`).
pub(crate) fn scale_update(
    update: Node<'_>,
    text: &str,
    facts: &FileFacts,
    var: &str,
    at: usize,
) -> Option<Stepping> {
    if update.kind_name() != "assignment_expression"
        || update.field("left").map(|l| node_text(l, text)) != Some(var)
    {
        return None;
    }
    let op = node_text(update.field("operator")?, text);
    let right = from_node(update.field("right")?, text, 0);
    let (op, by) = match op {
        "=" => match right {
            Expr::Binary(l, op, r) if matches!(&*l, Expr::Name(v) if v == var) => (op, *r),
            _ => return None,
        },
        _ => (op.strip_suffix('=')?, right),
    };
    let by = facts.env.fold(&by, at)?;
    let stepping = match op {
        "*" if by > 1 => Stepping::Mul(by),
        "/" if by > 1 => Stepping::Div(by),
        "<<" if (1..31).contains(&by) => Stepping::Mul(1 << by),
        ">>" if (1..31).contains(&by) => Stepping::Div(1 << by),
        _ => return None,
    };
    Some(stepping)
}

/// The condition of a loop over `var` as `var op bound`: `s < n`, `n > s` (turned round
/// to `s < n`), or `s` alone (`s != 0`). `None` for any other condition (`s > 0 && ok`).
pub(crate) fn loop_condition(condition: Node<'_>, text: &str, var: &str) -> Option<(String, Expr)> {
    let is_var = |e: &Expr| matches!(e, Expr::Name(v) if v == var);
    match from_node(condition, text, 0) {
        Expr::Name(v) if v == var => Some(("!=".to_string(), Expr::Int(0))),
        Expr::Binary(l, op, r) if is_var(&l) && !is_var(&r) => {
            matches!(op, "<" | "<=" | ">" | ">=" | "!=").then(|| (op.to_string(), *r))
        }
        Expr::Binary(l, op, r) if is_var(&r) && !is_var(&l) => {
            let flipped = match op {
                "<" => ">",
                "<=" => ">=",
                ">" => "<",
                ">=" => "<=",
                "!=" => "!=",
                _ => return None,
            };
            Some((flipped.to_string(), *l))
        }
        _ => None,
    }
}
