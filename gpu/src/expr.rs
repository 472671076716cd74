//! The one expression form of an index over the thread index, and the one warp
//! valuation that evaluates it.
//!
//! [`Expr`] is what `kernaut-syntax` lowers a subscript, a pointer operand or a guard's
//! comparison to (re-exported there as `IndexExpr`), what the bank, sector and
//! async-copy models evaluate, and what the CLI parses from `--index` text
//! ([`Expr::parse`]). [`Valuation`] says how the 32 lanes of a warp map to `threadIdx`,
//! and what the values the code does not fix are taken to be (the block shape when no
//! launch gives it, uniforms, loop iterations): every model asks it, so they agree.
//!
//! ```
//! use kernaut_gpu::expr::{Axis, Expr, WarpContext};
//! let e = Expr::parse("threadIdx.y * 33 + threadIdx.x").unwrap();
//! let ctx = WarpContext { block: [32, 8, 1], ..WarpContext::default() };
//! let values = e.eval_warp(&ctx).unwrap();
//! assert_eq!(values[5], Some(5));
//! assert_eq!(e, Expr::ThreadIdx(Axis::Y) * Expr::Int(33) + Expr::ThreadIdx(Axis::X));
//! ```
//!
//! Operators and precedence follow C: unary `- ~ +`, then `* / %`, `+ -`, `<< >>`, `&`,
//! `^`, `|`. Arithmetic is on `i64`; overflow, division by zero and shifts outside
//! 0 to 63 are errors, not wrapped values.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::banks::WARP_LANES;

/// A thread-index axis (of `threadIdx` or `blockDim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Axis {
    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b`, truncating toward zero as in C.
    Div,
    /// `a % b`, with the sign of `a` as in C.
    Rem,
    /// `a << b`
    Shl,
    /// `a >> b` (arithmetic)
    Shr,
    /// `a & b`
    And,
    /// `a | b`
    Or,
    /// `a ^ b`
    Xor,
}

impl BinOp {
    /// The operator's token.
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

    /// The operator spelled `s` in C, when it is one of these.
    pub fn from_symbol(s: &str) -> Option<BinOp> {
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

    /// Binding strength as in C: higher binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div | BinOp::Rem => 10,
            BinOp::Add | BinOp::Sub => 9,
            BinOp::Shl | BinOp::Shr => 8,
            BinOp::And => 7,
            BinOp::Xor => 6,
            BinOp::Or => 5,
        }
    }

    /// Applies the operator with C semantics, or says why it cannot.
    pub fn apply(self, a: i64, b: i64) -> Result<i64, EvalError> {
        let overflow = || EvalError::Overflow {
            op: self.symbol(),
            lhs: a,
            rhs: b,
        };
        match self {
            BinOp::Add => a.checked_add(b).ok_or_else(overflow),
            BinOp::Sub => a.checked_sub(b).ok_or_else(overflow),
            BinOp::Mul => a.checked_mul(b).ok_or_else(overflow),
            BinOp::Div | BinOp::Rem if b == 0 => Err(EvalError::DivisionByZero {
                op: self.symbol(),
                lhs: a,
            }),
            BinOp::Div => a.checked_div(b).ok_or_else(overflow),
            BinOp::Rem => a.checked_rem(b).ok_or_else(overflow),
            BinOp::Shl | BinOp::Shr if !(0..64).contains(&b) => {
                Err(EvalError::BadShift { amount: b })
            }
            BinOp::Shl => {
                let r = a << b;
                if r >> b == a {
                    Ok(r)
                } else {
                    Err(overflow())
                }
            }
            BinOp::Shr => Ok(a >> b),
            BinOp::And => Ok(a & b),
            BinOp::Or => Ok(a | b),
            BinOp::Xor => Ok(a ^ b),
        }
    }

    /// [`BinOp::apply`] as an option: `None` where C has no defined value.
    pub fn checked(self, a: i64, b: i64) -> Option<i64> {
        self.apply(a, b).ok()
    }
}

/// An index (or byte offset) as a function of the thread index.
///
/// `Display` writes it as C (constants, uniforms and loop variables by name), with only
/// the parentheses C needs; the alternate form (`{:#}`) writes every node, with each
/// constant's value and each loop's bounds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    /// An integer.
    Int(i64),
    /// `threadIdx.x`, `.y` or `.z`.
    ThreadIdx(Axis),
    /// `blockDim.x`, `.y` or `.z`.
    BlockDim(Axis),
    /// The lane within the warp (`%laneid`): the thread's linear index in the block
    /// modulo 32.
    Lane,
    /// A constant the file determines (`TILE_DIM`), with its value.
    Const {
        /// The constant's name.
        name: String,
        /// Its folded value.
        value: i64,
    },
    /// A loop variable, which a [`Valuation`] holds at one iteration.
    LoopVar {
        /// The variable's name.
        name: String,
        /// Its start value.
        start: Box<Expr>,
        /// The exclusive end, when the condition is `v < END` or `v <= END - 1` with a
        /// constant bound.
        end: Option<i64>,
        /// The step per iteration, when constant.
        step: Option<i64>,
        /// The step when it is not a constant (`i += blockDim.x`), lowered.
        stride: Option<Box<Expr>>,
        /// How the variable doubles or halves each iteration (`s <<= 1`, `offset *= 2`,
        /// `s >>= 1`), where it does, and the loop that drives it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scale: Option<Box<Scale>>,
    },
    /// A value that is the same for every thread of a warp but not fixed by the code:
    /// `blockIdx.x`, `gridDim.x`, a kernel parameter, a name the CLI is given a value for.
    Uniform(String),
    /// A binary operation.
    Binary(Box<Expr>, BinOp, Box<Expr>),
    /// Something that cannot be modelled, and why (data-dependent, a call, ...).
    Unknown(String),
}

/// A loop variable that is multiplied or divided by a constant each iteration: the
/// strides of tree reductions and scans (`for (s = 1; s < n; s <<= 1)`, `offset *= 2;` at
/// the end of a sweep's body).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scale {
    /// How it changes each iteration: [`Stepping::Mul`] or [`Stepping::Div`].
    pub stepping: Stepping,
    /// The loop that runs it, when its header is read: the variable's own loop, or for
    /// a local that one statement of a loop's body scales, that loop.
    pub trip: Option<Trip>,
}

impl Scale {
    /// The scale with `f` applied to the loop's start and bound (constants folded
    /// again, parameters substituted).
    pub fn map(&self, f: &dyn Fn(&Expr) -> Expr) -> Scale {
        Scale {
            stepping: self.stepping,
            trip: self.trip.as_ref().map(|t| Trip {
                var: t.var.clone(),
                start: f(&t.start),
                stepping: t.stepping,
                op: t.op.clone(),
                bound: f(&t.bound),
            }),
        }
    }
}

/// How a loop's variable changes from one iteration to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stepping {
    /// `v += c` (`v -= c` as a negative `c`).
    Add(i64),
    /// `v *= c`, `v <<= log2(c)`.
    Mul(i64),
    /// `v /= c`, `v >>= log2(c)` (for the non-negative values loops count with).
    Div(i64),
}

impl Stepping {
    /// The value after one more iteration, when it fits.
    pub fn next(self, v: i64) -> Option<i64> {
        match self {
            Stepping::Add(c) => v.checked_add(c),
            Stepping::Mul(c) => v.checked_mul(c),
            Stepping::Div(c) => v.checked_div(c),
        }
    }

    /// The value after `k` iterations, when it fits.
    pub fn after(self, mut v: i64, k: i64) -> Option<i64> {
        if let Stepping::Add(c) = self {
            return v.checked_add(k.checked_mul(c)?);
        }
        for _ in 0..k {
            if v == 0 {
                break;
            }
            v = self.next(v)?;
        }
        Some(v)
    }

    /// The update as C writes it, for `v`.
    pub fn text(self, v: &str) -> String {
        let shift = |c: i64| (c > 1 && c.count_ones() == 1).then(|| c.trailing_zeros());
        match self {
            Stepping::Add(c) if c < 0 => format!("{v} -= {}", c.unsigned_abs()),
            Stepping::Add(c) => format!("{v} += {c}"),
            Stepping::Mul(c) => match shift(c) {
                Some(s) => format!("{v} <<= {s}"),
                None => format!("{v} *= {c}"),
            },
            Stepping::Div(c) => match shift(c) {
                Some(s) => format!("{v} >>= {s}"),
                None => format!("{v} /= {c}"),
            },
        }
    }
}

/// The most iterations of a scaled loop that [`Trip::values`] follows: a loop that
/// doubles from 1 past `i32::MAX` takes 31.
pub const MAX_TRIP: usize = 40;

/// The header of a loop that a [`Scale`] belongs to: its variable starts at `start`,
/// changes by `stepping`, and the loop runs while `var op bound` holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Trip {
    /// The loop's variable.
    pub var: String,
    /// Its start value.
    pub start: Expr,
    /// How it changes per iteration.
    pub stepping: Stepping,
    /// The comparison that keeps the loop running: `<`, `<=`, `>`, `>=` or `!=`, with
    /// the variable on the left.
    pub op: String,
    /// The other side of the comparison.
    pub bound: Expr,
}

impl Trip {
    /// How many iterations the loop runs under `valuation`, with each value the
    /// variable takes: `None` where the start or the bound is not one value for the
    /// warp or has none, or the loop runs more than [`MAX_TRIP`] iterations (or never
    /// ends).
    pub fn values(&self, valuation: &Valuation<'_>) -> Option<Vec<i64>> {
        if self.start.depends_on_thread() || self.bound.depends_on_thread() {
            return None;
        }
        let mut v = valuation.quick(&self.start, 0)?;
        let bound = valuation.quick(&self.bound, 0)?;
        let mut out = Vec::new();
        while match self.op.as_str() {
            "<" => v < bound,
            "<=" => v <= bound,
            ">" => v > bound,
            ">=" => v >= bound,
            "!=" => v != bound,
            _ => return None,
        } {
            if out.len() == MAX_TRIP {
                return None;
            }
            out.push(v);
            let next = self.stepping.next(v)?;
            if next == v {
                return None;
            }
            v = next;
        }
        Some(out)
    }
}

/// Whether a uniform's name is a launch built-in (`blockIdx`, `gridDim`, `clusterIdx`)
/// rather than a value such as a kernel parameter.
pub fn is_builtin_uniform(name: &str) -> bool {
    match name.as_bytes().first() {
        Some(b'b') => name.starts_with("blockIdx"),
        Some(b'g') => name.starts_with("gridDim"),
        Some(b'c') => name.starts_with("clusterIdx"),
        _ => false,
    }
}

impl Expr {
    /// Builds `a op b`, folding integers and the identities `x + 0`, `x * 1`, `x * 0`.
    pub fn binary(a: Expr, op: BinOp, b: Expr) -> Expr {
        let val = |e: &Expr| match e {
            Expr::Int(v) => Some(*v),
            _ => None,
        };
        if let (Expr::Unknown(r), _) | (_, Expr::Unknown(r)) = (&a, &b) {
            return Expr::Unknown(r.clone());
        }
        match (val(&a), op, val(&b)) {
            (Some(x), _, Some(y)) => match fold(x, op, y) {
                Some(v) => Expr::Int(v),
                None => Expr::Unknown(format!(
                    "`{x} {} {y}` overflows or divides by zero",
                    op.symbol()
                )),
            },
            (Some(0), BinOp::Add, _) => b,
            (_, BinOp::Add | BinOp::Sub, Some(0)) => a,
            (Some(1), BinOp::Mul, _) => b,
            (_, BinOp::Mul | BinOp::Div, Some(1)) => a,
            (Some(0), BinOp::Mul, _) | (_, BinOp::Mul, Some(0)) => Expr::Int(0),
            _ => Expr::raw(a, op, b),
        }
    }

    /// `a op b` as written, without folding.
    pub fn raw(a: Expr, op: BinOp, b: Expr) -> Expr {
        Expr::Binary(Box::new(a), op, Box::new(b))
    }

    /// A uniform named `name`.
    pub fn uniform(name: impl Into<String>) -> Expr {
        Expr::Uniform(name.into())
    }

    /// The reason the expression cannot be modelled, if any part of it is unknown.
    pub fn unknown_reason(&self) -> Option<&str> {
        match self {
            Expr::Unknown(r) => Some(r),
            Expr::Binary(a, _, b) => a.unknown_reason().or_else(|| b.unknown_reason()),
            Expr::LoopVar { start, .. } => start.unknown_reason(),
            _ => None,
        }
    }

    /// Whether `what` holds for the expression or a node below it (a loop variable's
    /// start included).
    pub fn mentions(&self, what: &dyn Fn(&Expr) -> bool) -> bool {
        what(self)
            || match self {
                Expr::Binary(a, _, b) => a.mentions(what) || b.mentions(what),
                Expr::LoopVar { start, .. } => start.mentions(what),
                _ => false,
            }
    }

    /// Whether the value can differ between the threads of a warp (it mentions
    /// `threadIdx` or the lane).
    pub fn depends_on_thread(&self) -> bool {
        self.mentions(&|e| matches!(e, Expr::ThreadIdx(_) | Expr::Lane))
    }

    /// Whether a loop variable appears in the expression.
    pub fn has_loop_var(&self) -> bool {
        self.mentions(&|e| matches!(e, Expr::LoopVar { .. }))
    }

    /// The expression with each constant folded again by `refold` (its name, or the
    /// text it was folded from); a constant `refold` does not answer keeps its value.
    /// Template parameters bound at a launch change the constants derived from them.
    pub fn rebind(&self, refold: &dyn Fn(&str) -> Option<i64>) -> Expr {
        match self {
            Expr::Const { name, value } => Expr::Const {
                name: name.clone(),
                value: refold(name).unwrap_or(*value),
            },
            Expr::LoopVar {
                name,
                start,
                end,
                step,
                stride,
                scale,
            } => Expr::LoopVar {
                name: name.clone(),
                start: Box::new(start.rebind(refold)),
                end: *end,
                step: *step,
                stride: stride.as_ref().map(|s| Box::new(s.rebind(refold))),
                scale: scale
                    .as_ref()
                    .map(|s| Box::new(s.map(&|e| e.rebind(refold)))),
            },
            Expr::Binary(a, op, b) => Expr::raw(a.rebind(refold), *op, b.rebind(refold)),
            other => other.clone(),
        }
    }

    /// The expression with each uniform that `value` answers replaced by that answer
    /// (a device function's parameter by the argument its caller passes), folded again;
    /// a loop variable's start and stride are substituted too.
    pub fn substitute(&self, value: &dyn Fn(&str) -> Option<Expr>) -> Expr {
        match self {
            Expr::Uniform(name) => value(name).unwrap_or_else(|| self.clone()),
            Expr::LoopVar {
                name,
                start,
                end,
                step,
                stride,
                scale,
            } => Expr::LoopVar {
                name: name.clone(),
                start: Box::new(start.substitute(value)),
                end: *end,
                step: *step,
                stride: stride.as_ref().map(|s| Box::new(s.substitute(value))),
                scale: scale
                    .as_ref()
                    .map(|s| Box::new(s.map(&|e| e.substitute(value)))),
            },
            Expr::Binary(a, op, b) => Expr::binary(a.substitute(value), *op, b.substitute(value)),
            other => other.clone(),
        }
    }

    /// Evaluates the expression, asking `leaf` for the value of every thread index,
    /// block dimension, lane, loop variable and uniform (constants evaluate to their
    /// value). Returns `None` when `leaf` does, on unknowns, and on overflow.
    pub fn eval(&self, leaf: &dyn Fn(&Expr) -> Option<i64>) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            Expr::Const { value, .. } => Some(*value),
            Expr::Binary(a, op, b) => fold(a.eval(leaf)?, *op, b.eval(leaf)?),
            Expr::Unknown(_) => None,
            other => leaf(other),
        }
    }

    /// The value when it depends on nothing a warp or launch decides.
    pub fn constant(&self) -> Option<i64> {
        self.eval(&|_| None)
    }

    /// The expression with each loop variable replaced by its start (the first
    /// iteration), and the loops so held, each once, with the start as written.
    /// Constants keep their names, except a name seen with two values (a template
    /// parameter bound differently in two places), which is written as its value.
    pub fn held_at_start(&self) -> (Expr, Vec<(String, String)>) {
        fn walk(
            e: &Expr,
            held: &mut Vec<(String, String)>,
            names: &mut Vec<(String, i64)>,
        ) -> Expr {
            match e {
                Expr::Const { name, value } => {
                    match names.iter().find(|(n, _)| n == name) {
                        Some((_, v)) if v != value => return Expr::Int(*value),
                        Some(_) => {}
                        None => names.push((name.clone(), *value)),
                    }
                    e.clone()
                }
                Expr::LoopVar { name, start, .. } => {
                    let start = walk(start, held, names);
                    if !held.iter().any(|(n, _)| n == name) {
                        held.push((name.clone(), start.to_string()));
                    }
                    start
                }
                Expr::Binary(a, op, b) => {
                    Expr::raw(walk(a, held, names), *op, walk(b, held, names))
                }
                other => other.clone(),
            }
        }
        let mut held = Vec::new();
        let e = walk(self, &mut held, &mut Vec::new());
        (e, held)
    }

    /// The uniforms of the expression, each once, in order of appearance.
    pub fn uniforms(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Uniform(n) if !out.contains(n) => out.push(n.clone()),
                Expr::Binary(a, _, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Expr::LoopVar { start, .. } => walk(start, out),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// Parses the text form: numbers, `threadIdx.x`, `blockDim.y`, `lane`, and names,
    /// which are uniforms ([`WarpContext::constants`] gives them values; `warpSize` is
    /// 32 unless given).
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser { text, pos: 0 };
        p.skip_ws();
        if p.pos == text.len() {
            return Err(p.error("an expression"));
        }
        let e = p.expr(0)?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("an operator or the end"));
        }
        Ok(e)
    }

    /// The value for every lane of warp [`WarpContext::warp`] of a block; `None` for
    /// lanes past the end of the block.
    pub fn eval_warp(&self, ctx: &WarpContext) -> Result<[Option<i64>; WARP_LANES], EvalError> {
        let [bx, by, bz] = ctx.block;
        if bx == 0 || by == 0 || bz == 0 {
            return Err(EvalError::EmptyBlock { block: ctx.block });
        }
        let v = Valuation {
            block: ctx.block.map(|d| Some(i64::from(d))),
            warp: i64::from(ctx.warp),
            sample: 0,
            uniforms: Uniforms::Named(&ctx.constants),
            loops: Loops::Unknown,
        };
        v.warp_values(self)
    }

    fn fmt_c(&self, f: &mut fmt::Formatter<'_>, min: u8) -> fmt::Result {
        match self {
            Expr::Int(v) if *v < 0 && min > 0 => write!(f, "({v})"),
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Lane => f.write_str("lane"),
            Expr::ThreadIdx(d) => write!(f, "threadIdx.{d}"),
            Expr::BlockDim(d) => write!(f, "blockDim.{d}"),
            Expr::Const { name, .. } | Expr::Uniform(name) | Expr::LoopVar { name, .. } => {
                f.write_str(name)
            }
            Expr::Unknown(r) => write!(f, "unknown({r})"),
            // `-a` and `~a` are lowered (and parsed) as `0 - a` and `a ^ -1`.
            Expr::Binary(a, BinOp::Sub, b) if **a == Expr::Int(0) => {
                f.write_str("-")?;
                b.fmt_c(f, u8::MAX)
            }
            Expr::Binary(a, BinOp::Xor, b) if **b == Expr::Int(-1) => {
                f.write_str("~")?;
                a.fmt_c(f, u8::MAX)
            }
            Expr::Binary(a, op, b) => {
                let p = op.precedence();
                if p < min {
                    f.write_str("(")?;
                }
                a.fmt_c(f, p)?;
                write!(f, " {} ", op.symbol())?;
                b.fmt_c(f, p + 1)?;
                if p < min {
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }

    fn fmt_tree(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(v) => write!(f, "{v}"),
            Expr::ThreadIdx(a) => write!(f, "threadIdx.{a}"),
            Expr::BlockDim(a) => write!(f, "blockDim.{a}"),
            Expr::Lane => f.write_str("lane"),
            Expr::Const { name, value } => write!(f, "{name}={value}"),
            Expr::LoopVar {
                name,
                start,
                end,
                step,
                stride,
                scale,
            } => {
                write!(f, "{name}@[")?;
                start.fmt_tree(f)?;
                if let Some(e) = end {
                    write!(f, "..{e}")?;
                }
                if let Some(s) = step {
                    write!(f, " step {s}")?;
                }
                if let Some(s) = stride {
                    f.write_str(" step ")?;
                    s.fmt_tree(f)?;
                }
                if let Some(s) = scale {
                    write!(f, "; {}", s.stepping.text(name))?;
                }
                f.write_str("]")
            }
            Expr::Uniform(n) => write!(f, "uniform({n})"),
            Expr::Binary(a, op, b) => {
                f.write_str("(")?;
                a.fmt_tree(f)?;
                write!(f, " {} ", op.symbol())?;
                b.fmt_tree(f)?;
                f.write_str(")")
            }
            Expr::Unknown(r) => write!(f, "unknown({r})"),
        }
    }
}

/// `x op y` folded, `None` where C has no defined value; shifts keep the bits that fit
/// (`checked_shl`), as the constant folder of `kernaut-syntax` does.
fn fold(x: i64, op: BinOp, y: i64) -> Option<i64> {
    match op {
        BinOp::Shl => x.checked_shl(u32::try_from(y).ok()?),
        BinOp::Shr => x.checked_shr(u32::try_from(y).ok()?),
        BinOp::Div => x.checked_div(y),
        BinOp::Rem => x.checked_rem(y),
        _ => op.checked(x, y),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            self.fmt_tree(f)
        } else {
            self.fmt_c(f, 0)
        }
    }
}

impl std::str::FromStr for Expr {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Expr::parse(s)
    }
}

macro_rules! impl_op {
    ($trait:ident, $method:ident, $op:expr) => {
        impl std::ops::$trait for Expr {
            type Output = Expr;

            fn $method(self, rhs: Expr) -> Expr {
                Expr::raw(self, $op, rhs)
            }
        }
    };
}

impl_op!(Add, add, BinOp::Add);
impl_op!(Sub, sub, BinOp::Sub);
impl_op!(Mul, mul, BinOp::Mul);
impl_op!(Div, div, BinOp::Div);
impl_op!(Rem, rem, BinOp::Rem);
impl_op!(Shl, shl, BinOp::Shl);
impl_op!(Shr, shr, BinOp::Shr);
impl_op!(BitAnd, bitand, BinOp::And);
impl_op!(BitOr, bitor, BinOp::Or);
impl_op!(BitXor, bitxor, BinOp::Xor);

impl std::ops::Neg for Expr {
    type Output = Expr;

    /// `0 - self`.
    fn neg(self) -> Expr {
        Expr::raw(Expr::Int(0), BinOp::Sub, self)
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::Int(v)
    }
}

/// Values tried for a kernel parameter or other uniform that a sector model reads as a
/// matrix dimension ([`Uniforms::Dimensions`]).
pub const DIMENSION_SAMPLES: [i64; 3] = [64, 1000, 4096];
/// Values tried for `blockIdx`, `gridDim` and `clusterIdx` under
/// [`Uniforms::Dimensions`].
pub const BUILTIN_SAMPLES: [i64; 3] = [0, 1, 5];
/// Values tried for every uniform under [`Uniforms::Arbitrary`]: small, and not all
/// multiples of anything (an alignment must hold for each).
pub const ARBITRARY_SAMPLES: [i64; 3] = [0, 1, 7];
/// Values tried for `blockDim.x` where no launch fixes it: multiples of the warp size.
pub const BLOCK_X_SAMPLES: [i64; 3] = [32, 128, 256];
/// `gridDim.x` under [`Uniforms::Launch`] where the launch does not fix the grid (`.y`
/// and `.z` are 1): more than one block, few enough to run.
pub const LAUNCH_GRID_SAMPLE: i64 = 4;
/// How many samples a valuation's `sample` runs over.
pub const SAMPLES: usize = 3;

/// How a loop variable's value at an iteration follows from its value at the first.
#[derive(Clone, Copy)]
enum Advance {
    /// Plus this much.
    By(i64),
    /// This many steps of a [`Scale`].
    Steps(Stepping, i64),
}

impl Advance {
    fn apply(self, v: i64) -> Option<i64> {
        match self {
            Advance::By(by) => v.checked_add(by),
            Advance::Steps(stepping, k) => stepping.after(v, k),
        }
    }
}

/// What a [`Valuation`] takes a uniform to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uniforms<'a> {
    /// Launch built-ins at [`BUILTIN_SAMPLES`], other uniforms (matrix dimensions) at
    /// [`DIMENSION_SAMPLES`].
    Dimensions,
    /// Every uniform at [`ARBITRARY_SAMPLES`].
    Arbitrary,
    /// Every uniform at this value.
    All(i64),
    /// The values given by name (`warpSize` is 32 unless given); another name has none.
    Named(&'a [(String, i64)]),
    /// One block of a known launch, as the race model runs it thread by thread:
    /// `blockIdx` at `block_idx`, `gridDim` at `grid` (where the launch does not fix it,
    /// `[`[`LAUNCH_GRID_SAMPLE`]`, 1, 1]`), the values given by name, any other plain
    /// name at `other` (another launch built-in has none).
    Launch {
        /// `blockIdx` as `[x, y, z]`.
        block_idx: [i64; 3],
        /// `gridDim` as `[x, y, z]`, `None` where the launch does not fix it.
        grid: Option<[i64; 3]>,
        /// Values by name (kernel parameters the launch passes as constants).
        named: &'a [(String, i64)],
        /// The value of any other plain name.
        other: i64,
    },
}

/// What a [`Valuation`] takes a loop variable to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loops<'a> {
    /// Unknown: an expression with a loop variable has no value.
    Unknown,
    /// At this iteration: the start plus this many steps (a loop whose step is not a
    /// constant is held at its start).
    Iteration(i64),
    /// Each loop variable at the value given by name (the last entry of a name wins,
    /// the innermost loop's); one not given has none.
    Values(&'a [(String, i64)]),
    /// The loop variables that double or halve ([`Scale`]) this many iterations on,
    /// every other at its first iteration: one step of a tree reduction or scan.
    Scaled(i64),
}

/// The one warp valuation: how the lanes of one warp map to `threadIdx`, and the values
/// of everything else an index reads.
///
/// Threads are numbered x fastest, then y, then z (as CUDA linearises them); lane `l`
/// of warp `w` is thread `32 w + l`. A block dimension no launch fixes is taken to be 1
/// for `.y` and `.z`, and [`BLOCK_X_SAMPLES`]`[sample]` for `.x`. Every model that
/// evaluates an index for a warp (bank conflicts, sectors, active lanes, async-copy
/// alignment) builds one of these, so that they read the same lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Valuation<'a> {
    /// `blockDim` as `[x, y, z]`, `None` where not known.
    pub block: [Option<i64>; 3],
    /// Which warp of the block.
    pub warp: i64,
    /// Which of the [`SAMPLES`] samples of unknown values.
    pub sample: usize,
    /// What the uniforms are.
    pub uniforms: Uniforms<'a>,
    /// What the loop variables are.
    pub loops: Loops<'a>,
}

impl Valuation<'_> {
    /// Warp 0 of a block of shape `block` (`None` where not known), uniforms read as
    /// matrix dimensions, loops at their first iteration, the first sample.
    pub fn warp0(block: [Option<i64>; 3]) -> Valuation<'static> {
        Valuation {
            block,
            warp: 0,
            sample: 0,
            uniforms: Uniforms::Dimensions,
            loops: Loops::Iteration(0),
        }
    }

    /// `blockDim` as evaluated: each known dimension, else the assumption.
    pub fn block_dims(&self) -> [i64; 3] {
        [
            self.block[0].unwrap_or(BLOCK_X_SAMPLES[self.sample % SAMPLES]),
            self.block[1].unwrap_or(1),
            self.block[2].unwrap_or(1),
        ]
    }

    /// `threadIdx` of `lane`.
    pub fn thread(&self, lane: usize) -> [i64; 3] {
        let [bx, by, _] = self.block_dims();
        let (bx, by) = (bx.max(1), by.max(1));
        let bz = self.block_dims()[2].max(1);
        let t = self.warp * WARP_LANES as i64 + lane as i64;
        [t % bx, (t / bx) % by, (t / (bx * by)) % bz]
    }

    /// Whether `lane` is a thread of the block: `false` only past the end of a block
    /// whose every dimension is known.
    pub fn in_block(&self, lane: usize) -> bool {
        match self.block {
            [Some(x), Some(y), Some(z)] => {
                self.warp * WARP_LANES as i64 + (lane as i64) < x * y * z.max(1)
            }
            _ => true,
        }
    }

    fn uniform(&self, name: &str) -> Result<i64, EvalError> {
        let s = self.sample % SAMPLES;
        Ok(match self.uniforms {
            Uniforms::Dimensions if is_builtin_uniform(name) => BUILTIN_SAMPLES[s],
            Uniforms::Dimensions => DIMENSION_SAMPLES[s],
            Uniforms::Arbitrary => ARBITRARY_SAMPLES[s],
            Uniforms::All(v) => v,
            Uniforms::Launch {
                block_idx,
                grid,
                named,
                other,
            } => {
                let axis = |rest: &str| match rest {
                    "x" => Some(0),
                    "y" => Some(1),
                    "z" => Some(2),
                    _ => None,
                };
                let unknown = || EvalError::UnknownName {
                    name: name.to_string(),
                };
                if let Some(rest) = name.strip_prefix("blockIdx.") {
                    return axis(rest).map(|a| block_idx[a]).ok_or_else(unknown);
                }
                if let Some(rest) = name.strip_prefix("gridDim.") {
                    let grid = grid.unwrap_or([LAUNCH_GRID_SAMPLE, 1, 1]);
                    return axis(rest).map(|a| grid[a]).ok_or_else(unknown);
                }
                if name.contains('.') {
                    return Err(unknown());
                }
                named
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or(other, |(_, v)| *v)
            }
            Uniforms::Named(values) => match values.iter().find(|(n, _)| n == name) {
                Some((_, v)) => *v,
                None if name == "warpSize" => WARP_LANES as i64,
                None => {
                    return Err(EvalError::UnknownName {
                        name: name.to_string(),
                    })
                }
            },
        })
    }

    /// The uniforms `e` reads that this valuation takes at a sample rather than at a
    /// value the code or the launch gives, each once with the value taken, in order of
    /// appearance: every uniform under [`Uniforms::Dimensions`], [`Uniforms::Arbitrary`]
    /// and [`Uniforms::All`]; under [`Uniforms::Launch`], `gridDim` without a grid and
    /// plain names not given; none under [`Uniforms::Named`]. A loop variable's start is
    /// read only where the loops are held at an iteration (with [`Loops::Values`] the
    /// value was given).
    pub fn assumed(&self, e: &Expr) -> Vec<(String, i64)> {
        fn walk(v: &Valuation<'_>, e: &Expr, out: &mut Vec<(String, i64)>) {
            match e {
                Expr::Uniform(n) if !out.iter().any(|(o, _)| o == n) => {
                    let sampled = match v.uniforms {
                        Uniforms::Dimensions | Uniforms::Arbitrary | Uniforms::All(_) => true,
                        Uniforms::Named(_) => false,
                        Uniforms::Launch { grid, named, .. } => {
                            (n.starts_with("gridDim.") && grid.is_none())
                                || (!n.contains('.') && !named.iter().any(|(p, _)| p == n))
                        }
                    };
                    if let (true, Ok(value)) = (sampled, v.uniform(n)) {
                        out.push((n.clone(), value));
                    }
                }
                Expr::Binary(a, _, b) => {
                    walk(v, a, out);
                    walk(v, b, out);
                }
                Expr::LoopVar { start, .. } if !matches!(v.loops, Loops::Values(_)) => {
                    walk(v, start, out)
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(self, e, &mut out);
        out
    }

    /// The value of `e` for `lane`, or why it has none.
    pub fn value(&self, e: &Expr, lane: usize) -> Result<i64, EvalError> {
        let t = self.thread(lane);
        self.value_of(e, lane, t)
    }

    /// [`Valuation::value`] without the reason: what the models evaluate many times per
    /// access, so it builds no error and works out the thread index only where the
    /// expression reads it.
    /// A loop variable's step per iteration: the constant one, or its stride (the same
    /// in every thread: `i += blockDim.x`) valued in lane 0; 0 where it has neither, as
    /// for a loop the valuation holds still.
    fn step_of(&self, step: Option<i64>, stride: Option<&Expr>) -> Option<i64> {
        match (step, stride) {
            (Some(s), _) => Some(s),
            (None, Some(e)) if !e.depends_on_thread() => self.quick(e, 0).or(Some(0)),
            _ => Some(0),
        }
    }

    /// How a loop variable's value at the valuation's iteration follows from its value
    /// at the first ([`Loops::Iteration`], [`Loops::Scaled`]).
    fn advance(
        &self,
        step: Option<i64>,
        stride: Option<&Expr>,
        scale: Option<&Scale>,
    ) -> Option<Advance> {
        Some(match (self.loops, scale) {
            (Loops::Iteration(k) | Loops::Scaled(k), Some(scale)) => {
                Advance::Steps(scale.stepping, k)
            }
            (Loops::Iteration(k), None) => {
                Advance::By(k.saturating_mul(self.step_of(step, stride)?))
            }
            _ => Advance::By(0),
        })
    }

    fn quick(&self, e: &Expr, lane: usize) -> Option<i64> {
        match e {
            Expr::Int(v) | Expr::Const { value: v, .. } => Some(*v),
            Expr::ThreadIdx(a) => Some(self.thread(lane)[a.index()]),
            Expr::BlockDim(a) => Some(self.block_dims()[a.index()]),
            Expr::Lane => Some(lane as i64),
            Expr::Uniform(name) => self.uniform(name).ok(),
            Expr::LoopVar {
                name,
                start,
                step,
                stride,
                scale,
                ..
            } => match self.loops {
                Loops::Unknown => None,
                Loops::Iteration(_) | Loops::Scaled(_) => self
                    .advance(*step, stride.as_deref(), scale.as_deref())?
                    .apply(self.quick(start, lane)?),
                Loops::Values(values) => values
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v),
            },
            Expr::Binary(a, op, b) => op.checked(self.quick(a, lane)?, self.quick(b, lane)?),
            Expr::Unknown(_) => None,
        }
    }

    fn value_of(&self, e: &Expr, lane: usize, t: [i64; 3]) -> Result<i64, EvalError> {
        match e {
            Expr::Int(v) | Expr::Const { value: v, .. } => Ok(*v),
            Expr::ThreadIdx(a) => Ok(t[a.index()]),
            Expr::BlockDim(a) => Ok(self.block_dims()[a.index()]),
            Expr::Lane => Ok(lane as i64),
            Expr::Uniform(name) => self.uniform(name),
            Expr::LoopVar {
                name,
                start,
                step,
                stride,
                scale,
                ..
            } => match self.loops {
                Loops::Unknown => Err(EvalError::UnknownName { name: name.clone() }),
                Loops::Values(values) => values
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| EvalError::UnknownName { name: name.clone() }),
                Loops::Iteration(_) | Loops::Scaled(_) => {
                    let s = self.value_of(start, lane, t)?;
                    let overflow = EvalError::Overflow {
                        op: "+",
                        lhs: s,
                        rhs: 0,
                    };
                    self.advance(*step, stride.as_deref(), scale.as_deref())
                        .ok_or_else(|| EvalError::UnknownName { name: name.clone() })?
                        .apply(s)
                        .ok_or(overflow)
                }
            },
            Expr::Binary(a, op, b) => {
                op.apply(self.value_of(a, lane, t)?, self.value_of(b, lane, t)?)
            }
            Expr::Unknown(reason) => Err(EvalError::Unknown {
                reason: reason.clone(),
            }),
        }
    }

    /// The value of `e` for `lane`, when it has one.
    pub fn lane(&self, e: &Expr, lane: usize) -> Option<i64> {
        self.quick(e, lane)
    }

    /// The values of `e` for all 32 lanes (past the end of the block included), when
    /// every lane has one: each node is evaluated once for the whole warp.
    pub fn lanes(&self, e: &Expr) -> Option<[i64; WARP_LANES]> {
        let mut threads: Option<[[i64; 3]; WARP_LANES]> = None;
        self.warp_of(e, &mut threads)
    }

    fn warp_of(
        &self,
        e: &Expr,
        threads: &mut Option<[[i64; 3]; WARP_LANES]>,
    ) -> Option<[i64; WARP_LANES]> {
        Some(match e {
            Expr::Int(v) | Expr::Const { value: v, .. } => [*v; WARP_LANES],
            Expr::ThreadIdx(a) => {
                let t = threads.get_or_insert_with(|| std::array::from_fn(|l| self.thread(l)));
                std::array::from_fn(|l| t[l][a.index()])
            }
            Expr::BlockDim(a) => [self.block_dims()[a.index()]; WARP_LANES],
            Expr::Lane => std::array::from_fn(|l| l as i64),
            Expr::Uniform(name) => [self.uniform(name).ok()?; WARP_LANES],
            Expr::LoopVar {
                name,
                start,
                step,
                stride,
                scale,
                ..
            } => match self.loops {
                Loops::Unknown => return None,
                Loops::Values(values) => {
                    [values.iter().rev().find(|(n, _)| n == name)?.1; WARP_LANES]
                }
                Loops::Iteration(_) | Loops::Scaled(_) => {
                    let advance = self.advance(*step, stride.as_deref(), scale.as_deref())?;
                    let mut s = self.warp_of(start, threads)?;
                    for v in &mut s {
                        *v = advance.apply(*v)?;
                    }
                    s
                }
            },
            Expr::Binary(a, op, b) => {
                let (mut x, y) = (self.warp_of(a, threads)?, self.warp_of(b, threads)?);
                for (v, w) in x.iter_mut().zip(y) {
                    *v = op.checked(*v, w)?;
                }
                x
            }
            Expr::Unknown(_) => return None,
        })
    }

    /// The values of `e` for the lanes of the warp that are threads of the block
    /// ([`Valuation::in_block`]), `None` for the others; the first error otherwise.
    pub fn warp_values(&self, e: &Expr) -> Result<[Option<i64>; WARP_LANES], EvalError> {
        let mut out = [None; WARP_LANES];
        for (lane, slot) in out.iter_mut().enumerate() {
            if !self.in_block(lane) {
                break;
            }
            *slot = Some(self.value(e, lane)?);
        }
        Ok(out)
    }
}

/// The block and warp an expression is evaluated for by [`Expr::eval_warp`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpContext {
    /// `blockDim` as `[x, y, z]`.
    pub block: [u32; 3],
    /// Which warp of the block (threads are numbered x fastest, then y, then z).
    pub warp: u32,
    /// Values of named uniforms.
    pub constants: Vec<(String, i64)>,
}

impl Default for WarpContext {
    /// Warp 0 of a one-warp block, `[32, 1, 1]`, with no constants.
    fn default() -> Self {
        WarpContext {
            block: [32, 1, 1],
            warp: 0,
            constants: Vec::new(),
        }
    }
}

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A named value without a value.
    #[error("`{name}` has no value (give it one, e.g. {name}=32)")]
    UnknownName {
        /// The name.
        name: String,
    },
    /// A part of the expression that cannot be modelled.
    #[error("{reason}")]
    Unknown {
        /// Why.
        reason: String,
    },
    /// Division or remainder by zero.
    #[error("{lhs} {op} 0: division by zero")]
    DivisionByZero {
        /// `/` or `%`.
        op: &'static str,
        /// The dividend.
        lhs: i64,
    },
    /// A result outside the 64-bit range.
    #[error("{lhs} {op} {rhs} overflows 64 bits")]
    Overflow {
        /// The operator.
        op: &'static str,
        /// Left operand.
        lhs: i64,
        /// Right operand.
        rhs: i64,
    },
    /// A shift by a negative amount or by 64 or more.
    #[error("shift by {amount} is outside 0 to 63")]
    BadShift {
        /// The shift amount.
        amount: i64,
    },
    /// A block with a zero dimension.
    #[error("block {}x{}x{} has no threads", block[0], block[1], block[2])]
    EmptyBlock {
        /// The block shape.
        block: [u32; 3],
    },
}

/// A syntax error in an expression's text, at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {}: expected {expected}, found {found}", offset + 1)]
pub struct ParseError {
    /// Byte offset of the problem in the text.
    pub offset: usize,
    /// What the parser wanted there.
    pub expected: String,
    /// What it found, quoted, or "the end".
    pub found: String,
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn found(&self) -> String {
        match self.rest().chars().next() {
            None => "the end".to_string(),
            Some(_) => {
                let word: String = self
                    .rest()
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(12)
                    .collect();
                format!("`{word}`")
            }
        }
    }

    fn error(&self, expected: &str) -> ParseError {
        ParseError {
            offset: self.pos,
            expected: expected.to_string(),
            found: self.found(),
        }
    }

    fn peek_op(&self) -> Option<(BinOp, usize)> {
        let r = self.rest();
        let two = [("<<", BinOp::Shl), (">>", BinOp::Shr)];
        for (s, op) in two {
            if r.starts_with(s) {
                return Some((op, 2));
            }
        }
        let op = match r.as_bytes().first()? {
            b'+' => BinOp::Add,
            b'-' => BinOp::Sub,
            b'*' => BinOp::Mul,
            b'/' => BinOp::Div,
            b'%' => BinOp::Rem,
            b'&' if !r.starts_with("&&") => BinOp::And,
            b'|' if !r.starts_with("||") => BinOp::Or,
            b'^' => BinOp::Xor,
            _ => return None,
        };
        Some((op, 1))
    }

    /// Precedence climbing: parses operators that bind at least as tightly as `min`.
    fn expr(&mut self, min: u8) -> Result<Expr, ParseError> {
        let mut lhs = self.unary()?;
        loop {
            self.skip_ws();
            let Some((op, len)) = self.peek_op() else {
                break;
            };
            if op.precedence() < min {
                break;
            }
            self.pos += len;
            let rhs = self.expr(op.precedence() + 1)?;
            lhs = Expr::raw(lhs, op, rhs);
        }
        Ok(lhs)
    }

    /// `-a` is `0 - a` (a negative literal stays one); `~a` is `a ^ -1`.
    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.skip_ws();
        match self.rest().as_bytes().first() {
            Some(b'-') => {
                self.pos += 1;
                let e = self.unary()?;
                Ok(match e {
                    Expr::Int(v) if v > 0 => Expr::Int(-v),
                    e => Expr::raw(Expr::Int(0), BinOp::Sub, e),
                })
            }
            Some(b'~') => {
                self.pos += 1;
                Ok(Expr::raw(self.unary()?, BinOp::Xor, Expr::Int(-1)))
            }
            Some(b'+') => {
                self.pos += 1;
                self.unary()
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        self.skip_ws();
        let start = self.pos;
        let Some(c) = self.rest().chars().next() else {
            return Err(self.error("a number, a name or `(`"));
        };
        if c == '(' {
            self.pos += 1;
            let e = self.expr(0)?;
            self.skip_ws();
            if !self.rest().starts_with(')') {
                return Err(self.error("`)`"));
            }
            self.pos += 1;
            return Ok(e);
        }
        if c.is_ascii_digit() {
            return self.number();
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let len = self
                .rest()
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(self.rest().len());
            let name = &self.text[start..start + len];
            self.pos += len;
            return match name {
                "lane" | "laneid" => Ok(Expr::Lane),
                "threadIdx" | "blockDim" => {
                    let member_at = self.pos;
                    let dim = if self.rest().starts_with('.') {
                        self.pos += 1;
                        match self.rest().as_bytes().first() {
                            Some(b'x') => Some(Axis::X),
                            Some(b'y') => Some(Axis::Y),
                            Some(b'z') => Some(Axis::Z),
                            _ => None,
                        }
                    } else {
                        None
                    };
                    let at_end_of_member = self
                        .rest()
                        .get(1..)
                        .and_then(|r| r.chars().next())
                        .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
                    match dim {
                        Some(d) if at_end_of_member => {
                            self.pos += 1;
                            Ok(if name == "threadIdx" {
                                Expr::ThreadIdx(d)
                            } else {
                                Expr::BlockDim(d)
                            })
                        }
                        _ => {
                            self.pos = member_at;
                            Err(self.error(&format!("`.x`, `.y` or `.z` after `{name}`")))
                        }
                    }
                }
                _ => Ok(Expr::Uniform(name.to_string())),
            };
        }
        Err(self.error("a number, a name or `(`"))
    }

    fn number(&mut self) -> Result<Expr, ParseError> {
        let start = self.pos;
        let r = self.rest();
        let (radix, skip) = if r.starts_with("0x") || r.starts_with("0X") {
            (16, 2)
        } else if r.starts_with("0b") || r.starts_with("0B") {
            (2, 2)
        } else {
            (10, 0)
        };
        let digits_len = r[skip..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(r.len() - skip);
        let token = &r[skip..skip + digits_len];
        // C integer suffixes (u, l, ul, ll, ull in any case) carry no value.
        let digits = token.trim_end_matches(['u', 'U', 'l', 'L']);
        let value = i64::from_str_radix(digits, radix).map_err(|_| ParseError {
            offset: start,
            expected: "an integer that fits in 64 bits".to_string(),
            found: format!("`{}`", &r[..skip + digits_len]),
        })?;
        self.pos += skip + digits_len;
        Ok(Expr::Int(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_variables_are_held_at_their_start() {
        let k = Expr::LoopVar {
            name: "k".into(),
            start: Box::new(Expr::Int(0)),
            end: Some(32),
            step: Some(1),
            stride: None,
            scale: None,
        };
        let (held, loops) = Expr::raw(Expr::ThreadIdx(Axis::Y), BinOp::Add, k).held_at_start();
        assert_eq!(held.to_string(), "threadIdx.y + 0");
        assert_eq!(loops, vec![("k".to_string(), "0".to_string())]);
    }

    #[test]
    fn one_valuation_lays_lanes_out_x_fastest() {
        let e = Expr::ThreadIdx(Axis::Y) * Expr::Int(100) + Expr::ThreadIdx(Axis::X);
        let v = Valuation::warp0([Some(8), Some(4), Some(1)]);
        assert_eq!(v.lane(&e, 9), Some(101));
        // An unknown block is 32, 128 or 256 wide: the warp is one row.
        let v = Valuation::warp0([None; 3]);
        assert_eq!(v.lane(&e, 9), Some(9));
        // Past the end of a 16-thread block there is no thread.
        let v = Valuation::warp0([Some(16), Some(1), Some(1)]);
        assert_eq!(v.warp_values(&e).unwrap()[16], None);
    }

    #[test]
    fn uniforms_and_loops_follow_the_valuation() {
        let e = Expr::uniform("blockIdx.x") * Expr::Int(1000) + Expr::uniform("n");
        let mut v = Valuation::warp0([None; 3]);
        v.sample = 2;
        assert_eq!(v.lane(&e, 0), Some(5 * 1000 + 4096));
        v.uniforms = Uniforms::Arbitrary;
        assert_eq!(v.lane(&e, 0), Some(7 * 1000 + 7));
        let i = Expr::LoopVar {
            name: "i".into(),
            start: Box::new(Expr::Lane),
            end: None,
            step: Some(32),
            stride: None,
            scale: None,
        };
        v.loops = Loops::Iteration(2);
        assert_eq!(v.lane(&i, 3), Some(67));
        v.loops = Loops::Unknown;
        assert_eq!(v.lane(&i, 3), None);
    }

    #[test]
    fn a_scaled_loop_runs_its_steps() {
        let trip = Trip {
            var: "s".into(),
            start: Expr::BlockDim(Axis::X) / Expr::Int(2),
            stepping: Stepping::Div(2),
            op: ">".into(),
            bound: Expr::Int(0),
        };
        let v = Valuation::warp0([Some(256), Some(1), Some(1)]);
        assert_eq!(trip.values(&v), Some(vec![128, 64, 32, 16, 8, 4, 2, 1]));
        let s = Expr::LoopVar {
            name: "s".into(),
            start: Box::new(Expr::Int(128)),
            end: None,
            step: None,
            stride: None,
            scale: Some(Box::new(Scale {
                stepping: Stepping::Div(2),
                trip: Some(trip),
            })),
        };
        let e = Expr::ThreadIdx(Axis::X) * s;
        let at = |k| Valuation {
            loops: Loops::Scaled(k),
            ..v
        };
        assert_eq!(at(0).lane(&e, 3), Some(3 * 128));
        assert_eq!(at(3).lane(&e, 3), Some(3 * 16));
        // A loop that never ends, or runs past the limit, has no trip.
        let forever = Trip {
            var: "s".into(),
            start: Expr::Int(0),
            stepping: Stepping::Mul(2),
            op: "<".into(),
            bound: Expr::Int(8),
        };
        assert_eq!(forever.values(&v), None);
        assert_eq!(Stepping::Div(2).text("s"), "s >>= 1");
        assert_eq!(Stepping::Mul(3).text("s"), "s *= 3");
    }
}
