//! Matrix multiplication (`matmul`, with NumPy's batching and broadcasting)
//! and the composites `dot` and `outer`.
//!
//! The primitive takes operands of rank ≥ 2; NumPy's promotion of 1-D
//! operands is one composite over it (`matmul::promoted`, by reshapes, so
//! its derivatives come from reshape's rules), which `Array`, `Batched` and
//! the VJP entry points share.
//! Batching rule: the batch axis becomes a leading batch dimension of the
//! product.

use crate::autograd::binary_node;
use crate::primitives::binary::check_dtypes;
use crate::storage::float_map2;
use crate::{Array, ArrayValue};
use nabla_kernels::elementwise::try_broadcast_shape;
use ndarray::{ArrayViewD, Axis, Ix3, IxDyn};

/// Batched matrix product of rank ≥ 2 operands.
pub mod matmul {
    use super::*;

    /// The output shape of `a @ b` for operands of any rank ≥ 1, with
    /// NumPy's 1-D promotions (`Promotion`), checking the shapes as the
    /// forward does (the output-only tail computes only this).
    ///
    /// ```
    /// use nabla::primitives::linalg::matmul;
    /// assert_eq!(&matmul::out_shape(&[5, 2, 3], &[3, 4])[..], &[5, 2, 4]);
    /// assert_eq!(&matmul::out_shape(&[2, 3], &[3])[..], &[2]); // matrix · vector
    /// ```
    #[track_caller]
    pub fn out_shape(sa: &[usize], sb: &[usize]) -> crate::Shape {
        check_ranks("matmul", sa, sb);
        let p = Promotion::of(sa, sb);
        p.demoted(&nd_out_shape(&p.a, &p.b))
    }

    /// NumPy's 1-D promotions of `matmul`, written once: a 1-D left operand
    /// is a row `[1, k]`, a 1-D right operand a column `[k, 1]`, and the
    /// axes they add are removed from the product. [`promoted`] runs the
    /// rank ≥ 2 product of any value type through them, [`promoted_vjp`]
    /// its VJP rules.
    pub(crate) struct Promotion {
        /// The left operand's shape as a matrix (or batch of them).
        pub a: crate::Shape,
        /// The right operand's shape as a matrix.
        pub b: crate::Shape,
        row: bool,
        col: bool,
    }

    impl Promotion {
        pub(crate) fn of(sa: &[usize], sb: &[usize]) -> Self {
            let a = match sa {
                [k] => crate::Shape::from_slice(&[1, *k]),
                _ => crate::Shape::from_slice(sa),
            };
            let b = match sb {
                [k] => crate::Shape::from_slice(&[*k, 1]),
                _ => crate::Shape::from_slice(sb),
            };
            Promotion {
                a,
                b,
                row: sa.len() == 1,
                col: sb.len() == 1,
            }
        }
        /// Whether an operand is 1-D (else every shape is as given).
        fn any(&self) -> bool {
            self.row || self.col
        }
        /// The product's shape without the promoted axes.
        fn demoted(&self, out: &[usize]) -> crate::Shape {
            let mut out = crate::Shape::from_slice(out);
            let n = out.len();
            if self.col {
                out.remove(n - 1);
            }
            if self.row {
                out.remove(n - 2);
            }
            out
        }
        /// A cotangent of the demoted product reshaped to the promoted one.
        fn promoted_ct(&self, ct: &[usize]) -> crate::Shape {
            let mut cs = crate::Shape::from_slice(ct);
            if self.row {
                cs.insert(cs.len() - usize::from(!self.col), 1);
            }
            if self.col {
                cs.push(1);
            }
            cs
        }
    }

    /// `a @ b` with NumPy's 1-D promotions around `nd`, the product of
    /// rank ≥ 2 operands (the primitive on arrays, a batched product on
    /// batched values).
    pub(crate) fn promoted<V: ArrayValue>(a: &V, b: &V, nd: impl FnOnce(&V, &V) -> V) -> V {
        let p = Promotion::of(&a.shape_vec(), &b.shape_vec());
        if !p.any() {
            return nd(a, b);
        }
        let lift = |x: &V, s: &[usize]| {
            if x.shape_vec()[..] == *s {
                x.clone()
            } else {
                x.reshape(s)
            }
        };
        let y = nd(&lift(a, &p.a), &lift(b, &p.b));
        y.reshape(&p.demoted(&y.shape_vec()))
    }

    /// The VJP rule `rule(a, b, ct)` of the rank ≥ 2 product (`vjp_0` or
    /// `vjp_1`) through NumPy's 1-D promotions: operands and cotangent
    /// promoted, the result shaped as the operand `like` (`a` or `b`).
    pub(crate) fn promoted_vjp<V: ArrayValue>(
        a: &V,
        b: &V,
        ct: &V,
        like: &V,
        rule: impl FnOnce(&V, &V, &V) -> V,
    ) -> V {
        let p = Promotion::of(&a.shape_vec(), &b.shape_vec());
        if !p.any() {
            return rule(a, b, ct);
        }
        let ct2 = ct.reshape(&p.promoted_ct(&ct.shape_vec()));
        rule(&a.reshape(&p.a), &b.reshape(&p.b), &ct2).reshape(&like.shape_vec())
    }

    /// Panics unless both operands have at least one axis and their inner
    /// dimensions agree (checked on the caller's shapes, before 1-D
    /// operands are promoted, so the message shows them and points at the
    /// caller).
    #[track_caller]
    pub(crate) fn check_ranks(op: &str, sa: &[usize], sb: &[usize]) {
        if sa.is_empty() || sb.is_empty() {
            panic!(
                "{op}: operands must have at least one dimension, got {sa:?} @ {sb:?}; use * to scale by a scalar"
            );
        }
        let k = sa[sa.len() - 1];
        let k2 = if sb.len() == 1 {
            sb[0]
        } else {
            sb[sb.len() - 2]
        };
        if k != k2 {
            panic!(
                "{op}: inner dimensions differ, {sa:?} @ {sb:?} ({k} vs {k2}); the last axis of the left operand \
                 must equal the second-to-last of the right (transpose one operand?)"
            );
        }
    }

    /// The output shape for rank ≥ 2 operands: the broadcast batch axes,
    /// then `[m, n]`; panics naming the shapes when they do not fit.
    #[track_caller]
    fn nd_out_shape(sa: &[usize], sb: &[usize]) -> crate::Shape {
        let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
        let (k2, n) = (sb[sb.len() - 2], sb[sb.len() - 1]);
        if k != k2 {
            panic!(
                "matmul: inner dimensions differ, {sa:?} @ {sb:?} ({k} vs {k2}); the last axis of the left operand \
                 must equal the second-to-last of the right (transpose one operand?)"
            );
        }
        let Some(mut out) = try_broadcast_shape(&sa[..sa.len() - 2], &sb[..sb.len() - 2]) else {
            panic!(
                "matmul: batch dimensions {:?} and {:?} of {sa:?} @ {sb:?} do not broadcast; leading dimensions \
                 must be equal or 1",
                &sa[..sa.len() - 2],
                &sb[..sb.len() - 2]
            )
        };
        out.extend([m, n]);
        out
    }

    /// Forward: one GEMM per batch entry, or a single GEMM when `b` is a
    /// plain matrix and `a` is contiguous.
    ///
    /// ```
    /// use nabla::{primitives::linalg::matmul, Array};
    /// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// let b = Array::from_vec(vec![1.0f64, 0.0, 1.0], &[3, 1]);
    /// assert_eq!(matmul::forward(&a, &b).to_vec::<f64>(), vec![4.0, 10.0]);
    /// ```
    #[track_caller]
    pub fn forward(a: &Array, b: &Array) -> Array {
        let y = kernel(a, b);
        crate::array::nans::check("matmul", &[a, b], &y);
        y
    }

    #[track_caller]
    fn kernel(a: &Array, b: &Array) -> Array {
        check_dtypes("matmul", a, b);
        let (sa, sb) = (a.shape(), b.shape());
        let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
        let out_shape = nd_out_shape(sa, sb);
        let batch = &out_shape[..out_shape.len() - 2];
        let bsize: usize = batch.iter().product();
        if bsize == 0 {
            // An empty batch: nothing to multiply (and no batch entry to
            // take a view of).
            return Array::zeros_on(&out_shape, a.dtype(), a.device());
        }
        crate::array::on_gpus!("matmul", [a, b], |g| {
            let (a3, b3) = (
                gpu_batch3(&g[0], batch, bsize),
                gpu_batch3(&g[1], batch, bsize),
            );
            nabla_kernels::cuda::matmul(&a3, &b3).reshape(&out_shape)
        });
        Array::from_data(float_map2!(
            &*a.data,
            &*b.data,
            |x, y| {
                let out = if sb.len() == 2 && x.is_standard_layout() {
                    // [.., M, K] @ [K, N] is one [B·M, K] @ [K, N] product.
                    let x3 = x
                        .view()
                        .into_shape_with_order((1, bsize * m, k))
                        .expect("contiguous");
                    let y3 = y
                        .view()
                        .insert_axis(Axis(0))
                        .into_dimensionality::<Ix3>()
                        .expect("rank 3");
                    nabla_kernels::matmul::matmul(x3, y3)
                } else {
                    let x3 = to_batch3(x.view(), batch, bsize);
                    let y3 = to_batch3(y.view(), batch, bsize);
                    nabla_kernels::matmul::matmul(x3.view(), y3.view())
                };
                out.into_dyn()
                    .into_shape_with_order(IxDyn(&out_shape))
                    .expect("size")
            },
            unreachable!()
        ))
    }

    /// A device operand as `[B, rows, cols]` broadcast to `batch` (a view
    /// unless several batch axes must be merged).
    #[cfg(feature = "cuda")]
    fn gpu_batch3(
        g: &nabla_kernels::cuda::GpuArray,
        batch: &[usize],
        bsize: usize,
    ) -> nabla_kernels::cuda::GpuArray {
        let nd = g.shape().len();
        let (r, c) = (g.shape()[nd - 2], g.shape()[nd - 1]);
        let mut full = batch.to_vec();
        full.extend([r, c]);
        let v = g.broadcast_to(&full);
        match batch.len() {
            0 => v.broadcast_to(&[1, r, c]),
            1 => v,
            _ => v.reshape(&[bsize, r, c]),
        }
    }

    /// A `[B, rows, cols]` view (or copy, if the batch axes are not
    /// mergeable) of an operand broadcast to `batch`.
    fn to_batch3<'a, T: Copy>(
        v: ArrayViewD<'a, T>,
        batch: &[usize],
        bsize: usize,
    ) -> ndarray::CowArray<'a, T, Ix3> {
        let nd = v.ndim();
        let (r, c) = (v.shape()[nd - 2], v.shape()[nd - 1]);
        if nd == 2 {
            let v3 = v
                .insert_axis(Axis(0))
                .into_dimensionality::<Ix3>()
                .expect("rank 3");
            if bsize == 1 {
                // One product: the view as it is (the GEMM takes any
                // strides, so a transpose costs nothing).
                return v3.into();
            }
            return v3
                .broadcast((bsize, r, c))
                .expect("stride-0 batch")
                .to_owned()
                .into();
        }
        if v.shape()[..nd - 2] == *batch {
            // Batch axes that step evenly merge into one (a transposed
            // matrix per batch entry, as `kᵀ` in attention, stays a view).
            let nb = nd - 2;
            let mut w = v.clone();
            if (0..nb - 1)
                .rev()
                .all(|t| w.merge_axes(Axis(t), Axis(nb - 1)))
            {
                for _ in 0..nb - 1 {
                    w = w.index_axis_move(Axis(0), 0);
                }
                return w.into_dimensionality::<Ix3>().expect("rank 3").into();
            }
        }
        let mut full = batch.to_vec();
        full.extend([r, c]);
        let b = v.broadcast(IxDyn(&full)).expect("batch broadcasts");
        nabla_kernels::elementwise::contiguous_as(&b, &[bsize, r, c])
            .into_dimensionality::<Ix3>()
            .expect("rank 3")
            .into()
    }

    /// JVP rule: `ȧ·b + a·ḃ`; `None` is a symbolic-zero tangent.
    ///
    /// ```
    /// use nabla::{primitives::linalg::matmul, Array, DType};
    /// let a = Array::eye(2, DType::F64);
    /// let b = Array::from_vec(vec![1.0f64, 2.0], &[2, 1]);
    /// let da = Array::from_vec(vec![0.0f64, 1.0, 0.0, 0.0], &[2, 2]);
    /// assert_eq!(matmul::jvp(&a, &b, Some(&da), None).to_vec::<f64>(), vec![2.0, 0.0]);
    /// ```
    pub fn jvp<V: ArrayValue>(a: &V, b: &V, da: Option<&V>, db: Option<&V>) -> V {
        match (da, db) {
            (Some(da), Some(db)) => da.matmul(b).add(&a.matmul(db)),
            (Some(da), None) => da.matmul(b),
            (None, Some(db)) => a.matmul(db),
            (None, None) => a.matmul(b).zeros_like(),
        }
    }

    fn mt<V: ArrayValue>(x: &V) -> V {
        let nd = x.ndim();
        let mut perm: Vec<usize> = (0..nd).collect();
        perm.swap(nd - 2, nd - 1);
        x.permute(&perm)
    }

    /// VJP rule for `a`: `ȳ·bᵀ`, summed over broadcast batch axes.
    ///
    /// ```
    /// use nabla::{primitives::linalg::matmul, Array, DType};
    /// let a = Array::zeros(&[2, 3], DType::F64);
    /// let b = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3, 1]);
    /// let g = matmul::vjp_0(&a, &b, &Array::ones(&[2, 1], DType::F64));
    /// assert_eq!(g.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    /// ```
    pub fn vjp_0<V: ArrayValue>(a: &V, b: &V, ct: &V) -> V {
        ct.matmul(&mt(b)).sum_to_shape(&a.shape_vec())
    }

    /// VJP rule for `b`: `aᵀ·ȳ`, summed over broadcast batch axes.
    ///
    /// ```
    /// use nabla::{primitives::linalg::matmul, Array, DType};
    /// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// let b = Array::zeros(&[3, 1], DType::F64);
    /// let g = matmul::vjp_1(&a, &b, &Array::ones(&[2, 1], DType::F64));
    /// assert_eq!(g.to_vec::<f64>(), vec![5.0, 7.0, 9.0]);
    /// ```
    pub fn vjp_1<V: ArrayValue>(a: &V, b: &V, ct: &V) -> V {
        let (sa, sb, sc) = (a.shape_vec(), b.shape_vec(), ct.shape_vec());
        if sb.len() == 2 && sa.len() > 2 && sc.len() == sa.len() {
            // A matrix shared by every batch entry (a layer's weight): one
            // product over all rows, `[rows, k]ᵀ · [rows, n]`, instead of a
            // product per entry summed afterwards.
            let rows: usize = sa[..sa.len() - 1].iter().product();
            let a2 = a.reshape(&[rows, sa[sa.len() - 1]]);
            let c2 = ct.reshape(&[rows, sc[sc.len() - 1]]);
            return mt(&a2).matmul(&c2);
        }
        mt(a).matmul(ct).sum_to_shape(&sb)
    }
}

impl Array {
    /// Matrix product with NumPy semantics: 1-D operands are promoted
    /// (vector·matrix, matrix·vector, dot), leading axes are batch axes and
    /// broadcast.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// let a = Array::ones(&[5, 2, 3], DType::F32);
    /// let b = Array::ones(&[3, 4], DType::F32);
    /// assert_eq!(a.matmul(&b).shape(), &[5, 2, 4]);
    /// let v = Array::ones(&[3], DType::F32);
    /// assert_eq!(v.matmul(&v).item(), 3.0);
    /// ```
    #[track_caller]
    pub fn matmul(&self, other: &Array) -> Array {
        matmul::check_ranks("matmul", self.shape(), other.shape());
        // Checked here, before 1-D operands are promoted, so the message
        // shows the caller's shapes and points at the caller.
        crate::primitives::binary::check_dtypes("matmul", self, other);
        matmul::promoted(self, other, |a, b| a.matmul_nd(b))
    }

    #[track_caller]
    fn matmul_nd(&self, other: &Array) -> Array {
        let y = matmul::forward(self, other);
        binary_node(y, "matmul", self, other, |_| {
            let (ar, br) = (self.detach(), other.detach());
            move |ct, want| {
                [
                    want[0].then(|| matmul::vjp_0(&ar, &br, ct)),
                    want[1].then(|| matmul::vjp_1(&ar, &br, ct)),
                ]
            }
        })
    }

    /// Inner product of two vectors (`matmul` of 1-D arrays).
    ///
    /// ```
    /// # use nabla::Array;
    /// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    /// assert_eq!(a.dot(&a).item(), 5.0);
    /// ```
    #[track_caller]
    pub fn dot(&self, other: &Array) -> Array {
        matmul::check_ranks("dot", self.shape(), other.shape());
        crate::primitives::binary::check_dtypes("dot", self, other);
        self.matmul(other)
    }

    /// Outer product of two vectors: `out[i, j] = a[i] * b[j]`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    /// assert_eq!(a.outer(&a).to_vec::<f64>(), vec![1.0, 2.0, 2.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn outer(&self, other: &Array) -> Array {
        if self.ndim() != 1 || other.ndim() != 1 {
            panic!(
                "outer: expects two vectors, got {:?} and {:?}; flatten() them first",
                self.shape(),
                other.shape()
            );
        }
        crate::primitives::binary::check_dtypes("outer", self, other);
        outer(self, other)
    }
}

/// `a[i] · b[j]`, written with generic value ops (differentiable).
///
/// ```
/// use nabla::{primitives::linalg::outer, Array};
/// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
/// let b = Array::from_vec(vec![3.0f64, 4.0, 5.0], &[3]);
/// let y = outer(&a, &b);
/// assert_eq!(y.shape(), &[2, 3]);
/// assert_eq!(y.to_vec::<f64>(), vec![3.0, 4.0, 5.0, 6.0, 8.0, 10.0]);
/// ```
pub fn outer<V: ArrayValue>(a: &V, b: &V) -> V {
    let (n, m) = (a.shape_vec()[0], b.shape_vec()[0]);
    a.reshape(&[n, 1]).mul(&b.reshape(&[1, m]))
}
