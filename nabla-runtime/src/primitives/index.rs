//! Indexing primitives: `index_select` (gather), `index_add` (its
//! adjoint, a scatter-add) and `where` (select by a mask).
//!
//! Batching rule: the batch axis stays in front and the indexed axis shifts
//! by one; a batched mask broadcasts.

use crate::array::norm_axis;
use crate::autograd::{binary_node, unary_node};
use crate::primitives::binary::check_dtypes;
use crate::primitives::unary::not_float;
use crate::storage::{Data, any_map, float_map};
use crate::{Array, ArrayValue};

/// Gather along an axis.
pub mod index_select {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::index::index_select, Array, DType};
    /// let x = Array::arange(6, DType::F64).reshape(&[2, 3]);
    /// let y = index_select::forward(&x, 1, &[2, 0]);
    /// assert_eq!(y.to_vec::<f64>(), vec![2.0, 0.0, 5.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array, axis: usize, idx: &[usize]) -> Array {
        check_index_select(x.shape(), axis, idx);
        crate::array::on_gpu!(&*x.data, |g| nabla_kernels::cuda::index_select(
            g, axis, idx
        ));
        Array::from_data(any_map!(&*x.data, |a| nabla_kernels::index::index_select(
            a.view(),
            axis,
            idx
        )))
    }
    /// JVP rule.
    ///
    /// ```
    /// use nabla::{primitives::index::index_select, Array};
    /// let dx = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    /// assert_eq!(index_select::jvp(&dx, 0, &[2, 2]).to_vec::<f64>(), vec![3.0, 3.0]);
    /// ```
    pub fn jvp<V: ArrayValue>(dx: &V, axis: usize, idx: &[usize]) -> V {
        dx.index_select(axis, idx)
    }
    /// VJP rule: scatter-add the cotangent back.
    ///
    /// ```
    /// use nabla::{primitives::index::index_select, Array, DType};
    /// let g = index_select::vjp(&[2, 3], 1, &[2, 0], &Array::ones(&[2, 2], DType::F64));
    /// assert_eq!(g.to_vec::<f64>(), vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    /// ```
    pub fn vjp<V: ArrayValue>(x_shape: &[usize], axis: usize, idx: &[usize], ct: &V) -> V {
        ct.index_add(x_shape, axis, idx)
    }
}

/// Scatter-add into zeros: the adjoint of [`index_select`].
pub mod index_add {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::index::index_add, Array};
    /// let src = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    /// let y = index_add::forward(&src, &[2], 0, &[0, 1, 0]); // repeated indices add up
    /// assert_eq!(y.to_vec::<f64>(), vec![4.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn forward(src: &Array, shape: &[usize], axis: usize, idx: &[usize]) -> Array {
        if !src.dtype().is_float() {
            not_float("index_add", src)
        }
        check_index_add(src.shape(), shape, axis, idx);
        #[cfg(feature = "cuda")]
        if nabla_kernels::determinism::deterministic() && src.device() != crate::Device::Cpu {
            // Atomic adds land in no fixed order: add on the host instead.
            let moved = |a: &Array, to| Array::from_data(crate::storage::gpu::moved(&a.data, to));
            let host = forward(&moved(src, crate::Device::Cpu), shape, axis, idx);
            return moved(&host, src.device());
        }
        crate::array::on_gpu!(&*src.data, |g| nabla_kernels::cuda::index_add(
            shape, axis, idx, g
        ));
        Array::from_data(float_map!(
            &*src.data,
            |a| nabla_kernels::index::index_add(shape, axis, idx, a.view()),
            not_float("index_add", src)
        ))
    }
    /// JVP rule.
    ///
    /// ```
    /// use nabla::{primitives::index::index_add, Array, DType};
    /// let t = index_add::jvp(&Array::ones(&[2], DType::F64), &[3], 0, &[2, 2]);
    /// assert_eq!(t.to_vec::<f64>(), vec![0.0, 0.0, 2.0]);
    /// ```
    pub fn jvp<V: ArrayValue>(dsrc: &V, shape: &[usize], axis: usize, idx: &[usize]) -> V {
        dsrc.index_add(shape, axis, idx)
    }
    /// VJP rule: gather the cotangent.
    ///
    /// ```
    /// use nabla::{primitives::index::index_add, Array};
    /// let ct = Array::from_vec(vec![10.0f64, 20.0], &[2]);
    /// assert_eq!(index_add::vjp(0, &[0, 1, 0], &ct).to_vec::<f64>(), vec![10.0, 20.0, 10.0]);
    /// ```
    pub fn vjp<V: ArrayValue>(axis: usize, idx: &[usize], ct: &V) -> V {
        ct.index_select(axis, idx)
    }
}

/// Checks that every index of an `index_select` along `axis` of an
/// array of `shape` is below the axis' length (also read by
/// `nabla::dist`'s shape-only recorder).
#[doc(hidden)]
#[track_caller]
pub fn check_index_select(shape: &[usize], axis: usize, idx: &[usize]) {
    let n = shape[axis];
    if let Some(&bad) = idx.iter().find(|&&i| i >= n) {
        panic!(
            "index_select: index {bad} is out of bounds for axis {axis} of length {n} (shape {shape:?}); indices must be < {n}"
        );
    }
}

/// Checks that `src` (its shape) fits an `index_add` into `shape` along
/// `axis` at `idx`: the same rank, one index per slab of `src` along
/// `axis`, every index below `shape[axis]`, the other lengths equal
/// (also read by `nabla::dist`'s shape-only recorder).
#[doc(hidden)]
#[track_caller]
pub fn check_index_add(src: &[usize], shape: &[usize], axis: usize, idx: &[usize]) {
    let fits = src.len() == shape.len()
        && axis < shape.len()
        && src[axis] == idx.len()
        && (0..src.len()).all(|k| k == axis || src[k] == shape[k]);
    if !fits {
        panic!(
            "index_add: a source of shape {src:?} with {} indices does not fit shape {shape:?} along axis \
             {axis}; the source needs the target's shape with one slab per index along the axis",
            idx.len()
        );
    }
    if let Some(&bad) = idx.iter().find(|&&i| i >= shape[axis]) {
        panic!(
            "index_add: index {bad} is out of bounds for axis {axis} of length {} (shape {shape:?}); indices \
             must be < {}",
            shape[axis], shape[axis]
        );
    }
}

/// `mask ? a : b` with broadcasting (`jnp.where`).
pub mod select {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::index::select, Array};
    /// let mask = Array::from_vec(vec![true, false], &[2]);
    /// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    /// let y = select::forward(&mask, &a, &Array::scalar(0.0f64)); // `b` broadcasts
    /// assert_eq!(y.to_vec::<f64>(), vec![1.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn forward(mask: &Array, a: &Array, b: &Array) -> Array {
        if mask.dtype() != crate::DType::Bool {
            panic!(
                "where: the mask must be a bool array, got {} {:?}; build it with a comparison such as x.gt(&y)",
                mask.dtype(),
                mask.shape()
            )
        }
        check_dtypes("where", a, b);
        let shape = nabla_kernels::elementwise::try_broadcast_shape(a.shape(), b.shape())
            .and_then(|s| nabla_kernels::elementwise::try_broadcast_shape(&s, mask.shape()));
        if shape.is_none() {
            panic!(
                "where: mask {:?}, a {:?} and b {:?} do not broadcast to one shape; make trailing dimensions equal or 1",
                mask.shape(),
                a.shape(),
                b.shape()
            );
        }
        // A host mask next to device operands is moved to their device
        // (masks are data the caller built; values never move implicitly).
        #[cfg(feature = "cuda")]
        let moved_mask;
        #[cfg(feature = "cuda")]
        let mask = if mask.device() == crate::Device::Cpu && a.device() != crate::Device::Cpu {
            moved_mask = mask.to_device(a.device());
            &moved_mask
        } else {
            mask
        };
        crate::array::on_gpus!("where", [mask, a, b], |g| {
            nabla_kernels::cuda::where_select(&g[0], &g[1], &g[2])
        });
        let Data::Bool(m) = &*mask.data else {
            unreachable!("bool checked above")
        };
        Array::from_data(crate::storage::float_map2!(
            &*a.data,
            &*b.data,
            |x, y| nabla_kernels::elementwise::where_select(m.view(), x.view(), y.view()),
            unreachable!()
        ))
    }
    /// JVP rule; `None` is a symbolic-zero tangent.
    ///
    /// ```
    /// use nabla::{primitives::index::select, Array, DType};
    /// let mask = Array::from_vec(vec![true, false], &[2]);
    /// let y = Array::zeros(&[2], DType::F64);
    /// let da = Array::from_vec(vec![5.0f64, 6.0], &[2]);
    /// assert_eq!(select::jvp(&mask, &y, Some(&da), None).to_vec::<f64>(), vec![5.0, 0.0]);
    /// ```
    pub fn jvp<V: ArrayValue>(mask: &Array, y: &V, da: Option<&V>, db: Option<&V>) -> V {
        let shape = y.shape_vec();
        let z = y.zeros_like();
        let da = da
            .map(|d| d.broadcast_to(&shape))
            .unwrap_or_else(|| z.clone());
        let db = db.map(|d| d.broadcast_to(&shape)).unwrap_or(z);
        V::select(mask, &da, &db)
    }
    /// VJP rule for `a`.
    ///
    /// ```
    /// use nabla::{primitives::index::select, Array};
    /// let mask = Array::from_vec(vec![true, false], &[2]);
    /// let ct = Array::from_vec(vec![5.0f64, 6.0], &[2]);
    /// assert_eq!(select::vjp_0(&mask, &[2], &ct).to_vec::<f64>(), vec![5.0, 0.0]);
    /// ```
    pub fn vjp_0<V: ArrayValue>(mask: &Array, a_shape: &[usize], ct: &V) -> V {
        V::select(mask, ct, &ct.zeros_like()).sum_to_shape(a_shape)
    }
    /// VJP rule for `b`.
    ///
    /// ```
    /// use nabla::{primitives::index::select, Array};
    /// let mask = Array::from_vec(vec![true, false], &[2]);
    /// let ct = Array::from_vec(vec![5.0f64, 6.0], &[2]);
    /// assert_eq!(select::vjp_1(&mask, &[], &ct).item(), 6.0); // `b` was a scalar
    /// ```
    pub fn vjp_1<V: ArrayValue>(mask: &Array, b_shape: &[usize], ct: &V) -> V {
        V::select(mask, &ct.zeros_like(), ct).sum_to_shape(b_shape)
    }
}

impl Array {
    /// Picks entries `idx` along `axis` (indices may repeat).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// let x = Array::arange(6, DType::F64).reshape(&[3, 2]);
    /// assert_eq!(x.index_select(0, &[2, 0]).to_vec::<f64>(), vec![4.0, 5.0, 0.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn index_select(&self, axis: isize, idx: &[usize]) -> Array {
        let ax = norm_axis("index_select", axis, self.ndim());
        self.index_select_norm(ax, idx)
    }

    #[track_caller]
    pub(crate) fn index_select_norm(&self, axis: usize, idx: &[usize]) -> Array {
        let y = index_select::forward(self, axis, idx);
        unary_node(y, "index_select", self, |_| {
            let (xs, idx) = (self.shape().to_vec(), idx.to_vec());
            move |ct| index_select::vjp(&xs, axis, &idx, ct)
        })
    }

    /// Zeros of `shape` plus this array's slabs along `axis` added at
    /// positions `idx` (scatter-add; the adjoint of `index_select`).
    ///
    /// ```
    /// # use nabla::Array;
    /// let src = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    /// assert_eq!(src.index_add(&[2], 0, &[1, 1, 0]).to_vec::<f64>(), vec![3.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn index_add(&self, shape: &[usize], axis: isize, idx: &[usize]) -> Array {
        let ax = norm_axis("index_add", axis, shape.len());
        self.index_add_norm(shape, ax, idx)
    }

    #[track_caller]
    pub(crate) fn index_add_norm(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Array {
        let y = index_add::forward(self, shape, axis, idx);
        unary_node(y, "index_add", self, |_| {
            let idx = idx.to_vec();
            move |ct| index_add::vjp(axis, &idx, ct)
        })
    }
}

/// `mask ? a : b` elementwise with broadcasting (`jnp.where`); `mask` is a
/// bool array.
///
/// ```
/// # use nabla::{where_, Array};
/// let x = Array::from_vec(vec![-1.0f64, 2.0], &[2]);
/// let y = where_(&x.gt(&x.zeros_like()), &x, &x.zeros_like());
/// assert_eq!(y.to_vec::<f64>(), vec![0.0, 2.0]);
/// ```
#[track_caller]
pub fn where_(mask: &Array, a: &Array, b: &Array) -> Array {
    let y = select::forward(mask, a, b);
    binary_node(y, "where", a, b, |_| {
        let (m, sa, sb) = (mask.detach(), a.shape().to_vec(), b.shape().to_vec());
        move |ct, want| {
            [
                want[0].then(|| select::vjp_0(&m, &sa, ct)),
                want[1].then(|| select::vjp_1(&m, &sb, ct)),
            ]
        }
    })
}
