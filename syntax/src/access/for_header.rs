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
            (node_text(name, text).to_string(), d.field("value"))
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
