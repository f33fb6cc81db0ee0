//! The composition matrix: every single transform, every pair and a set
//! of triples of `grad`, `vmap`, `jacfwd`, `jacrev`, `hessian`, `jvp` and
//! `vjp`, applied to a scalar function, a vector→scalar and a
//! vector→vector function, a function of two arrays, one with a loop, one
//! calling a custom op and the custom op itself (`custom_ops::my_softplus`),
//! and functions of a tree argument (`Lin`: derivatives w.r.t. an array
//! with the tree riding along, and w.r.t. the tree), against JAX
//! (`tests/fixtures/jax_compositions.json`, written by
//! `scripts/jax_compositions.py`) in f64. Chains JAX rejects
//! (`grad` of a non-scalar) panic here too. The mixed orders of second
//! derivatives (ff, fr, rf, rr) each match JAX's Hessian, so they agree
//! with each other.

use crate::common::*;
// `ln(1 + eˣ)` as a custom op with its own kernel and rules.
use crate::custom_ops::my_softplus;
use nabla::prelude::*;
use std::collections::BTreeSet;

#[differentiable]
pub(super) fn bump(x: &Array) -> Array {
    x.sin() * x * x + (x * 0.5).exp()
}

#[differentiable]
pub(super) fn bowl(x: &Array) -> Array {
    nabla::sum(&(x * x * x + x.sin())) * nabla::sum(&x.tanh())
}

#[differentiable]
pub(super) fn wave(x: &Array) -> Array {
    x.sin() * nabla::sum(&(x * x)) + x * x * x
}

#[differentiable]
pub(super) fn pair(x: &Array, a: &Array) -> Array {
    nabla::sum(&(x * a).tanh()) + nabla::sum(&(x * x * a))
}

#[differentiable]
fn looped(x: &Array) -> Array {
    let mut h = x * 1.0;
    for _ in 0..4 {
        h = (h * 0.9).sin() + x * 0.1;
    }
    nabla::sum(&(&h * &h))
}

#[differentiable]
fn soft(x: &Array) -> Array {
    nabla::sum(&(my_softplus(&(x * x)) * x))
}

/// A tree argument: JAX's `(w, b)` tuple.
#[derive(Tree, Clone, Debug)]
pub(super) struct Lin {
    w: Array,
    b: Array,
}

fn lin(w: &Array, b: &Array) -> Lin {
    Lin {
        w: w.clone(),
        b: b.clone(),
    }
}

#[differentiable]
fn lin_x(x: &Array, p: &Lin) -> Array {
    nabla::sum(&(x * &p.w + &p.b).tanh()) + nabla::sum(&(x * x * &p.w)) * &p.b
}

#[differentiable]
fn lin_p(p: &Lin, x: &Array) -> Array {
    lin_x(x, p)
}

#[differentiable]
fn with_aux(x: &Array) -> (Array, Array) {
    (nabla::sum(&(x * x * x.sin())), x.tanh() * x)
}

#[differentiable]
fn value_only(x: &Array) -> Array {
    nabla::sum(&(x * x * x.sin()))
}

/// A value as the fixture's flat list of arrays (`N` of them).
trait Flat: Sized {
    const N: usize;
    fn flat(self) -> Vec<Array>;
    fn from_flat(x: &[Array]) -> Self;
}
impl<A: Flat, B: Flat> Flat for (A, B) {
    const N: usize = A::N + B::N;
    fn flat(self) -> Vec<Array> {
        [self.0.flat(), self.1.flat()].concat()
    }
    fn from_flat(x: &[Array]) -> Self {
        (A::from_flat(&x[..A::N]), B::from_flat(&x[A::N..]))
    }
}
impl Flat for Array {
    const N: usize = 1;
    fn flat(self) -> Vec<Array> {
        vec![self]
    }
    fn from_flat(x: &[Array]) -> Self {
        x[0].clone()
    }
}
impl Flat for Lin {
    const N: usize = 2;
    fn flat(self) -> Vec<Array> {
        vec![self.w, self.b]
    }
    fn from_flat(x: &[Array]) -> Self {
        lin(&x[0], &x[1])
    }
}

/// A chain evaluated on the fixture's inputs, giving its outputs.
type Case = (&'static str, Box<dyn Fn(&[Array]) -> Vec<Array>>);

/// `t1(t2(..(f)))`.
macro_rules! nest {
    ($f:expr;) => { $f };
    ($f:expr; $t:ident $(, $rest:ident)*) => { nabla::$t(nest!($f; $($rest),*)) };
}

/// One chain of a function of `$n` arrays: a plain transform, or `jvp` /
/// `vjp` of one (the tangents or the cotangent follow the arguments).
macro_rules! case {
    (tree, $f:ident, $kind:ident[$($t:ident),*]) => {
        tree_case!(x, $kind[$($t),*])
    };
    (1, $f:ident, plain[$($t:ident),*]) => {
        Box::new(|x: &[Array]| vec![nest!($f; $($t),*)(&x[0])])
    };
    (2, $f:ident, plain[$($t:ident),*]) => {
        Box::new(|x: &[Array]| vec![nest!($f; $($t),*)(&x[0], &x[1])])
    };
    (1, $f:ident, jvp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let (y, t) = nabla::jvp(nest!($f; $($t),*))((&x[0],), (&x[1],));
            vec![y, t]
        })
    };
    (2, $f:ident, jvp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let (y, t) = nabla::jvp(nest!($f; $($t),*))((&x[0], &x[1]), (&x[2], &x[3]));
            vec![y, t]
        })
    };
    (1, $f:ident, vjp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let (y, pullback) = nabla::vjp(nest!($f; $($t),*))(&x[0]);
            vec![y, pullback(&x[1])]
        })
    };
    (2, $f:ident, vjp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let (y, pullback) = nabla::vjp(nest!($f; $($t),*))(&x[0], &x[1]);
            let (ca, cb) = pullback(&x[2]);
            vec![y, ca, cb]
        })
    };
}

/// A chain of `lin_x(x, p)` (inputs `x, p.w, p.b`, then tangents or the
/// cotangent).
macro_rules! tree_case {
    (x, plain[$($t:ident),*]) => {
        Box::new(|x: &[Array]| vec![nest!(lin_x; $($t),*)(&x[0], &lin(&x[1], &x[2]))])
    };
    (x, jvp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let p = (&x[0], &lin(&x[1], &x[2]));
            let (y, t) = nabla::jvp(nest!(lin_x; $($t),*))(p, (&x[3], &lin(&x[4], &x[5])));
            vec![y, t]
        })
    };
    (x, vjp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let p = lin(&x[1], &x[2]);
            let (y, pullback) = nabla::vjp(nest!(lin_x; $($t),*))(&x[0], &p);
            let (cx, cp) = pullback(&x[3]);
            vec![y, cx, cp.w, cp.b]
        })
    };
    (p, plain[$($t:ident),*]) => {
        Box::new(|x: &[Array]| nest!(lin_p; $($t),*)(&lin(&x[0], &x[1]), &x[2]).flat())
    };
    (p, jvp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let p = (&lin(&x[0], &x[1]), &x[2]);
            let (y, t) = nabla::jvp(nest!(lin_p; $($t),*))(p, (&lin(&x[3], &x[4]), &x[5]));
            [y.flat(), t.flat()].concat()
        })
    };
    (p, vjp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let p = lin(&x[0], &x[1]);
            let (y, pullback) = nabla::vjp(nest!(lin_p; $($t),*))(&p, &x[2]);
            let (cp, cx) = pullback(&Flat::from_flat(&x[3..]));
            [y.flat(), cp.flat(), cx.flat()].concat()
        })
    };
}

/// A chain ending in the transformed function `$g` of one array (a
/// `value_and_grad` or a `has_aux` form), its outputs flattened.
macro_rules! aux_case {
    ($g:expr, plain[$($t:ident),*]) => {
        Box::new(|x: &[Array]| nest!($g; $($t),*)(&x[0]).flat())
    };
    ($g:expr, jvp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let (y, t) = nabla::jvp(nest!($g; $($t),*))((&x[0],), (&x[1],));
            [y.flat(), t.flat()].concat()
        })
    };
    ($g:expr, vjp[$($t:ident),*]) => {
        Box::new(|x: &[Array]| {
            let (y, pullback) = nabla::vjp(nest!($g; $($t),*))(&x[0]);
            let c = pullback(&Flat::from_flat(&x[1..]));
            [y.flat(), c.flat()].concat()
        })
    };
}

/// Every chain of the matrix for `$f`, a function of `$n` arrays.
macro_rules! matrix {
    ($n:tt, $f:ident) => {{
        let cases: Vec<Case> = vec![
            ("grad", case!($n, $f, plain[grad])),
            ("vmap", case!($n, $f, plain[vmap])),
            ("jacfwd", case!($n, $f, plain[jacfwd])),
            ("jacrev", case!($n, $f, plain[jacrev])),
            ("hessian", case!($n, $f, plain[hessian])),
            ("jvp", case!($n, $f, jvp[])),
            ("vjp", case!($n, $f, vjp[])),
            ("grad.grad", case!($n, $f, plain[grad, grad])),
            ("grad.vmap", case!($n, $f, plain[grad, vmap])),
            ("grad.jacfwd", case!($n, $f, plain[grad, jacfwd])),
            ("grad.jacrev", case!($n, $f, plain[grad, jacrev])),
            ("grad.hessian", case!($n, $f, plain[grad, hessian])),
            ("vmap.grad", case!($n, $f, plain[vmap, grad])),
            ("vmap.vmap", case!($n, $f, plain[vmap, vmap])),
            ("vmap.jacfwd", case!($n, $f, plain[vmap, jacfwd])),
            ("vmap.jacrev", case!($n, $f, plain[vmap, jacrev])),
            ("vmap.hessian", case!($n, $f, plain[vmap, hessian])),
            ("jacfwd.grad", case!($n, $f, plain[jacfwd, grad])),
            ("jacfwd.vmap", case!($n, $f, plain[jacfwd, vmap])),
            ("jacfwd.jacfwd", case!($n, $f, plain[jacfwd, jacfwd])),
            ("jacfwd.jacrev", case!($n, $f, plain[jacfwd, jacrev])),
            ("jacfwd.hessian", case!($n, $f, plain[jacfwd, hessian])),
            ("jacrev.grad", case!($n, $f, plain[jacrev, grad])),
            ("jacrev.vmap", case!($n, $f, plain[jacrev, vmap])),
            ("jacrev.jacfwd", case!($n, $f, plain[jacrev, jacfwd])),
            ("jacrev.jacrev", case!($n, $f, plain[jacrev, jacrev])),
            ("jacrev.hessian", case!($n, $f, plain[jacrev, hessian])),
            ("hessian.grad", case!($n, $f, plain[hessian, grad])),
            ("hessian.vmap", case!($n, $f, plain[hessian, vmap])),
            ("hessian.jacfwd", case!($n, $f, plain[hessian, jacfwd])),
            ("hessian.jacrev", case!($n, $f, plain[hessian, jacrev])),
            ("hessian.hessian", case!($n, $f, plain[hessian, hessian])),
            ("jvp.grad", case!($n, $f, jvp[grad])),
            ("jvp.vmap", case!($n, $f, jvp[vmap])),
            ("jvp.jacfwd", case!($n, $f, jvp[jacfwd])),
            ("jvp.jacrev", case!($n, $f, jvp[jacrev])),
            ("jvp.hessian", case!($n, $f, jvp[hessian])),
            ("vjp.grad", case!($n, $f, vjp[grad])),
            ("vjp.vmap", case!($n, $f, vjp[vmap])),
            ("vjp.jacfwd", case!($n, $f, vjp[jacfwd])),
            ("vjp.jacrev", case!($n, $f, vjp[jacrev])),
            ("vjp.hessian", case!($n, $f, vjp[hessian])),
            ("jacfwd.jacrev.vmap", case!($n, $f, plain[jacfwd, jacrev, vmap])),
            ("vmap.jacfwd.grad", case!($n, $f, plain[vmap, jacfwd, grad])),
            ("jvp.vmap.grad", case!($n, $f, jvp[vmap, grad])),
            ("vjp.jacrev.vmap", case!($n, $f, vjp[jacrev, vmap])),
            ("jacrev.jacrev.jacrev", case!($n, $f, plain[jacrev, jacrev, jacrev])),
            ("jacfwd.jacfwd.jacfwd", case!($n, $f, plain[jacfwd, jacfwd, jacfwd])),
            ("vmap.vmap.hessian", case!($n, $f, plain[vmap, vmap, hessian])),
            ("grad.jacfwd.jacrev", case!($n, $f, plain[grad, jacfwd, jacrev])),
            ("grad.grad.grad", case!($n, $f, plain[grad, grad, grad])),
            ("jvp.jacfwd.grad", case!($n, $f, jvp[jacfwd, grad])),
            ("vjp.hessian.vmap", case!($n, $f, vjp[hessian, vmap])),
            ("hessian.vmap.grad", case!($n, $f, plain[hessian, vmap, grad])),
        ];
        cases
    }};
}

/// Checks every chain of `name` against the fixture, and that the chains
/// JAX rejects panic; returns how many chains matched JAX.
fn check(name: &str, cases: Vec<Case>) -> usize {
    let all = fixture("jax_compositions.json");
    let f = &all["functions"][name];
    let ours: BTreeSet<&str> = cases.iter().map(|(c, _)| *c).collect();
    let theirs: BTreeSet<&str> = f["cases"]
        .as_object()
        .unwrap()
        .keys()
        .chain(f["rejected"].as_object().unwrap().keys())
        .map(String::as_str)
        .collect();
    assert_eq!(ours, theirs, "{name}: the chains here and in the fixture");
    let mut matched = 0;
    for (chain, run) in &cases {
        let inputs = |c: &serde_json::Value| -> Vec<Array> {
            c["inputs"].as_array().unwrap().iter().map(arr).collect()
        };
        if let Some(c) = f["rejected"].get(*chain) {
            let x = inputs(c);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&x)));
            assert!(r.is_err(), "{name}: {chain} runs, but JAX rejects it");
            continue;
        }
        let c = &f["cases"][*chain];
        let got = run(&inputs(c));
        let want: Vec<Array> = c["outputs"].as_array().unwrap().iter().map(arr).collect();
        assert_eq!(got.len(), want.len(), "{name}: {chain}: number of outputs");
        // Second and higher derivatives: 1e-7; first: 1e-9 (fixtures' README).
        let order = chain.split('.').filter(|t| *t != "vmap").count()
            + usize::from(chain.contains("hessian"));
        let tol = if order >= 2 { 1e-7 } else { 1e-9 };
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_close(g, w, tol, &format!("{name}: {chain}: output {k}"));
        }
        matched += 1;
    }
    matched
}

/// The chains of `lin_p`, differentiated w.r.t. its tree.
fn tree_chains() -> Vec<Case> {
    vec![
        ("grad", tree_case!(p, plain[grad])),
        ("vmap", tree_case!(p, plain[vmap])),
        ("jacfwd", tree_case!(p, plain[jacfwd])),
        ("jacrev", tree_case!(p, plain[jacrev])),
        ("jvp", tree_case!(p, jvp[])),
        ("vjp", tree_case!(p, vjp[])),
        ("grad.vmap", tree_case!(p, plain[grad, vmap])),
        ("vmap.grad", tree_case!(p, plain[vmap, grad])),
        ("vmap.vmap", tree_case!(p, plain[vmap, vmap])),
        ("vmap.jacfwd", tree_case!(p, plain[vmap, jacfwd])),
        ("vmap.jacrev", tree_case!(p, plain[vmap, jacrev])),
        ("jacfwd.vmap", tree_case!(p, plain[jacfwd, vmap])),
        ("jacrev.vmap", tree_case!(p, plain[jacrev, vmap])),
        ("jvp.grad", tree_case!(p, jvp[grad])),
        ("jvp.vmap", tree_case!(p, jvp[vmap])),
        ("jvp.jacfwd", tree_case!(p, jvp[jacfwd])),
        ("jvp.jacrev", tree_case!(p, jvp[jacrev])),
        ("vjp.grad", tree_case!(p, vjp[grad])),
        ("vjp.vmap", tree_case!(p, vjp[vmap])),
        ("vjp.jacfwd", tree_case!(p, vjp[jacfwd])),
        ("vjp.jacrev", tree_case!(p, vjp[jacrev])),
        ("vmap.vmap.grad", tree_case!(p, plain[vmap, vmap, grad])),
        ("jvp.vmap.grad", tree_case!(p, jvp[vmap, grad])),
        ("vjp.jacrev.vmap", tree_case!(p, vjp[jacrev, vmap])),
        ("vjp.vmap.grad", tree_case!(p, vjp[vmap, grad])),
    ]
}

#[test]
fn grad_with_aux_composed() {
    let cases: Vec<Case> = vec![
        (
            "grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), plain[]),
        ),
        (
            "value_and_grad_aux",
            aux_case!(nabla::value_and_grad!(with_aux, has_aux), plain[]),
        ),
        (
            "vmap.grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), plain[vmap]),
        ),
        (
            "vmap.value_and_grad_aux",
            aux_case!(nabla::value_and_grad!(with_aux, has_aux), plain[vmap]),
        ),
        (
            "jvp.grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), jvp[]),
        ),
        (
            "vjp.grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), vjp[]),
        ),
        (
            "jacfwd.grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), plain[jacfwd]),
        ),
        (
            "jacrev.grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), plain[jacrev]),
        ),
        (
            "jvp.vmap.grad_aux",
            aux_case!(nabla::grad!(with_aux, has_aux), jvp[vmap]),
        ),
    ];
    assert_eq!(check("with_aux", cases), 9);
}

#[test]
fn value_and_grad_composed() {
    let cases: Vec<Case> = vec![
        (
            "value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), plain[]),
        ),
        (
            "vmap.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), plain[vmap]),
        ),
        (
            "jvp.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), jvp[]),
        ),
        (
            "vjp.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), vjp[]),
        ),
        (
            "jacfwd.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), plain[jacfwd]),
        ),
        (
            "jacrev.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), plain[jacrev]),
        ),
        (
            "vmap.vmap.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), plain[vmap, vmap]),
        ),
        (
            "vjp.vmap.value_and_grad",
            aux_case!(nabla::value_and_grad(value_only), vjp[vmap]),
        ),
    ];
    assert_eq!(check("value_only", cases), 8);
}

#[test]
fn a_tree_riding_along() {
    assert_eq!(check("lin_x", matrix!(tree, lin_x)), 47);
}

#[test]
fn with_respect_to_a_tree() {
    assert_eq!(check("lin_p", tree_chains()), 24);
}

#[test]
fn scalar_function() {
    assert_eq!(check("bump", matrix!(1, bump)), 53);
}

#[test]
fn vector_to_scalar() {
    assert_eq!(check("bowl", matrix!(1, bowl)), 47);
}

#[test]
fn vector_to_vector() {
    assert_eq!(check("wave", matrix!(1, wave)), 36);
}

#[test]
fn two_arguments() {
    assert_eq!(check("pair", matrix!(2, pair)), 47);
}

#[test]
fn a_loop() {
    assert_eq!(check("looped", matrix!(1, looped)), 47);
}

#[test]
fn a_custom_op() {
    assert_eq!(check("soft", matrix!(1, soft)), 47);
}

#[test]
fn the_custom_op_itself() {
    assert_eq!(check("softplus_op", matrix!(1, my_softplus)), 36);
}
