//! One [`Move`] on this rank's block: the collective over the mesh axis's
//! communicator along the array axis it concerns (the collectives work on
//! the first axis, so the axis is moved there and back, as views).

use super::collectives::{Reduce, all_gather, all_reduce, all_to_all, reduce_scatter};
use super::darray::DArray;
use super::mesh::Mesh;
use super::moves::Move;
use crate::Array;

/// `x` with axis `axis` first (a view).
fn to_front(x: &Array, axis: usize) -> Array {
    if axis == 0 {
        return x.clone();
    }
    let mut perm: Vec<usize> = (0..x.ndim()).collect();
    perm.remove(axis);
    perm.insert(0, axis);
    x.permute(&perm)
}

/// The inverse of [`to_front`].
fn from_front(x: &Array, axis: usize) -> Array {
    if axis == 0 {
        return x.clone();
    }
    let mut perm: Vec<usize> = (1..x.ndim()).collect();
    perm.insert(axis, 0);
    x.permute(&perm)
}

/// This rank's block after move `m` of `d` (whose layout is before it).
#[track_caller]
pub(crate) fn run(m: Move, d: &DArray, mesh: Mesh) -> Array {
    let x = &d.local;
    let comm = mesh.axis_comm(m.mesh() as usize);
    match m {
        Move::AllReduce { .. } => all_reduce(x, Reduce::Sum, comm),
        Move::ReduceScatter { axis, .. } => {
            from_front(&reduce_scatter(&to_front(x, axis), comm), axis)
        }
        Move::AllGather { axis, .. } => from_front(&all_gather(&to_front(x, axis), comm), axis),
        Move::AllToAll { from, to, .. } => {
            // Blocks of axis `to` go to the ranks in order; what arrives
            // from rank s is block s of axis `from`.
            let n = comm.size();
            let got = all_to_all(&to_front(x, to), comm);
            let len = got.shape()[0] / n;
            let parts: Vec<Array> = (0..n)
                .map(|s| from_front(&got.slice_axis(0, s * len..(s + 1) * len), to))
                .collect();
            crate::concat(&parts, from as isize)
        }
        Move::Slice { mesh: a, axis } => {
            let n = mesh.shape().size(a as usize);
            let len = x.shape()[axis] / n;
            let c = mesh.coord(a as usize);
            x.slice_axis(axis as isize, c * len..(c + 1) * len)
        }
        Move::Split { mesh: a } => {
            if mesh.coord(a as usize) == 0 {
                x.clone()
            } else {
                x.zeros_like()
            }
        }
    }
}
