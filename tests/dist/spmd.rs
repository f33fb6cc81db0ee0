//! `DArray`s and `spmd` on every mesh the world allows ((n), and (2, 2)
//! on four ranks), against the one-process computation: layouts and
//! resharding (with the bytes the collectives count), every registry
//! primitive under every layout of its operands (value, JVP, VJP), and
//! the gradients of an MLP.

use nabla::dist::{self, DArray, Mesh, Spec};
use nabla::prelude::*;
use nabla::{Dual, Value};

/// The meshes of this world.
pub(crate) fn meshes() -> Vec<(Mesh, Vec<(&'static str, usize)>)> {
    let n = dist::world_size();
    let mut out = vec![(Mesh::new(&[("x", n)]), vec![("x", n)])];
    if n == 4 {
        let axes = vec![("a", 2), ("b", 2)];
        out.push((Mesh::new(&axes), axes));
    }
    out
}

/// Every spec of a rank-`nd` array on the mesh's axes: each mesh axis
/// unused or splitting one array axis (in mesh order, then reversed).
pub(crate) fn specs(axes: &[(&'static str, usize)], nd: usize) -> Vec<Spec> {
    let mut out = Vec::new();
    let choices = nd + 1;
    let total = choices.pow(axes.len() as u32);
    for code in 0..total {
        let mut dims: Vec<Vec<&str>> = vec![Vec::new(); nd];
        let mut c = code;
        for (name, _) in axes {
            let k = c % choices;
            c /= choices;
            if k > 0 {
                dims[k - 1].push(name);
            }
        }
        let refs: Vec<&[&str]> = dims.iter().map(|d| &d[..]).collect();
        out.push(Spec::split(&refs));
        if dims.iter().any(|d| d.len() > 1) {
            let rev: Vec<Vec<&str>> = dims
                .iter()
                .map(|d| d.iter().rev().copied().collect())
                .collect();
            let refs: Vec<&[&str]> = rev.iter().map(|d| &d[..]).collect();
            out.push(Spec::split(&refs));
        }
    }
    out
}

/// `specs` and, for each with a mesh axis left over, the same split
/// pending over that axis (a value held as a sum over the ranks).
pub(crate) fn specs_with_pending(axes: &[(&'static str, usize)], nd: usize) -> Vec<Spec> {
    let mut out = specs(axes, nd);
    for s in out.clone() {
        for (name, _) in axes {
            let used = (0..nd).any(|k| s.dim(k).iter().any(|m| m == name));
            if !used {
                out.push(s.clone().partial_over(&[name]));
            }
        }
    }
    out
}

/// `x` laid out by `s`; pending over a mesh axis of size k, the rank at
/// coordinate c holds its block times (c + 1) / (k (k + 1) / 2), so the
/// ranks' blocks sum to `x` and none is zero.
pub(crate) fn lay(x: &Array, mesh: &Mesh, s: &Spec) -> DArray {
    let dims: Vec<Vec<&str>> = (0..s.ndim())
        .map(|k| s.dim(k).iter().map(String::as_str).collect())
        .collect();
    let refs: Vec<&[&str]> = dims.iter().map(|d| &d[..]).collect();
    let whole = dist::distribute(x, mesh, &Spec::split(&refs));
    let ms = mesh.shape();
    let mut local = whole.local().clone();
    for name in s.partial() {
        let m = ms.axis(name).unwrap();
        let k = ms.size(m) as f64;
        local = &local * ((mesh.coord(m) as f64 + 1.0) / (k * (k + 1.0) / 2.0));
    }
    DArray::from_local(local, x.shape(), mesh, s)
}

pub(crate) fn data(shape: &[usize], seed: f64) -> Array {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| 1.0 + 0.45 * (0.37 * i as f64 + seed).sin())
        .collect();
    Array::from_vec(v, shape)
}

pub(crate) fn close(got: &Array, want: &Array, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (i, (a, b)) in got
        .to_vec::<f64>()
        .iter()
        .zip(want.to_vec::<f64>())
        .enumerate()
    {
        let same =
            (a.is_nan() && b.is_nan()) || a == &b || (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        assert!(
            same,
            "{what}: element {i}: {a} vs {b} on rank {}",
            dist::rank()
        );
    }
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn layouts() {
    let _mpi = dist::init();
    for (mesh, axes) in meshes() {
        let x = data(&[4, 8], 0.3);
        let all = specs(&axes, 2);
        for a in &all {
            let d = dist::distribute(&x, &mesh, a);
            assert_eq!(&d.spec(), a);
            close(&d.to_global(), &x, &format!("to_global of {a}"));
            for b in &all {
                let before = dist::bytes_sent();
                let e = d.reshard(b);
                let sent = dist::bytes_sent() - before;
                assert_eq!(&e.spec(), b);
                close(&e.to_global(), &x, &format!("{a} -> {b}"));
                close(
                    e.local(),
                    dist::distribute(&x, &mesh, b).local(),
                    &format!("block {a} -> {b}"),
                );
                assert_eq!(
                    sent,
                    dist::reshard_cost(x.shape(), x.dtype(), &mesh.shape(), a, b),
                    "bytes {a} -> {b}"
                );
            }
        }
        // From pending sums (over one mesh axis, and over every axis at
        // once: a reduce-scatter, smaller all-reduces, a gather).
        let mut pending: Vec<Spec> = specs_with_pending(&axes, 2)
            .into_iter()
            .filter(|s| !s.partial().is_empty())
            .collect();
        let names: Vec<&str> = axes.iter().map(|(n, _)| *n).collect();
        pending.push(Spec::replicated(2).partial_over(&names));
        for a in &pending {
            let d = lay(&x, &mesh, a);
            for b in &all {
                let before = dist::bytes_sent();
                let e = d.reshard(b);
                let sent = dist::bytes_sent() - before;
                assert_eq!(&e.spec(), b);
                close(&e.to_global(), &x, &format!("{a} -> {b}"));
                assert_eq!(
                    sent,
                    dist::reshard_cost(x.shape(), x.dtype(), &mesh.shape(), a, b),
                    "bytes {a} -> {b}"
                );
            }
        }
    }
}

type UnaryCall<V> = fn(&V) -> V;

macro_rules! unary_list {
    ($($(#[$doc:meta])* $name:ident $k:ident ($($p:ident: $t:ty),*) {
        method: $m:ident, func: $f:ident, $($rest:tt)*
    })*) => {
        vec![$((
            stringify!($m),
            (|x: &DArray| Value::$m(x $(, <$t as Param>::value())*)) as UnaryCall<DArray>,
            (|x: &Array| Value::$m(x $(, <$t as Param>::value())*)) as UnaryCall<Array>,
            (|x: &Dual<DArray>| Value::$m(x $(, <$t as Param>::value())*)) as UnaryCall<Dual<DArray>>,
            (|x: &Dual<Array>| Value::$m(x $(, <$t as Param>::value())*)) as UnaryCall<Dual<Array>>,
            (|x: &DArray, y: &DArray, ct: &DArray| nabla::primitives::unary::$name::vjp(x, y $(, <$t as Param>::value())*, ct)) as fn(&DArray, &DArray, &DArray) -> DArray,
            (|x: &Array, y: &Array, ct: &Array| nabla::primitives::unary::$name::vjp(x, y $(, <$t as Param>::value())*, ct)) as fn(&Array, &Array, &Array) -> Array,
        )),*]
    };
}

/// The value every test passes for a static parameter of this type.
trait Param {
    fn value() -> Self;
}
impl Param for i32 {
    fn value() -> i32 {
        2
    }
}
impl Param for f64 {
    fn value() -> f64 {
        0.75
    }
}

type BinaryCall<V> = fn(&V, &V) -> V;
type BinaryVjp<V> = fn(&V, &V, &V, &V) -> (V, V);

macro_rules! binary_list {
    ($($(#[$doc:meta])* $name:ident $k:ident { method: $m:ident, func: $f:ident, $($rest:tt)* })*) => {
        vec![$((
            stringify!($m),
            (|a: &DArray, b: &DArray| Value::$m(a, b)) as BinaryCall<DArray>,
            (|a: &Array, b: &Array| Value::$m(a, b)) as BinaryCall<Array>,
            (|a: &Dual<DArray>, b: &Dual<DArray>| Value::$m(a, b)) as BinaryCall<Dual<DArray>>,
            (|a: &Dual<Array>, b: &Dual<Array>| Value::$m(a, b)) as BinaryCall<Dual<Array>>,
            (|a: &DArray, b: &DArray, y: &DArray, ct: &DArray| {
                use nabla::primitives::binary::$name as r;
                (r::vjp_0(a, b, y, ct), r::vjp_1(a, b, y, ct))
            }) as BinaryVjp<DArray>,
            (|a: &Array, b: &Array, y: &Array, ct: &Array| {
                use nabla::primitives::binary::$name as r;
                (r::vjp_0(a, b, y, ct), r::vjp_1(a, b, y, ct))
            }) as BinaryVjp<Array>,
        )),*]
    };
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn registry_primitives() {
    let _mpi = dist::init();
    let unary = nabla_ops::unary_ops!(unary_list);
    let binary = nabla_ops::binary_ops!(binary_list);
    for (mesh, axes) in meshes() {
        let all = specs_with_pending(&axes, 2);
        let (x, t, ct) = (data(&[4, 8], 0.1), data(&[4, 8], 1.7), data(&[4, 8], 2.9));
        for (name, dcall, call, ddual, dual, dvjp, vjp) in &unary {
            let y = call(&x);
            let yt = dual(&Dual::new(x.clone(), Some(t.clone()))).tangent_or_zero();
            let g = vjp(&x, &y, &ct);
            for s in &all {
                let (xd, td, ctd) = (lay(&x, &mesh, s), lay(&t, &mesh, s), lay(&ct, &mesh, s));
                let yd = dcall(&xd);
                close(&yd.to_global(), &y, &format!("{name} at {s}"));
                let jd = ddual(&Dual::new(xd.clone(), Some(td))).tangent_or_zero();
                close(&jd.to_global(), &yt, &format!("{name} JVP at {s}"));
                close(
                    &dvjp(&xd, &yd, &ctd).to_global(),
                    &g,
                    &format!("{name} VJP at {s}"),
                );
            }
        }
        let b = data(&[4, 8], 0.9);
        let bt = data(&[4, 8], 0.4);
        for (name, dcall, call, ddual, dual, dvjp, vjp) in &binary {
            let y = call(&x, &b);
            let yt = dual(
                &Dual::new(x.clone(), Some(t.clone())),
                &Dual::new(b.clone(), Some(bt.clone())),
            )
            .tangent_or_zero();
            let (ga, gb) = vjp(&x, &b, &y, &ct);
            for sa in &all {
                for sb in &all {
                    let (xd, bd) = (lay(&x, &mesh, sa), lay(&b, &mesh, sb));
                    let yd = dcall(&xd, &bd);
                    let what = format!("{name} at {sa}, {sb}");
                    close(&yd.to_global(), &y, &what);
                    let td = lay(&t, &mesh, sa);
                    let btd = lay(&bt, &mesh, sb);
                    let jd = ddual(
                        &Dual::new(xd.clone(), Some(td)),
                        &Dual::new(bd.clone(), Some(btd)),
                    )
                    .tangent_or_zero();
                    close(&jd.to_global(), &yt, &format!("{what}: JVP"));
                    let ctd = lay(&ct, &mesh, sa);
                    let (da, db) = dvjp(&xd, &bd, &yd, &ctd);
                    close(&da.to_global(), &ga, &format!("{what}: VJP a"));
                    close(&db.to_global(), &gb, &format!("{what}: VJP b"));
                }
            }
        }
    }
}

#[nabla::differentiable]
pub(crate) fn mlp_loss(w1: &Array, w2: &Array, x: &Array, y: &Array) -> Array {
    let h = x.matmul(w1).tanh();
    let d = h.matmul(w2) - y;
    (&d * &d).mean()
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn mlp_gradients() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let (w1, w2) = (data(&[6, 4 * n], 0.2) - 1.0, data(&[4 * n, 3], 0.5) - 1.0);
    let (x, y) = (data(&[2 * n, 6], 0.8), data(&[2 * n, 3], 1.1));
    let (l, g) = nabla::value_and_grad(mlp_loss)(&w1, &w2, &x, &y);
    let g2 = nabla::grad!(mlp_loss, argnums = 1)(&w1, &w2, &x, &y);
    for (mesh, axes) in meshes() {
        let layouts: Vec<[Spec; 4]> = if axes.len() == 1 {
            vec![
                // data-parallel, tensor-parallel (Megatron), replicated
                [
                    Spec::new(&[None, None]),
                    Spec::new(&[None, None]),
                    Spec::new(&[Some("x"), None]),
                    Spec::new(&[Some("x"), None]),
                ],
                [
                    Spec::new(&[None, Some("x")]),
                    Spec::new(&[Some("x"), None]),
                    Spec::new(&[None, None]),
                    Spec::new(&[None, None]),
                ],
                [
                    Spec::new(&[None, None]),
                    Spec::new(&[None, None]),
                    Spec::new(&[None, None]),
                    Spec::new(&[None, None]),
                ],
            ]
        } else {
            vec![[
                Spec::new(&[None, Some("b")]),
                Spec::new(&[Some("b"), None]),
                Spec::new(&[Some("a"), None]),
                Spec::new(&[Some("a"), None]),
            ]]
        };
        for [s1, s2, sx, sy] in layouts {
            let d = |a: &Array, s: &Spec| lay(a, &mesh, s);
            let (w1d, w2d, xd, yd) = (d(&w1, &s1), d(&w2, &s2), d(&x, &sx), d(&y, &sy));
            let f = dist::spmd(mlp_loss, &mesh);
            let (ld, gd) = nabla::value_and_grad(f)(&w1d, &w2d, &xd, &yd);
            let what = format!("{s1} {s2} {sx} {sy}");
            close(&ld.to_global(), &l, &format!("loss {what}"));
            assert_eq!(gd.spec(), s1, "{what}: the gradient is laid out like w1");
            close(&gd.to_global(), &g, &format!("grad w1 {what}"));
            let g2d = nabla::grad!(dist::spmd(mlp_loss, &mesh), argnums = 1)(&w1d, &w2d, &xd, &yd);
            close(&g2d.to_global(), &g2, &format!("grad w2 {what}"));
        }
    }
}
