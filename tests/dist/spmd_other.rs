//! Every primitive of `nabla_ops::other_ops!` (reductions, shape ops,
//! products, indexing, arithmetic with constants), the row custom ops and
//! a batched `linalg::inv` under `spmd`, against one process: for each
//! case, a small `#[differentiable]` function whose value, JVP and VJP at
//! `DArray`s laid out by every spec of its operands equal those of the
//! function on the global arrays (f64, 1e-12), with the gradients laid out
//! like the inputs. [`table`] lists the cases by primitive;
//! [`every_other_primitive_has_cases`] fails when `other_ops!` names a
//! primitive the table lacks.

use super::spmd::{close, data, lay, meshes, specs_with_pending};
use nabla::dist::{self, DArray, Mesh, Spec};
use nabla::prelude::*;

/// The mesh's axes: names and sizes.
type Axes = [(&'static str, usize)];

/// One case: a function of `shapes.len()` arrays, at its one-process and
/// `spmd` entries (value, JVP, VJP), taking its operands as slices.
pub(crate) struct Case {
    /// The function's name.
    what: &'static str,
    /// The operands' shapes.
    shapes: Vec<Vec<usize>>,
    /// Runs the comparison on `mesh` for the given operand specs.
    run: fn(&Mesh, &Case, &[Array], &[Spec]),
}

/// A pullback's result as a list.
trait Cotangents {
    type Item;
    fn list(self) -> Vec<Self::Item>;
}
impl Cotangents for Array {
    type Item = Array;
    fn list(self) -> Vec<Array> {
        vec![self]
    }
}
macro_rules! tuples {
    ($t:ident; $(($($n:tt),+)),*) => {$(
        impl Cotangents for ($(tuples!(@ty $t $n),)+) {
            type Item = $t;
            fn list(self) -> Vec<$t> {
                vec![$(self.$n),+]
            }
        }
    )*};
    (@ty $t:ident $n:tt) => { $t };
}
tuples!(Array; (0, 1), (0, 1, 2));
tuples!(DArray; (0), (0, 1), (0, 1, 2));

/// A [`Case`] of the function `$f` of the operands shaped `$shape`, in
/// order; `$i` counts them from 0.
macro_rules! case {
    ($f:ident; $($i:tt $shape:expr),+) => {
        Case {
            what: stringify!($f),
            shapes: vec![$($shape.to_vec()),+],
            run: |mesh, case, x, specs| {
                let (t, ct_seed): (Vec<Array>, f64) = (
                    x.iter().enumerate().map(|(k, a)| data(a.shape(), 1.7 + k as f64)).collect(),
                    2.9,
                );
                let y = $f($(&x[$i]),+);
                let (y1, yt) = nabla::jvp($f)(($(&x[$i],)+), ($(&t[$i],)+));
                close(&y1, &y, &format!("{}: jvp's primal", case.what));
                let ct = data(y.shape(), ct_seed);
                let (_, pullback) = nabla::vjp($f)($(&x[$i]),+);
                let g = pullback(&ct).list();

                let s = dist::spmd($f, mesh);
                let xd: Vec<DArray> = x.iter().zip(specs).map(|(a, sp)| lay(a, mesh, sp)).collect();
                let td: Vec<DArray> = t.iter().zip(specs).map(|(a, sp)| lay(a, mesh, sp)).collect();
                let what = format!("{} at {}", case.what, specs.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "));
                let yd = s($(&xd[$i]),+);
                close(&yd.to_global(), &y, &what);
                let (yd1, ytd) = nabla::jvp(s)(($(&xd[$i],)+), ($(&td[$i],)+));
                close(&yd1.to_global(), &y, &format!("{what}: jvp's primal"));
                close(&ytd.to_global(), &yt, &format!("{what}: JVP"));
                let ctd = lay(&ct, mesh, &yd.spec());
                let (_, pullback) = nabla::vjp(s)($(&xd[$i]),+);
                let gd = pullback(&ctd).list();
                for (k, (gk, gdk)) in g.iter().zip(&gd).enumerate() {
                    close(&gdk.to_global(), gk, &format!("{what}: VJP of operand {k}"));
                    assert_eq!(gdk.spec(), specs[k], "{what}: the VJP of operand {k} is laid out like it");
                }
            },
        }
    };
}

// Reductions.

#[nabla::differentiable]
fn p_sum(x: &Array) -> Array {
    x.sum()
}
#[nabla::differentiable]
fn p_sum_axes_1(x: &Array) -> Array {
    x.sum_axes(&[1], false)
}
#[nabla::differentiable]
fn p_sum_axes_0_keep(x: &Array) -> Array {
    x.sum_axes(&[0], true)
}
#[nabla::differentiable]
fn p_sum_axes_02(x: &Array) -> Array {
    x.sum_axes(&[0, 2], false)
}
#[nabla::differentiable]
fn p_max(x: &Array) -> Array {
    x.max()
}
#[nabla::differentiable]
fn p_max_axes_1(x: &Array) -> Array {
    x.max_axes(&[1], false)
}
#[nabla::differentiable]
fn p_max_axes_0_keep(x: &Array) -> Array {
    x.max_axes(&[0], true)
}
#[nabla::differentiable]
fn p_min(x: &Array) -> Array {
    x.min()
}
#[nabla::differentiable]
fn p_min_axes_1_keep(x: &Array) -> Array {
    x.min_axes(&[1], true)
}
#[nabla::differentiable]
fn p_min_axes_0(x: &Array) -> Array {
    x.min_axes(&[0], false)
}
#[nabla::differentiable]
fn p_prod(x: &Array) -> Array {
    x.prod()
}
#[nabla::differentiable]
fn p_prod_axes_1(x: &Array) -> Array {
    x.prod_axes(&[1], false)
}
#[nabla::differentiable]
fn p_prod_axes_0_keep(x: &Array) -> Array {
    x.prod_axes(&[0], true)
}
#[nabla::differentiable]
fn p_mean(x: &Array) -> Array {
    x.mean()
}
#[nabla::differentiable]
fn p_mean_axes_1_keep(x: &Array) -> Array {
    x.mean_axes(&[1], true)
}
#[nabla::differentiable]
fn p_mean_axes_0(x: &Array) -> Array {
    x.mean_axes(&[0], false)
}
#[nabla::differentiable]
fn p_cumsum_0(x: &Array) -> Array {
    x.cumsum(0)
}
#[nabla::differentiable]
fn p_cumsum_1(x: &Array) -> Array {
    x.cumsum(-1)
}

// Products.

#[nabla::differentiable]
fn p_matmul(a: &Array, b: &Array) -> Array {
    a.matmul(b)
}
#[nabla::differentiable]
fn p_dot(a: &Array, b: &Array) -> Array {
    a.dot(b)
}
#[nabla::differentiable]
fn p_outer(a: &Array, b: &Array) -> Array {
    a.outer(b)
}

// Shape ops.

#[nabla::differentiable]
fn p_reshape_merge(x: &Array) -> Array {
    x.reshape(&[32])
}
#[nabla::differentiable]
fn p_reshape_split_lead(x: &Array) -> Array {
    x.reshape(&[2, 2, 8])
}
#[nabla::differentiable]
fn p_reshape_split_last(x: &Array) -> Array {
    x.reshape(&[4, 2, 4])
}
#[nabla::differentiable]
fn p_reshape_regroup(x: &Array) -> Array {
    x.reshape(&[8, 4])
}
#[nabla::differentiable]
fn p_reshape_merge_3d(x: &Array) -> Array {
    x.reshape(&[16, 8])
}
#[nabla::differentiable]
fn p_flatten(x: &Array) -> Array {
    x.flatten()
}
#[nabla::differentiable]
fn p_permute(x: &Array) -> Array {
    x.permute(&[2, 0, 1])
}
#[nabla::differentiable]
fn p_transpose(x: &Array) -> Array {
    x.transpose()
}
#[nabla::differentiable]
fn p_broadcast_lead(x: &Array) -> Array {
    x.broadcast_to(&[4, 4, 8])
}
#[nabla::differentiable]
fn p_broadcast_unit(x: &Array) -> Array {
    x.broadcast_to(&[4, 8])
}
#[nabla::differentiable]
fn p_expand_dims_1(x: &Array) -> Array {
    x.expand_dims(1)
}
#[nabla::differentiable]
fn p_expand_dims_last(x: &Array) -> Array {
    x.expand_dims(-1)
}
#[nabla::differentiable]
fn p_squeeze(x: &Array) -> Array {
    x.squeeze(1)
}

// Indexing.

#[nabla::differentiable]
fn p_slice_0(x: &Array) -> Array {
    x.slice_axis(0, 1..3)
}
#[nabla::differentiable]
fn p_slice_1(x: &Array) -> Array {
    x.slice_axis(1, 2..7)
}
#[nabla::differentiable]
fn p_slice_block(x: &Array) -> Array {
    x.slice_axis(1, 0..4)
}
#[nabla::differentiable]
fn p_index_select_1(x: &Array) -> Array {
    x.index_select(1, &[0, 3, 3, 7, 1])
}
#[nabla::differentiable]
fn p_index_select_0(x: &Array) -> Array {
    x.index_select(0, &[3, 0, 0, 2])
}
#[nabla::differentiable]
fn p_index_add_0(x: &Array) -> Array {
    x.index_add(&[3, 8], 0, &[2, 0, 2, 1])
}
#[nabla::differentiable]
fn p_index_add_1(x: &Array) -> Array {
    x.index_add(&[4, 5], 1, &[4, 0, 4, 1, 2, 2, 3, 0])
}

// Arithmetic with numbers and constant arrays.

#[nabla::differentiable]
fn p_add_scalar(x: &Array) -> Array {
    x + 2.5
}
#[nabla::differentiable]
fn p_sub_from_scalar(x: &Array) -> Array {
    1.5 - x
}
#[nabla::differentiable]
fn p_mul_scalar(x: &Array) -> Array {
    x * 3.0
}
#[nabla::differentiable]
fn p_div_scalar(x: &Array) -> Array {
    x / 4.0
}
#[nabla::differentiable]
fn p_add_const(x: &Array) -> Array {
    let c = Array::linspace(-1.0, 1.0, 8, DType::F64);
    x + &c
}
#[nabla::differentiable]
fn p_sub_const(x: &Array) -> Array {
    let c = Array::linspace(-1.0, 1.0, 32, DType::F64).reshape(&[4, 8]);
    x - &c
}
#[nabla::differentiable]
fn p_mul_const(x: &Array) -> Array {
    let c = Array::linspace(0.5, 2.0, 4, DType::F64).reshape(&[4, 1]);
    x * &c
}
#[nabla::differentiable]
fn p_div_const(x: &Array) -> Array {
    let c = Array::linspace(0.5, 2.0, 8, DType::F64);
    x / &c
}

// Row custom ops and linear algebra.

#[nabla::differentiable]
fn p_softmax(x: &Array) -> Array {
    x.softmax(-1)
}
#[nabla::differentiable]
fn p_log_softmax(x: &Array) -> Array {
    x.log_softmax(-1)
}
#[nabla::differentiable]
fn p_layer_norm(x: &Array, w: &Array, b: &Array) -> Array {
    nabla::layer_norm(x, w, b, 1e-5)
}
#[nabla::differentiable]
fn p_inv(a: &Array) -> Array {
    let shift = Array::eye(3, DType::F64) * 3.0;
    nabla::linalg::inv(&(a + &shift))
}

/// The cases of every primitive of `other_ops!` (by registry name) and of
/// the row and `linalg` custom ops.
pub(crate) fn table() -> Vec<(&'static str, Vec<Case>)> {
    vec![
        ("sum", vec![case!(p_sum; 0 [4, 8])]),
        (
            "sum_axes",
            vec![
                case!(p_sum_axes_1; 0 [4, 8]),
                case!(p_sum_axes_0_keep; 0 [4, 8]),
                case!(p_sum_axes_02; 0 [4, 4, 8]),
            ],
        ),
        ("max", vec![case!(p_max; 0 [4, 8])]),
        (
            "max_axes",
            vec![
                case!(p_max_axes_1; 0 [4, 8]),
                case!(p_max_axes_0_keep; 0 [4, 8]),
            ],
        ),
        ("min", vec![case!(p_min; 0 [4, 8])]),
        (
            "min_axes",
            vec![
                case!(p_min_axes_1_keep; 0 [4, 8]),
                case!(p_min_axes_0; 0 [4, 8]),
            ],
        ),
        ("prod", vec![case!(p_prod; 0 [4, 8])]),
        (
            "prod_axes",
            vec![
                case!(p_prod_axes_1; 0 [4, 8]),
                case!(p_prod_axes_0_keep; 0 [4, 8]),
            ],
        ),
        ("mean", vec![case!(p_mean; 0 [4, 8])]),
        (
            "mean_axes",
            vec![
                case!(p_mean_axes_1_keep; 0 [4, 8]),
                case!(p_mean_axes_0; 0 [4, 8]),
            ],
        ),
        (
            "cumsum",
            vec![case!(p_cumsum_0; 0 [4, 8]), case!(p_cumsum_1; 0 [4, 8])],
        ),
        (
            "matmul",
            vec![
                case!(p_matmul; 0 [4, 8], 1 [8, 4]),
                case!(p_matmul; 0 [4, 4, 8], 1 [4, 8, 4]),
                case!(p_matmul; 0 [4, 4, 8], 1 [8, 4]),
                case!(p_matmul; 0 [4, 8], 1 [8]),
            ],
        ),
        ("dot", vec![case!(p_dot; 0 [8], 1 [8])]),
        ("outer", vec![case!(p_outer; 0 [4], 1 [8])]),
        (
            "reshape",
            vec![
                case!(p_reshape_merge; 0 [4, 8]),
                case!(p_reshape_split_lead; 0 [4, 8]),
                case!(p_reshape_split_last; 0 [4, 8]),
                case!(p_reshape_regroup; 0 [4, 8]),
                case!(p_reshape_merge_3d; 0 [4, 4, 8]),
            ],
        ),
        ("flatten", vec![case!(p_flatten; 0 [4, 2, 4])]),
        ("permute", vec![case!(p_permute; 0 [4, 4, 8])]),
        ("transpose", vec![case!(p_transpose; 0 [4, 8])]),
        (
            "broadcast_to",
            vec![
                case!(p_broadcast_lead; 0 [4, 8]),
                case!(p_broadcast_unit; 0 [4, 1]),
                case!(p_broadcast_unit; 0 [1, 8]),
            ],
        ),
        (
            "expand_dims",
            vec![
                case!(p_expand_dims_1; 0 [4, 8]),
                case!(p_expand_dims_last; 0 [4, 8]),
            ],
        ),
        ("squeeze", vec![case!(p_squeeze; 0 [4, 1, 8])]),
        (
            "slice_axis",
            vec![
                case!(p_slice_0; 0 [4, 8]),
                case!(p_slice_1; 0 [4, 8]),
                case!(p_slice_block; 0 [4, 8]),
            ],
        ),
        (
            "index_select",
            vec![
                case!(p_index_select_1; 0 [4, 8]),
                case!(p_index_select_0; 0 [4, 8]),
            ],
        ),
        (
            "index_add",
            vec![
                case!(p_index_add_0; 0 [4, 8]),
                case!(p_index_add_1; 0 [4, 8]),
            ],
        ),
        (
            "add_scalar",
            vec![
                case!(p_add_scalar; 0 [4, 8]),
                case!(p_sub_from_scalar; 0 [4, 8]),
            ],
        ),
        (
            "mul_scalar",
            vec![case!(p_mul_scalar; 0 [4, 8]), case!(p_div_scalar; 0 [4, 8])],
        ),
        (
            "add_const",
            vec![case!(p_add_const; 0 [4, 8]), case!(p_sub_const; 0 [4, 8])],
        ),
        (
            "mul_const",
            vec![case!(p_mul_const; 0 [4, 8]), case!(p_div_const; 0 [4, 8])],
        ),
        ("softmax", vec![case!(p_softmax; 0 [4, 4, 8])]),
        ("log_softmax", vec![case!(p_log_softmax; 0 [4, 4, 8])]),
        (
            "layer_norm",
            vec![case!(p_layer_norm; 0 [4, 4, 8], 1 [8], 2 [8])],
        ),
        ("linalg::inv", vec![case!(p_inv; 0 [4, 3, 3])]),
    ]
}

/// The specs of `shape` on `axes` that divide it (every spec, pending
/// sums included, whose splits are even).
fn even_specs(axes: &Axes, shape: &[usize]) -> Vec<Spec> {
    specs_with_pending(axes, shape.len())
        .into_iter()
        .filter(|s| {
            (0..shape.len()).all(|k| {
                let parts: usize = s
                    .dim(k)
                    .iter()
                    .map(|m| axes.iter().find(|(n, _)| n == m).unwrap().1)
                    .product();
                shape[k].is_multiple_of(parts)
            })
        })
        .collect()
}

/// Pairs of specs of two operands beyond which a case takes a cover
/// instead of every pair (the time of the whole test on four ranks).
const MAX_PAIRS: usize = 300;

/// The operand specs a case runs under: every spec of a lone operand;
/// every pair of two (up to [`MAX_PAIRS`]; beyond, each spec of either
/// operand against the other's specs in turn, so every spec of each
/// meets several of the other's); for more, every spec of the first with
/// the others replicated, and the others' specs side by side with the
/// first replicated.
fn spec_lists(axes: &Axes, shapes: &[Vec<usize>]) -> Vec<Vec<Spec>> {
    let per: Vec<Vec<Spec>> = shapes.iter().map(|s| even_specs(axes, s)).collect();
    let rep = |k: usize| Spec::replicated(shapes[k].len());
    match per.len() {
        1 => per[0].iter().map(|s| vec![s.clone()]).collect(),
        2 if per[0].len() * per[1].len() <= MAX_PAIRS => per[0]
            .iter()
            .flat_map(|a| per[1].iter().map(move |b| vec![a.clone(), b.clone()]))
            .collect(),
        2 => {
            let (a, b) = (&per[0], &per[1]);
            let mut out = Vec::new();
            for (i, s) in a.iter().enumerate() {
                for j in [i, 3 * i + 1] {
                    out.push(vec![s.clone(), b[j % b.len()].clone()]);
                }
            }
            for (j, s) in b.iter().enumerate() {
                out.push(vec![a[(5 * j + 2) % a.len()].clone(), s.clone()]);
            }
            out
        }
        n => {
            let mut out: Vec<Vec<Spec>> = per[0]
                .iter()
                .map(|a| {
                    let mut v = vec![a.clone()];
                    v.extend((1..n).map(rep));
                    v
                })
                .collect();
            let longest = per[1..].iter().map(Vec::len).max().unwrap_or(0);
            for j in 0..longest {
                let mut v = vec![rep(0)];
                v.extend((1..n).map(|k| per[k].get(j).cloned().unwrap_or_else(|| rep(k))));
                out.push(v);
            }
            out
        }
    }
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn other_primitives() {
    let _mpi = dist::init();
    for (mesh, axes) in meshes() {
        for (_, cases) in table() {
            for case in &cases {
                let x: Vec<Array> = case
                    .shapes
                    .iter()
                    .enumerate()
                    .map(|(k, s)| data(s, 0.1 + 0.6 * k as f64))
                    .collect();
                for specs in spec_lists(&axes, &case.shapes) {
                    (case.run)(&mesh, case, &x, &specs);
                }
            }
        }
    }
}

/// The registry's names of the other primitives.
macro_rules! other_names {
    ($($name:ident [$($n:ident)*] $v:literal, $p:literal, tail $t:tt, reads $([$($r:tt)*])+;)*) => {
        [$(stringify!($name)),*]
    };
}

/// Every primitive of `other_ops!` has cases in [`table`] (a primitive
/// the registry gains fails here until it has some).
#[test]
fn every_other_primitive_has_cases() {
    let t = table();
    let missing: Vec<&str> = nabla_ops::other_ops!(other_names)
        .into_iter()
        .filter(|name| !t.iter().any(|(n, cases)| n == name && !cases.is_empty()))
        .collect();
    assert!(
        missing.is_empty(),
        "other_ops! primitives without spmd cases in tests/dist/spmd_other.rs: {missing:?}; add a function and a case! for each"
    );
}
