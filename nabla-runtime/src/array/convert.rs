//! Conversions to and from Rust and ndarray values.

use crate::Array;
use crate::storage::{Data, Element};
use ndarray::{ArrayD, IxDyn};

impl Array {
    /// The elements in row-major order, converted to `T`.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    /// assert_eq!(x.to_vec::<f64>(), vec![1.0, 2.0]);
    /// // Integers read as integers are exact, beyond f64's 2^53 too.
    /// let big = (1i64 << 60) + 1;
    /// assert_eq!(Array::from_vec(vec![big], &[1]).to_vec::<i64>(), vec![big]);
    /// ```
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        use nabla_kernels::elementwise::row_major;
        /// Row-major elements converted with `f` (the slice read directly
        /// when contiguous, one strided gather otherwise).
        fn each<S: Copy, T>(a: &crate::storage::Host<S>, f: impl Fn(S) -> T) -> Vec<T> {
            match a.as_slice() {
                Some(s) => s.iter().map(|&v| f(v)).collect(),
                None => row_major(&a.view()).into_iter().map(f).collect(),
            }
        }
        match &*self.data {
            Data::F32(a) => each(a, |v| T::from_f64(v as f64)),
            Data::F64(a) => each(a, T::from_f64),
            Data::I64(a) => each(a, T::from_i64),
            Data::Bool(a) => each(a, |v| T::from_f64(if v { 1.0 } else { 0.0 })),
            #[cfg(feature = "cuda")]
            Data::Cuda(g) => Array::from_data(crate::storage::gpu::download(g)).to_vec(),
        }
    }

    /// The elements as an owned ndarray of `T`.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.to_ndarray::<f64>()[[1, 0]], 3.0);
    /// ```
    pub fn to_ndarray<T: Element>(&self) -> ArrayD<T> {
        ArrayD::from_shape_vec(IxDyn(self.shape()), self.to_vec()).expect("shape matches")
    }

    /// The single element as `f64`.
    ///
    /// Panics unless the array has exactly one element.
    ///
    /// ```
    /// use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![2.5f32], &[1, 1]).item(), 2.5);
    /// ```
    #[track_caller]
    pub fn item(&self) -> f64 {
        if self.numel() != 1 {
            panic!(
                "item: the array has shape {:?} ({} elements) but item() needs exactly one; index or reduce it first (e.g. .sum())",
                self.shape(),
                self.numel()
            );
        }
        self.to_vec::<f64>()[0]
    }
}

impl<T: Element> From<ArrayD<T>> for Array {
    /// Wraps an ndarray (no copy).
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from(ndarray::arr2(&[[1.0f32, 2.0]]).into_dyn());
    /// assert_eq!(x.shape(), &[1, 2]);
    /// ```
    fn from(a: ArrayD<T>) -> Array {
        Array::from_data(T::into_data(a))
    }
}

#[cfg(test)]
mod tests {
    use crate::Array;

    /// `to_vec` reads strided arrays (permuted, broadcast, sliced, up to
    /// and past 5 axes) in logical row-major order.
    #[test]
    fn to_vec_reads_strided_arrays_in_logical_order() {
        let shape = [2usize, 3, 2, 1, 2, 3];
        let n: usize = shape.iter().product();
        let x = Array::from_vec((0..n).map(|i| i as f64).collect::<Vec<_>>(), &shape);
        // Permuted: element [i0..i5] of the result is x[perm^-1 ...].
        let perm = [4usize, 0, 5, 2, 1, 3];
        let p = x.permute(&perm);
        let strides: Vec<usize> = (0..6).map(|k| shape[k + 1..].iter().product()).collect();
        let ps: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
        let mut want = Vec::new();
        let mut idx = [0usize; 6];
        for _ in 0..n {
            want.push(
                idx.iter()
                    .zip(&perm)
                    .map(|(&i, &a)| i * strides[a])
                    .sum::<usize>() as f64,
            );
            for k in (0..6).rev() {
                idx[k] += 1;
                if idx[k] < ps[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        assert_eq!(p.to_vec::<f64>(), want);
        // Five axes through the strided gather, and conversion to f32.
        let q = x.reshape(&[2, 3, 2, 2, 3]).permute(&[4, 3, 2, 1, 0]);
        let q5: Vec<f32> = q.to_vec();
        assert_eq!(q5[1], 36.0);
        assert_eq!(q5.len(), n);
        // Broadcast (stride 0) and a slice.
        let b = Array::from_vec(vec![1.0f32, 2.0], &[2, 1]).broadcast_to(&[2, 3]);
        assert_eq!(b.to_vec::<f64>(), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        let s = x.reshape(&[12, 6]).slice_axis(1, 2..4);
        assert_eq!(s.to_vec::<f64>()[..4], [2.0, 3.0, 8.0, 9.0]);
    }
}
