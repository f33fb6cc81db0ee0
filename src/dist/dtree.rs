//! [`DTree`]: a tree of arrays (a model, a tuple of weights) whose leaves
//! are [`DArray`]s, as `spmd` takes model arguments and returns their
//! gradients.

use super::darray::{DArray, distribute};
use super::layout::Spec;
use super::mesh::Mesh;
use crate::Array;
use crate::compose::TreeVal;
use crate::tree::{Tree, named_leaves};
use std::borrow::Borrow;
use std::sync::Arc;

/// A tree of type `T` (a `#[derive(Tree)]` model, a tuple, a `Vec` of
/// arrays) with a [`DArray`] in place of each array: what [`distribute_tree`]
/// makes and what `grad(spmd(f))` returns for a tree argument.
///
/// ```standalone_crate
/// use nabla::{nn::Linear, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("model", dist::world_size())]);
/// let layer = Linear::new(3, 2 * dist::world_size(), true, nabla::random::Key::new(0));
/// let d = dist::distribute_tree(&layer, &mesh, |_, shape| Spec::replicated(shape.len()));
/// assert_eq!(d.leaves().len(), 2);
/// let back: Linear = d.to_global();
/// assert_eq!(back.weight.to_vec::<f32>(), layer.weight.to_vec::<f32>());
/// ```
pub struct DTree<T: Tree + ?Sized>(pub(crate) TreeVal<T, DArray>);

impl<T: Tree + ?Sized> Clone for DTree<T> {
    fn clone(&self) -> Self {
        DTree(self.0.clone())
    }
}

/// Lays out every leaf of `tree` over `mesh` by the spec `spec(name,
/// shape)` gives it (names as [`named_leaves`](crate::tree::named_leaves)
/// gives them, `"0.weight"`-style paths).
///
/// ```standalone_crate
/// use nabla::{nn::Linear, dist::{self, Mesh, Spec}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let mesh = Mesh::new(&[("model", n)]);
/// // Column-parallel: the output features split (weights are [out, in]).
/// let layer = Linear::new(3, 2 * n, true, nabla::random::Key::new(0));
/// let d = dist::distribute_tree(&layer, &mesh, |name, shape| {
///     if name.ends_with("weight") { Spec::new(&[Some("model"), None]) } else { Spec::new(&[Some("model")]) }
/// });
/// assert_eq!(d.leaves()[0].local().shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn distribute_tree<T: Tree + ?Sized>(
    tree: &T,
    mesh: &Mesh,
    mut spec: impl FnMut(&str, &[usize]) -> Spec,
) -> DTree<T> {
    let leaves = named_leaves(tree)
        .into_iter()
        .map(|(name, a)| distribute(&a, mesh, &spec(&name, a.shape())))
        .collect();
    DTree(TreeVal {
        skeleton: Arc::new(tree.rebuild(&mut crate::tree::leaves(tree).into_iter())),
        leaves,
    })
}

impl<T: Tree + ?Sized> DTree<T> {
    /// The leaves, in the tree's order.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let t = (Array::ones(&[2], nabla::DType::F64), Array::zeros(&[3], nabla::DType::F64));
    /// let d = dist::distribute_tree(&t, &mesh, |_, s| Spec::replicated(s.len()));
    /// assert_eq!(d.leaves()[1].shape(), &[3]);
    /// ```
    pub fn leaves(&self) -> &[DArray] {
        &self.0.leaves
    }

    /// The leaves, to change in place (an optimizer's update of the
    /// blocks).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let mut d = dist::distribute_tree(&vec![Array::ones(&[2], nabla::DType::F64)], &mesh, |_, s| Spec::replicated(s.len()));
    /// d.leaves_mut()[0] = d.leaves()[0].map_local(|b| b * 2.0);
    /// assert_eq!(d.to_global()[0].to_vec::<f64>(), vec![2.0, 2.0]);
    /// ```
    pub fn leaves_mut(&mut self) -> &mut [DArray] {
        &mut self.0.leaves
    }

    /// The whole tree on every rank (its gradient type, which for models
    /// is the model's type).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let t = vec![Array::ones(&[2], nabla::DType::F64)];
    /// let d = dist::distribute_tree(&t, &mesh, |_, s| Spec::replicated(s.len()));
    /// assert_eq!(d.to_global()[0].to_vec::<f64>(), vec![1.0, 1.0]);
    /// ```
    pub fn to_global(&self) -> T::Grad
    where
        T::Grad: Borrow<T>,
    {
        let leaves: Vec<Array> = self.0.leaves.iter().map(DArray::to_global).collect();
        (*self.0.skeleton).borrow().rebuild(&mut leaves.into_iter())
    }

    /// Each leaf's spec, with its name.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let d = dist::distribute_tree(&vec![Array::ones(&[2], nabla::DType::F64)], &mesh, |_, s| Spec::replicated(s.len()));
    /// assert_eq!(d.specs()[0].1, Spec::new(&[None]));
    /// ```
    pub fn specs(&self) -> Vec<(String, Spec)>
    where
        T::Grad: Borrow<T>,
    {
        let names = named_leaves((*self.0.skeleton).borrow());
        names
            .into_iter()
            .zip(&self.0.leaves)
            .map(|((n, _), d)| (n, d.spec()))
            .collect()
    }
}

/// A tree of `DArray`s is a tree of its blocks: optimizers (`init`,
/// `update`) and `nabla::io` see each rank's blocks, so an elementwise
/// optimizer on parameters and gradients of the same layout updates the
/// global parameters exactly as one process would.
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Mesh, Spec}, optim::{AdamW, Optimizer}};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("d", dist::world_size())]);
/// let w = vec![Array::ones(&[2 * dist::world_size()], nabla::DType::F64)];
/// let mut p = dist::distribute_tree(&w, &mesh, |_, _| Spec::new(&[Some("d")]));
/// let g = p.clone();
/// let opt = AdamW::new(0.1);
/// let mut state = opt.init(&p);
/// opt.update(&mut p, &g, &mut state);
/// assert_eq!(p.leaves()[0].local().shape(), &[2]);
/// ```
impl<T: Tree + ?Sized> Tree for DTree<T> {
    type Grad = Vec<Array>;
    fn flatten_into(&self, out: &mut Vec<Array>) {
        out.extend(self.0.leaves.iter().map(|d| d.local.clone()));
    }
    fn num_leaves(&self) -> usize {
        self.0.leaves.len()
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Vec<Array> {
        leaves.take(self.0.leaves.len()).collect()
    }
    #[track_caller]
    fn leaf_index(&self, path: &[crate::tree::Seg]) -> usize {
        match path {
            [crate::tree::Seg::Index(i)] if *i < self.0.leaves.len() => *i,
            _ => panic!(
                "DTree::leaf_index: a tree of DArrays is addressed by leaf index ([Seg::Index(i)], i < {}), got {path:?}",
                self.0.leaves.len()
            ),
        }
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut Array)) {
        for d in &mut self.0.leaves {
            f(&mut d.local);
        }
    }
}
