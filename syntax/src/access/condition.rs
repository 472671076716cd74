//! A branch condition as a tree of comparisons and lowered values, for evaluating it per
//! lane with the one warp valuation.

use super::*;

/// A condition ([`SourceFile::guard_condition`]): `&&`, `||` and `!` over comparisons
/// and values, each side lowered like an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardCondition {
    /// `left op right`.
    Compare(GuardComparison),
    /// All of these hold.
    And(Vec<GuardCondition>),
    /// One of these holds.
    Or(Vec<GuardCondition>),
    /// This does not hold.
    Not(Box<GuardCondition>),
    /// A value, true when not zero (a `switch`'s value, for a `switch`).
    Value(IndexExpr),
}

impl GuardCondition {
    /// Whether some leaf reads the thread (`threadIdx`, the lane).
    pub fn depends_on_thread(&self) -> bool {
        match self {
            GuardCondition::Compare(c) => c.left.depends_on_thread() || c.right.depends_on_thread(),
            GuardCondition::And(all) | GuardCondition::Or(all) => {
                all.iter().any(GuardCondition::depends_on_thread)
            }
            GuardCondition::Not(c) => c.depends_on_thread(),
            GuardCondition::Value(v) => v.depends_on_thread(),
        }
    }

    /// The condition as it reads in a block whose threads it splits: a part that is the
    /// same in every thread of the block must leave the rest deciding, so a disjunct that
    /// reads no thread is false there and a conjunct that reads none is true (`blockIdx.x
    /// == 0 || blockIdx.x == gridDim.x - 1 && x < W` splits a block only as `x < W`).
    pub fn split_core(&self) -> GuardCondition {
        let (GuardCondition::Or(all) | GuardCondition::And(all)) = self else {
            return self.clone();
        };
        let rest: Vec<GuardCondition> = all
            .iter()
            .filter(|c| c.depends_on_thread())
            .map(GuardCondition::split_core)
            .collect();
        match <[GuardCondition; 1]>::try_from(rest) {
            Ok([only]) => only,
            Err(rest) if rest.is_empty() => self.clone(),
            Err(rest) if matches!(self, GuardCondition::Or(_)) => GuardCondition::Or(rest),
            Err(rest) => GuardCondition::And(rest),
        }
    }

    /// The condition's value (1 or 0; a bare value as it is) where every leaf has one:
    /// `leaf` gives a lowered expression's value.
    pub fn value(&self, leaf: &dyn Fn(&IndexExpr) -> Option<i64>) -> Option<i64> {
        Some(match self {
            GuardCondition::Compare(c) => i64::from(c.holds(leaf(&c.left)?, leaf(&c.right)?)),
            GuardCondition::And(all) => {
                let mut v = 1;
                for c in all {
                    v &= i64::from(c.value(leaf)? != 0);
                }
                v
            }
            GuardCondition::Or(any) => {
                let mut v = 0;
                for c in any {
                    v |= i64::from(c.value(leaf)? != 0);
                }
                v
            }
            GuardCondition::Not(c) => i64::from(c.value(leaf)? == 0),
            GuardCondition::Value(e) => leaf(e)?,
        })
    }

    /// Whether a value is tested for truth somewhere in it (`|| flag`, `!ready`): zero is
    /// then a value that matters, whatever a sample of the uniforms takes it to be.
    pub fn tests_a_value(&self) -> bool {
        match self {
            GuardCondition::Compare(_) => false,
            GuardCondition::And(v) | GuardCondition::Or(v) => v.iter().any(Self::tests_a_value),
            GuardCondition::Not(c) => c.tests_a_value(),
            GuardCondition::Value(_) => true,
        }
    }

    /// Its comparisons and values, left to right.
    pub fn leaves(&self) -> Vec<&GuardCondition> {
        match self {
            GuardCondition::Compare(_) | GuardCondition::Value(_) => vec![self],
            GuardCondition::And(v) | GuardCondition::Or(v) => {
                v.iter().flat_map(GuardCondition::leaves).collect()
            }
            GuardCondition::Not(c) => c.leaves(),
        }
    }

    /// Whether a lowered leaf satisfies `what`.
    pub fn mentions(&self, what: &dyn Fn(&IndexExpr) -> bool) -> bool {
        match self {
            GuardCondition::Compare(c) => c.left.mentions(what) || c.right.mentions(what),
            GuardCondition::And(v) | GuardCondition::Or(v) => v.iter().any(|c| c.mentions(what)),
            GuardCondition::Not(c) => c.mentions(what),
            GuardCondition::Value(e) => e.mentions(what),
        }
    }
}

/// What [`SourceFile::uniformity_condition`] lowers with: the bound names and the block.
type Uniformity<'b> = (&'b [(String, i64)], Option<[u32; 3]>);

/// How many comparisons and values a condition may hold.
const MAX_LEAVES: usize = 16;

impl SourceFile {
    /// The condition at `range` (an `if`'s, a `switch`'s or a `?:`'s, as
    /// [`crate::EnclosingKind`] gives its range) as a [`GuardCondition`]. `None` when
    /// `range` is not an expression of the file or the condition is too large.
    pub fn guard_condition(&self, range: &TextRange) -> Option<GuardCondition> {
        self.condition_at(range, None)
    }

    /// The condition at `range` as [`Self::guard_condition`] gives it, lowered for a
    /// question of uniformity: the names in `bound` at their values (a template
    /// instantiation's arguments), with the launch's `block` an axis of extent 1 making
    /// its `threadIdx` 0, and anything the model cannot value that reads no thread index
    /// (a load at an address that reads none, a `__syncthreads_count` result, `sizeof` of
    /// a template type) one value for the whole block. Kept with the file's facts.
    pub fn uniformity_condition(
        &self,
        range: &TextRange,
        bound: &[(String, i64)],
        block: Option<[u32; 3]>,
    ) -> Option<GuardCondition> {
        match self.tree_memo() {
            Some(memo) => memo.condition(range, bound, block, || {
                self.condition_at(range, Some((bound, block)))
            }),
            None => self.condition_at(range, Some((bound, block))),
        }
    }

    /// The condition at `range`, lowered plainly or, with `uniformity`, as
    /// [`Self::uniformity_condition`] says.
    fn condition_at(
        &self,
        range: &TextRange,
        uniformity: Option<Uniformity<'_>>,
    ) -> Option<GuardCondition> {
        let text = self.text();
        let roots = self.roots();
        let root = roots
            .iter()
            .find(|r| r.start_byte() <= range.start && range.end <= r.end_byte())?;
        let mut node = root.descendant_for_byte_range(range.start, range.end)?;
        while matches!(
            node.kind_name(),
            "condition_clause" | "parenthesized_expression"
        ) {
            node = match named_children(node).as_slice() {
                [one] => *one,
                _ => return None,
            };
        }
        let tree = Ancestry::few(roots.clone(), text.len());
        let mut low = Lowerer::new(text, self.facts(), &tree);
        if let Some((bound, block)) = uniformity {
            low = low.for_uniformity(bound, block);
        }
        let mut leaves = 0;
        condition(&low, node, text, &mut leaves)
    }
}

pub(crate) fn condition<'a>(
    low: &Lowerer<'a>,
    node: Node<'a>,
    text: &str,
    leaves: &mut usize,
) -> Option<GuardCondition> {
    *leaves += 1;
    if *leaves > MAX_LEAVES {
        return None;
    }
    match node.kind_name() {
        "parenthesized_expression" => match named_children(node).as_slice() {
            [one] => condition(low, *one, text, leaves),
            _ => None,
        },
        "binary_expression" => {
            let op = node_text(node.field("operator")?, text);
            let (l, r) = (node.field("left")?, node.field("right")?);
            match op {
                "&&" | "||" => {
                    let both = vec![
                        condition(low, l, text, leaves)?,
                        condition(low, r, text, leaves)?,
                    ];
                    Some(if op == "&&" {
                        GuardCondition::And(both)
                    } else {
                        GuardCondition::Or(both)
                    })
                }
                "<" | "<=" | ">" | ">=" | "==" | "!=" => {
                    Some(GuardCondition::Compare(GuardComparison {
                        left: low.lower(&from_node(l, text, 0), l, 0),
                        op: op.to_string(),
                        right: low.lower(&from_node(r, text, 0), r, 0),
                    }))
                }
                _ => Some(GuardCondition::Value(low.lower(
                    &from_node(node, text, 0),
                    node,
                    0,
                ))),
            }
        }
        // A condition held in a local no assignment reaches (`const bool p = lane < 8;`)
        // is its initialiser, where that is a comparison or a logical operation.
        "identifier" => {
            let init = low
                .read_only_initializer(node, node_text(node, text))
                .filter(|i| is_logical(*i, text));
            match init {
                Some(init) => condition(low, init, text, leaves),
                None => Some(GuardCondition::Value(low.lower(
                    &from_node(node, text, 0),
                    node,
                    0,
                ))),
            }
        }
        "unary_expression"
            if node
                .field("operator")
                .is_some_and(|o| node_text(o, text) == "!") =>
        {
            Some(GuardCondition::Not(Box::new(condition(
                low,
                node.field("argument")?,
                text,
                leaves,
            )?)))
        }
        _ => Some(GuardCondition::Value(low.lower(
            &from_node(node, text, 0),
            node,
            0,
        ))),
    }
}

/// Whether `node` (through parentheses) is a comparison, `&&`, `||` or `!`: a truth value
/// [`condition`] splits into its leaves.
fn is_logical(node: Node<'_>, text: &str) -> bool {
    match node.kind_name() {
        "parenthesized_expression" => match named_children(node).as_slice() {
            [one] => is_logical(*one, text),
            _ => false,
        },
        "binary_expression" => node.field("operator").is_some_and(|o| {
            matches!(
                node_text(o, text),
                "&&" | "||" | "<" | "<=" | ">" | ">=" | "==" | "!="
            )
        }),
        "unary_expression" => node
            .field("operator")
            .is_some_and(|o| node_text(o, text) == "!"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::GuardCondition;
    use crate::SourceFile;

    #[test]
    fn conditions_with_or_not_and_bare_values() {
        let text = "__global__ void k(int n) {\n    if (!(threadIdx.x < 16 || threadIdx.x >= n) && threadIdx.y) { }\n}\n";
        let f = SourceFile::parse(text);
        let start = text.find("(!(").unwrap();
        let end = text.find(" { }").unwrap();
        let c = f.guard_condition(&(start..end)).unwrap();
        let GuardCondition::And(parts) = &c else {
            panic!("{c:?}");
        };
        assert!(matches!(parts[0], GuardCondition::Not(_)));
        assert!(matches!(parts[1], GuardCondition::Value(_)));
        // threadIdx = (20, 1), n = 100: not (false or false) and 1.
        let leaf = |e: &crate::IndexExpr| {
            e.eval(&|l| match l {
                crate::IndexExpr::ThreadIdx(crate::Axis::X) => Some(20),
                crate::IndexExpr::ThreadIdx(_) => Some(1),
                crate::IndexExpr::Uniform(_) => Some(100),
                _ => None,
            })
        };
        assert_eq!(c.value(&leaf), Some(1));
    }
}
