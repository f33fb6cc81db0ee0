//! Trees: values made of arrays (structs with `#[derive(Tree)]`, `Vec`,
//! arrays `[T; N]`, slices, tuples), or of floats (`[f64; 3]`,
//! `[[f32; 2]; 4]`: `Tree<f64>`, for functions of floats). A
//! differentiable function may take a tree argument; its gradient is a tree
//! of the same shape (the gradient of a `&Mlp` is an `Mlp`, of a
//! `&[f64; 3]` a `[f64; 3]`).
//!
//! Generated code sees a tree as its leaves (a flat list of values) plus the
//! original value as a *skeleton* that gives each field's position.
//!
//! ```
//! use nabla::{tree::{Seg, Tree}, Array, DType};
//! let layers = vec![Array::zeros(&[2], DType::F64), Array::ones(&[3], DType::F64)];
//! assert_eq!(layers.num_leaves(), 2);
//! assert_eq!(layers.leaf_index(&[Seg::Index(1)]), 1);
//! ```

mod generated;
mod setting;

pub use generated::*;
pub use setting::Setting;

use crate::Array;
use crate::vocab::cotangent::Cotangent;

/// One step of a path into a tree: a named field or an index.
///
/// ```
/// use nabla::{tree::{Seg, Tree}, Array, DType};
/// #[derive(nabla::Tree)]
/// struct Layer { w: Array, b: Array }
/// let layer = Layer { w: Array::zeros(&[2], DType::F64), b: Array::zeros(&[1], DType::F64) };
/// let p = (Array::scalar(1.0f64), layer);
/// assert_eq!(p.leaf_index(&[Seg::Index(1), Seg::Field("b")]), 2); // `p.1.b`
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A struct field.
    Field(&'static str),
    /// An element of a `Vec`, array, slice or tuple.
    Index(usize),
}

/// A value made of leaves of type `L`: arrays, or (`L = f64`, `f32`)
/// floats.
///
/// ```
/// use nabla::prelude::*;
///
/// #[derive(Clone, Tree)]
/// struct Line { w: Array, b: Array }
///
/// #[differentiable]
/// fn loss(p: &Line, x: &Array) -> Array {
///     (&(&p.w * x) + &p.b).sum()
/// }
///
/// fn main() {
///     let p = Line { w: Array::scalar(2.0f64), b: Array::scalar(0.5f64) };
///     assert_eq!(p.num_leaves(), 2);
///     let g: Line = grad(loss)(&p, &Array::scalar(3.0f64)); // the gradient is a `Line`
///     assert_eq!((g.w.item(), g.b.item()), (3.0, 1.0));
/// }
/// ```
pub trait Tree<L = Array> {
    /// The type of its gradient (`Self`, or `Vec<_>` for slices).
    type Grad;
    /// Appends the leaves in a fixed order.
    ///
    /// ```
    /// use nabla::{tree::Tree, Array};
    /// let t = (Array::scalar(1.0f64), vec![Array::scalar(2.0f64), Array::scalar(3.0f64)]);
    /// let mut out = Vec::new();
    /// t.flatten_into(&mut out);
    /// assert_eq!(out.iter().map(|a| a.item()).collect::<Vec<_>>(), vec![1.0, 2.0, 3.0]);
    /// ```
    fn flatten_into(&self, out: &mut Vec<L>);
    /// The number of leaves.
    ///
    /// ```
    /// use nabla::tree::Tree;
    /// assert_eq!([[1.0f64, 2.0], [3.0, 4.0]].num_leaves(), 4);
    /// ```
    fn num_leaves(&self) -> usize;
    /// A value of this shape built from the next leaves of `leaves`.
    ///
    /// ```
    /// use nabla::{tree::Tree, Array, DType};
    /// let t = vec![Array::zeros(&[2], DType::F64), Array::zeros(&[1], DType::F64)];
    /// let new = vec![Array::ones(&[2], DType::F64), Array::full(&[1], 5.0, DType::F64)];
    /// let r: Vec<Array> = t.rebuild(&mut new.into_iter());
    /// assert_eq!(r[1].to_vec::<f64>(), vec![5.0]);
    /// ```
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = L>) -> Self::Grad;
    /// The position among the leaves of the single array at `path`.
    ///
    /// ```
    /// use nabla::{tree::{Seg, Tree}, Array};
    /// let t = (Array::scalar(0.0f64), vec![Array::scalar(1.0f64), Array::scalar(2.0f64)]);
    /// assert_eq!(t.leaf_index(&[Seg::Index(1), Seg::Index(1)]), 2); // `t.1[1]`
    /// ```
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize;
    /// The position among the leaves of the first leaf of the part at
    /// `path`: a field or element that may itself be a tree (a layer in a
    /// model), or the whole tree for an empty path. What generated code
    /// passes a part of a tree on with (`self.attn.forward(&x)`).
    ///
    /// ```
    /// use nabla::{tree::{Seg, Tree}, Array};
    /// let t = (Array::scalar(0.0f64), vec![Array::scalar(1.0f64), Array::scalar(2.0f64)]);
    /// assert_eq!(t.leaf_offset(&[Seg::Index(1)]), 1); // `t.1` starts at leaf 1
    /// assert_eq!(t.leaf_offset(&[]), 0);
    /// ```
    #[track_caller]
    fn leaf_offset(&self, path: &[Seg]) -> usize {
        if path.is_empty() {
            0
        } else {
            self.leaf_index(path)
        }
    }
    /// Calls `f` on every leaf in order (through [`Tree::flatten_into`]
    /// unless a type does it without collecting).
    ///
    /// ```
    /// use nabla::tree::Tree;
    /// let mut total = 0.0;
    /// [1.0f64, 2.0, 3.0].for_each_leaf(&mut |v: &f64| total += v);
    /// assert_eq!(total, 6.0);
    /// ```
    fn for_each_leaf(&self, f: &mut dyn FnMut(&L)) {
        let mut out = Vec::with_capacity(self.num_leaves());
        self.flatten_into(&mut out);
        out.iter().for_each(f);
    }
    /// Calls `f` on every leaf in order, mutably: what updates a tree in
    /// place (an optimizer step) uses.
    ///
    /// ```
    /// use nabla::tree::Tree;
    /// let mut t = (1.0f64, [2.0f64, 3.0]);
    /// t.for_each_leaf_mut(&mut |v: &mut f64| *v *= 10.0);
    /// assert_eq!(t, (10.0, [20.0, 30.0]));
    /// ```
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut L));
    /// Appends each leaf's name, in leaf order: `prefix` extended by the
    /// field names and indices on the way to the leaf, joined by `.`
    /// (`blocks.0.attn.qkv.weight`, PyTorch's state-dict names). What
    /// [`named_leaves`] and [`crate::io`] read. The default, for types
    /// that do not say, numbers the leaves (`prefix.0`, `prefix.1`, ..).
    ///
    /// ```
    /// use nabla::{tree::Tree, Array};
    /// let t = (Array::scalar(1.0f64), vec![Array::scalar(2.0f64)]);
    /// let mut names = Vec::new();
    /// t.names_into("model", &mut names);
    /// assert_eq!(names, ["model.0", "model.1.0"]);
    /// ```
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        for i in 0..self.num_leaves() {
            out.push(join_name(prefix, &i.to_string()));
        }
    }
}

/// `prefix.name`, or `name` when `prefix` is empty: how [`Tree::names_into`]
/// extends a leaf's name by one field or index.
///
/// ```
/// use nabla::tree::join_name;
/// assert_eq!(join_name("", "wte"), "wte");
/// assert_eq!(join_name("blocks.0", "ln1"), "blocks.0.ln1");
/// ```
pub fn join_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Every leaf with its name (see [`Tree::names_into`]), in leaf order: the
/// names `nabla::io` saves and loads under.
///
/// ```
/// use nabla::{tree::named_leaves, Array, DType};
///
/// #[derive(Clone, nabla::Tree)]
/// struct Linear { weight: Array, bias: Array }
/// #[derive(Clone, nabla::Tree)]
/// struct Net { layers: Vec<Linear> }
///
/// let lin = |n| Linear { weight: Array::zeros(&[n, 2], DType::F32), bias: Array::zeros(&[n], DType::F32) };
/// let net = Net { layers: vec![lin(3), lin(1)] };
/// let names: Vec<String> = named_leaves(&net).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]);
/// ```
pub fn named_leaves<T: Tree + ?Sized>(t: &T) -> Vec<(String, Array)> {
    let mut names = Vec::with_capacity(t.num_leaves());
    t.names_into("", &mut names);
    names.into_iter().zip(leaves(t)).collect()
}

/// The leaves of a tree, in order.
///
/// ```
/// use nabla::{tree::leaves, Array};
/// assert_eq!(leaves(&vec![Array::scalar(1.0f64), Array::scalar(2.0f64)]).len(), 2);
/// ```
pub fn leaves<L, T: Tree<L> + ?Sized>(t: &T) -> Vec<L> {
    let mut out = Vec::with_capacity(t.num_leaves());
    t.flatten_into(&mut out);
    out
}

/// A tree argument as generated code sees it: the skeleton (for positions)
/// and the leaves, a `Vec<V>` at the value type `V` (an array `[V; K]` for
/// a fixed-size array of floats, so it needs no heap).
///
/// ```
/// use nabla::{tree::{Seg, TreeArg}, Array, DType};
/// let params = vec![Array::zeros(&[2], DType::F64), Array::ones(&[3], DType::F64)];
/// let arg = TreeArg::new(&params);
/// assert_eq!(arg.leaves.len(), 2);
/// assert_eq!(arg.leaves[1].shape(), &[3]);
/// assert_eq!(arg.skeleton.len(), 2);
/// ```
pub struct TreeArg<'a, T: ?Sized, Leaves> {
    /// The original value; only its structure is used.
    pub skeleton: &'a T,
    /// The leaves, in `flatten_into` order.
    pub leaves: Leaves,
}

impl<'a, L, T: Tree<L> + ?Sized> TreeArg<'a, T, Vec<L>> {
    /// Wraps a tree.
    ///
    /// ```
    /// use nabla::tree::TreeArg;
    /// let arg = TreeArg::new(&[[1.0f64, 2.0], [3.0, 4.0]]);
    /// assert_eq!(arg.leaves, vec![1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub fn new(t: &'a T) -> Self {
        TreeArg {
            skeleton: t,
            leaves: leaves(t),
        }
    }
}

impl<T: ?Sized, Leaves> TreeArg<'_, T, Leaves> {
    /// The leaf index at `path` (for generated field access) in a tree of
    /// `L` leaves.
    ///
    /// ```
    /// use nabla::{tree::{Seg, TreeArg}, Array, DType};
    /// let params = vec![Array::zeros(&[2], DType::F64), Array::ones(&[3], DType::F64)];
    /// let arg = TreeArg::new(&params);
    /// let i = arg.index::<Array>(&[Seg::Index(1)]); // `params[1]`
    /// assert_eq!(arg.leaves[i].shape(), &[3]);
    /// ```
    #[track_caller]
    pub fn index<L>(&self, path: &[Seg]) -> usize
    where
        T: Tree<L>,
    {
        self.skeleton.leaf_index(path)
    }
}

#[track_caller]
fn bad_path(path: &[Seg], what: &str) -> ! {
    panic!(
        "tree access {path:?}: {what}; differentiable code can only read single arrays (e.g. p.w1 or p.layers[i])"
    )
}

impl Tree for Array {
    type Grad = Array;
    fn flatten_into(&self, out: &mut Vec<Array>) {
        out.push(self.clone());
    }
    fn num_leaves(&self) -> usize {
        1
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> Array {
        leaves.next().expect("tree: too few leaves")
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut Array)) {
        f(self)
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        out.push(prefix.to_owned());
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        if !path.is_empty() {
            bad_path(path, "an Array has no fields");
        }
        0
    }
}

macro_rules! float_leaf {
    ($($t:ty),*) => {$(
        impl Tree<$t> for $t {
            type Grad = $t;
            fn flatten_into(&self, out: &mut Vec<$t>) {
                out.push(*self);
            }
            fn num_leaves(&self) -> usize {
                1
            }
            fn rebuild(&self, leaves: &mut dyn Iterator<Item = $t>) -> $t {
                leaves.next().expect("tree: too few leaves")
            }
            fn for_each_leaf(&self, f: &mut dyn FnMut(&$t)) {
                f(self)
            }
            fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut $t)) {
                f(self)
            }
            fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
                out.push(prefix.to_owned());
            }
            #[track_caller]
            fn leaf_index(&self, path: &[Seg]) -> usize {
                if !path.is_empty() {
                    bad_path(path, "a float has no fields");
                }
                0
            }
        }
    )*};
}
float_leaf!(f64, f32);

/// Shared by `Vec<T>`, `[T]` and `[T; N]`: element `i`'s leaves are
/// named `prefix.i..`.
fn seq_names<L, T: Tree<L>>(items: &[T], prefix: &str, out: &mut Vec<String>) {
    for (i, t) in items.iter().enumerate() {
        t.names_into(&join_name(prefix, &i.to_string()), out);
    }
}

/// Shared by `Vec<T>`, `[T]` and `[T; N]`: the leaf at `path`, or (with
/// `part`) where the part at `path` starts.
#[track_caller]
fn seq_index<L, T: Tree<L>>(items: &[T], path: &[Seg], part: bool) -> usize {
    match path.first() {
        None if part => 0,
        Some(Seg::Index(i)) if *i < items.len() => {
            let before = items[..*i].iter().map(|t| t.num_leaves()).sum::<usize>();
            before
                + if part {
                    items[*i].leaf_offset(&path[1..])
                } else {
                    items[*i].leaf_index(&path[1..])
                }
        }
        Some(Seg::Index(i)) => bad_path(
            path,
            &format!("index {i} is out of bounds for length {}", items.len()),
        ),
        _ => bad_path(path, "a sequence needs an index"),
    }
}

impl<L, T: Tree<L>> Tree<L> for Vec<T> {
    type Grad = Vec<T::Grad>;
    fn flatten_into(&self, out: &mut Vec<L>) {
        self.iter().for_each(|t| t.flatten_into(out));
    }
    fn num_leaves(&self) -> usize {
        self.iter().map(|t| t.num_leaves()).sum()
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut L)) {
        self.iter_mut().for_each(|t| t.for_each_leaf_mut(f));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = L>) -> Self::Grad {
        self.iter().map(|t| t.rebuild(leaves)).collect()
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        seq_index(self, path, false)
    }
    #[track_caller]
    fn leaf_offset(&self, path: &[Seg]) -> usize {
        seq_index(self, path, true)
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        seq_names(self, prefix, out)
    }
}

impl<L, T: Tree<L>> Tree<L> for [T] {
    type Grad = Vec<T::Grad>;
    fn flatten_into(&self, out: &mut Vec<L>) {
        self.iter().for_each(|t| t.flatten_into(out));
    }
    fn num_leaves(&self) -> usize {
        self.iter().map(|t| t.num_leaves()).sum()
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut L)) {
        self.iter_mut().for_each(|t| t.for_each_leaf_mut(f));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = L>) -> Self::Grad {
        self.iter().map(|t| t.rebuild(leaves)).collect()
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        seq_index(self, path, false)
    }
    #[track_caller]
    fn leaf_offset(&self, path: &[Seg]) -> usize {
        seq_index(self, path, true)
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        seq_names(self, prefix, out)
    }
}

impl<L, T: Tree<L>, const N: usize> Tree<L> for [T; N] {
    type Grad = [T::Grad; N];
    fn flatten_into(&self, out: &mut Vec<L>) {
        self.iter().for_each(|t| t.flatten_into(out));
    }
    fn num_leaves(&self) -> usize {
        self.iter().map(|t| t.num_leaves()).sum()
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut L)) {
        self.iter_mut().for_each(|t| t.for_each_leaf_mut(f));
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = L>) -> Self::Grad {
        std::array::from_fn(|i| self[i].rebuild(leaves))
    }
    fn for_each_leaf(&self, f: &mut dyn FnMut(&L)) {
        self.iter().for_each(|t| t.for_each_leaf(f));
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        seq_index(self, path, false)
    }
    #[track_caller]
    fn leaf_offset(&self, path: &[Seg]) -> usize {
        seq_index(self, path, true)
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        seq_names(self, prefix, out)
    }
}

/// An optional part of a tree (a layer's bias): no leaves when `None`.
///
/// ```
/// use nabla::{tree::{named_leaves, Tree}, Array};
/// let t = (Array::scalar(1.0f64), None::<Array>, Some(Array::scalar(2.0f64)));
/// assert_eq!(t.num_leaves(), 2);
/// let names: Vec<String> = named_leaves(&t).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["0", "2"]);
/// ```
impl<L, T: Tree<L>> Tree<L> for Option<T> {
    type Grad = Option<T::Grad>;
    fn flatten_into(&self, out: &mut Vec<L>) {
        if let Some(t) = self {
            t.flatten_into(out)
        }
    }
    fn num_leaves(&self) -> usize {
        self.as_ref().map_or(0, |t| t.num_leaves())
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut L)) {
        if let Some(t) = self {
            t.for_each_leaf_mut(f)
        }
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = L>) -> Self::Grad {
        self.as_ref().map(|t| t.rebuild(leaves))
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        match self {
            Some(t) => t.leaf_index(path),
            None => bad_path(path, "this optional part is None"),
        }
    }
    #[track_caller]
    fn leaf_offset(&self, path: &[Seg]) -> usize {
        match self {
            Some(t) => t.leaf_offset(path),
            None => bad_path(path, "this optional part is None"),
        }
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        if let Some(t) = self {
            t.names_into(prefix, out)
        }
    }
}

macro_rules! tuple_tree {
    ($($t:ident $i:tt),*) => {
        impl<L, $($t: Tree<L>),*> Tree<L> for ($($t,)*) {
            type Grad = ($($t::Grad,)*);
            fn flatten_into(&self, out: &mut Vec<L>) {
                $(self.$i.flatten_into(out);)*
            }
            fn num_leaves(&self) -> usize {
                0 $(+ self.$i.num_leaves())*
            }
            fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut L)) {
                $(self.$i.for_each_leaf_mut(f);)*
            }
            fn rebuild(&self, leaves: &mut dyn Iterator<Item = L>) -> Self::Grad {
                ($(self.$i.rebuild(leaves),)*)
            }
            #[track_caller]
            fn leaf_index(&self, path: &[Seg]) -> usize {
                let mut offset = 0;
                $(
                    if path.first() == Some(&Seg::Index($i)) {
                        return offset + self.$i.leaf_index(&path[1..]);
                    }
                    offset += self.$i.num_leaves();
                )*
                let _ = offset;
                bad_path(path, "no such tuple element")
            }
            #[track_caller]
            fn leaf_offset(&self, path: &[Seg]) -> usize {
                let mut offset = 0;
                if path.is_empty() {
                    return 0;
                }
                $(
                    if path.first() == Some(&Seg::Index($i)) {
                        return offset + self.$i.leaf_offset(&path[1..]);
                    }
                    offset += self.$i.num_leaves();
                )*
                let _ = offset;
                bad_path(path, "no such tuple element")
            }
            fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
                $(self.$i.names_into(&join_name(prefix, stringify!($i)), out);)*
            }
        }
        impl<$($t: Cotangent),*> Cotangent for ($($t,)*) {}
    };
}
tuple_tree!(A 0, B 1);
tuple_tree!(A 0, B 1, C 2);
tuple_tree!(A 0, B 1, C 2, D 3);

impl<T: Cotangent> Cotangent for Vec<T> {}
impl<T: Cotangent, const N: usize> Cotangent for [T; N] {}
