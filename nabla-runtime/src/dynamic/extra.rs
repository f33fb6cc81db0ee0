//! Ops on `Dyn` outside the value traits: casts and index-valued
//! reductions, each through every kind of tracer.

use super::rev::Rev;
use super::{Dyn, Level};
use crate::interp::batched::Batched;
use crate::{Array, ArrayValue, DType};

impl Dyn {
    /// The value converted to `dtype`. Between float dtypes the tangent
    /// and cotangent are converted too; to `int64` or `bool` the result is
    /// a constant of every transform.
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// use nabla::{Array, DType};
    /// let x = Dyn::from(Array::from_vec(vec![1.5f64], &[1]));
    /// assert_eq!(x.cast(DType::F32).to_array().dtype(), DType::F32);
    /// ```
    #[track_caller]
    pub fn cast(&self, dtype: DType) -> Dyn {
        let float = matches!(dtype, DType::F32 | DType::F64);
        match self {
            Dyn::Array(a) => Dyn::Array(a.cast(dtype)),
            Dyn::Dual(l, d) => {
                let tangent = if float {
                    d.tangent.as_ref().map(|t| t.cast(dtype))
                } else {
                    None
                };
                Dyn::dual(*l, d.primal.cast(dtype), tangent)
            }
            Dyn::Batched(l, b) => Dyn::batched(*l, b.value.cast(dtype), b.bdim),
            Dyn::Rev(l, r) => {
                let y = r.value.cast(dtype);
                let from = r.value.dtype();
                let out = if float {
                    r.linear(y, move |ct| ct.cast(from))
                } else {
                    Rev::constant(y)
                };
                Dyn::Rev(*l, Box::new(out))
            }
            Dyn::Staged(l, s) => {
                let out = s.unary(move || format!("cast[{dtype:?}]"), move |x| x.cast(dtype));
                Dyn::Staged(*l, Box::new(out))
            }
        }
    }

    /// The index of the largest element along `axis` (`int64`, no
    /// derivative).
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// let x = Dyn::from(nabla::Array::from_vec(vec![1.0f64, 3.0, 2.0], &[3]));
    /// assert_eq!(x.argmax(0).to_array().to_vec::<i64>(), vec![1]);
    /// ```
    #[track_caller]
    pub fn argmax(&self, axis: usize) -> Dyn {
        self.index_reduce(axis, |a: &Array, ax| a.argmax(ax as isize))
    }

    /// The index of the smallest element along `axis` (`int64`).
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// let x = Dyn::from(nabla::Array::from_vec(vec![1.0f64, 3.0, 2.0], &[3]));
    /// assert_eq!(x.argmin(0).to_array().to_vec::<i64>(), vec![0]);
    /// ```
    #[track_caller]
    pub fn argmin(&self, axis: usize) -> Dyn {
        self.index_reduce(axis, |a: &Array, ax| a.argmin(ax as isize))
    }

    fn index_reduce(&self, axis: usize, f: fn(&Array, usize) -> Array) -> Dyn {
        match self {
            Dyn::Array(a) => Dyn::Array(f(a, axis)),
            Dyn::Dual(_, d) => d.primal.index_reduce(axis, f),
            Dyn::Rev(_, r) => r.value.index_reduce(axis, f),
            Dyn::Batched(l, b) => batched_reduce(*l, b, axis, f),
            Dyn::Staged(l, s) => {
                let out = s.unary(
                    move || format!("index_reduce[{axis}]"),
                    move |x| x.index_reduce(axis, f),
                );
                Dyn::Staged(*l, Box::new(out))
            }
        }
    }
}

fn batched_reduce(l: Level, b: &Batched<Dyn>, axis: usize, f: fn(&Array, usize) -> Array) -> Dyn {
    match b.bdim {
        None => Dyn::batched(l, b.value.index_reduce(axis, f), None),
        Some(_) => Dyn::batched(l, b.front().index_reduce(axis + 1, f), Some(0)),
    }
}
