//! Integer index expressions over the thread index, evaluated for every lane of a warp.
//!
//! The `syntax` and `ide` crates lower source expressions to [`Expr`] values directly;
//! the CLI parses the text form with [`Expr::parse`]:
//!
//! ```
//! use kernaut_gpu::expr::{Expr, WarpContext};
//! let e = Expr::parse("threadIdx.y * 33 + threadIdx.x").unwrap();
//! let ctx = WarpContext { block: [32, 8, 1], ..WarpContext::default() };
//! let values = e.eval_warp(&ctx).unwrap();
//! assert_eq!(values[5], Some(5));
//! assert_eq!(e, Expr::ThreadIdx(kernaut_gpu::expr::Dim::Y) * Expr::Const(33) + Expr::ThreadIdx(kernaut_gpu::expr::Dim::X));
//! ```
//!
//! Operators and precedence follow C: unary `- ~ +`, then `* / %`, `+ -`, `<< >>`, `&`,
//! `^`, `|`. Arithmetic is on `i64`; overflow, division by zero and shifts outside
//! 0 to 63 are errors, not wrapped values.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::banks::WARP_LANES;

/// A dimension of `threadIdx` or `blockDim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    /// `.x`
    X,
    /// `.y`
    Y,
    /// `.z`
    Z,
}

impl Dim {
    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    /// `-a`
    Neg,
    /// `~a`
    Not,
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
}

/// An integer expression over the thread index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    /// An integer literal.
    Const(i64),
    /// The lane in the warp, 0 to 31 (`threadIdx` linearised, modulo 32).
    Lane,
    /// `threadIdx.x`, `.y` or `.z`.
    ThreadIdx(Dim),
    /// `blockDim.x`, `.y` or `.z`.
    BlockDim(Dim),
    /// A named constant, resolved from [`WarpContext::constants`]; `warpSize` is 32
    /// unless given.
    Named(String),
    /// A unary operation.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// A binary node.
    pub fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary(op, Box::new(lhs), Box::new(rhs))
    }

    /// A unary node.
    pub fn unary(op: UnaryOp, operand: Expr) -> Expr {
        Expr::Unary(op, Box::new(operand))
    }

    /// A named constant.
    pub fn named(name: impl Into<String>) -> Expr {
        Expr::Named(name.into())
    }

    /// Parses the text form.
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

    /// The value for one thread of a block.
    pub fn eval(&self, thread: &ThreadContext<'_>) -> Result<i64, EvalError> {
        match self {
            Expr::Const(v) => Ok(*v),
            Expr::Lane => Ok(i64::from(thread.lane)),
            Expr::ThreadIdx(d) => Ok(i64::from(thread.thread_idx[d.index()])),
            Expr::BlockDim(d) => Ok(i64::from(thread.block[d.index()])),
            Expr::Named(name) => thread.lookup(name),
            Expr::Unary(op, e) => {
                let v = e.eval(thread)?;
                match op {
                    UnaryOp::Neg => v.checked_neg().ok_or(EvalError::Overflow {
                        op: "-",
                        lhs: 0,
                        rhs: v,
                    }),
                    UnaryOp::Not => Ok(!v),
                }
            }
            Expr::Binary(op, a, b) => op.apply(a.eval(thread)?, b.eval(thread)?),
        }
    }

    /// The value for every lane of warp [`WarpContext::warp`] of a block; `None` for
    /// lanes past the end of the block.
    pub fn eval_warp(&self, ctx: &WarpContext) -> Result<[Option<i64>; WARP_LANES], EvalError> {
        let [bx, by, bz] = ctx.block;
        if bx == 0 || by == 0 || bz == 0 {
            return Err(EvalError::EmptyBlock { block: ctx.block });
        }
        let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
        let mut out = [None; WARP_LANES];
        for (lane, slot) in out.iter_mut().enumerate() {
            let t = u64::from(ctx.warp) * WARP_LANES as u64 + lane as u64;
            if t >= threads {
                break;
            }
            let x = (t % u64::from(bx)) as u32;
            let y = ((t / u64::from(bx)) % u64::from(by)) as u32;
            let z = (t / (u64::from(bx) * u64::from(by))) as u32;
            let thread = ThreadContext {
                lane: lane as u32,
                thread_idx: [x, y, z],
                block: ctx.block,
                constants: &ctx.constants,
            };
            *slot = Some(self.eval(&thread)?);
        }
        Ok(out)
    }

    fn fmt_prec(&self, f: &mut fmt::Formatter<'_>, min: u8) -> fmt::Result {
        match self {
            Expr::Const(v) if *v < 0 && min > 0 => write!(f, "({v})"),
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Lane => f.write_str("lane"),
            Expr::ThreadIdx(d) => write!(f, "threadIdx.{}", d.name()),
            Expr::BlockDim(d) => write!(f, "blockDim.{}", d.name()),
            Expr::Named(n) => f.write_str(n),
            Expr::Unary(op, e) => {
                f.write_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "~",
                })?;
                e.fmt_prec(f, u8::MAX)
            }
            Expr::Binary(op, a, b) => {
                let p = op.precedence();
                if p < min {
                    f.write_str("(")?;
                }
                a.fmt_prec(f, p)?;
                write!(f, " {} ", op.symbol())?;
                b.fmt_prec(f, p + 1)?;
                if p < min {
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Expr {
    /// Writes the text form, with only the parentheses C needs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_prec(f, 0)
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
                Expr::binary($op, self, rhs)
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

    fn neg(self) -> Expr {
        Expr::unary(UnaryOp::Neg, self)
    }
}

impl std::ops::Not for Expr {
    type Output = Expr;

    fn not(self) -> Expr {
        Expr::unary(UnaryOp::Not, self)
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::Const(v)
    }
}

/// The block and warp an expression is evaluated for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpContext {
    /// `blockDim` as `[x, y, z]`.
    pub block: [u32; 3],
    /// Which warp of the block (threads are numbered x fastest, then y, then z).
    pub warp: u32,
    /// Values of named constants.
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

/// One thread, as [`Expr::eval`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadContext<'a> {
    /// The lane, 0 to 31.
    pub lane: u32,
    /// `threadIdx` as `[x, y, z]`.
    pub thread_idx: [u32; 3],
    /// `blockDim` as `[x, y, z]`.
    pub block: [u32; 3],
    /// Values of named constants.
    pub constants: &'a [(String, i64)],
}

impl ThreadContext<'_> {
    fn lookup(&self, name: &str) -> Result<i64, EvalError> {
        if let Some((_, v)) = self.constants.iter().find(|(n, _)| n == name) {
            return Ok(*v);
        }
        if name == "warpSize" {
            return Ok(WARP_LANES as i64);
        }
        Err(EvalError::UnknownName {
            name: name.to_string(),
        })
    }
}

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A named constant without a value.
    #[error("`{name}` has no value (give it one, e.g. {name}=32)")]
    UnknownName {
        /// The name.
        name: String,
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
            lhs = Expr::binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.skip_ws();
        match self.rest().as_bytes().first() {
            Some(b'-') => {
                self.pos += 1;
                let e = self.unary()?;
                Ok(match e {
                    Expr::Const(v) if v > 0 => Expr::Const(-v),
                    e => Expr::unary(UnaryOp::Neg, e),
                })
            }
            Some(b'~') => {
                self.pos += 1;
                Ok(Expr::unary(UnaryOp::Not, self.unary()?))
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
                            Some(b'x') => Some(Dim::X),
                            Some(b'y') => Some(Dim::Y),
                            Some(b'z') => Some(Dim::Z),
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
                _ => Ok(Expr::Named(name.to_string())),
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
        Ok(Expr::Const(value))
    }
}
