//! `Dual<V>`: forward-mode interpretation type (primal + tangent).
//!
//! Instantiating generic code at `Dual<V>` computes its JVP: every method
//! applies the primitive's JVP rule from [`crate::primitives`]. The tangent may be
//! a symbolic zero (`None`), so constants cost nothing. Because the rules
//! are themselves generic, `Dual<Dual<V>>` gives second derivatives.
//!
//! ```
//! use nabla::{Dual, Value};
//! // d/dx sin(x)·x at x = 1
//! let x = Dual::new(1.0f64, Some(1.0));
//! let y = x.sin().mul(&x);
//! assert!((y.tangent_or_zero() - (1f64.cos() + 1f64.sin())).abs() < 1e-15);
//! ```

use crate::primitives::{binary, index, linalg, reduce, shape};
use crate::registry::value_methods;
use crate::{Array, ArrayValue, Value};
use nabla_kernels::elementwise::CompareOp;
use ndarray::Slice;

/// A primal value with an optional tangent (`None` = symbolic zero).
#[derive(Clone, Copy, Debug)]
pub struct Dual<V> {
    /// The value.
    pub primal: V,
    /// Its directional derivative, or `None` for zero.
    pub tangent: Option<V>,
}

impl<V: Value> Dual<V> {
    /// A dual number from a primal and an optional tangent.
    ///
    /// ```
    /// let d = nabla::Dual::new(2.0f64, None);
    /// assert_eq!(d.tangent_or_zero(), 0.0);
    /// ```
    pub fn new(primal: V, tangent: Option<V>) -> Self {
        Dual { primal, tangent }
    }

    /// A constant (zero tangent).
    ///
    /// ```
    /// assert!(nabla::Dual::constant(1.0f64).tangent.is_none());
    /// ```
    pub fn constant(primal: V) -> Self {
        Dual {
            primal,
            tangent: None,
        }
    }

    /// The tangent, materialising a symbolic zero.
    ///
    /// ```
    /// assert_eq!(nabla::Dual::new(1.0f64, Some(3.0)).tangent_or_zero(), 3.0);
    /// ```
    pub fn tangent_or_zero(&self) -> V {
        self.tangent
            .clone()
            .unwrap_or_else(|| self.primal.zeros_like())
    }

    #[inline]
    fn unary(&self, y: V, rule: impl FnOnce(&V, &V, &V) -> V) -> Self {
        let t = self.tangent.as_ref().map(|dx| rule(&self.primal, &y, dx));
        Dual {
            primal: y,
            tangent: t,
        }
    }

    #[inline]
    fn linear(&self, y: V, f: impl FnOnce(&V) -> V) -> Self {
        Dual {
            primal: y,
            tangent: self.tangent.as_ref().map(f),
        }
    }

    #[inline]
    fn binary(
        &self,
        o: &Self,
        y: V,
        rule: impl FnOnce(&V, &V, &V, Option<&V>, Option<&V>) -> V,
    ) -> Self {
        let t = if self.tangent.is_none() && o.tangent.is_none() {
            None
        } else {
            Some(rule(
                &self.primal,
                &o.primal,
                &y,
                self.tangent.as_ref(),
                o.tangent.as_ref(),
            ))
        };
        Dual {
            primal: y,
            tangent: t,
        }
    }
}

impl<V: Value> Value for Dual<V> {
    #[inline]
    fn shape_vec(&self) -> crate::Shape {
        self.primal.shape_vec()
    }
    #[inline]
    fn ndim(&self) -> usize {
        self.primal.ndim()
    }
    #[inline]
    fn full_like(&self, v: f64) -> Self {
        Dual::constant(self.primal.full_like(v))
    }
    #[inline]
    fn add_scalar(&self, c: f64) -> Self {
        self.linear(self.primal.add_scalar(c), |t| t.clone())
    }
    #[inline]
    fn mul_scalar(&self, c: f64) -> Self {
        self.linear(self.primal.mul_scalar(c), |t| t.mul_scalar(c))
    }
    #[inline]
    fn add_mul_scaled(self, a: &Self, b: &Self, c: f64) -> Self {
        // `self + c·a·b` with tangent `ṡ + c·(ȧ·b + a·ḃ)`, each term added in
        // place; mixed shapes (broadcasting) take the composition.
        // `a` and `b` may broadcast to `self`'s shape, not beyond it.
        let shape = self.primal.shape_vec();
        let fits = |o: &V| nabla_kernels::elementwise::broadcasts_to(&o.shape_vec(), &shape);
        if !fits(&a.primal) || !fits(&b.primal) {
            return self.add(&a.mul_scaled(b, c));
        }
        let full = |t: V| {
            if t.shape_vec() == shape {
                t
            } else {
                t.broadcast_to(&shape)
            }
        };
        let primal = self.primal.add_mul_scaled(&a.primal, &b.primal, c);
        let mut t = self.tangent;
        if let Some(da) = &a.tangent {
            t = Some(match t {
                Some(t) => t.add_mul_scaled(da, &b.primal, c),
                None => full(da.mul_scaled(&b.primal, c)),
            });
        }
        if let Some(db) = &b.tangent {
            t = Some(match t {
                Some(t) => t.add_mul_scaled(&a.primal, db, c),
                None => full(a.primal.mul_scaled(db, c)),
            });
        }
        Dual { primal, tangent: t }
    }
    #[inline]
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        self.binary(
            o,
            self.primal.mul_scaled(&o.primal, c),
            |a, b, y, da, db| binary::mul_scaled::jvp(a, b, y, da, db, c),
        )
    }
    nabla_ops::unary_ops!(value_methods dual);
    nabla_ops::binary_ops!(value_methods dual);
    #[inline]
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        Dual::constant(self.primal.cmp_mask(&o.primal, op))
    }
    #[inline]
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        self.linear(self.primal.sum_to_shape(shape), |t| t.sum_to_shape(shape))
    }
    #[inline]
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        self.linear(self.primal.broadcast_to(shape), |t| t.broadcast_to(shape))
    }
    #[inline]
    fn stop_gradient(&self) -> Self {
        Dual::constant(self.primal.stop_gradient())
    }
    #[track_caller]
    #[inline]
    fn item_f64(&self) -> f64 {
        self.primal.item_f64()
    }
}

impl<V: ArrayValue> ArrayValue for Dual<V> {
    fn reshape(&self, s: &[usize]) -> Self {
        self.linear(self.primal.reshape(s), |t| shape::reshape::jvp(t, s))
    }
    fn permute(&self, p: &[usize]) -> Self {
        self.linear(self.primal.permute(p), |t| shape::permute::jvp(t, p))
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.linear(self.primal.sum_axes(axes, keepdim), |t| {
            reduce::sum::jvp(t, axes, keepdim)
        })
    }
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.unary(self.primal.max_axes(axes, keepdim), |x, y, dx| {
            reduce::max::jvp(x, y, axes, keepdim, dx)
        })
    }
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.unary(self.primal.min_axes(axes, keepdim), |x, y, dx| {
            reduce::min::jvp(x, y, axes, keepdim, dx)
        })
    }
    /// The weights are piecewise constant in `x`: the primal and the
    /// tangent each take the rule at the primal point.
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        let rule = |v: &V| self.primal.chooser_jvp(&y.primal, axes, keepdim, v);
        Dual::new(rule(&dx.primal), dx.tangent.as_ref().map(rule))
    }
    /// As [`Self::chooser_jvp`].
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        let rule = |v: &V| self.primal.chooser_vjp(&y.primal, axes, keepdim, v);
        Dual::new(rule(&ct.primal), ct.tangent.as_ref().map(rule))
    }
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.unary(self.primal.prod_axes(axes, keepdim), |x, y, dx| {
            reduce::prod::jvp(x, y, axes, keepdim, dx)
        })
    }
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        self.linear(self.primal.cumsum_axis(axis, reverse), |t| {
            reduce::cumsum::jvp(t, axis, reverse)
        })
    }
    fn slice(&self, s: &[Slice]) -> Self {
        self.linear(self.primal.slice(s), |t| shape::slice::jvp(t, s))
    }
    fn slice_place(&self, sh: &[usize], s: &[Slice]) -> Self {
        self.linear(self.primal.slice_place(sh, s), |t| {
            shape::slice_place::jvp(t, sh, s)
        })
    }
    fn add_into_slice(self, s: &[Slice], ct: &Self) -> Self {
        // Primal and tangent each add into their region (in place on arrays).
        let shape = self.primal.shape_vec();
        let primal = self.primal.add_into_slice(s, &ct.primal);
        let tangent = match (self.tangent, &ct.tangent) {
            (Some(t), Some(c)) => Some(t.add_into_slice(s, c)),
            (Some(t), None) => Some(t),
            (None, Some(c)) => Some(shape::slice_place::jvp(c, &shape, s)),
            (None, None) => None,
        };
        Dual { primal, tangent }
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        self.linear(self.primal.index_select(axis, idx), |t| {
            index::index_select::jvp(t, axis, idx)
        })
    }
    fn index_add(&self, sh: &[usize], axis: usize, idx: &[usize]) -> Self {
        self.linear(self.primal.index_add(sh, axis, idx), |t| {
            index::index_add::jvp(t, sh, axis, idx)
        })
    }
    fn concat(parts: &[Self], axis: usize) -> Self {
        let primals: Vec<V> = parts.iter().map(|p| p.primal.clone()).collect();
        let y = V::concat(&primals, axis);
        let tangent = parts.iter().any(|p| p.tangent.is_some()).then(|| {
            let ts: Vec<V> = parts.iter().map(|p| p.tangent_or_zero()).collect();
            shape::concat::jvp(&ts, axis)
        });
        Dual { primal: y, tangent }
    }
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        let y = V::select(mask, &a.primal, &b.primal);
        let tangent = (a.tangent.is_some() || b.tangent.is_some())
            .then(|| index::select::jvp(mask, &y, a.tangent.as_ref(), b.tangent.as_ref()));
        Dual { primal: y, tangent }
    }
    fn matmul(&self, o: &Self) -> Self {
        let y = self.primal.matmul(&o.primal);
        let tangent = (self.tangent.is_some() || o.tangent.is_some()).then(|| {
            linalg::matmul::jvp(
                &self.primal,
                &o.primal,
                self.tangent.as_ref(),
                o.tangent.as_ref(),
            )
        });
        Dual { primal: y, tangent }
    }
    fn dtype(&self) -> crate::DType {
        self.primal.dtype()
    }
    fn device(&self) -> crate::Device {
        self.primal.device()
    }
    fn lift(&self, a: &Array) -> Self {
        Dual::constant(self.primal.lift(a))
    }
    crate::vocab::custom_op::apply_custom!(|op, x| crate::custom::apply_dual::<Op, A, V>(op, x));
}
