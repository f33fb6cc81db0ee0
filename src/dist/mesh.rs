//! [`Mesh`]: the ranks of a communicator arranged on named axes, with one
//! communicator per axis (the ranks that differ only along it).

use super::comm::Comm;
use super::layout::{Layout, MeshShape};
use crate::Array;
use std::sync::{Mutex, MutexGuard};

/// A mesh's facts on this rank.
struct Entry {
    comm: Comm,
    shape: MeshShape,
    coords: Vec<usize>,
    axes: Vec<Comm>,
}

static MESHES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn table() -> MutexGuard<'static, Vec<Entry>> {
    MESHES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The ranks of a communicator on named axes, row-major (the last axis
/// varies fastest): `Mesh::new(&[("data", 2), ("model", 2)])` puts world
/// ranks 0 and 1 on `data` 0, ranks 2 and 3 on `data` 1. Several meshes
/// may coexist; a mesh is a small copyable handle.
///
/// ```standalone_crate
/// use nabla::dist::{self, Mesh};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("data", dist::world_size())]);
/// assert_eq!(mesh.shape().devices(), dist::world_size());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mesh(usize);

impl Mesh {
    /// A mesh over every rank of the world. Panics on every rank, naming
    /// the sizes, when their product is not the world size. Every rank
    /// calls it (it makes one communicator per axis).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("x", nabla::dist::world_size())]);
    /// assert_eq!(mesh.coord(0), nabla::dist::rank());
    /// ```
    #[track_caller]
    pub fn new(axes: &[(&str, usize)]) -> Mesh {
        Mesh::on(Comm::world(), axes)
    }

    /// A mesh over the ranks of `comm`.
    ///
    /// ```standalone_crate
    /// use nabla::dist::{self, Comm, Mesh};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::on(Comm::world(), &[("all", dist::world_size())]);
    /// assert_eq!(mesh.comm(), Comm::world());
    /// ```
    #[track_caller]
    pub fn on(comm: Comm, axes: &[(&str, usize)]) -> Mesh {
        let shape = MeshShape::new(axes);
        let n = comm.size();
        if shape.devices() != n {
            let sizes: Vec<String> = axes.iter().map(|(a, s)| format!("{a}: {s}")).collect();
            panic!(
                "nabla::dist::Mesh::new: the axes ({}) hold {} ranks but the communicator has {n}; pick sizes whose product is {n} (mpirun -n {})",
                sizes.join(", "),
                shape.devices(),
                shape.devices()
            );
        }
        let coords = shape.coords(comm.rank());
        let axes = (0..shape.len())
            .map(|m| {
                // The ranks that share every coordinate but axis m's.
                let color = (0..shape.len())
                    .filter(|&j| j != m)
                    .fold(0, |c, j| c * shape.size(j) + coords[j]);
                comm.split(color, coords[m])
            })
            .collect();
        let mut t = table();
        t.push(Entry {
            comm,
            shape,
            coords,
            axes,
        });
        Mesh(t.len() - 1)
    }

    fn with<R>(self, f: impl FnOnce(&Entry) -> R) -> R {
        f(&table()[self.0])
    }

    /// Its axes (names and sizes).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    /// assert_eq!(mesh.shape().name(0), "d");
    /// ```
    pub fn shape(self) -> MeshShape {
        self.with(|e| e.shape.clone())
    }

    /// This rank's coordinate on axis `m`.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    /// assert!(mesh.coord(0) < nabla::dist::world_size());
    /// ```
    pub fn coord(self, m: usize) -> usize {
        self.with(|e| e.coords[m])
    }

    /// The communicator of axis `m`: this rank and those that differ from
    /// it only along `m`, ordered by their coordinate on `m`.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    /// assert_eq!(mesh.axis_comm(0).size(), nabla::dist::world_size());
    /// ```
    pub fn axis_comm(self, m: usize) -> Comm {
        self.with(|e| e.axes[m])
    }

    /// The communicator the mesh was made on.
    ///
    /// ```standalone_crate
    /// use nabla::dist::{self, Comm, Mesh};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// assert_eq!(mesh.comm(), Comm::world());
    /// ```
    pub fn comm(self) -> Comm {
        self.with(|e| e.comm)
    }

    /// This rank's block of the global array `x` under `layout`: a view,
    /// no copy (every rank holds `x` whole).
    pub(crate) fn block(self, x: &Array, layout: &Layout) -> Array {
        let (shape, coords) = self.with(|e| (e.shape.clone(), e.coords.clone()));
        let mut out = x.clone();
        for (k, axes) in layout.dims.iter().enumerate() {
            let (mut start, mut len) = (0, x.shape()[k]);
            for &m in axes {
                len /= shape.size(m as usize);
                start += coords[m as usize] * len;
            }
            if len != x.shape()[k] {
                out = out.slice_axis(k as isize, start..start + len);
            }
        }
        out
    }
}
