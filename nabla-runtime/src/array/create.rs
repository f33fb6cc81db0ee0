//! Constructors.

use crate::Array;
use crate::storage::Host;
use crate::storage::{DType, Data, Element};
use ndarray::{ArrayD, ArrayViewD, IxDyn};
use std::any::Any;

#[track_caller]
fn filled(op: &str, shape: &[usize], v: f64, dtype: DType) -> Array {
    #[track_caller]
    fn host<T: Copy>(op: &str, shape: &[usize], v: T) -> Host<T> {
        let n = checked_numel(op, shape, std::mem::size_of::<T>());
        let mut buf = reserve(op, shape);
        buf.resize(n, v);
        Host::from_vec(shape, buf)
    }
    Array::from_data(match dtype {
        DType::F32 => Data::F32(host(op, shape, v as f32)),
        DType::F64 => Data::F64(host(op, shape, v)),
        DType::I64 => Data::I64(host(op, shape, v as i64)),
        DType::Bool => Data::Bool(host(op, shape, v != 0.0)),
    })
}

/// An empty `Vec` with room for the elements of `shape`: a panic naming
/// `op` when they overflow or the allocation fails (instead of an abort).
#[track_caller]
pub(crate) fn reserve<T>(op: &str, shape: &[usize]) -> Vec<T> {
    let n = checked_numel(op, shape, std::mem::size_of::<T>());
    let mut buf = Vec::new();
    if buf.try_reserve_exact(n).is_err() {
        panic!(
            "{op}: cannot allocate {n} elements ({} bytes) for shape {shape:?}; use a smaller shape",
            n * std::mem::size_of::<T>()
        );
    }
    buf
}

/// The element count of `shape`, checked: a panic naming `op` when the
/// product of its non-zero lengths passes `usize`, or its `elem`-byte
/// elements would pass `isize::MAX` bytes (what one allocation, or one
/// array view, can address; NumPy rejects such shapes too, even with a
/// zero length among them).
#[track_caller]
pub(crate) fn checked_numel(op: &str, shape: &[usize], elem: usize) -> usize {
    let nonzero = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |a, &d| a.checked_mul(d));
    match nonzero.filter(|n| {
        n.checked_mul(elem.max(1))
            .is_some_and(|b| b <= isize::MAX as usize)
    }) {
        Some(n) if !shape.contains(&0) => n,
        Some(_) => 0,
        None => panic!(
            "{op}: shape {shape:?} holds more elements than one array can address; use a smaller shape"
        ),
    }
}

impl Array {
    /// An array of `shape` filled row-major from `data`.
    ///
    /// Panics if `data.len()` differs from the product of `shape`.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.shape(), &[2, 2]);
    /// ```
    #[track_caller]
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Array {
        let n = checked_numel("from_vec", shape, std::mem::size_of::<T>());
        if n != data.len() {
            panic!(
                "from_vec: {} values cannot fill shape {shape:?} ({n} elements); pass exactly {n} values or change the shape",
                data.len()
            );
        }
        let a = ArrayD::from_shape_vec(IxDyn(shape), data).expect("length checked");
        Array::from_data(T::into_data(a))
    }

    /// A zero-dimensional array holding `v`; its dtype follows `T`.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::scalar(3.0f64).dtype(), DType::F64);
    /// assert_eq!(Array::scalar(3.0f64).item(), 3.0);
    /// ```
    pub fn scalar<T: Element>(v: T) -> Array {
        Array::from_vec(vec![v], &[])
    }

    /// Zeros.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2], DType::F32).to_vec::<f32>(), vec![0.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn zeros(shape: &[usize], dtype: DType) -> Array {
        filled("zeros", shape, 0.0, dtype)
    }

    /// Ones.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::ones(&[2], DType::F64).to_vec::<f64>(), vec![1.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn ones(shape: &[usize], dtype: DType) -> Array {
        filled("ones", shape, 1.0, dtype)
    }

    /// An array of `shape` filled with `value` (converted to `dtype`).
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::full(&[2], 7.0, DType::F64).to_vec::<f64>(), vec![7.0, 7.0]);
    /// ```
    #[track_caller]
    pub fn full(shape: &[usize], value: f64, dtype: DType) -> Array {
        filled("full", shape, value, dtype)
    }

    /// `0, 1, …, n-1`.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::arange(3, DType::I64).to_vec::<i64>(), vec![0, 1, 2]);
    /// ```
    #[track_caller]
    pub fn arange(n: usize, dtype: DType) -> Array {
        let mut v = reserve("arange", &[n]);
        v.extend((0..n).map(|i| i as f64));
        Array::from_vec(v, &[n]).cast(dtype)
    }

    /// `n` evenly spaced values from `start` to `end` inclusive.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::linspace(0.0, 1.0, 3, DType::F64).to_vec::<f64>(), vec![0.0, 0.5, 1.0]);
    /// ```
    #[track_caller]
    pub fn linspace(start: f64, end: f64, n: usize, dtype: DType) -> Array {
        let step = if n > 1 {
            (end - start) / (n - 1) as f64
        } else {
            0.0
        };
        let mut v = reserve("linspace", &[n]);
        v.extend((0..n).map(|i| {
            if i + 1 == n && n > 1 {
                end
            } else {
                start + step * i as f64
            }
        }));
        Array::from_vec(v, &[n]).cast(dtype)
    }

    /// The `n × n` identity matrix.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// assert_eq!(Array::eye(2, DType::F32).to_vec::<f32>(), vec![1.0, 0.0, 0.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn eye(n: usize, dtype: DType) -> Array {
        let mut v = reserve("eye", &[n, n]);
        v.resize(n * n, 0.0f64);
        for i in 0..n {
            v[i * n + i] = 1.0;
        }
        Array::from_vec(v, &[n, n]).cast(dtype)
    }

    /// An array of this one's shape and dtype filled with `value`.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    /// assert_eq!(x.full_like(5.0).to_vec::<f32>(), vec![5.0, 5.0]);
    /// ```
    pub fn full_like(&self, value: f64) -> Array {
        Array::full_on(self.shape(), value, self.dtype(), self.device())
    }

    /// An array of `shape` filled with `value` on `device` (filled there,
    /// nothing copied from the host).
    ///
    /// ```
    /// use nabla::{Array, DType, Device};
    /// let x = Array::full_on(&[2], 3.0, DType::F64, Device::Cpu);
    /// assert_eq!(x.to_vec::<f64>(), vec![3.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn full_on(shape: &[usize], value: f64, dtype: DType, device: crate::Device) -> Array {
        match device {
            crate::Device::Cpu => filled("full_on", shape, value, dtype),
            #[cfg(feature = "cuda")]
            crate::Device::Cuda(n) => Array::from_data(Data::Cuda(nabla_kernels::cuda::fill(
                &crate::storage::gpu::gpu(n),
                dtype,
                shape,
                value,
            ))),
            #[cfg(not(feature = "cuda"))]
            crate::Device::Cuda(_) => filled("full_on", shape, value, dtype).to_device(device),
        }
    }

    /// Zeros of `shape` on `device`.
    ///
    /// ```
    /// use nabla::{Array, DType, Device};
    /// assert_eq!(Array::zeros_on(&[3], DType::F32, Device::Cpu).sum().item(), 0.0);
    /// ```
    #[track_caller]
    pub fn zeros_on(shape: &[usize], dtype: DType, device: crate::Device) -> Array {
        Array::full_on(shape, 0.0, dtype, device)
    }

    /// Ones of `shape` on `device`.
    ///
    /// ```
    /// use nabla::{Array, DType, Device};
    /// assert_eq!(Array::ones_on(&[3], DType::F32, Device::Cpu).sum().item(), 3.0);
    /// ```
    #[track_caller]
    pub fn ones_on(shape: &[usize], dtype: DType, device: crate::Device) -> Array {
        Array::full_on(shape, 1.0, dtype, device)
    }

    /// Zeros of this array's shape and dtype.
    ///
    /// ```
    /// use nabla::Array;
    /// assert_eq!(Array::scalar(3.0f64).zeros_like().item(), 0.0);
    /// ```
    pub fn zeros_like(&self) -> Array {
        self.full_like(0.0)
    }

    /// Ones of this array's shape and dtype.
    ///
    /// ```
    /// use nabla::Array;
    /// assert_eq!(Array::scalar(3.0f64).ones_like().item(), 1.0);
    /// ```
    pub fn ones_like(&self) -> Array {
        self.full_like(1.0)
    }

    /// Wraps elements in memory owned outside Nabla, without a copy (what
    /// DLPack imports use): `ptr` is element `[0, 0, ..]` of `shape`, laid
    /// out with `strides` (in elements, of any sign, 0 for a broadcast
    /// axis); `keep` owns that memory and releases it when dropped, which
    /// happens when the last array (or view) using it is dropped.
    ///
    /// Nabla never writes these elements: in-place updates of the array
    /// copy them first, as they do for an array shared with another. A
    /// layout in which two indices reach one element (a zero stride) is
    /// copied at once into an array of its own, and `keep` dropped.
    ///
    /// # Safety
    ///
    /// Every element `ptr + Σ i_k·strides[k]` (for indices inside `shape`)
    /// is an initialized, valid `T` (a `bool` is 0 or 1), `ptr` is aligned
    /// for `T`, all of them lie in one allocation, and they stay valid and
    /// unwritten (by anyone) until `keep` is dropped. `keep` may be dropped
    /// on any thread.
    ///
    /// ```
    /// use nabla::Array;
    /// let v = vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let ptr = v.as_ptr();
    /// // SAFETY: `v` (moved into `keep`, its buffer unmoved) holds the
    /// // six elements, read in column-major order here.
    /// let a = unsafe { Array::from_external(ptr, &[2, 3], &[1, 2], Box::new(v)) };
    /// assert_eq!(a.to_vec::<f64>(), vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    /// ```
    #[track_caller]
    pub unsafe fn from_external<T: Element>(
        ptr: *const T,
        shape: &[usize],
        strides: &[isize],
        keep: Box<dyn Any + Send + Sync>,
    ) -> Array {
        // SAFETY: the caller's contract is `Host::from_external`'s.
        Array::from_data(T::host_data(unsafe {
            Host::from_external(ptr, shape, strides, keep)
        }))
    }

    /// Whether two indices of `shape` with `strides` (in elements) can
    /// reach one element, so that [`Array::from_external`] copies such a
    /// layout instead of sharing it (a broadcast axis of stride 0, or
    /// interleaved strides).
    ///
    /// ```
    /// use nabla::Array;
    /// assert!(!Array::external_layout_aliases(&[2, 3], &[3, 1]));
    /// assert!(Array::external_layout_aliases(&[2, 3], &[0, 1]));
    /// ```
    pub fn external_layout_aliases(shape: &[usize], strides: &[isize]) -> bool {
        let abs: Vec<usize> = strides.iter().map(|s| s.unsigned_abs()).collect();
        crate::storage::may_alias(shape, &abs)
    }

    /// A view of the elements of a host array whose dtype is `T`, in place
    /// (no copy; pointer, shape and strides in elements, of any sign);
    /// `None` for another dtype or an array on a GPU. The elements never
    /// change while the array lives: Nabla's in-place updates copy shared
    /// storage first.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).permute(&[1, 0]);
    /// let v = x.host_view::<f32>().unwrap();
    /// assert_eq!((v.strides(), v[[0, 1]]), (&[1isize, 2][..], 3.0));
    /// assert!(x.host_view::<f64>().is_none());
    /// ```
    pub fn host_view<T: Element>(&self) -> Option<ArrayViewD<'_, T>> {
        T::host_of(&self.data).map(|h| h.view())
    }
}
