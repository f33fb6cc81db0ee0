//! Host (CPU) storage: the project's own array storage.
//!
//! A [`Host`] is the elements of one array in host memory: a lifetime-free
//! ndarray raw view (pointer, shape and strides; no allocation up to four
//! axes) and what keeps the elements alive — its own `Vec`, the storage
//! of the array it is a view of, or an owner outside Nabla (memory shared
//! through DLPack, [`Host::from_external`]), which is never written. A fresh array is two allocations (the
//! array's `Arc` and the buffer) and a view one (its `Arc`); ndarray's
//! `ArcArray` added a third reference-counted box per fresh array.
//!
//! Kernels read and write through ndarray views ([`Host::view`]), and
//! ndarray stays the interchange type (`From<ArrayD<T>>`,
//! [`Array::to_ndarray`]).
//!
//! [`Array::to_ndarray`]: crate::Array::to_ndarray

use super::data::Data;
use ndarray::{
    ArrayD, ArrayViewD, ArrayViewMutD, Axis, IxDyn, RawArrayView, RawArrayViewMut, ShapeBuilder,
};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// Host elements of one array (see the module docs). Public only so that
/// hidden traits of the generated code can name it.
#[doc(hidden)]
pub struct Host<T> {
    /// Pointer, shape and strides of the elements, without a lifetime:
    /// `keep` holds what they point into.
    raw: RawArrayViewMut<T, IxDyn>,
    keep: Keep<T>,
}

/// What keeps a [`Host`]'s elements alive.
enum Keep<T> {
    /// Its own buffer (the view points into it; held, never read).
    Own(#[allow(dead_code)] Owned<T>),
    /// The storage of the array it views (always an `Own` or `External`;
    /// views of views keep the first array's storage).
    Base(Arc<Data>),
    /// Memory owned outside Nabla, released when this value is dropped.
    /// Never written: like `Base`, a mutation copies first.
    /// (`AssertUnwindSafe`: the owner is only dropped, never used, so an
    /// array stays `UnwindSafe` for `catch_unwind` as before.)
    External(#[allow(dead_code)] std::panic::AssertUnwindSafe<Box<dyn Any + Send + Sync>>),
}

/// An array's own buffer; large ones are counted, for the cap on kept
/// memory (`buffers::made`, `buffers::freed`).
struct Owned<T>(Vec<T>);

impl<T> Owned<T> {
    fn new(v: Vec<T>) -> Owned<T> {
        super::buffers::made(v.capacity() * std::mem::size_of::<T>());
        Owned(v)
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        let bytes = self.0.capacity() * std::mem::size_of::<T>();
        drop(std::mem::take(&mut self.0));
        super::buffers::freed(bytes);
    }
}

// SAFETY: a `Host` owns or shares (through `Arc<Data>`, or an external
// owner that is `Send + Sync`) its elements and never mutates shared or
// external ones (`view_mut` copies them first), as ndarray's `ArcArray`
// does.
unsafe impl<T: Send + Sync> Send for Host<T> {}
// SAFETY: as for `Send`: shared access only reads the elements.
unsafe impl<T: Send + Sync> Sync for Host<T> {}

impl<T: Copy> Host<T> {
    /// `v` in row-major order with `shape` (the caller checks the length).
    pub(crate) fn from_vec(shape: &[usize], mut v: Vec<T>) -> Host<T> {
        debug_assert_eq!(v.len(), shape.iter().product::<usize>());
        // SAFETY: `v` holds the row-major elements of `shape`; moving `v`
        // into `keep` does not move its buffer.
        let raw = unsafe { RawArrayViewMut::from_shape_ptr(IxDyn(shape), v.as_mut_ptr()) };
        Host {
            raw,
            keep: Keep::Own(Owned::new(v)),
        }
    }

    /// `shape` filled with `v`.
    pub(crate) fn from_elem(shape: &[usize], v: T) -> Host<T> {
        Host::from_vec(shape, vec![v; shape.iter().product()])
    }

    /// Takes an owned ndarray's buffer and layout (no copy).
    pub(crate) fn from_nd(mut a: ArrayD<T>) -> Host<T> {
        let raw = a.raw_view_mut();
        let (v, _) = a.into_raw_vec_and_offset();
        Host {
            raw,
            keep: Keep::Own(Owned::new(v)),
        }
    }

    /// Elements in memory owned outside Nabla, without a copy: `ptr` is
    /// element `[0, 0, ..]` of `shape` with `strides` (in elements, of any
    /// sign); `keep` owns the memory and releases it when dropped. Nabla
    /// never writes these elements (mutations copy first). An empty
    /// `shape` gets an own (empty) buffer and drops `keep` at once, and so
    /// does a layout in which two indices reach one element (a zero
    /// stride, as a broadcast tensor has): its elements are copied into
    /// an own buffer, since the raw mutable view a `Host` keeps must not
    /// alias itself (ndarray's contract for `RawArrayViewMut`).
    ///
    /// # Safety
    ///
    /// Every element `ptr + Σ i_k·strides[k]` is an initialized, valid
    /// `T`, `ptr` is aligned for `T`, all of them lie in one allocation,
    /// and they stay valid and unwritten until `keep` is dropped.
    pub(crate) unsafe fn from_external(
        ptr: *const T,
        shape: &[usize],
        strides: &[isize],
        keep: Box<dyn Any + Send + Sync>,
    ) -> Host<T> {
        assert_eq!(shape.len(), strides.len(), "one stride per axis");
        if shape.contains(&0) {
            return Host::from_vec(shape, Vec::new());
        }
        // ndarray's raw views take non-negative strides: start from the
        // lowest address and reverse the axes whose stride is negative.
        let mut low = ptr;
        for (&n, &s) in shape.iter().zip(strides) {
            if s < 0 {
                low = low.wrapping_offset(s * (n as isize - 1));
            }
        }
        let abs: Vec<usize> = strides.iter().map(|s| s.unsigned_abs()).collect();
        if may_alias(shape, &abs) {
            // SAFETY: as below; a read-only raw view may alias itself, and
            // the elements are copied out before `keep` is dropped.
            let mut view =
                unsafe { RawArrayView::from_shape_ptr(IxDyn(shape).strides(IxDyn(&abs)), low) };
            for (k, &s) in strides.iter().enumerate() {
                if s < 0 {
                    view.invert_axis(Axis(k));
                }
            }
            // SAFETY: the caller's elements stay valid and unwritten while
            // `keep` lives, which is past the copy.
            let v = nabla_kernels::elementwise::row_major(&unsafe { view.deref_into_view() });
            drop(keep);
            return Host::from_vec(shape, v);
        }
        // SAFETY: `low` is the lowest-addressed element (the caller's
        // elements, reached with non-negative strides from it), in one
        // allocation, non-null (the caller's elements exist: no axis is
        // empty) and aligned; no element has two indices (`may_alias`).
        let mut raw = unsafe {
            RawArrayViewMut::from_shape_ptr(IxDyn(shape).strides(IxDyn(&abs)), low as *mut T)
        };
        for (k, &s) in strides.iter().enumerate() {
            if s < 0 {
                raw.invert_axis(Axis(k));
            }
        }
        Host {
            raw,
            keep: Keep::External(std::panic::AssertUnwindSafe(keep)),
        }
    }

    /// The shape.
    pub(crate) fn shape(&self) -> &[usize] {
        self.raw.shape()
    }

    /// The strides in elements.
    pub(crate) fn strides(&self) -> &[isize] {
        self.raw.strides()
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.raw.len()
    }

    /// Number of axes.
    pub(crate) fn ndim(&self) -> usize {
        self.raw.ndim()
    }

    /// The address of element `[0, 0, ..]`.
    pub(crate) fn as_ptr(&self) -> *const T {
        self.raw.as_ptr()
    }

    /// Whether the elements are contiguous in row-major order.
    pub(crate) fn is_standard_layout(&self) -> bool {
        self.raw.is_standard_layout()
    }

    /// The elements in row-major order when they are contiguous so.
    pub(crate) fn as_slice(&self) -> Option<&[T]> {
        // SAFETY: a standard-layout array's `len` elements start at its
        // pointer and are kept alive by `keep` for `self`'s lifetime.
        self.is_standard_layout()
            .then(|| unsafe { std::slice::from_raw_parts(self.raw.as_ptr(), self.len()) })
    }

    /// The first element in row-major order.
    pub(crate) fn first(&self) -> Option<&T> {
        // SAFETY: the pointer is element `[0, ..]` of a non-empty array.
        (self.len() > 0).then(|| unsafe { &*self.raw.as_ptr() })
    }

    /// An ndarray view of the elements.
    pub(crate) fn view(&self) -> ArrayViewD<'_, T> {
        // SAFETY: `keep` holds the elements for `self`'s lifetime and
        // nothing mutates them while `self` is shared.
        unsafe { self.raw.clone().deref_into_view() }
    }

    /// A mutable view, the elements copied first into an own buffer when
    /// they belong to another array or to an external owner.
    pub(crate) fn view_mut(&mut self) -> ArrayViewMutD<'_, T> {
        if !matches!(self.keep, Keep::Own(_)) {
            *self = self.to_owned_standard();
        }
        // SAFETY: `self` owns its buffer (made so above) and is borrowed
        // mutably for the view's lifetime.
        unsafe { self.raw.clone().deref_into_view_mut() }
    }

    /// The elements as one mutable row-major slice: copied first when they
    /// belong to another array (or to an external owner) or are not
    /// contiguous row-major.
    pub(crate) fn as_slice_mut(&mut self) -> &mut [T] {
        if !matches!(self.keep, Keep::Own(_)) || !self.is_standard_layout() {
            *self = self.to_owned_standard();
        }
        // SAFETY: own, standard-layout storage, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.raw.as_ptr() as *mut T, self.len()) }
    }

    /// A row-major copy in an own buffer.
    pub(crate) fn to_owned_standard(&self) -> Host<T> {
        let v = match self.as_slice() {
            Some(s) => s.to_vec(),
            None => nabla_kernels::elementwise::row_major(&self.view()),
        };
        Host::from_vec(self.shape(), v)
    }

    /// A view of the same elements: `f` reshapes, permutes or slices the
    /// raw view (staying inside the elements); `this` is the array this
    /// storage belongs to, kept alive by the view.
    pub(crate) fn derive(
        &self,
        this: &Arc<Data>,
        f: impl FnOnce(RawArrayViewMut<T, IxDyn>) -> RawArrayViewMut<T, IxDyn>,
    ) -> Host<T> {
        Host {
            raw: f(self.raw.clone()),
            keep: Keep::Base(match &self.keep {
                Keep::Own(_) | Keep::External(_) => this.clone(),
                Keep::Base(b) => b.clone(),
            }),
        }
    }
}

impl<T: Copy> Clone for Host<T> {
    /// A row-major copy (values never change under another holder, so a
    /// clone is only asked for before a mutation).
    fn clone(&self) -> Host<T> {
        self.to_owned_standard()
    }
}

impl<T: Copy + fmt::Debug> fmt::Debug for Host<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.view(), f)
    }
}

impl<T: Copy> From<ArrayD<T>> for Host<T> {
    fn from(a: ArrayD<T>) -> Host<T> {
        Host::from_nd(a)
    }
}

/// Whether two indices of `shape` with the stride magnitudes `abs` can
/// reach one element: ndarray's sufficient test, axes longer than 1 by
/// increasing stride, each stride beyond the reach of the smaller ones (a
/// zero stride never is).
pub(crate) fn may_alias(shape: &[usize], abs: &[usize]) -> bool {
    let mut axes: Vec<(usize, usize)> = abs
        .iter()
        .zip(shape)
        .filter(|&(_, &d)| d > 1)
        .map(|(&s, &d)| (s, d))
        .collect();
    axes.sort_unstable();
    let mut reach = 0usize;
    for (s, d) in axes {
        if s <= reach {
            return true;
        }
        reach = reach.saturating_add(s.saturating_mul(d - 1));
    }
    false
}

/// The row-major view of `shape` over `r`'s first element (a reshape of a
/// row-major view; `shape` has its element count).
pub(crate) fn row_major_view<T>(
    r: &RawArrayViewMut<T, IxDyn>,
    shape: &[usize],
) -> RawArrayViewMut<T, IxDyn> {
    debug_assert_eq!(r.len(), shape.iter().product::<usize>());
    debug_assert!(r.is_standard_layout(), "row_major_view of a strided view");
    // SAFETY: the elements of a row-major `r` are the row-major elements
    // of `shape` (same count), starting at its pointer.
    unsafe { RawArrayViewMut::from_shape_ptr(IxDyn(shape), r.as_ptr() as *mut T) }
}

#[cfg(test)]
mod tests {
    use crate::{Array, DType};
    use ndarray::Slice;
    use std::sync::Arc;

    /// An external layout whose indices share elements (a broadcast axis,
    /// stride 0; interleaved strides) is copied, its owner released at
    /// once; one that does not is shared.
    #[test]
    fn aliasing_external_layouts_are_copied_and_released() {
        let v: Arc<Vec<f64>> = Arc::new(vec![1.0, 2.0, 3.0, 4.0]);
        let external = |shape: &[usize], strides: &[isize]| {
            // SAFETY: every index reaches one of `v`'s four elements
            // (offsets 0 to 3 here), held unwritten by the `Arc`.
            unsafe { Array::from_external(v.as_ptr(), shape, strides, Box::new(v.clone())) }
        };
        let b = external(&[2, 3], &[0, 1]);
        assert_eq!(Arc::strong_count(&v), 1, "a broadcast layout is copied");
        assert_eq!(b.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
        let w = external(&[2, 3], &[1, 1]);
        assert_eq!(Arc::strong_count(&v), 1, "a sliding window is copied");
        assert_eq!(w.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 2.0, 3.0, 4.0]);
        let s = external(&[2, 2], &[2, 1]);
        assert_eq!(Arc::strong_count(&v), 2, "a plain layout is shared");
        assert_eq!(s.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 4.0]);
    }

    /// Views of views (a reversing slice, a permute, a reshape adding unit
    /// axes) read the base's elements in the right order, and outlive it.
    #[test]
    fn views_of_views_read_the_base_and_keep_it_alive() {
        let y = {
            let x = Array::arange(12, DType::F64).reshape(&[3, 4]);
            let r = crate::primitives::shape::slice::forward(
                &x,
                &[Slice::new(0, None, -1), Slice::new(1, None, 2)],
            );
            r.permute(&[1, 0]).reshape(&[1, 2, 1, 3])
        };
        assert_eq!(y.shape(), &[1, 2, 1, 3]);
        assert_eq!(y.to_vec::<f64>(), vec![9.0, 5.0, 1.0, 11.0, 7.0, 3.0]);
        assert_eq!((&y + 1.0).to_vec::<f64>()[0], 10.0);
    }

    /// Writing into a view (in-place accumulation) copies it first: the
    /// array it views keeps its values.
    #[test]
    fn writing_into_a_view_leaves_its_base_unchanged() {
        let x = Array::arange(6, DType::F32);
        let v = x.slice_axis(0, 1..5);
        let ct = Array::ones(&[2], DType::F32);
        let w = crate::ArrayValue::add_into_slice(v, &[Slice::from(0..2)], &ct);
        assert_eq!(w.to_vec::<f32>(), vec![2.0, 3.0, 3.0, 4.0]);
        assert_eq!(x.to_vec::<f32>(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }

    /// External elements (`Array::from_external`): negative strides read
    /// in order, an in-place update of a uniquely held array copies
    /// instead of writing the memory, and the owner is released when the
    /// last array and view using it go.
    #[test]
    fn external_elements_are_read_never_written_and_released() {
        let v: Arc<Vec<f32>> = Arc::new((0..6).map(|i| i as f32).collect());
        // Rows reversed: element [0, 0] is v[3].
        let ptr = v[3..].as_ptr();
        let external = |owner: Arc<Vec<f32>>| {
            // SAFETY: `owner` keeps `v`'s buffer, never written; the
            // elements 3 - 3i + j lie in it.
            unsafe { Array::from_external(ptr, &[2, 3], &[-3, 1], Box::new(owner)) }
        };
        let a = external(v.clone());
        assert_eq!(a.to_vec::<f32>(), vec![3.0, 4.0, 5.0, 0.0, 1.0, 2.0]);
        let ct = Array::ones(&[2, 2], DType::F32);
        let w = crate::ArrayValue::add_into_slice(a, &[Slice::from(0..2), Slice::from(0..2)], &ct);
        assert_eq!(w.to_vec::<f32>(), vec![4.0, 5.0, 5.0, 1.0, 2.0, 2.0]);
        assert_eq!(*v, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(Arc::strong_count(&v), 1, "the copy released the owner");
        let view = external(v.clone()).permute(&[1, 0]).slice_axis(0, 1..3);
        assert_eq!(view.to_vec::<f32>(), vec![4.0, 1.0, 5.0, 2.0]);
        assert_eq!(Arc::strong_count(&v), 2, "the view keeps the owner");
        drop(view);
        assert_eq!(Arc::strong_count(&v), 1);
    }
}
