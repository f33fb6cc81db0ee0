//! Leaves packed into one host buffer for a single MPI call, and cut back
//! out of the result: what [`DataParallel`](super::DataParallel)'s buckets
//! and [`Zero1`](super::Zero1)'s shards travel in.

use crate::custom::cpu_kernel;
use crate::{Array, DType, Device, Element};
use mpi::datatype::Equivalence;
use std::ops::Mul;

/// The element types that travel over MPI.
pub(crate) trait Wire: Element + Equivalence + Default + Mul<Output = Self> {}
impl Wire for f32 {}
impl Wire for f64 {}

/// Bytes per element of a float dtype.
pub(crate) fn width(d: DType) -> usize {
    if d == DType::F32 { 4 } else { 8 }
}

/// The elements of every leaf (all of element type `E`), row-major, one
/// leaf after another, each multiplied by `scale` on the way (one pass over
/// the data; leaves on the host are read in place).
pub(crate) fn pack<E: Wire>(leaves: &[Array], scale: Option<f64>) -> Vec<E> {
    let total = leaves.iter().map(Array::numel).sum();
    let mut flat = Vec::with_capacity(total);
    each_slice::<E>(leaves, |v| match scale {
        Some(s) => {
            let s = E::from_f64(s);
            flat.extend(v.iter().map(|&x| x * s));
        }
        None => flat.extend_from_slice(v),
    });
    flat
}

/// [`pack`] into `out`, which holds exactly the leaves' elements.
pub(crate) fn pack_into<E: Wire>(leaves: &[Array], scale: Option<f64>, out: &mut [E]) {
    let mut at = 0;
    each_slice::<E>(leaves, |v| {
        let dst = &mut out[at..at + v.len()];
        match scale {
            Some(s) => {
                let s = E::from_f64(s);
                dst.iter_mut().zip(v).for_each(|(d, &x)| *d = x * s);
            }
            None => dst.copy_from_slice(v),
        }
        at += v.len();
    });
    assert_eq!(at, out.len(), "pack_into: a buffer sized for the leaves");
}

/// `f` on each leaf's elements in turn, row-major (read in place on the
/// host).
fn each_slice<E: Wire>(leaves: &[Array], mut f: impl FnMut(&[E])) {
    let hosts: Vec<Array> = leaves.iter().map(|a| a.to_device(Device::Cpu)).collect();
    let refs: Vec<&Array> = hosts.iter().collect();
    cpu_kernel::<E>(&refs, &[0], |ins, _| {
        for v in ins {
            f(v.as_slice());
        }
    });
}

/// `flat` cut into arrays of the shapes of `like`, in order, each on the
/// device of its `like` (on the host, views of one buffer: no copy).
pub(crate) fn unpack<E: Wire>(flat: Vec<E>, like: &[Array]) -> Vec<Array> {
    let total = flat.len();
    let flat = Array::from_vec(flat, &[total]);
    let mut at = 0;
    like.iter()
        .map(|a| {
            let k = a.numel();
            let part = flat.slice_axis(0, at..at + k).reshape(a.shape());
            at += k;
            if a.device() == Device::Cpu {
                part
            } else {
                part.to_device(a.device())
            }
        })
        .collect()
}
