//! The imperative tape on [`DArray`]s: `requires_grad`, `backward`,
//! `grad`, as on arrays. Each rank's tape records its blocks' ops and the
//! collectives (whose reverse steps are the transposed collectives), so
//! `backward` on every rank differentiates the sum over the ranks of
//! their outputs; seeding a replicated loss with one over its number of
//! copies makes that the loss itself, and a parameter's gradient is the
//! sum of the ranks' block gradients over the mesh axes that do not split
//! it.

use super::darray::DArray;
use crate::Array;

impl DArray {
    /// Marks this rank's block as a leaf of the tape (every rank calls it).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let w = dist::distribute(&Array::ones(&[2], nabla::DType::F64), &mesh, &Spec::new(&[None])).requires_grad();
    /// assert!(w.local().is_tracked());
    /// ```
    #[track_caller]
    pub fn requires_grad(self) -> DArray {
        DArray {
            local: self.local.requires_grad(),
            ..self
        }
    }

    /// Runs the tape backwards from this one-element `DArray` on every
    /// rank (every rank calls it), accumulating into the leaves' gradients.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, ArrayValue, Value, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mesh = Mesh::new(&[("d", n)]);
    /// let x = Array::linspace(0.0, 1.0, 2 * n, nabla::DType::F64);
    /// let w = dist::distribute(&x, &mesh, &Spec::new(&[Some("d")])).requires_grad();
    /// let loss = w.mul(&w).sum_axes(&[0], false); // Σ w², pending over d
    /// loss.backward();
    /// let diff = (&w.grad().to_global() - &(&x * 2.0)).abs().max().item();
    /// assert!(diff < 1e-12);
    /// ```
    #[track_caller]
    pub fn backward(&self) {
        if self.shape.iter().product::<usize>() != 1 {
            panic!(
                "DArray::backward: the output has shape {:?}; backward starts from one element (reduce it first, e.g. with .sum())",
                &self.shape[..]
            );
        }
        let ms = self.mesh.shape();
        let copies: usize = (0..ms.len())
            .filter(|&m| self.layout.partial & (1 << m) == 0)
            .map(|m| ms.size(m))
            .product();
        (&self.local * (1.0 / copies as f64)).backward();
    }

    /// The gradient `backward` accumulated, laid out like this `DArray`
    /// (a collective: every rank calls it). Panics if the block has no
    /// gradient.
    ///
    /// ```standalone_crate
    /// use nabla::{Array, ArrayValue, Value, dist::{self, Mesh, Spec}};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("d", dist::world_size())]);
    /// let w = dist::distribute(&Array::ones(&[3], nabla::DType::F64), &mesh, &Spec::new(&[None])).requires_grad();
    /// w.sum_axes(&[0], false).backward();
    /// assert_eq!(w.grad().to_global().to_vec::<f64>(), vec![1.0; 3]);
    /// ```
    #[track_caller]
    pub fn grad(&self) -> DArray {
        let g: Array = self.local.grad();
        let ms = self.mesh.shape();
        let all: u8 = ((1u16 << ms.len()) - 1) as u8;
        let mut pending = self.layout.clone();
        pending.partial = all & !self.layout.split_mask();
        DArray {
            local: g,
            shape: self.shape.clone(),
            layout: pending,
            mesh: self.mesh,
        }
        .moved(&self.layout)
    }
}
