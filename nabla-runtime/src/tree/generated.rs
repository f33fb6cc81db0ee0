//! Helpers the code `#[differentiable]` generates calls for: tree
//! cotangents, fixed-size float arrays and parts of trees (a layer inside a
//! model, passed to its differentiable method).

use super::{Seg, Tree, TreeArg};

/// Leaf-wise accumulation of a tree cotangent (generated code).
#[doc(hidden)]
pub fn acc_leaves<V: crate::Value>(slots: &mut [Option<V>], cts: impl IntoIterator<Item = V>) {
    for (s, c) in slots.iter_mut().zip(cts) {
        crate::vocab::accumulate::acc(s, c);
    }
}

/// Materialises a tree cotangent's symbolic zeros (generated code).
#[doc(hidden)]
pub fn leaves_or_zeros<V: crate::Value>(slots: Vec<Option<V>>, primal: &[V]) -> Vec<V> {
    slots
        .into_iter()
        .zip(primal)
        .map(|(s, p)| crate::vocab::accumulate::or_zeros(s, p))
        .collect()
}

/// The leaf index of `p[i][j]..` in a fixed-size array of floats with
/// these lengths (outermost first), row-major; panics as Rust indexing
/// does when an index is out of bounds (generated code).
#[doc(hidden)]
#[inline]
#[track_caller]
pub fn fixed_index<const K: usize>(idx: [usize; K], lens: [usize; K]) -> usize {
    let mut flat = 0;
    for k in 0..K {
        if idx[k] >= lens[k] {
            panic!(
                "index out of bounds: the len is {} but the index is {}",
                lens[k], idx[k]
            );
        }
        flat = flat * lens[k] + idx[k];
    }
    flat
}

/// The `K` floats of a fixed-size array of floats, as an array (generated
/// code: a fixed-size argument's leaves, without the heap).
#[doc(hidden)]
#[track_caller]
pub fn fixed_leaves<S: Copy + Default, T: Tree<S> + ?Sized, const K: usize>(t: &T) -> [S; K] {
    let mut out = [S::default(); K];
    let mut n = 0;
    t.for_each_leaf(&mut |l| {
        out[n] = *l;
        n += 1;
    });
    assert_eq!(n, K, "a fixed-size array with {n} floats, expected {K}");
    out
}

/// [`leaves_or_zeros`] for a fixed-size array's slots (generated code).
#[doc(hidden)]
pub fn fixed_or_zeros<V: crate::Value, const K: usize>(
    slots: [Option<V>; K],
    primal: &[V; K],
) -> [V; K] {
    let mut it = slots.into_iter();
    std::array::from_fn(|i| crate::vocab::accumulate::or_zeros(it.next().flatten(), &primal[i]))
}

/// The leaves `[start, end)` of the part of `root` at `path`, whose value
/// is `part` (generated code: `self.attn` in a method of a block).
///
/// ```
/// use nabla::{tree::{part_range, Seg}, Array};
/// let t = (Array::scalar(0.0f64), vec![Array::scalar(1.0f64), Array::scalar(2.0f64)]);
/// assert_eq!(part_range(&t, &[Seg::Index(1)], &t.1), [1, 3]);
/// ```
#[doc(hidden)]
#[track_caller]
pub fn part_range<L, T: Tree<L> + ?Sized, S: Tree<L> + ?Sized>(
    root: &T,
    path: &[Seg],
    part: &S,
) -> [usize; 2] {
    let start = root.leaf_offset(path);
    [start, start + part.num_leaves()]
}

/// The part of a tree argument at `range` (see [`part_range`]) as a tree
/// argument of its own: its value as the skeleton, its leaves copied
/// (generated code).
#[doc(hidden)]
pub fn part<'a, S: ?Sized, V: Clone>(
    skeleton: &'a S,
    leaves: &[V],
    range: [usize; 2],
) -> TreeArg<'a, S, Vec<V>> {
    TreeArg {
        skeleton,
        leaves: leaves[range[0]..range[1]].to_vec(),
    }
}

/// Adds a part's cotangent leaves into the whole tree's slots at `range`
/// (generated code).
#[doc(hidden)]
pub fn acc_part<V: crate::Value>(slots: &mut [Option<V>], range: [usize; 2], cts: Vec<V>) {
    acc_leaves(&mut slots[range[0]..range[1]], cts);
}
