//! [`DArray`]: a global array laid out over a mesh, each rank holding its
//! block; [`distribute`], [`DArray::to_global`] and
//! [`DArray::reshard`].

use super::layout::{Layout, Spec};
use super::mesh::Mesh;
use super::moves::moves;
use crate::{Array, Shape};

/// A global array laid out over a [`Mesh`] by a [`Spec`]: each rank keeps
/// its block (its *shard*), and pending sums over mesh axes are a state
/// of the layout. Every rank holds a `DArray` of the same global shape and
/// spec. `DArray`s are values of the generic programs (`Value`,
/// `ArrayValue`): inside [`spmd`](super::spmd) each op reshards its
/// operands to a layout its sharding rule accepts and runs on the blocks.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let mesh = Mesh::new(&[("data", n)]);
/// let x = Array::linspace(0.0, 1.0, 4 * n, DType::F64).reshape(&[2 * n, 2]);
/// let d = dist::distribute(&x, &mesh, &Spec::new(&[Some("data"), None]));
/// assert_eq!(d.local().shape(), &[2, 2]);
/// assert_eq!(d.to_global().to_vec::<f64>(), x.to_vec::<f64>());
/// ```
#[derive(Clone)]
pub struct DArray {
    pub(crate) local: Array,
    pub(crate) shape: Shape,
    pub(crate) layout: Layout,
    pub(crate) mesh: Mesh,
}

impl std::fmt::Debug for DArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DArray(shape {:?}, spec {}, local {:?})",
            &self.shape[..],
            self.spec(),
            self.local.shape()
        )
    }
}

/// Lays out the global array `x` (the same on every rank) over `mesh` by
/// `spec`: each rank keeps its block, without communication. Panics naming
/// the axis when a spec names a mesh axis the mesh lacks, uses one twice,
/// or splits an axis whose length the parts do not divide.
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("model", dist::world_size())]);
/// let w = Array::ones(&[3, 4 * dist::world_size()], nabla::DType::F32);
/// let d = dist::distribute(&w, &mesh, &Spec::new(&[None, Some("model")]));
/// assert_eq!(d.local().shape(), &[3, 4]);
/// ```
#[track_caller]
pub fn distribute(x: &Array, mesh: &Mesh, spec: &Spec) -> DArray {
    let layout = spec.resolve(x.shape(), &mesh.shape(), "distribute");
    if layout.partial != 0 {
        panic!(
            "nabla::dist::distribute: the spec {spec} is a pending sum; distribute whole values (a spec without partial_over) and reshard afterwards"
        );
    }
    DArray {
        local: mesh.block(x, &layout),
        shape: Shape::from_slice(x.shape()),
        layout,
        mesh: *mesh,
    }
}

impl DArray {
    /// Makes a `DArray` from this rank's block: `local` must have the block
    /// shape `spec` gives `shape` on `mesh`.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, DArray, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mesh = Mesh::new(&[("d", n)]);
    /// let mine = Array::full(&[2], dist::rank() as f64, nabla::DType::F64);
    /// let d = DArray::from_local(mine, &[2 * n], &mesh, &Spec::new(&[Some("d")]));
    /// assert_eq!(d.to_global().shape(), &[2 * n]);
    /// ```
    #[track_caller]
    pub fn from_local(local: Array, shape: &[usize], mesh: &Mesh, spec: &Spec) -> DArray {
        let ms = mesh.shape();
        let layout = spec.resolve(shape, &ms, "DArray::from_local");
        let want = layout.local_shape(shape, &ms);
        if local.shape() != want.as_slice() {
            panic!(
                "nabla::dist::DArray::from_local: the block has shape {:?} but {spec} of {shape:?} on {ms} gives blocks of {want:?}; pass this rank's block",
                local.shape()
            );
        }
        DArray {
            local,
            shape: Shape::from_slice(shape),
            layout,
            mesh: *mesh,
        }
    }

    /// This rank's block.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let d = dist::distribute(&Array::ones(&[2], nabla::DType::F32), &mesh, &Spec::new(&[None]));
    /// assert_eq!(d.local().shape(), &[2]);
    /// ```
    pub fn local(&self) -> &Array {
        &self.local
    }

    /// The global shape.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let d = dist::distribute(&Array::ones(&[2], nabla::DType::F32), &mesh, &Spec::new(&[None]));
    /// assert_eq!(d.shape(), &[2]);
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Its layout, by mesh-axis names.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let s = Spec::new(&[None]);
    /// assert_eq!(dist::distribute(&Array::ones(&[2], nabla::DType::F32), &mesh, &s).spec(), s);
    /// ```
    pub fn spec(&self) -> Spec {
        self.layout.spec(&self.mesh.shape())
    }

    /// Its mesh.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let d = dist::distribute(&Array::ones(&[2], nabla::DType::F32), &mesh, &Spec::new(&[None]));
    /// assert_eq!(d.mesh(), mesh);
    /// ```
    pub fn mesh(&self) -> Mesh {
        self.mesh
    }

    /// The whole array on every rank (gathers the blocks and completes
    /// pending sums).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mesh = Mesh::new(&[("d", n)]);
    /// let x = Array::ones(&[2 * n], nabla::DType::F64);
    /// let d = dist::distribute(&x, &mesh, &Spec::new(&[Some("d")]));
    /// assert_eq!(d.to_global().to_vec::<f64>(), vec![1.0; 2 * n]);
    /// ```
    #[track_caller]
    pub fn to_global(&self) -> Array {
        self.moved(&Layout::replicated(self.shape.len())).local
    }

    /// The same global array under another spec, moved by whichever
    /// collectives send the fewest bytes: a local slice to split further,
    /// all-gather to undo a split, all-to-all to move a split to another
    /// axis, reduce-scatter or all-reduce to complete a pending sum.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mesh = Mesh::new(&[("d", n)]);
    /// let x = Array::ones(&[2 * n, 2 * n], nabla::DType::F64);
    /// let rows = dist::distribute(&x, &mesh, &Spec::new(&[Some("d"), None]));
    /// let cols = rows.reshard(&Spec::new(&[None, Some("d")])); // all-to-all
    /// assert_eq!(cols.local().shape(), &[2 * n, 2]);
    /// ```
    #[track_caller]
    pub fn reshard(&self, spec: &Spec) -> DArray {
        let to = spec.resolve(&self.shape, &self.mesh.shape(), "DArray::reshard");
        self.moved(&to)
    }

    /// The same layout with `f` applied to this rank's block, which must
    /// keep its shape (an optimizer's elementwise update).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let d = dist::distribute(&Array::ones(&[2], nabla::DType::F64), &mesh, &Spec::new(&[None]));
    /// assert_eq!(d.map_local(|b| b + 1.0).to_global().to_vec::<f64>(), vec![2.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn map_local(&self, f: impl FnOnce(&Array) -> Array) -> DArray {
        let local = f(&self.local);
        if local.shape() != self.local.shape() {
            panic!(
                "nabla::dist::DArray::map_local: the block's shape changed from {:?} to {:?}; map_local keeps the layout, so keep the shape",
                self.local.shape(),
                local.shape()
            );
        }
        DArray {
            local,
            ..self.clone()
        }
    }

    /// The same global array in layout `to`.
    #[track_caller]
    pub(crate) fn moved(&self, to: &Layout) -> DArray {
        if &self.layout == to {
            return self.clone();
        }
        let mut out = self.clone();
        for m in moves(&self.layout, to, &self.shape, &self.mesh.shape()) {
            out.local = super::reshard::run(m, &out, self.mesh);
            m.apply(&mut out.layout);
        }
        out
    }
}
