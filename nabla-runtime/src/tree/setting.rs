//! [`Setting`]: static data in a tree (a head count, an `eps`).

use super::{Seg, Tree, bad_path};
use crate::Array;

/// A value kept in a tree of arrays without being a leaf: a layer's head
/// count, a normalisation's `eps` (Equinox's static fields). It is
/// copied unchanged into gradients and rebuilt trees, and never
/// differentiated, saved or updated.
///
/// ```
/// use nabla::{tree::{Setting, Tree}, Array};
///
/// #[derive(Clone, nabla::Tree)]
/// struct Attn { qkv: Array, heads: Setting<usize> }
///
/// let a = Attn { qkv: Array::zeros(&[6, 2], nabla::DType::F32), heads: Setting(2) };
/// assert_eq!(a.num_leaves(), 1);
/// assert_eq!(a.heads.0, 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Setting<T>(pub T);

/// `*setting` is the value: how `#[differentiable]` code reads a setting
/// (`let h = *self.heads;`), as static data.
///
/// ```
/// use nabla::tree::Setting;
/// let eps = Setting(1e-5);
/// assert_eq!(*eps, 1e-5);
/// ```
impl<T> std::ops::Deref for Setting<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> Tree for Setting<T> {
    type Grad = Setting<T>;
    fn flatten_into(&self, _out: &mut Vec<Array>) {}
    fn num_leaves(&self) -> usize {
        0
    }
    fn for_each_leaf_mut(&mut self, _f: &mut dyn FnMut(&mut Array)) {}
    fn rebuild(&self, _leaves: &mut dyn Iterator<Item = Array>) -> Self::Grad {
        self.clone()
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        bad_path(path, "a setting holds no arrays")
    }
    fn names_into(&self, _prefix: &str, _out: &mut Vec<String>) {}
}
