//! Accumulating a cotangent into a slice of a larger array
//! ([`add_into_slice`]), in place when nothing is recorded on the tape.

use crate::autograd::needs_grad;
use crate::storage::Data;
use crate::storage::Host;
use crate::{Array, ArrayValue};
use ndarray::Slice;

/// `x + slice_place(ct)` (see [`ArrayValue::add_into_slice`]): in place
/// when nothing is recorded on the tape and both are float arrays of one
/// dtype on one device (host or GPU) — one pass over the region instead of
/// a zero-filled full array and a full add. `x` is taken by value, so its buffer is reused when no
/// one else holds it (copy-on-write otherwise: values never change under
/// another holder).
pub(crate) fn add_into_slice(mut x: Array, slices: &[Slice], ct: &Array) -> Array {
    if !needs_grad(&[&x, ct]) && x.dtype() == ct.dtype() && x.dtype().is_float() {
        let done = match (std::sync::Arc::make_mut(&mut x.data), &*ct.data) {
            (Data::F64(a), Data::F64(c)) => add_region(a, slices, c),
            (Data::F32(a), Data::F32(c)) => add_region(a, slices, c),
            _ => false,
        };
        if done {
            return x;
        }
        #[cfg(feature = "cuda")]
        if let (Data::Cuda(a), Data::Cuda(c)) = (std::sync::Arc::make_mut(&mut x.data), &*ct.data)
            && nabla_kernels::cuda::add_into_region(a, slices, c)
        {
            return x;
        }
    }
    let shape = x.shape().to_vec();
    crate::Value::add(&x, &ArrayValue::slice_place(ct, &shape, slices))
}

/// Adds `c` into the region of `a` that `slices` selects; false (nothing
/// done) when the shapes do not match.
fn add_region<T: nabla_kernels::Float>(a: &mut Host<T>, slices: &[Slice], c: &Host<T>) -> bool {
    if slices.len() != a.ndim() {
        return false;
    }
    let mut whole = a.view_mut();
    let mut region = whole.slice_each_axis_mut(|ax| slices[ax.axis.index()]);
    if region.shape() != c.shape() {
        return false;
    }
    nabla_kernels::elementwise::add_into(&mut region, c.view());
    true
}
