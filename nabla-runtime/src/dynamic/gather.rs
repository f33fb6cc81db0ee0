//! Gathers whose indices are values: `x.take(axis, idx)` and its
//! transpose `ct.take_add(shape, axis, idx)`, where `idx` may itself be
//! traced (an input of a function `jit` records, or batched by `vmap`).
//! The index list is read when the op runs, so a recorded program
//! gathers with each call's indices. The indices carry no derivative.

use super::{Dyn, Top, top};
use crate::interp::batched::Batched;
use crate::{Array, ArrayValue, DType, Value};

/// The index list of a concrete int64 array, checked against `n`.
#[track_caller]
fn index_list(op: &str, idx: &Array, n: usize) -> Vec<usize> {
    let raw = idx.cast(DType::I64).to_vec::<i64>();
    raw.iter()
        .map(|&i| {
            let j = if i < 0 { i + n as i64 } else { i };
            if j < 0 || j >= n as i64 {
                panic!("{op}: index {i} is out of bounds for an axis of length {n}; use indices in -{n}..{n}");
            }
            j as usize
        })
        .collect()
}

/// `x.shape[..axis] + idx_shape + x.shape[axis+1..]`.
fn gathered_shape(x: &[usize], axis: usize, idx: &[usize]) -> Vec<usize> {
    let mut s = x[..axis].to_vec();
    s.extend_from_slice(idx);
    s.extend_from_slice(&x[axis + 1..]);
    s
}

impl Dyn {
    /// The slabs of `self` along `axis` at the indices `idx` (any shape,
    /// int64, negative from the end): shape `self.shape[..axis] + idx.shape
    /// + self.shape[axis+1..]`, as `np.take(x, idx, axis)`.
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// use nabla::Array;
    /// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]));
    /// let i = Dyn::from(Array::from_vec(vec![2i64, 0, 2, 1], &[2, 2]));
    /// assert_eq!(x.take(0, &i).to_array().to_vec::<f64>(), vec![3.0, 1.0, 3.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn take(&self, axis: usize, idx: &Dyn) -> Dyn {
        self.take_named("take", axis, idx)
    }

    /// [`Dyn::take`] whose index errors name `op`: the gather of an op
    /// built on it (`embedding`), so a bad index recorded by `jit` reports
    /// the op the user called.
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// use nabla::Array;
    /// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]));
    /// let i = Dyn::from(Array::from_vec(vec![1i64], &[1]));
    /// assert_eq!(x.take_named("lookup", 0, &i).to_array().to_vec::<f64>(), vec![2.0]);
    /// ```
    #[track_caller]
    pub fn take_named(&self, op: &'static str, axis: usize, idx: &Dyn) -> Dyn {
        match top([self, idx]) {
            Top::Array => {
                let (x, i) = (self.concrete(), idx.concrete());
                let list = index_list(op, i, x.shape()[axis]);
                let out = gathered_shape(x.shape(), axis, i.shape());
                Dyn::Array(ArrayValue::index_select(x, axis, &list).reshape(&out))
            }
            Top::Dual(l) => {
                let (d, i) = (self.dual_at(l), idx.dual_at(l).primal);
                Dyn::dual(
                    l,
                    d.primal.take_named(op, axis, &i),
                    d.tangent.map(|t| t.take_named(op, axis, &i)),
                )
            }
            Top::Batched(l) => batched_take(op, self.batched_at(l), axis, idx.batched_at(l), l),
            Top::Rev(l) => {
                let (r, i) = (self.rev_at(l), idx.rev_at(l).value);
                let x_shape = r.value.shape_vec();
                let y = r.value.take_named(op, axis, &i);
                Dyn::Rev(
                    l,
                    Box::new(r.linear(y, move |ct| ct.take_add_named(op, &x_shape, axis, &i))),
                )
            }
            Top::Staged(l) => {
                let (s, i) = (self.staged_at(l), idx.staged_at(l));
                let out = s.binary(
                    &i,
                    move || format!("take[{axis}]"),
                    move |x, i| x.take_named(op, axis, i),
                );
                Dyn::Staged(l, Box::new(out))
            }
        }
    }

    /// The transpose of [`Dyn::take`]: zeros of `shape` with the slabs of
    /// `self` (shaped like `take`'s result) added at `idx` along `axis`.
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// use nabla::Array;
    /// let ct = Dyn::from(Array::from_vec(vec![1.0f64, 10.0, 100.0], &[3]));
    /// let i = Dyn::from(Array::from_vec(vec![2i64, 0, 2], &[3]));
    /// assert_eq!(ct.take_add(&[3], 0, &i).to_array().to_vec::<f64>(), vec![10.0, 0.0, 101.0]);
    /// ```
    #[track_caller]
    pub fn take_add(&self, shape: &[usize], axis: usize, idx: &Dyn) -> Dyn {
        self.take_add_named("take (transpose)", shape, axis, idx)
    }

    /// [`Dyn::take_add`] whose index errors name `op` (`scatter_add`).
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// use nabla::Array;
    /// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]));
    /// let i = Dyn::from(Array::from_vec(vec![0i64, 0], &[2]));
    /// let y = x.take_add_named("scatter_add", &[2], 0, &i);
    /// assert_eq!(y.to_array().to_vec::<f64>(), vec![3.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn take_add_named(&self, op: &'static str, shape: &[usize], axis: usize, idx: &Dyn) -> Dyn {
        let sh = shape.to_vec();
        match top([self, idx]) {
            Top::Array => {
                let (ct, i) = (self.concrete(), idx.concrete());
                let list = index_list(op, i, shape[axis]);
                let mut flat = shape[..axis].to_vec();
                flat.push(list.len());
                flat.extend_from_slice(&shape[axis + 1..]);
                Dyn::Array(ArrayValue::index_add(
                    &ct.reshape(&flat),
                    shape,
                    axis,
                    &list,
                ))
            }
            Top::Dual(l) => {
                let (d, i) = (self.dual_at(l), idx.dual_at(l).primal);
                Dyn::dual(
                    l,
                    d.primal.take_add_named(op, shape, axis, &i),
                    d.tangent.map(|t| t.take_add_named(op, shape, axis, &i)),
                )
            }
            Top::Batched(l) => {
                let (b, i) = (self.batched_at(l), idx.batched_at(l));
                per_example(l, &[b, i], move |v| {
                    vec![v[0].take_add_named(op, &sh, axis, &v[1])]
                })
                .remove(0)
            }
            Top::Rev(l) => {
                let (r, i) = (self.rev_at(l), idx.rev_at(l).value);
                let y = r.value.take_add_named(op, shape, axis, &i);
                Dyn::Rev(
                    l,
                    Box::new(r.linear(y, move |ct| ct.take_named(op, axis, &i))),
                )
            }
            Top::Staged(l) => {
                let (s, i) = (self.staged_at(l), idx.staged_at(l));
                let out = s.binary(
                    &i,
                    || format!("take_add[{shape:?}, {axis}]"),
                    move |c, i| c.take_add_named(op, &sh, axis, i),
                );
                Dyn::Staged(l, Box::new(out))
            }
        }
    }
}

impl Dyn {
    /// The flat (row-major) positions that `take_along_axis(x, self,
    /// axis)` reads in an array `x` of shape `shape`, as an int64 value of
    /// `self`'s shape (no derivative). The indices are checked against
    /// `shape` when the op runs, so a recorded program checks each call's;
    /// `x.reshape(&[n]).take(0, &positions)` is then the gather itself.
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// use nabla::Array;
    /// let idx = Dyn::from(Array::from_vec(vec![1i64, -1], &[2, 1]));
    /// let p = idx.along_axis_positions(&[2, 3], 1);
    /// assert_eq!(p.to_array().to_vec::<i64>(), vec![1, 5]);
    /// ```
    #[track_caller]
    pub fn along_axis_positions(&self, shape: &[usize], axis: usize) -> Dyn {
        let sh = shape.to_vec();
        match self {
            Dyn::Array(a) => {
                let flat = crate::array::positions::along_axis_flat(shape, a, axis as isize);
                let flat: Vec<i64> = flat.into_iter().map(|p| p as i64).collect();
                Dyn::Array(Array::from_vec(flat, a.shape()))
            }
            Dyn::Dual(_, d) => d.primal.along_axis_positions(shape, axis),
            Dyn::Rev(_, r) => r.value.along_axis_positions(shape, axis),
            Dyn::Batched(l, b) => match b.bdim {
                None => Dyn::batched(*l, b.value.along_axis_positions(shape, axis), None),
                Some(_) => per_example(*l, std::slice::from_ref(&**b), move |v| {
                    vec![v[0].along_axis_positions(&sh, axis)]
                })
                .remove(0),
            },
            Dyn::Staged(l, s) => {
                let out = s.unary(
                    move || format!("along_axis_positions[{shape:?}, {axis}]"),
                    move |i| i.along_axis_positions(&sh, axis),
                );
                Dyn::Staged(*l, Box::new(out))
            }
        }
    }
}

/// `take` under `vmap`: one gather on the stacked values when only `x` is
/// batched, else once per example.
fn batched_take(
    op: &'static str,
    x: Batched<Dyn>,
    axis: usize,
    idx: Batched<Dyn>,
    l: super::Level,
) -> Dyn {
    match (x.bdim, idx.bdim) {
        (_, None) => match x.bdim {
            None => Dyn::batched(l, x.value.take_named(op, axis, &idx.value), None),
            Some(_) => Dyn::batched(l, x.front().take_named(op, axis + 1, &idx.value), Some(0)),
        },
        _ => per_example(l, &[x, idx], move |v| {
            vec![v[0].take_named(op, axis, &v[1])]
        })
        .remove(0),
    }
}

/// `f` once per example of the batched values `args`, each output
/// stacked along a new batch axis 0 (batch rules that have nothing better:
/// gathers with batched indices, run-time custom ops).
pub(crate) fn per_example(
    l: super::Level,
    args: &[Batched<Dyn>],
    f: impl Fn(&[Dyn]) -> Vec<Dyn>,
) -> Vec<Dyn> {
    let n = args
        .iter()
        .find_map(|b| b.batch_size())
        .expect("one operand is batched");
    let fronts: Vec<Dyn> = args
        .iter()
        .map(|b| {
            if b.bdim.is_some() {
                b.front()
            } else {
                b.value.clone()
            }
        })
        .collect();
    let rows: Vec<Vec<Dyn>> = (0..n)
        .map(|k| {
            let ex: Vec<Dyn> = args
                .iter()
                .zip(&fronts)
                .map(|(b, v)| {
                    if b.bdim.is_some() {
                        let s = v.shape_vec();
                        v.index_select(0, &[k]).reshape(&s[1..])
                    } else {
                        v.clone()
                    }
                })
                .collect();
            f(&ex)
        })
        .collect();
    let outs = rows.first().map_or(0, Vec::len);
    (0..outs)
        .map(|j| {
            let parts: Vec<Dyn> = rows
                .iter()
                .map(|r| {
                    let mut s = vec![1];
                    s.extend_from_slice(&r[j].shape_vec());
                    r[j].reshape(&s)
                })
                .collect();
            Dyn::batched(l, Dyn::concat(&parts, 0), Some(0))
        })
        .collect()
}
