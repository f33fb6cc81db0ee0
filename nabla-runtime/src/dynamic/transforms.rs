//! The transforms of closures over [`Dyn`] values: each opens a level,
//! wraps its inputs as that level's tracers, calls the closure and reads
//! the result back. They nest freely: the closure may call any of them.

use super::rev::{Rev, backward};
use super::{Dyn, Level, new_level};
use crate::{Array, ArrayValue, DType, Value};
use std::sync::Arc;

/// The tangents of `f`'s outputs at `primals` in the direction `tangents`
/// (one per input; forward mode). Returns the outputs and their tangents.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let x = Dyn::from(Array::scalar(0.5f64));
/// let (y, t) = dynamic::jvp(|x| vec![x[0].sin()], &[x.clone()], &[Dyn::from(Array::scalar(2.0f64))]);
/// assert!((t[0].to_array().item() - 2.0 * 0.5f64.cos()).abs() < 1e-15);
/// ```
#[track_caller]
pub fn jvp(
    f: impl FnOnce(&[Dyn]) -> Vec<Dyn>,
    primals: &[Dyn],
    tangents: &[Dyn],
) -> (Vec<Dyn>, Vec<Dyn>) {
    assert_eq!(
        primals.len(),
        tangents.len(),
        "jvp: {} primals but {} tangents; pass one tangent per input",
        primals.len(),
        tangents.len()
    );
    let level = new_level();
    let ins: Vec<Dyn> = primals
        .iter()
        .zip(tangents)
        .map(|(p, t)| Dyn::dual(level, p.clone(), Some(t.clone())))
        .collect();
    let outs = f(&ins);
    outs.iter()
        .map(|o| {
            let (p, t) = o.split_dual(level);
            let t = t.unwrap_or_else(|| p.zeros_like());
            (p, t)
        })
        .unzip()
}

/// The VJP of a traced function: call it with one cotangent per output.
pub struct Pullback {
    outputs: Vec<Option<Arc<super::rev::Node>>>,
    inputs: Vec<Dyn>,
}

impl Pullback {
    /// The cotangents of the inputs, given one cotangent per output
    /// (`None`: zero). Inputs nothing reaches get zeros.
    ///
    /// ```
    /// use nabla::dynamic::{self, Dyn};
    /// use nabla::{Array, Value};
    /// let (_, pb) = dynamic::vjp(|x| vec![x[0].mul(&x[1])], &[
    ///     Dyn::from(Array::scalar(2.0f64)), Dyn::from(Array::scalar(3.0f64))]);
    /// let g = pb.call(&[Some(Dyn::from(Array::scalar(1.0f64)))]);
    /// assert_eq!((g[0].to_array().item(), g[1].to_array().item()), (3.0, 2.0));
    /// ```
    #[track_caller]
    pub fn call(&self, cts: &[Option<Dyn>]) -> Vec<Dyn> {
        assert_eq!(
            cts.len(),
            self.outputs.len(),
            "vjp: the function has {} outputs but {} cotangents were given; pass one per output",
            self.outputs.len(),
            cts.len()
        );
        let seeds: Vec<(Arc<super::rev::Node>, Dyn)> = self
            .outputs
            .iter()
            .zip(cts)
            .filter_map(|(n, c)| Some((n.clone()?, c.clone()?)))
            .collect();
        backward(seeds, self.inputs.len())
            .into_iter()
            .zip(&self.inputs)
            .map(|(g, x)| g.unwrap_or_else(|| x.zeros_like()))
            .collect()
    }
}

/// `f`'s outputs at `primals`, and its pullback (reverse mode).
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let (y, pb) = dynamic::vjp(|x| vec![x[0].exp()], &[Dyn::from(Array::scalar(0.0f64))]);
/// assert_eq!(pb.call(&[Some(Dyn::from(Array::scalar(2.0f64)))])[0].to_array().item(), 2.0);
/// ```
pub fn vjp(f: impl FnOnce(&[Dyn]) -> Vec<Dyn>, primals: &[Dyn]) -> (Vec<Dyn>, Pullback) {
    let level = new_level();
    let ins: Vec<Dyn> = primals
        .iter()
        .enumerate()
        .map(|(i, p)| rev_leaf(level, p.clone(), i))
        .collect();
    let outs = f(&ins);
    pullback(level, &outs, primals)
}

/// Input `index` of the reverse-mode transform at `level`: the first half
/// of [`vjp`], for callers that run the function themselves (the Python
/// API). [`pullback`] is the second half.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let l = dynamic::new_level();
/// let x = Dyn::from(Array::scalar(2.0f64));
/// let t = dynamic::rev_leaf(l, x.clone(), 0);
/// let (y, pb) = dynamic::pullback(l, &[t.square()], &[x]);
/// assert_eq!(y[0].to_array().item(), 4.0);
/// assert_eq!(pb.call(&[Some(Dyn::from(Array::scalar(1.0f64)))])[0].to_array().item(), 4.0);
/// ```
pub fn rev_leaf(level: Level, value: Dyn, index: usize) -> Dyn {
    Dyn::Rev(level, Box::new(Rev::leaf(value, index)))
}

/// The outputs of a function traced at reverse-mode `level` (whose
/// leaves, made by [`rev_leaf`], had the values `inputs`): their values
/// one level down, and the pullback to the leaves.
pub fn pullback(level: Level, outputs: &[Dyn], inputs: &[Dyn]) -> (Vec<Dyn>, Pullback) {
    let mut values = Vec::with_capacity(outputs.len());
    let mut nodes = Vec::with_capacity(outputs.len());
    for o in outputs {
        let r = o.rev_at(level);
        values.push(r.value);
        nodes.push(r.node);
    }
    let pullback = Pullback {
        outputs: nodes,
        inputs: inputs.to_vec(),
    };
    (values, pullback)
}

/// `f(x)` and its gradient, for `f` with a one-element output.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, ArrayValue, Value};
/// let (v, g) = dynamic::value_and_grad(|x| x[0].square().sum_axes(&[0], false),
///     &[Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]))]);
/// assert_eq!(v.to_array().item(), 5.0);
/// assert_eq!(g[0].to_array().to_vec::<f64>(), vec![2.0, 4.0]);
/// ```
#[track_caller]
pub fn value_and_grad(f: impl FnOnce(&[Dyn]) -> Dyn, xs: &[Dyn]) -> (Dyn, Vec<Dyn>) {
    let (mut out, pb) = vjp(|x| vec![f(x)], xs);
    let y = out.pop().expect("one output");
    let n: usize = y.shape_vec().iter().product();
    assert!(
        n == 1,
        "grad: the function returned shape {:?}; grad needs one element (reduce it with sum or mean, or use vjp/jacrev)",
        &y.shape_vec()[..]
    );
    let g = pb.call(&[Some(y.ones_like())]);
    (y, g)
}

/// The gradient of `f` (one-element output) at `x`.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, ArrayValue, Value};
/// let x = Dyn::from(Array::from_vec(vec![0.0f64, 1.0], &[2]));
/// let g = dynamic::grad(|x: &Dyn| x.sin().sum_axes(&[0], false), &x);
/// assert!((g.to_array().to_vec::<f64>()[1] - 1f64.cos()).abs() < 1e-15);
/// ```
#[track_caller]
pub fn grad(f: impl FnOnce(&Dyn) -> Dyn, x: &Dyn) -> Dyn {
    value_and_grad(|x| f(&x[0]), std::slice::from_ref(x))
        .1
        .pop()
        .expect("one input")
}

/// `f` mapped over axis `in_axes[i]` of input `i` (`None`: the same for
/// every example), each output's batch axis placed at `out_axes[j]`
/// (one entry for all outputs, or one per output).
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, ArrayValue};
/// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]));
/// let rows = dynamic::vmap(|x| vec![x[0].sum_axes(&[0], false)], &[x], &[Some(0)], &[0]);
/// assert_eq!(rows[0].to_array().to_vec::<f64>(), vec![3.0, 7.0]);
/// ```
#[track_caller]
pub fn vmap(
    f: impl FnOnce(&[Dyn]) -> Vec<Dyn>,
    xs: &[Dyn],
    in_axes: &[Option<usize>],
    out_axes: &[usize],
) -> Vec<Dyn> {
    assert_eq!(
        xs.len(),
        in_axes.len(),
        "vmap: {} inputs but {} in_axes; give one axis (or None) per input",
        xs.len(),
        in_axes.len()
    );
    let mut size = None;
    for (i, (x, a)) in xs.iter().zip(in_axes).enumerate() {
        let Some(a) = *a else { continue };
        let s = x.shape_vec();
        assert!(
            a < s.len(),
            "vmap: in_axes[{i}] = {a} but input {i} has shape {:?}; choose an axis below {}",
            &s[..],
            s.len()
        );
        match size {
            None => size = Some(s[a]),
            Some(n) => assert!(
                n == s[a],
                "vmap: inputs have batch sizes {n} and {} (input {i}, shape {:?}, axis {a}); batched axes must have one length",
                s[a],
                &s[..]
            ),
        }
    }
    let size = size.expect("vmap: every in_axes entry is None; batch at least one input");
    let level = new_level();
    let ins: Vec<Dyn> = xs
        .iter()
        .zip(in_axes)
        .map(|(x, a)| Dyn::batched(level, x.clone(), *a))
        .collect();
    let outs = f(&ins);
    outs.iter()
        .enumerate()
        .map(|(j, o)| {
            let axis = if out_axes.len() == 1 {
                out_axes[0]
            } else {
                out_axes[j]
            };
            o.unbatch(level, size, axis)
        })
        .collect()
}

/// An identity basis for a value of `shape`: `[n, *shape]`, `n` the
/// number of elements, row `k` one at element `k`.
fn basis(shape: &[usize], dtype: DType) -> Dyn {
    let n: usize = shape.iter().product();
    let mut s = vec![n];
    s.extend_from_slice(shape);
    Dyn::Array(Array::eye(n, dtype).reshape(&s))
}

/// `[n, *shape]` batch with its batch axis moved last, reshaped to
/// `[*out, *shape]`: a block of a Jacobian.
fn block(t: &Dyn, level: Level, n: usize, out: &[usize], inp: &[usize], last: bool) -> Dyn {
    let mut shape = out.to_vec();
    shape.extend_from_slice(inp);
    let axis = if last { t.ndim() } else { 0 };
    t.unbatch(level, n, axis).reshape(&shape)
}

/// The Jacobian of `f` at `xs`, by forward mode: `J[j][i]` has shape
/// `[*out_j, *in_i]`.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]));
/// let j = dynamic::jacfwd(|x| vec![x[0].square()], &[x]);
/// assert_eq!(j[0][0].to_array().to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// ```
pub fn jacfwd(f: impl Fn(&[Dyn]) -> Vec<Dyn>, xs: &[Dyn]) -> Vec<Vec<Dyn>> {
    let mut cols: Vec<Vec<Dyn>> = Vec::new();
    for (i, x) in xs.iter().enumerate() {
        let in_shape = x.shape_vec();
        let n: usize = in_shape.iter().product();
        let lb = new_level();
        let e = Dyn::batched(lb, basis(&in_shape, x.dtype()), Some(0));
        let tangents: Vec<Dyn> = xs
            .iter()
            .enumerate()
            .map(|(k, x)| if k == i { e.clone() } else { x.zeros_like() })
            .collect();
        let (ys, ts) = jvp(&f, xs, &tangents);
        cols.push(
            ys.iter()
                .zip(&ts)
                .map(|(y, t)| block(t, lb, n, &y.shape_vec(), &in_shape, true))
                .collect(),
        );
    }
    let n_out = cols.first().map_or(0, Vec::len);
    (0..n_out)
        .map(|j| cols.iter().map(|c| c[j].clone()).collect())
        .collect()
}

/// The Jacobian of `f` at `xs`, by reverse mode: `J[j][i]` has shape
/// `[*out_j, *in_i]`.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]));
/// let j = dynamic::jacrev(|x| vec![x[0].square()], &[x]);
/// assert_eq!(j[0][0].to_array().to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// ```
pub fn jacrev(f: impl FnOnce(&[Dyn]) -> Vec<Dyn>, xs: &[Dyn]) -> Vec<Vec<Dyn>> {
    let (ys, pb) = vjp(f, xs);
    ys.iter()
        .enumerate()
        .map(|(j, y)| {
            let out_shape = y.shape_vec();
            let m: usize = out_shape.iter().product();
            let lb = new_level();
            let e = Dyn::batched(lb, basis(&out_shape, y.dtype()), Some(0));
            let cts: Vec<Option<Dyn>> =
                (0..ys.len()).map(|k| (k == j).then(|| e.clone())).collect();
            pb.call(&cts)
                .iter()
                .zip(xs)
                .map(|(g, x)| block(g, lb, m, &out_shape, &x.shape_vec(), false))
                .collect()
        })
        .collect()
}

/// The Hessian of `f` (one-element output) at `xs`: `H[i][k]` has shape
/// `[*in_i, *in_k]` (forward over reverse: `jacfwd(jacrev f)`).
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, ArrayValue, Value};
/// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]));
/// let h = dynamic::hessian(|x| x[0].powi(3).sum_axes(&[0], false), &[x]);
/// assert_eq!(h[0][0].to_array().to_vec::<f64>(), vec![6.0, 0.0, 0.0, 12.0]);
/// ```
pub fn hessian(f: impl Fn(&[Dyn]) -> Dyn, xs: &[Dyn]) -> Vec<Vec<Dyn>> {
    jacfwd(
        |x| {
            // The gradient blocks are `[*out, *in_i]` with one output
            // element: drop the output's length-1 axes.
            jacrev(|x| vec![f(x)], x)
                .pop()
                .expect("one output")
                .into_iter()
                .zip(x)
                .map(|(g, xi)| g.reshape(&xi.shape_vec()))
                .collect()
        },
        xs,
    )
}
