//! [`Lanes`]: a block of [`LANES`] elements that is a [`Value`], so a
//! region's float-tier program, generic over `Value`, runs on a block at a
//! time. Each operation is one short loop over the block (vectorised by
//! the compiler where the element formula allows, as in the op-by-op
//! kernels), and the block's intermediates stay in L1 cache: the region
//! reads its inputs and writes its outputs once, whatever it computes in
//! between.

use super::region::Kernel;
use crate::{Shape, Value};
use nabla_kernels::elementwise::CompareOp;

/// Elements per block: small enough that a region's intermediates stay in
/// registers and L1 cache, large enough that each operation's loop
/// amortises its set-up and fills an AVX-512 register of `f32`.
pub const LANES: usize = 16;

/// [`LANES`] elements of one float type, evaluated together.
#[derive(Clone, Copy)]
pub struct Lanes<T>(pub [T; LANES]);

impl<T: Kernel> Lanes<T> {
    /// Every lane `v`.
    #[inline(always)]
    pub fn splat(v: T) -> Self {
        Lanes([v; LANES])
    }

    /// `f` on every lane.
    #[inline(always)]
    fn map(&self, f: impl Fn(T) -> T) -> Self {
        let mut o = *self;
        for v in o.0.iter_mut() {
            *v = f(*v);
        }
        o
    }

    /// `f` on every pair of lanes.
    #[inline(always)]
    fn zip(&self, b: &Self, f: impl Fn(T, T) -> T) -> Self {
        let mut o = *self;
        for (v, w) in o.0.iter_mut().zip(b.0.iter()) {
            *v = f(*v, *w);
        }
        o
    }
}

/// The `Value` methods of every op of the registry (`nabla-ops`) at
/// [`Lanes`]: each a short loop of the scalar formula over the block.
macro_rules! lane_methods {
    ($form:ident $($entries:tt)*) => {
        $crate::vocab::value::each_method!(lane_methods $form $($entries)*);
    };
    // Unary ops carry a (possibly empty) parameter list; binary ops none.
    (@lanes $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        #[inline(always)]
        fn $method(&self $(, $p: $pt)*) -> Self {
            self.map(|v| nabla_kernels::ops::scalar::$name(v $(, $p)*))
        }
    };
    (@lanes $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        #[inline(always)]
        fn $method(&self, o: &Self) -> Self {
            self.zip(o, |a, b| nabla_kernels::ops::scalar2::$name(a, b))
        }
    };
}

impl<T: Kernel> Value for Lanes<T> {
    #[inline(always)]
    fn shape_vec(&self) -> Shape {
        Shape::new()
    }
    #[inline(always)]
    fn full_like(&self, v: f64) -> Self {
        Lanes::splat(<T as nabla_kernels::Float>::from_f64(v))
    }
    #[inline(always)]
    fn add_scalar(&self, c: f64) -> Self {
        let c = <T as nabla_kernels::Float>::from_f64(c);
        self.map(|v| v + c)
    }
    #[inline(always)]
    fn mul_scalar(&self, c: f64) -> Self {
        let c = <T as nabla_kernels::Float>::from_f64(c);
        self.map(|v| v * c)
    }
    #[inline(always)]
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        let c = <T as nabla_kernels::Float>::from_f64(c);
        self.zip(o, |a, b| a * b * c)
    }
    #[inline(always)]
    fn add_mul_scaled(self, a: &Self, b: &Self, c: f64) -> Self {
        let c = <T as nabla_kernels::Float>::from_f64(c);
        let mut o = self;
        for ((v, x), y) in o.0.iter_mut().zip(a.0.iter()).zip(b.0.iter()) {
            *v += *x * *y * c;
        }
        o
    }
    #[inline(always)]
    fn fused_rule<R: crate::ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        R::eval(a, b, c)
    }
    nabla_ops::unary_ops!(lane_methods lanes);
    nabla_ops::binary_ops!(lane_methods lanes);
    #[inline(always)]
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        self.zip(o, |a, b| {
            if crate::vocab::value::holds(op, a, b) {
                T::ONE
            } else {
                T::ZERO
            }
        })
    }
    /// Regions are elementwise over one broadcast shape: every block is
    /// already at it.
    #[inline(always)]
    fn sum_to_shape(&self, _shape: &[usize]) -> Self {
        *self
    }
    #[inline(always)]
    fn broadcast_to(&self, _shape: &[usize]) -> Self {
        *self
    }
    #[inline(always)]
    fn stop_gradient(&self) -> Self {
        *self
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        panic!("a fused region does not read `item()`; this is a bug in #[differentiable]'s fusion")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_agree_with_scalars() {
        let x = Lanes(std::array::from_fn(|i| i as f64 - 3.0));
        let y = x.sin().mul(&x.exp()).add_scalar(1.0).powi(2);
        for i in 0..LANES {
            let v = x.0[i];
            assert_eq!(y.0[i], v.sin().mul(&v.exp()).add_scalar(1.0).powi(2));
        }
        let m = x.cmp_mask(&Lanes::splat(0.0), CompareOp::Gt);
        assert_eq!(m.0[0], 0.0);
        assert_eq!(m.0[LANES - 1], 1.0);
    }
}
