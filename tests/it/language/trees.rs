//! Tree arguments: `#[derive(Tree)]` structs (nested, with `Vec` fields),
//! `Vec<Array>` and slices; the gradient has the argument's own type. The
//! MLP's gradient is checked against JAX (`mlp_grad`), the others against
//! the imperative tape and the gradients of the called functions.

use crate::common::*;
use nabla::prelude::*;

#[derive(Clone, Debug, Tree)]
struct Layer {
    w: Array,
    b: Array,
}

#[derive(Clone, Debug, Tree)]
struct Mlp {
    hidden: Layer,
    out: Layer,
    extra: Vec<Array>,
}

#[differentiable]
fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.hidden.w) + &p.hidden.b).tanh();
    let o = h.matmul(&p.out.w) + &p.out.b;
    nabla::mean(&(o - y).powi(2))
}

#[test]
fn mlp_grad_through_a_tree_struct_matches_jax() {
    let prog = program("mlp_grad");
    let (i, o) = (&prog["inputs"], &prog["outputs"]);
    let p = Mlp {
        hidden: Layer {
            w: arr(&i["w1"]),
            b: arr(&i["b1"]),
        },
        out: Layer {
            w: arr(&i["w2"]),
            b: arr(&i["b2"]),
        },
        extra: vec![Array::zeros(&[2], DType::F64)],
    };
    let (x, y) = (arr(&i["X"]), arr(&i["Y"]));
    let (loss, g): (Array, Mlp) = nabla::value_and_grad(mlp_loss)(&p, &x, &y);
    assert_close(&loss, &arr(&o["loss"]), 1e-9, "loss");
    assert_close(&g.hidden.w, &arr(&o["g_w1"]), 1e-9, "g_w1");
    assert_close(&g.hidden.b, &arr(&o["g_b1"]), 1e-9, "g_b1");
    assert_close(&g.out.w, &arr(&o["g_w2"]), 1e-9, "g_w2");
    assert_close(&g.out.b, &arr(&o["g_b2"]), 1e-9, "g_b2");
    // An unused leaf gets a zero gradient of its own shape.
    assert_eq!(g.extra[0].to_vec::<f64>(), vec![0.0, 0.0]);
    // jvp with a tree tangent equals <grad, tangent>.
    let (_, t) = nabla::jvp(mlp_loss)((&p, &x, &y), (&g, &x.zeros_like(), &y.zeros_like()));
    let dot: f64 = nabla::tree::leaves(&g)
        .iter()
        .map(|l| (l * l).sum().item())
        .sum();
    assert!((t.item() - dot).abs() < 1e-12 * dot.max(1.0));
}

#[differentiable]
#[allow(clippy::ptr_arg)] // a `&Vec<Array>` parameter is what this test exercises
fn weighted(ws: &Vec<Array>, xs: &[Array], k: usize) -> Array {
    let a = &ws[0] * &xs[k];
    let b = &ws[1] * &xs[0];
    nabla::sum(&(a + b).sin())
}

#[test]
fn vec_and_slice_arguments() {
    let _rng = seeded(4);
    let ws = vec![
        nabla::randn(&[3], DType::F64),
        nabla::randn(&[3], DType::F64),
    ];
    let xs = vec![
        nabla::randn(&[3], DType::F64),
        nabla::randn(&[3], DType::F64),
    ];
    let (gw, gx): (Vec<Array>, Vec<Array>) = nabla::grad!(weighted, argnums = (0, 1))(&ws, &xs, 1);
    let tw: Vec<Array> = ws.iter().map(|w| w.clone().requires_grad()).collect();
    let tx: Vec<Array> = xs.iter().map(|x| x.clone().requires_grad()).collect();
    weighted(&tw, &tx, 1).backward();
    for i in 0..2 {
        assert_close(&gw[i], &tw[i].grad(), 1e-13, &format!("ws[{i}]"));
        assert_close(&gx[i], &tx[i].grad(), 1e-13, &format!("xs[{i}]"));
    }
    let (y, pullback) = nabla::vjp(weighted)(&ws, &xs, 1);
    assert!((y.item() - weighted(&ws, &xs, 1).item()).abs() < 1e-15);
    let (pw, _px) = pullback(&Array::scalar(1.0f64));
    assert_close(&pw[1], &gw[1], 1e-15, "vjp of a Vec argument");
}

#[differentiable]
fn calls_with_a_tree(p: &Mlp, x: &Array, y: &Array) -> Array {
    let l = mlp_loss(p, x, y);
    &l * 2.0 + nabla::sum(&p.extra[0].square())
}

#[test]
fn trees_pass_through_calls() {
    let _rng = seeded(5);
    let p = Mlp {
        hidden: Layer {
            w: nabla::randn(&[4, 3], DType::F64),
            b: nabla::randn(&[3], DType::F64),
        },
        out: Layer {
            w: nabla::randn(&[3, 2], DType::F64),
            b: nabla::randn(&[2], DType::F64),
        },
        extra: vec![nabla::randn(&[2], DType::F64)],
    };
    let (x, y) = (
        nabla::randn(&[5, 4], DType::F64),
        nabla::randn(&[5, 2], DType::F64),
    );
    let g = nabla::grad(calls_with_a_tree)(&p, &x, &y);
    let g1 = nabla::grad(mlp_loss)(&p, &x, &y);
    assert_close(
        &g.hidden.w,
        &(&g1.hidden.w * 2.0),
        1e-13,
        "through the call",
    );
    assert_close(&g.extra[0], &(&p.extra[0] * 2.0), 1e-13, "own use");
}
