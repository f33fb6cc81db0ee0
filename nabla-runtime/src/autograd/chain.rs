//! The imperative tape's fused backward of a chain of unary ops
//! (`x.sin().exp().tanh()`): the cotangent of the chain's input computed
//! in one pass, `t = ȳ; t = t · f′ₖ(xₖ, yₖ); …` block by block, instead
//! of one pass and one fresh array per op. Each op contributes a
//! [`Link`]: plain data, its saved input and output and its chain rule
//! (the rule its own VJP runs, compiled by the primitive for blocks of
//! both float types) as two function pointers.
//!
//! ```
//! use nabla::{Array, DType};
//! let x = Array::from_vec(vec![0.1f64, 0.2, 0.3], &[3]).requires_grad();
//! let before = nabla::fused::passes();
//! x.sin().exp().tanh().sum().backward();
//! assert_eq!(nabla::fused::passes(), before + 1); // three links, one pass
//! let want: Vec<f64> = [0.1f64, 0.2, 0.3]
//!     .iter()
//!     .map(|&v| { let t = v.sin().exp().tanh(); (1.0 - t * t) * v.sin().exp() * v.cos() })
//!     .collect();
//! for (g, w) in x.grad().to_vec::<f64>().iter().zip(&want) {
//!     assert!((g - w).abs() < 1e-15);
//! }
//! ```

use crate::Array;
use crate::array::{Typed, count_pass};
use crate::storage::DType;
use nabla_kernels::parallel::chunks_mut;
use std::borrow::Cow;

/// A chain rule over a block: `t = t · dy/dx` at the block's `x` and `y`.
pub(crate) type Rule<T> = fn(&[T], &[T], &mut [T]);

/// One unary op of a chain: `t ↦ t · dy/dx` at its saved `x` and `y`.
pub(crate) struct Link {
    pub x: Array,
    pub y: Array,
    pub f32: Rule<f32>,
    pub f64: Rule<f64>,
}

/// Elements per piece a thread takes, and per block the links run over
/// in turn (small enough to stay in L1 cache).
const PIECE: usize = 1 << 14;
const BLOCK: usize = 256;

/// `links` (output side first) applied to the cotangent `top` in one pass,
/// when every array is a CPU array of one float dtype and one shape; `None`
/// otherwise (the caller runs the ops' own VJPs).
pub(crate) fn backward(top: &Array, links: &[&Link]) -> Option<Array> {
    let dt = top.dtype();
    let same = |a: &Array| a.dtype() == dt && a.shape() == top.shape() && !a.is_tracked();
    if !matches!(dt, DType::F32 | DType::F64)
        || !same(top)
        || links.iter().any(|l| !same(&l.x) || !same(&l.y))
    {
        return None;
    }
    count_pass();
    match dt {
        DType::F32 => typed::<f32>(top, links, |l| l.f32),
        _ => typed::<f64>(top, links, |l| l.f64),
    }
}

/// A link's saved input and output, read in row-major order, and its rule.
type Op<'a, T> = (Cow<'a, [T]>, Cow<'a, [T]>, Rule<T>);

fn typed<T: Typed + nabla_kernels::Float>(
    top: &Array,
    links: &[&Link],
    rule: impl Fn(&Link) -> Rule<T>,
) -> Option<Array> {
    let t = contiguous::<T>(top)?;
    let ops: Vec<Op<'_, T>> = links
        .iter()
        .map(|l| Some((contiguous::<T>(&l.x)?, contiguous::<T>(&l.y)?, rule(l))))
        .collect::<Option<_>>()?;
    let mut out = t.into_owned();
    chunks_mut(&mut out, PIECE, |p, piece| {
        let lo = p * PIECE;
        for (b, block) in piece.chunks_mut(BLOCK).enumerate() {
            let s = lo + b * BLOCK;
            let e = s + block.len();
            for (x, y, f) in &ops {
                f(&x[s..e], &y[s..e], block);
            }
        }
    });
    Some(Array::from_vec(out, top.shape()))
}

/// The elements of a CPU float array in row-major order (borrowed when
/// contiguous).
fn contiguous<T: Typed + nabla_kernels::Float>(a: &Array) -> Option<Cow<'_, [T]>> {
    let arr = T::typed(a)?;
    if let Some(s) = arr.as_slice() {
        return Some(Cow::Borrowed(s));
    }
    Some(Cow::Owned(nabla_kernels::elementwise::row_major(
        &arr.view(),
    )))
}
