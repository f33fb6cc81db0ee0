//! Joining arrays along an existing axis.

use crate::storage::Data;
use crate::{Array, ArrayValue};
use ndarray::Slice;

/// Forward.
///
/// ```
/// use nabla::{primitives::shape::concat, Array};
/// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
/// let b = Array::from_vec(vec![3.0f64], &[1]);
/// assert_eq!(concat::forward(&[a, b], 0).to_vec::<f64>(), vec![1.0, 2.0, 3.0]);
/// ```
#[track_caller]
pub fn forward(parts: &[Array], axis: usize) -> Array {
    check(parts, axis);
    #[cfg(feature = "cuda")]
    {
        let refs: Vec<&Data> = parts.iter().map(|p| &*p.data).collect();
        if let Some(g) = crate::storage::gpu::gpu_operands("concat", &refs) {
            return Array::from_data(Data::Cuda(nabla_kernels::cuda::concat(&g, axis)));
        }
    }
    macro_rules! join {
        ($variant:ident) => {{
            let hosts: Vec<_> = parts
                .iter()
                .map(|p| match &*p.data {
                    Data::$variant(a) => a,
                    _ => unreachable!("dtypes checked"),
                })
                .collect();
            if let Some(v) = row_major_join(&hosts, axis) {
                let mut shape = crate::Shape::from_slice(parts[0].shape());
                shape[axis] = parts.iter().map(|p| p.shape()[axis]).sum();
                return Array::from_data(Data::$variant(crate::storage::Host::from_vec(&shape, v)));
            }
            let views: Vec<_> = hosts.iter().map(|h| h.view()).collect();
            Data::$variant(
                ndarray::concatenate(ndarray::Axis(axis), &views)
                    .expect("shapes checked")
                    .into(),
            )
        }};
    }
    Array::from_data(match &*parts[0].data {
        Data::F32(_) => join!(F32),
        Data::F64(_) => join!(F64),
        Data::I64(_) => join!(I64),
        Data::Bool(_) => join!(Bool),
        #[cfg(feature = "cuda")]
        Data::Cuda(_) => unreachable!("device arrays concatenated above"),
    })
}
/// The parts joined along `axis` by whole-block copies, when every part
/// is contiguous row-major: for each index of the axes before `axis`, each
/// part's block of the axes from `axis` on, in turn (`None` otherwise).
fn row_major_join<T: Copy>(parts: &[&crate::storage::Host<T>], axis: usize) -> Option<Vec<T>> {
    let slices: Vec<&[T]> = parts.iter().map(|h| h.as_slice()).collect::<Option<_>>()?;
    let outer: usize = parts[0].shape()[..axis].iter().product();
    let blocks: Vec<usize> = parts
        .iter()
        .map(|h| h.shape()[axis..].iter().product())
        .collect();
    let mut v = Vec::with_capacity(slices.iter().map(|s| s.len()).sum());
    for o in 0..outer {
        for (s, &b) in slices.iter().zip(&blocks) {
            v.extend_from_slice(&s[o * b..(o + 1) * b]);
        }
    }
    Some(v)
}
#[track_caller]
fn check(parts: &[Array], axis: usize) {
    if parts.is_empty() {
        panic!("concat: needs at least one array");
    }
    let first = &parts[0];
    for p in parts {
        let same_rest = p.ndim() == first.ndim()
            && p.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(i, (a, b))| i == axis || a == b);
        if p.dtype() != first.dtype() || !same_rest {
            let shapes: Vec<_> = parts
                .iter()
                .map(|p| format!("{} {:?}", p.dtype(), p.shape()))
                .collect();
            panic!(
                "concat: arrays [{}] cannot be joined along axis {axis}; all must share the dtype and every \
                 dimension except axis {axis}",
                shapes.join(", ")
            );
        }
    }
}
/// The slices of the result that each part came from.
///
/// ```
/// use nabla::primitives::shape::concat::part_slices;
/// use ndarray::Slice;
/// let s = part_slices(&[2, 3], 2, 1); // parts of widths 2 and 3 along axis 1
/// assert_eq!(s[0], vec![Slice::from(..), Slice::new(0, Some(2), 1)]);
/// assert_eq!(s[1], vec![Slice::from(..), Slice::new(2, Some(5), 1)]);
/// ```
pub fn part_slices(sizes: &[usize], ndim: usize, axis: usize) -> Vec<Vec<Slice>> {
    let mut start = 0;
    sizes
        .iter()
        .map(|&n| {
            let s = (0..ndim)
                .map(|i| {
                    if i == axis {
                        Slice::new(start as isize, Some((start + n) as isize), 1)
                    } else {
                        Slice::from(..)
                    }
                })
                .collect();
            start += n;
            s
        })
        .collect()
}
/// JVP rule: concatenate the tangents.
///
/// ```
/// use nabla::{primitives::shape::concat, Array, DType};
/// let t = concat::jvp(&[Array::ones(&[2, 1], DType::F64), Array::zeros(&[2, 2], DType::F64)], 1);
/// assert_eq!(t.to_vec::<f64>(), vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
/// ```
pub fn jvp<V: ArrayValue>(dxs: &[V], axis: usize) -> V {
    V::concat(dxs, axis)
}
/// VJP rule: the cotangent's slice for part `i`.
///
/// ```
/// use nabla::{primitives::shape::concat, Array};
/// let ct = Array::from_vec(vec![10.0f64, 20.0, 30.0], &[3]);
/// assert_eq!(concat::vjp(&[2, 1], 0, 0, &ct).to_vec::<f64>(), vec![10.0, 20.0]);
/// assert_eq!(concat::vjp(&[2, 1], 0, 1, &ct).to_vec::<f64>(), vec![30.0]);
/// ```
pub fn vjp<V: ArrayValue>(sizes: &[usize], axis: usize, i: usize, ct: &V) -> V {
    let nd = ct.ndim();
    ct.slice(&part_slices(sizes, nd, axis)[i])
}
