//! `GpuArray`: a strided view of a shared, immutable device buffer.

use super::device::Gpu;
use super::layout::{MAX_DIMS, row_major, sliced};
use crate::DType;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use ndarray::Slice;
use std::sync::Arc;

/// A device buffer of one element type.
#[doc(hidden)]
#[derive(Debug)]
pub enum Buf {
    F32(CudaSlice<f32>),
    F64(CudaSlice<f64>),
    I64(CudaSlice<i64>),
    U8(CudaSlice<u8>),
}

/// A host element type that can be copied to and from a device buffer.
pub trait HostElem: Copy + DeviceRepr + ValidAsZeroBits + Default + 'static {
    /// Its device element type.
    const ELEM: DType;
    #[doc(hidden)]
    fn wrap(s: CudaSlice<Self>) -> Buf;
    #[doc(hidden)]
    fn unwrap(b: &Buf) -> Option<&CudaSlice<Self>>;
}

macro_rules! host_elem {
    ($t:ty, $e:ident, $b:ident) => {
        impl HostElem for $t {
            const ELEM: DType = DType::$e;
            fn wrap(s: CudaSlice<Self>) -> Buf {
                Buf::$b(s)
            }
            fn unwrap(b: &Buf) -> Option<&CudaSlice<Self>> {
                match b {
                    Buf::$b(s) => Some(s),
                    _ => None,
                }
            }
        }
    };
}
host_elem!(f32, F32, F32);
host_elem!(f64, F64, F64);
host_elem!(i64, I64, I64);
host_elem!(u8, Bool, U8);

/// An n-dimensional array on a CUDA device: a shared buffer plus shape,
/// strides (in elements, 0 on broadcast axes) and offset. Cloning shares the
/// buffer; views ([`GpuArray::permute`], [`GpuArray::slice`],
/// [`GpuArray::broadcast_to`], contiguous [`GpuArray::reshape`]) copy nothing.
///
/// ```no_run
/// use nabla_kernels::cuda::{Gpu, GpuArray};
/// let gpu = Gpu::get(0).unwrap();
/// let x = GpuArray::from_host(&gpu, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// assert_eq!(x.permute(&[1, 0]).to_host::<f32>(), vec![1.0, 3.0, 2.0, 4.0]);
/// ```
#[derive(Clone, Debug)]
pub struct GpuArray {
    pub(crate) buf: Arc<Buf>,
    pub(crate) gpu: Arc<Gpu>,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl GpuArray {
    pub(crate) fn from_buf(gpu: &Arc<Gpu>, buf: Buf, shape: &[usize]) -> GpuArray {
        GpuArray {
            buf: Arc::new(buf),
            gpu: gpu.clone(),
            shape: shape.to_vec(),
            strides: row_major(shape),
            offset: 0,
        }
    }

    /// An uninitialised-then-zeroed contiguous buffer of `elem` and `shape`.
    #[track_caller]
    pub(crate) fn zeros(gpu: &Arc<Gpu>, elem: DType, shape: &[usize]) -> GpuArray {
        // Never a zero-byte allocation (empty arrays hold one unused element).
        let n = shape.iter().product::<usize>().max(1);
        let s = &gpu.stream;
        let buf = match elem {
            DType::F32 => Buf::F32(check(s.alloc_zeros(n))),
            DType::F64 => Buf::F64(check(s.alloc_zeros(n))),
            DType::I64 => Buf::I64(check(s.alloc_zeros(n))),
            DType::Bool => Buf::U8(check(s.alloc_zeros(n))),
        };
        GpuArray::from_buf(gpu, buf, shape)
    }

    /// A contiguous buffer of `elem` and `shape` whose contents the caller
    /// overwrites completely.
    #[track_caller]
    pub(crate) fn alloc(gpu: &Arc<Gpu>, elem: DType, shape: &[usize]) -> GpuArray {
        let n = shape.iter().product::<usize>().max(1);
        let s = &gpu.stream;
        // SAFETY: every caller launches a kernel that writes all `n` elements
        // before the buffer is read.
        let buf = unsafe {
            match elem {
                DType::F32 => Buf::F32(check(s.alloc(n))),
                DType::F64 => Buf::F64(check(s.alloc(n))),
                DType::I64 => Buf::I64(check(s.alloc(n))),
                DType::Bool => Buf::U8(check(s.alloc(n))),
            }
        };
        GpuArray::from_buf(gpu, buf, shape)
    }

    /// Copies host data (row-major, `shape`) to the device.
    #[track_caller]
    pub fn from_host<T: HostElem>(gpu: &Arc<Gpu>, data: &[T], shape: &[usize]) -> GpuArray {
        assert_eq!(
            data.len(),
            shape.iter().product::<usize>(),
            "cuda: {} host elements do not fill shape {shape:?}",
            data.len()
        );
        assert!(
            shape.len() <= MAX_DIMS,
            "cuda: at most {MAX_DIMS} axes, got shape {shape:?}"
        );
        if data.is_empty() {
            return GpuArray::zeros(gpu, T::ELEM, shape);
        }
        let slice = check(gpu.stream.clone_htod(data));
        GpuArray::from_buf(gpu, T::wrap(slice), shape)
    }

    /// Copies the elements, row-major, back to the host (the one place,
    /// with the runtime's `item`/`Display`, where device data crosses).
    #[track_caller]
    pub fn to_host<T: HostElem>(&self) -> Vec<T> {
        assert_eq!(
            T::ELEM,
            self.elem(),
            "cuda: to_host::<{}> of a {} array",
            T::ELEM.cuda_name(),
            self.elem().cuda_name()
        );
        let c = if self.is_contiguous() {
            self.clone()
        } else {
            super::launch::contiguous(self)
        };
        let slice = T::unwrap(&c.buf).expect("element type checked above");
        let n = c.numel();
        if n == 0 {
            return Vec::new();
        }
        check(
            c.gpu
                .stream
                .clone_dtoh(&slice.slice(c.offset..c.offset + n)),
        )
    }

    /// The element type.
    pub fn elem(&self) -> DType {
        match &*self.buf {
            Buf::F32(_) => DType::F32,
            Buf::F64(_) => DType::F64,
            Buf::I64(_) => DType::I64,
            Buf::U8(_) => DType::Bool,
        }
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Offset of the first element in the buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The device this array lives on.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The device number.
    pub fn ordinal(&self) -> usize {
        self.gpu.ordinal()
    }

    /// True when the elements are row-major and dense from `offset`.
    pub fn is_contiguous(&self) -> bool {
        let mut expect = 1isize;
        for d in (0..self.shape.len()).rev() {
            if self.shape[d] != 1 {
                if self.strides[d] != expect {
                    return false;
                }
                expect *= self.shape[d] as isize;
            }
        }
        true
    }

    fn view(&self, shape: Vec<usize>, strides: Vec<isize>, offset: usize) -> GpuArray {
        GpuArray {
            buf: self.buf.clone(),
            gpu: self.gpu.clone(),
            shape,
            strides,
            offset,
        }
    }

    /// Same elements in a new shape: a view when the new axes can step
    /// through the existing strides (splitting or merging axes that are
    /// laid out one after the other, as NumPy's reshape does without a
    /// copy), else a contiguous copy.
    #[track_caller]
    pub fn reshape(&self, shape: &[usize]) -> GpuArray {
        assert_eq!(
            self.numel(),
            shape.iter().product::<usize>(),
            "cuda: reshape {:?} -> {shape:?}",
            self.shape
        );
        assert!(
            shape.len() <= MAX_DIMS,
            "cuda: at most {MAX_DIMS} axes, got shape {shape:?}"
        );
        if self.is_contiguous() {
            return self.view(shape.to_vec(), row_major(shape), self.offset);
        }
        if let Some(strides) = reshaped_strides(&self.shape, &self.strides, shape) {
            return self.view(shape.to_vec(), strides, self.offset);
        }
        let c = super::launch::contiguous(self);
        c.view(shape.to_vec(), row_major(shape), c.offset)
    }

    /// Axes reordered (`perm[i]` is the source axis of axis `i`); a view.
    pub fn permute(&self, perm: &[usize]) -> GpuArray {
        let shape = perm.iter().map(|&p| self.shape[p]).collect();
        let strides = perm.iter().map(|&p| self.strides[p]).collect();
        self.view(shape, strides, self.offset)
    }

    /// NumPy broadcast to `shape` (stride 0 on new or stretched axes); a view.
    pub fn broadcast_to(&self, shape: &[usize]) -> GpuArray {
        let lead = shape.len() - self.shape.len();
        let strides = (0..shape.len())
            .map(|d| {
                if d >= lead && self.shape[d - lead] == shape[d] {
                    self.strides[d - lead]
                } else {
                    0
                }
            })
            .collect();
        self.view(shape.to_vec(), strides, self.offset)
    }

    /// One `ndarray::Slice` per axis (ndarray's semantics, negative steps
    /// included); a view.
    pub fn slice(&self, slices: &[Slice]) -> GpuArray {
        let (shape, strides, offset) = sliced(&self.shape, &self.strides, self.offset, slices);
        self.view(shape, strides, offset)
    }
}

#[track_caller]
pub(crate) fn check<T>(r: Result<T, cudarc::driver::DriverError>) -> T {
    r.unwrap_or_else(|e| panic!("cuda: driver error {e:?}"))
}

/// Strides that lay `new` over the elements of an array of shape `old`
/// and `strides` in the same row-major order, if there are any: each run
/// of old axes that the new shape regroups must be laid out one after the
/// other (`stride[i] = stride[i + 1] · shape[i + 1]`); axes of length 1
/// are ignored. `None` when a copy is needed.
fn reshaped_strides(old: &[usize], strides: &[isize], new: &[usize]) -> Option<Vec<isize>> {
    if old.contains(&0) {
        return Some(row_major(new));
    }
    let (os, ost): (Vec<usize>, Vec<isize>) = old
        .iter()
        .zip(strides)
        .filter(|(n, _)| **n != 1)
        .map(|(n, s)| (*n, *s))
        .unzip();
    let mut out = vec![1isize; new.len()];
    let (mut oi, mut ni) = (0, 0);
    while oi < os.len() {
        // Skip new axes of length 1 (any stride does).
        while ni < new.len() && new[ni] == 1 {
            ni += 1;
        }
        let (mut oj, mut nj) = (oi + 1, ni + 1);
        let (mut op, mut np) = (os[oi], *new.get(ni)?);
        while op != np {
            if op < np {
                op *= *os.get(oj)?;
                oj += 1;
            } else {
                np *= *new.get(nj)?;
                nj += 1;
            }
        }
        if (oi..oj - 1).any(|k| ost[k] != ost[k + 1] * os[k + 1] as isize) {
            return None;
        }
        out[nj - 1] = ost[oj - 1];
        for k in (ni + 1..nj).rev() {
            out[k - 1] = out[k] * new[k] as isize;
        }
        (oi, ni) = (oj, nj);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::reshaped_strides;

    #[test]
    fn reshapes_are_views_where_numpy_makes_them_views() {
        // A column slice [8, 4] of an [8, 12] array: splitting its last
        // axis is a view, merging its two axes is not.
        let (s, st) = ([8usize, 4], [12isize, 1]);
        assert_eq!(reshaped_strides(&s, &st, &[8, 2, 2]), Some(vec![12, 2, 1]));
        assert_eq!(reshaped_strides(&s, &st, &[32]), None);
        // Transposed last two axes of [2, 3, 4, 5] merge their batch axes.
        let (s, st) = ([2usize, 3, 5, 4], [60isize, 20, 1, 5]);
        assert_eq!(reshaped_strides(&s, &st, &[6, 5, 4]), Some(vec![20, 1, 5]));
        assert_eq!(reshaped_strides(&s, &st, &[2, 3, 20]), None);
        // Axes of length 1 come and go.
        let (s, st) = ([3usize, 1, 4], [8isize, 99, 2]);
        assert_eq!(
            reshaped_strides(&s, &st, &[1, 3, 4, 1]),
            Some(vec![1, 8, 2, 1])
        );
        // Permuted [b, t, h, d] -> [b, h, t, d] does not merge (h, t).
        let (s, st) = ([2usize, 3, 4, 5], [60isize, 5, 20, 1]);
        assert_eq!(reshaped_strides(&s, &st, &[2, 12, 5]), None);
        assert_eq!(reshaped_strides(&s, &st, &[6, 4, 5]), None);
        assert_eq!(reshaped_strides(&s, &st, &[2, 3, 4, 5]), Some(st.to_vec()));
    }
}
