//! The lowered index: [`IndexExpr`] over the thread index, its operators, and its
//! evaluation for one lane (the lane-address evaluation the bank and coalescing models run).

use super::*;

/// A thread-index axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

/// A binary operator of an [`IndexExpr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (C semantics: truncating)
    Div,
    /// `%` (C semantics)
    Rem,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
}

impl BinOp {
    /// The C spelling of the operator.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
        }
    }

    /// Applies the operator as [`crate::consteval::binary`] does for its symbol (checked
    /// arithmetic, `None` on overflow, division by zero or a bad shift), without matching
    /// the symbol's text: the bank model evaluates offsets many times per access.
    pub(crate) fn apply(self, l: i64, r: i64) -> Option<i64> {
        Some(match self {
            BinOp::Add => l.checked_add(r)?,
            BinOp::Sub => l.checked_sub(r)?,
            BinOp::Mul => l.checked_mul(r)?,
            BinOp::Div => l.checked_div(r)?,
            BinOp::Rem => l.checked_rem(r)?,
            BinOp::Shl => l.checked_shl(u32::try_from(r).ok()?)?,
            BinOp::Shr => l.checked_shr(u32::try_from(r).ok()?)?,
            BinOp::And => l & r,
            BinOp::Or => l | r,
            BinOp::Xor => l ^ r,
        })
    }

    pub(crate) fn from_symbol(s: &str) -> Option<BinOp> {
        Some(match s {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "&" => BinOp::And,
            "|" => BinOp::Or,
            "^" => BinOp::Xor,
            _ => return None,
        })
    }
}

/// An index (or byte offset) as a function of the thread index, lowered from C.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexExpr {
    /// An integer.
    Int(i64),
    /// `threadIdx.x/y/z`.
    ThreadIdx(Axis),
    /// `blockDim.x/y/z`.
    BlockDim(Axis),
    /// The lane within the warp: `threadIdx.x % 32` or `threadIdx.x & 31`.
    Lane,
    /// A constant the file determines (`TILE_DIM`), with its value.
    Const {
        /// The constant's name.
        name: String,
        /// Its folded value.
        value: i64,
    },
    /// A loop variable, which the caller holds fixed per iteration.
    LoopVar {
        /// The variable's name.
        name: String,
        /// Its start value, lowered.
        start: Box<IndexExpr>,
        /// The exclusive end, when the condition is `v < END` or `v <= END - 1` with a
        /// constant bound.
        end: Option<i64>,
        /// The step per iteration, when constant.
        step: Option<i64>,
    },
    /// A value that is the same for every thread of a warp: `blockIdx.x`, `gridDim.x`, a
    /// kernel parameter.
    Uniform(String),
    /// A binary operation.
    Binary(Box<IndexExpr>, BinOp, Box<IndexExpr>),
    /// Something that cannot be modelled, and why (data-dependent, a call, ...).
    Unknown(String),
}

impl IndexExpr {
    /// Builds `a op b`, folding integers and the identities `x + 0`, `x * 1`, `x * 0`.
    pub fn binary(a: IndexExpr, op: BinOp, b: IndexExpr) -> IndexExpr {
        let val = |e: &IndexExpr| match e {
            IndexExpr::Int(v) => Some(*v),
            _ => None,
        };
        if let (IndexExpr::Unknown(r), _) | (_, IndexExpr::Unknown(r)) = (&a, &b) {
            return IndexExpr::Unknown(r.clone());
        }
        match (val(&a), op, val(&b)) {
            (Some(x), _, Some(y)) => match binary(x, op.symbol(), y) {
                Some(v) => IndexExpr::Int(v),
                None => IndexExpr::Unknown(format!(
                    "`{x} {} {y}` overflows or divides by zero",
                    op.symbol()
                )),
            },
            (Some(0), BinOp::Add, _) => b,
            (_, BinOp::Add | BinOp::Sub, Some(0)) => a,
            (Some(1), BinOp::Mul, _) => b,
            (_, BinOp::Mul | BinOp::Div, Some(1)) => a,
            (Some(0), BinOp::Mul, _) | (_, BinOp::Mul, Some(0)) => IndexExpr::Int(0),
            _ => IndexExpr::Binary(Box::new(a), op, Box::new(b)),
        }
    }

    /// The reason the expression cannot be modelled, if any part of it is unknown.
    pub fn unknown_reason(&self) -> Option<&str> {
        match self {
            IndexExpr::Unknown(r) => Some(r),
            IndexExpr::Binary(a, _, b) => a.unknown_reason().or_else(|| b.unknown_reason()),
            IndexExpr::LoopVar { start, .. } => start.unknown_reason(),
            _ => None,
        }
    }

    /// Whether the value can differ between the threads of a warp (it mentions
    /// `threadIdx` or the lane).
    pub fn depends_on_thread(&self) -> bool {
        match self {
            IndexExpr::ThreadIdx(_) | IndexExpr::Lane => true,
            IndexExpr::Binary(a, _, b) => a.depends_on_thread() || b.depends_on_thread(),
            IndexExpr::LoopVar { start, .. } => start.depends_on_thread(),
            _ => false,
        }
    }

    /// The expression with each constant folded again by `refold` (its name, or the
    /// text it was folded from); a constant `refold` does not answer keeps its value.
    /// Template parameters bound at a launch change the constants derived from them.
    pub fn rebind(&self, refold: &dyn Fn(&str) -> Option<i64>) -> IndexExpr {
        match self {
            IndexExpr::Const { name, value } => IndexExpr::Const {
                name: name.clone(),
                value: refold(name).unwrap_or(*value),
            },
            IndexExpr::LoopVar {
                name,
                start,
                end,
                step,
            } => IndexExpr::LoopVar {
                name: name.clone(),
                start: Box::new(start.rebind(refold)),
                end: *end,
                step: *step,
            },
            IndexExpr::Binary(a, op, b) => {
                IndexExpr::Binary(Box::new(a.rebind(refold)), *op, Box::new(b.rebind(refold)))
            }
            other => other.clone(),
        }
    }

    /// Evaluates the expression, asking `leaf` for the value of every thread index,
    /// block dimension, lane, loop variable and uniform (constants evaluate to their
    /// value). Returns `None` when `leaf` does, on unknowns, and on overflow.
    pub fn eval(&self, leaf: &dyn Fn(&IndexExpr) -> Option<i64>) -> Option<i64> {
        match self {
            IndexExpr::Int(v) => Some(*v),
            IndexExpr::Const { value, .. } => Some(*value),
            IndexExpr::Binary(a, op, b) => op.apply(a.eval(leaf)?, b.eval(leaf)?),
            IndexExpr::Unknown(_) => None,
            other => leaf(other),
        }
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        })
    }
}

impl fmt::Display for IndexExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexExpr::Int(v) => write!(f, "{v}"),
            IndexExpr::ThreadIdx(a) => write!(f, "threadIdx.{a}"),
            IndexExpr::BlockDim(a) => write!(f, "blockDim.{a}"),
            IndexExpr::Lane => f.write_str("lane"),
            IndexExpr::Const { name, value } => write!(f, "{name}={value}"),
            IndexExpr::LoopVar {
                name,
                start,
                end,
                step,
            } => {
                write!(f, "{name}@[{start}")?;
                if let Some(e) = end {
                    write!(f, "..{e}")?;
                }
                if let Some(s) = step {
                    write!(f, " step {s}")?;
                }
                f.write_str("]")
            }
            IndexExpr::Uniform(n) => write!(f, "uniform({n})"),
            IndexExpr::Binary(a, op, b) => write!(f, "({a} {} {b})", op.symbol()),
            IndexExpr::Unknown(r) => write!(f, "unknown({r})"),
        }
    }
}
