//! Lowering `kernaut-syntax` index expressions to `kernaut-gpu` expressions.
//!
//! Syntax hands out an [`IndexExpr`] per shared-memory access: the byte offset from the
//! start of the buffer, already flattened row-major with the declaration's dimensions
//! and multiplied by the element size. This module turns it into a
//! [`kernaut_gpu::Expr`] that the bank model evaluates for the 32 lanes of a warp:
//!
//! - thread indices, block dimensions and the lane map one to one;
//! - named constants keep their name and carry their folded value;
//! - a loop variable is held at its start value (the first iteration), and said so;
//! - a value the whole warp shares but the file does not fix (`blockIdx.x`, a kernel
//!   parameter) becomes a named unknown, which the bank report tries at several values;
//! - anything else (a load from memory, a call) makes the access impossible to model,
//!   with the reason.
//!
//! ```
//! use kernaut_ide::lower::lower_index;
//! use kernaut_ide::syntax::{Axis, BinOp, IndexExpr};
//!
//! let e = IndexExpr::binary(IndexExpr::ThreadIdx(Axis::X), BinOp::Mul, IndexExpr::Int(4));
//! let lowered = lower_index(&e).unwrap();
//! assert_eq!(lowered.expr.to_string(), "threadIdx.x * 4");
//! ```

use kernaut_gpu::expr::{BinOp as GpuOp, Dim, Expr};
use kernaut_syntax::{Axis, BinOp, IndexExpr};

/// An index lowered for the bank model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweredIndex {
    /// The expression over the thread index.
    pub expr: Expr,
    /// Named constants and their values (`TILE_DIM` = 32).
    pub constants: Vec<(String, i64)>,
    /// Loop variables held at their start value: the name and the start as written
    /// after lowering (`k` held at `0`).
    pub held_loops: Vec<(String, String)>,
    /// Values the warp shares but the file does not fix (`blockIdx.x`, parameters).
    pub uniforms: Vec<String>,
}

/// Lowers `index`, or says why it cannot be modelled.
pub fn lower_index(index: &IndexExpr) -> Result<LoweredIndex, String> {
    let mut out = LoweredIndex {
        expr: Expr::Const(0),
        constants: Vec::new(),
        held_loops: Vec::new(),
        uniforms: Vec::new(),
    };
    out.expr = lower(index, &mut out, 0)?;
    Ok(out)
}

/// The deepest expression lowered; deeper ones are reported as not modelled.
const MAX_DEPTH: usize = 256;

fn dim(a: Axis) -> Dim {
    match a {
        Axis::X => Dim::X,
        Axis::Y => Dim::Y,
        Axis::Z => Dim::Z,
    }
}

fn op(o: BinOp) -> GpuOp {
    match o {
        BinOp::Add => GpuOp::Add,
        BinOp::Sub => GpuOp::Sub,
        BinOp::Mul => GpuOp::Mul,
        BinOp::Div => GpuOp::Div,
        BinOp::Rem => GpuOp::Rem,
        BinOp::Shl => GpuOp::Shl,
        BinOp::Shr => GpuOp::Shr,
        BinOp::And => GpuOp::And,
        BinOp::Or => GpuOp::Or,
        BinOp::Xor => GpuOp::Xor,
    }
}

fn lower(e: &IndexExpr, out: &mut LoweredIndex, depth: usize) -> Result<Expr, String> {
    if depth > MAX_DEPTH {
        return Err("the index is nested too deeply".into());
    }
    Ok(match e {
        IndexExpr::Int(v) => Expr::Const(*v),
        IndexExpr::ThreadIdx(a) => Expr::ThreadIdx(dim(*a)),
        IndexExpr::BlockDim(a) => Expr::BlockDim(dim(*a)),
        IndexExpr::Lane => Expr::Lane,
        IndexExpr::Const { name, value } => {
            match out.constants.iter().find(|(n, _)| n == name) {
                Some((_, v)) if v != value => return Ok(Expr::Const(*value)),
                Some(_) => {}
                None => out.constants.push((name.clone(), *value)),
            }
            Expr::Named(name.clone())
        }
        IndexExpr::LoopVar { name, start, .. } => {
            let start = lower(start, out, depth + 1)
                .map_err(|r| format!("the start of loop variable `{name}`: {r}"))?;
            let shown = start.to_string();
            if !out.held_loops.iter().any(|(n, _)| n == name) {
                out.held_loops.push((name.clone(), shown));
            }
            start
        }
        IndexExpr::Uniform(name) => {
            if !out.uniforms.contains(name) {
                out.uniforms.push(name.clone());
            }
            Expr::Named(name.clone())
        }
        IndexExpr::Binary(a, o, b) => {
            Expr::binary(op(*o), lower(a, out, depth + 1)?, lower(b, out, depth + 1)?)
        }
        IndexExpr::Unknown(reason) => return Err(reason.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(a: IndexExpr, b: IndexExpr) -> IndexExpr {
        IndexExpr::Binary(Box::new(a), BinOp::Add, Box::new(b))
    }

    #[test]
    fn loop_variables_are_held_at_their_start() {
        let k = IndexExpr::LoopVar {
            name: "k".into(),
            start: Box::new(IndexExpr::Int(0)),
            end: Some(32),
            step: Some(1),
        };
        let l = lower_index(&add(IndexExpr::ThreadIdx(Axis::Y), k)).unwrap();
        assert_eq!(l.expr.to_string(), "threadIdx.y + 0");
        assert_eq!(l.held_loops, vec![("k".to_string(), "0".to_string())]);
    }

    #[test]
    fn constants_keep_their_names_and_uniforms_are_listed() {
        let e = add(
            IndexExpr::Const {
                name: "TILE".into(),
                value: 32,
            },
            IndexExpr::Uniform("blockIdx.x".into()),
        );
        let l = lower_index(&e).unwrap();
        assert_eq!(l.expr.to_string(), "TILE + blockIdx.x");
        assert_eq!(l.constants, vec![("TILE".to_string(), 32)]);
        assert_eq!(l.uniforms, vec!["blockIdx.x".to_string()]);
    }

    #[test]
    fn unknown_parts_give_the_reason() {
        let e = add(
            IndexExpr::Lane,
            IndexExpr::Unknown("`idx[i]` is loaded from memory".into()),
        );
        assert_eq!(
            lower_index(&e).unwrap_err(),
            "`idx[i]` is loaded from memory"
        );
    }
}
