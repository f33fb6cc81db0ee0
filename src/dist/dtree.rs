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
/// let layer = Linear::new(3, 2 * dist::world_size());
/// let d = dist::distribute_tree(&layer, &mesh, |_, shape| Spec::replicated(shape.len()));
/// assert_eq!(d.leaves().len(), 2);
/// let back: Linear = d.to_global();
/// assert!(back.weight.allclose(&layer.weight, 0.0, 0.0));
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
/// // Column-parallel: the output features split.
/// let d = dist::distribute_tree(&Linear::new(3, 2 * n), &mesh, |name, shape| {
///     if name.ends_with("weight") { Spec::new(&[None, Some("model")]) } else { Spec::new(&[Some("model")]) }
/// });
/// assert_eq!(d.leaves()[0].local().shape(), &[3, 2]);
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
    /// let t = (Array::ones(&[2], nabla::DType::F64),);
    /// let d = dist::distribute_tree(&t, &mesh, |_, s| Spec::replicated(s.len()));
    /// assert_eq!(d.to_global().0.to_vec::<f64>(), vec![1.0, 1.0]);
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
    /// let d = dist::distribute_tree(&(Array::ones(&[2], nabla::DType::F64),), &mesh, |_, s| Spec::replicated(s.len()));
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
