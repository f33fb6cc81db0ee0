//! The [`Array`] type: an immutable, cheaply cloned n-dimensional value.

mod convert;
pub(crate) mod create;
mod device;
mod display;
pub(crate) mod nans;
mod on_gpu;
pub(crate) mod positions;
pub(crate) use on_gpu::{on_gpu, on_gpus};
mod typed;
pub use typed::Typed;
pub(crate) use typed::count_pass;
pub use typed::passes;
mod operators;
pub(crate) mod view;
pub use operators::Scalar;

use crate::autograd::GradMeta;
use crate::storage::{DType, Data};
use std::sync::Arc;

/// An n-dimensional array of `f32`, `f64`, `i64` or `bool` elements.
///
/// Arrays are values: operations return new arrays and never modify their
/// inputs. Cloning is cheap (storage is shared, copy-on-write). Broadcasting
/// follows NumPy. An array may take part in imperative autograd
/// ([`Array::requires_grad`], [`Array::backward`]).
///
/// ```
/// use nabla::{Array, DType};
/// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// let y = &x * 2.0 + 1.0;
/// assert_eq!(y.to_vec::<f32>(), vec![3.0, 5.0, 7.0, 9.0]);
/// assert_eq!(y.dtype(), DType::F32);
/// ```
#[derive(Clone)]
pub struct Array {
    /// The storage, behind one reference count so that an `Array` is two
    /// words: clones and moves (many per op inside nested transforms) copy
    /// a pointer instead of ndarray's shape and strides.
    pub(crate) data: Arc<Data>,
    pub(crate) grad: Option<Arc<GradMeta>>,
}

impl Array {
    /// Wraps storage with no autograd history.
    pub(crate) fn from_data(data: Data) -> Array {
        crate::storage::buffers::keep_freed_buffers();
        Array {
            data: Arc::new(data),
            grad: None,
        }
    }

    /// The shape (one length per axis).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).shape(), &[2, 3]);
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.data.shape()
    }

    /// Strides in elements (0 on broadcast axes).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).strides(), &[3, 1]);
    /// ```
    pub fn strides(&self) -> &[isize] {
        self.data.strides()
    }

    /// Number of axes.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(1.0f64).ndim(), 0);
    /// ```
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::ones(&[2, 3], DType::F64).numel(), 6);
    /// ```
    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }

    /// The element type.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::scalar(1.0f32).dtype(), DType::F32);
    /// ```
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }
}

/// The axis argument of an op: accepts negative axes counted from the end.
#[track_caller]
pub(crate) fn norm_axis(op: &str, axis: isize, ndim: usize) -> usize {
    let n = ndim as isize;
    if axis < -n || axis >= n {
        panic!(
            "{op}: axis {axis} is out of range for an array with {ndim} dimension{}; use an axis in {}..{}",
            if ndim == 1 { "" } else { "s" },
            -n,
            n
        );
    }
    if axis < 0 {
        (axis + n) as usize
    } else {
        axis as usize
    }
}

/// Normalises and sorts a list of axes, rejecting duplicates.
#[track_caller]
pub(crate) fn norm_axes(op: &str, axes: &[isize], ndim: usize) -> Vec<usize> {
    let mut out: Vec<usize> = axes.iter().map(|&a| norm_axis(op, a, ndim)).collect();
    out.sort_unstable();
    let len = out.len();
    out.dedup();
    if out.len() != len {
        panic!("{op}: axes {axes:?} name the same axis twice; list each axis once");
    }
    out
}
