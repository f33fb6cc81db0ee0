//! The `Array` methods of the shape primitives (`reshape`, `permute`,
//! `broadcast_to`, slicing) and of the composites built on them
//! (`sum_to_shape`, `transpose`, `swapaxes`, `expand_dims`, `squeeze`,
//! `flatten`, `split`), each recording its tape node.

use super::{broadcast_to, concat, permute, reshape, slice, slice_place};
use crate::Array;
use crate::array::norm_axis;
use crate::autograd::unary_node;
use ndarray::Slice;
use std::ops::Range;

impl Array {
    /// Same elements, new shape (row-major). Shares storage when contiguous.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::arange(6, DType::F32).reshape(&[2, 3]).shape(), &[2, 3]);
    /// ```
    #[track_caller]
    pub fn reshape(&self, shape: &[usize]) -> Array {
        if shape == self.shape() {
            return self.clone();
        }
        let y = reshape::forward(self, shape);
        unary_node(y, "reshape", self, |_| {
            let xs = self.shape().to_vec();
            move |ct| reshape::vjp(&xs, ct)
        })
    }

    /// Reorders the axes: axis `i` of the result is axis `perm[i]` of `self`.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3, 4], DType::F32).permute(&[2, 0, 1]).shape(), &[4, 2, 3]);
    /// ```
    #[track_caller]
    pub fn permute(&self, perm: &[usize]) -> Array {
        let y = permute::forward(self, perm);
        unary_node(y, "permute", self, |_| {
            let p = perm.to_vec();
            move |ct| permute::vjp(&p, ct)
        })
    }

    /// Broadcasts to `shape` NumPy-style.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    /// assert_eq!(x.broadcast_to(&[3, 2]).to_vec::<f32>(), vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn broadcast_to(&self, shape: &[usize]) -> Array {
        if shape == self.shape() {
            return self.clone();
        }
        let y = broadcast_to::forward(self, shape);
        unary_node(y, "broadcast_to", self, |_| {
            let xs = self.shape().to_vec();
            move |ct| broadcast_to::vjp(&xs, ct)
        })
    }

    /// Sums a broadcast array back to `shape` (the adjoint of
    /// [`Array::broadcast_to`]).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// let g = Array::ones(&[3, 2], DType::F64).sum_to_shape(&[1, 2]);
    /// assert_eq!(g.to_vec::<f64>(), vec![3.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn sum_to_shape(&self, shape: &[usize]) -> Array {
        if self.shape() == shape {
            return self.clone();
        }
        let Some(lead) = self.ndim().checked_sub(shape.len()) else {
            panic!(
                "sum_to_shape: {:?} has fewer dimensions than the target {shape:?}; sum to a shape of at most its rank",
                self.shape()
            )
        };
        let axes: Vec<usize> = (0..self.ndim())
            .filter(|&i| i < lead || (shape[i - lead] == 1 && self.shape()[i] != 1))
            .collect();
        let s = if axes.is_empty() {
            self.clone()
        } else {
            self.sum_norm(&axes, false)
        };
        s.reshape(shape)
    }

    /// Strided slice, one [`Slice`] per axis (a view: no copy).
    #[track_caller]
    pub(crate) fn slice_raw(&self, slices: &[Slice]) -> Array {
        let y = slice::forward(self, slices);
        unary_node(y, "slice", self, |_| {
            let (xs, sl) = (self.shape().to_vec(), slices.to_vec());
            move |ct| slice::vjp(&xs, &sl, ct)
        })
    }

    /// Zeros of `shape` with `self` placed at `slices`.
    #[track_caller]
    pub(crate) fn slice_place_raw(&self, shape: &[usize], slices: &[Slice]) -> Array {
        let y = slice_place::forward(self, shape, slices);
        unary_node(y, "slice_place", self, |_| {
            let sl = slices.to_vec();
            move |ct| slice_place::vjp(&sl, ct)
        })
    }

    /// Slices the leading axes by ranges; remaining axes are kept whole.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// let x = Array::arange(12, DType::F64).reshape(&[3, 4]);
    /// assert_eq!(x.slice(&[0..3, 1..3]).shape(), &[3, 2]);
    /// assert_eq!(x.slice(&[1..2]).to_vec::<f64>(), vec![4.0, 5.0, 6.0, 7.0]);
    /// ```
    #[track_caller]
    pub fn slice(&self, ranges: &[Range<usize>]) -> Array {
        self.slice_as("slice", ranges)
    }

    /// [`slice`](Self::slice), reporting bad ranges as `op`.
    #[track_caller]
    pub(crate) fn slice_as(&self, op: &str, ranges: &[Range<usize>]) -> Array {
        if ranges.len() > self.ndim() {
            panic!(
                "{op}: {} ranges given for an array with shape {:?}; give at most one per axis",
                ranges.len(),
                self.shape()
            );
        }
        let slices: Vec<Slice> = (0..self.ndim())
            .map(|i| match ranges.get(i) {
                Some(r) => {
                    let n = self.shape()[i];
                    if r.start > r.end || r.end > n {
                        panic!(
                            "{op}: range {r:?} is out of bounds for axis {i} of length {n} (shape {:?}); use start <= end <= {n}",
                            self.shape()
                        );
                    }
                    Slice::new(r.start as isize, Some(r.end as isize), 1)
                }
                None => Slice::from(..),
            })
            .collect();
        self.slice_raw(&slices)
    }

    /// Slices one axis by a range (`x[1:]` is `x.slice_axis(0, 1..n)`).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// let x = Array::arange(5, DType::F64);
    /// assert_eq!(x.slice_axis(0, 1..5).to_vec::<f64>(), vec![1.0, 2.0, 3.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn slice_axis(&self, axis: isize, range: Range<usize>) -> Array {
        let ax = norm_axis("slice_axis", axis, self.ndim());
        let mut ranges: Vec<Range<usize>> = self.shape()[..ax].iter().map(|&n| 0..n).collect();
        ranges.push(range);
        self.slice_as("slice_axis", &ranges)
    }

    /// Swaps the two axes of a matrix.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).transpose().shape(), &[3, 2]);
    /// ```
    #[track_caller]
    pub fn transpose(&self) -> Array {
        if self.ndim() != 2 {
            panic!(
                "transpose: expects a 2-D array, got shape {:?}; use swapaxes(a, b) or permute(..) for other ranks",
                self.shape()
            );
        }
        self.permute(&[1, 0])
    }

    /// Swaps two axes.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3, 4], DType::F32).swapaxes(-1, -2).shape(), &[2, 4, 3]);
    /// ```
    #[track_caller]
    pub fn swapaxes(&self, a: isize, b: isize) -> Array {
        let (a, b) = (
            norm_axis("swapaxes", a, self.ndim()),
            norm_axis("swapaxes", b, self.ndim()),
        );
        let mut perm: Vec<usize> = (0..self.ndim()).collect();
        perm.swap(a, b);
        self.permute(&perm)
    }

    /// Inserts a length-1 axis at `axis` (which may be `ndim`).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).expand_dims(1).shape(), &[2, 1, 3]);
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).expand_dims(-1).shape(), &[2, 3, 1]);
    /// ```
    #[track_caller]
    pub fn expand_dims(&self, axis: isize) -> Array {
        let ax = norm_axis("expand_dims", axis, self.ndim() + 1);
        let mut shape = self.shape().to_vec();
        shape.insert(ax, 1);
        self.reshape(&shape)
    }

    /// Removes the length-1 axis `axis`.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 1, 3], DType::F32).squeeze(1).shape(), &[2, 3]);
    /// ```
    #[track_caller]
    pub fn squeeze(&self, axis: isize) -> Array {
        let ax = norm_axis("squeeze", axis, self.ndim());
        if self.shape()[ax] != 1 {
            panic!(
                "squeeze: axis {axis} of shape {:?} has length {}, not 1; only length-1 axes can be removed",
                self.shape(),
                self.shape()[ax]
            );
        }
        let mut shape = self.shape().to_vec();
        shape.remove(ax);
        self.reshape(&shape)
    }

    /// All elements as one axis.
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).flatten().shape(), &[6]);
    /// ```
    #[track_caller]
    pub fn flatten(&self) -> Array {
        self.reshape(&[self.numel()])
    }

    /// Splits along `axis` into pieces of the given sizes (which must sum to
    /// the axis length).
    ///
    /// ```
    /// # use nabla::{Array, DType};
    /// let parts = Array::arange(5, DType::F64).split(&[2, 3], 0);
    /// assert_eq!(parts[1].to_vec::<f64>(), vec![2.0, 3.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn split(&self, sizes: &[usize], axis: isize) -> Vec<Array> {
        let ax = norm_axis("split", axis, self.ndim());
        let total: usize = sizes.iter().sum();
        if total != self.shape()[ax] {
            panic!(
                "split: sizes {sizes:?} add up to {total} but axis {axis} of shape {:?} has length {}; make them add up",
                self.shape(),
                self.shape()[ax]
            );
        }
        concat::part_slices(sizes, self.ndim(), ax)
            .iter()
            .map(|s| self.slice_raw(s))
            .collect()
    }
}
