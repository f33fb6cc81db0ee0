//! The run-time transforms against closed forms, central differences in
//! f64, and each other.

use super::*;
use crate::{Array, ArrayValue, DType, Value};

fn arr(v: &[f64], shape: &[usize]) -> Dyn {
    Dyn::from(Array::from_vec(v.to_vec(), shape))
}

fn vals(d: &Dyn) -> Vec<f64> {
    d.to_array().to_vec::<f64>()
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

/// A function touching elementwise, broadcasting, reduction, shape and
/// matmul rules: sum(tanh(W x) * x[::-1]) + max(x) + prod(x).
fn f(x: &Dyn) -> Dyn {
    let w = arr(&[0.3, -0.2, 0.5, 0.1, 0.4, -0.7, 0.2, 0.9, -0.1], &[3, 3]);
    let wx = w.matmul(&x.reshape(&[3, 1])).reshape(&[3]);
    let rev = x.index_select(0, &[2, 1, 0]);
    let a = wx.tanh().mul(&rev).sum_axes(&[0], false);
    let b = x.max_axes(&[0], false);
    let c = x.prod_axes(&[0], false);
    a.add(&b)
        .add(&c)
        .add_scalar(0.5)
        .mul(&x.exp().sum_axes(&[0], false).ln())
}

fn central_grad(f: impl Fn(&Dyn) -> Dyn, x: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    (0..x.len())
        .map(|i| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[i] += h;
            m[i] -= h;
            let n = [x.len()];
            (f(&arr(&p, &n)).to_array().item() - f(&arr(&m, &n)).to_array().item()) / (2.0 * h)
        })
        .collect()
}

const X: [f64; 3] = [0.3, -0.8, 1.1];

#[test]
fn grad_matches_central_differences() {
    let g = grad(f, &arr(&X, &[3]));
    close(&vals(&g), &central_grad(f, &X), 1e-7);
}

#[test]
fn jvp_and_vjp_agree() {
    let x = arr(&X, &[3]);
    let v = [0.7, -0.1, 0.4];
    let (_, t) = jvp(
        |x| vec![f(&x[0])],
        std::slice::from_ref(&x),
        &[arr(&v, &[3])],
    );
    let g = vals(&grad(f, &x));
    let dot: f64 = g.iter().zip(v).map(|(a, b)| a * b).sum();
    close(&[t[0].to_array().item()], &[dot], 1e-12);
}

#[test]
fn hessian_matches_differences_of_gradients_and_is_symmetric() {
    let x = arr(&X, &[3]);
    let h = hessian(|x| f(&x[0]), std::slice::from_ref(&x));
    let h = vals(&h[0][0]);
    assert_eq!(h.len(), 9);
    let eps = 1e-5;
    for i in 0..3 {
        let (mut p, mut m) = (X.to_vec(), X.to_vec());
        p[i] += eps;
        m[i] -= eps;
        let gp = vals(&grad(f, &arr(&p, &[3])));
        let gm = vals(&grad(f, &arr(&m, &[3])));
        let col: Vec<f64> = gp
            .iter()
            .zip(&gm)
            .map(|(a, b)| (a - b) / (2.0 * eps))
            .collect();
        let row: Vec<f64> = (0..3).map(|k| h[k * 3 + i]).collect();
        close(&row, &col, 1e-6);
        for k in 0..3 {
            assert!((h[i * 3 + k] - h[k * 3 + i]).abs() < 1e-12);
        }
    }
}

#[test]
fn jacfwd_equals_jacrev() {
    let x = arr(&X, &[3]);
    let g = |x: &[Dyn]| {
        vec![
            x[0].sin().mul(&x[0].sum_axes(&[0], true)),
            x[0].cumsum_axis(0, false),
        ]
    };
    let a = jacfwd(g, std::slice::from_ref(&x));
    let b = jacrev(g, std::slice::from_ref(&x));
    for j in 0..2 {
        assert_eq!(a[j][0].to_array().shape(), &[3, 3]);
        close(&vals(&a[j][0]), &vals(&b[j][0]), 1e-14);
    }
}

/// The seed's second example: jacfwd(jacrev(vmap(foo))) on a (2, 3) input
/// has shape (2, 2, 3, 2, 3), and equals -sin on the diagonal.
#[test]
fn seed_hessian_of_a_vmapped_function() {
    let x = arr(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
    let foo = |x: &[Dyn]| vec![x[0].sin().sum_axes(&[0], false)];
    let vf = |x: &[Dyn]| vmap(foo, x, &[Some(0)], &[0]);
    let jr = |x: &[Dyn]| jacrev(vf, x).remove(0);
    let h = jacfwd(jr, std::slice::from_ref(&x)).remove(0).remove(0);
    let a = h.to_array();
    assert_eq!(a.shape(), &[2, 2, 3, 2, 3]);
    let v = a.to_vec::<f64>();
    let xs = vals(&x);
    for (k, val) in v.iter().enumerate() {
        // index (b, i, j, c, l): nonzero only for b = i = c, j = l
        let (b, i, j, c, l) = (k / 36, (k / 18) % 2, (k / 6) % 3, (k / 3) % 2, k % 3);
        let expect = if b == i && i == c && j == l {
            -xs[i * 3 + j].sin()
        } else {
            0.0
        };
        assert!(
            (val - expect).abs() < 1e-12,
            "element {k}: {val} vs {expect}"
        );
    }
}

#[test]
fn per_example_gradients_by_vmap_of_grad() {
    let x = arr(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
    let g = vmap(
        |x| {
            vec![grad(
                |r| {
                    r.square()
                        .sum_axes(&[0], false)
                        .mul(&r.sum_axes(&[0], false))
                },
                &x[0],
            )]
        },
        std::slice::from_ref(&x),
        &[Some(0)],
        &[0],
    );
    let xs = vals(&x);
    let mut expect = Vec::new();
    for r in xs.chunks(3) {
        let s: f64 = r.iter().sum();
        let q: f64 = r.iter().map(|v| v * v).sum();
        expect.extend(r.iter().map(|v| 2.0 * v * s + q));
    }
    close(&vals(&g[0]), &expect, 1e-14);
}

#[test]
fn nested_grad_of_a_closure_over_an_outer_tracer() {
    // d/dx [ d/dy (x·y²) at y = 3 ] = d/dx (6x) = 6; an outer tracer
    // captured by the inner function is a constant there.
    let x = arr(&[2.0], &[]);
    let g = grad(
        |x| {
            let x = x.clone();
            grad(move |y| x.mul(&y.square()), &arr(&[3.0], &[]))
        },
        &x,
    );
    assert_eq!(g.to_array().item(), 6.0);
}

#[test]
fn third_derivative_by_nested_grads() {
    // d³/dx³ sin(x) = -cos(x)
    let x = arr(&[0.4], &[]);
    let d3 = grad(|x| grad(|x| grad(|x| x.sin(), x), x), &x);
    assert!((d3.to_array().item() + 0.4f64.cos()).abs() < 1e-15);
}

#[test]
fn vmap_in_axes_and_out_axes() {
    let a = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = arr(&[10.0, 20.0], &[2]);
    // batch over a's axis 1 (3 examples of shape [2]), b unbatched
    let out = vmap(|x| vec![x[0].mul(&x[1])], &[a, b], &[Some(1), None], &[1]);
    let o = out[0].to_array();
    assert_eq!(o.shape(), &[2, 3]);
    assert_eq!(
        o.to_vec::<f64>(),
        vec![10.0, 20.0, 30.0, 80.0, 100.0, 120.0]
    );
}

#[test]
fn an_output_that_ignores_the_input_has_zero_gradient() {
    let x = arr(&X, &[3]);
    let g = grad(|_| arr(&[1.5], &[]), &x);
    assert_eq!(vals(&g), vec![0.0; 3]);
}

#[test]
fn f32_stays_f32() {
    let x = Dyn::from(Array::from_vec(vec![1.0f32, 2.0], &[2]));
    let g = grad(|x| x.sin().sum_axes(&[0], false), &x);
    assert_eq!(g.dtype(), DType::F32);
}

#[test]
fn non_scalar_grad_names_the_fix() {
    let r = std::panic::catch_unwind(|| grad(|x| x.sin(), &arr(&X, &[3])));
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("grad") && msg.contains("sum"), "{msg}");
}

#[test]
fn matmul_of_vectors_promotes_in_reverse_mode() {
    // matrix·vector and vector·vector, against the closed forms
    let a = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let v = arr(&[0.5, -1.0, 2.0], &[3]);
    let (_, pb) = vjp(|x| vec![x[0].matmul(&x[1])], &[a.clone(), v.clone()]);
    let g = pb.call(&[Some(arr(&[1.0, 10.0], &[2]))]);
    assert_eq!(vals(&g[0]), vec![0.5, -1.0, 2.0, 5.0, -10.0, 20.0]);
    assert_eq!(vals(&g[1]), vec![41.0, 52.0, 63.0]);
    let gv = grad(|x| x.matmul(x), &v);
    assert_eq!(vals(&gv), vec![1.0, -2.0, 4.0]);
}

#[test]
fn a_recorded_program_replays_on_new_inputs() {
    let (y, p) = record(|x| vec![f(&x[0])], &[arr(&X, &[3])]);
    assert_eq!(vals(&y[0]), vals(&f(&arr(&X, &[3]))));
    let x2 = [0.9, 0.1, -0.4];
    assert_eq!(
        vals(&p.run(&[arr(&x2, &[3])])[0]),
        vals(&f(&arr(&x2, &[3])))
    );
}

#[test]
fn recording_a_gradient_replays_the_backward_pass() {
    let (_, p) = record(|x| vec![grad(f, &x[0])], &[arr(&X, &[3])]);
    let x2 = [0.2, 0.5, -1.3];
    close(
        &vals(&p.run(&[arr(&x2, &[3])])[0]),
        &central_grad(f, &x2),
        1e-7,
    );
    let listing = p.to_string();
    assert!(
        listing.contains("matmul") && listing.contains("tanh"),
        "{listing}"
    );
}

#[test]
fn a_program_runs_under_transforms() {
    // grad of a replayed program: the replay's ops are traced like any
    let (_, p) = record(|x| vec![f(&x[0])], &[arr(&X, &[3])]);
    let g = grad(|x| p.run(std::slice::from_ref(x)).remove(0), &arr(&X, &[3]));
    close(&vals(&g), &central_grad(f, &X), 1e-7);
    // and vmap over it (the program was recorded per example)
    let xs = arr(&[0.3, -0.8, 1.1, 0.2, 0.5, -1.3], &[2, 3]);
    let ys = vmap(|x| p.run(x), std::slice::from_ref(&xs), &[Some(0)], &[0]);
    let want = f(&arr(&[0.2, 0.5, -1.3], &[3])).to_array().item();
    assert!((vals(&ys[0])[1] - want).abs() < 1e-12);
}

#[test]
fn dead_code_is_dropped_and_constants_are_kept() {
    let c = arr(&[10.0, 20.0, 30.0], &[3]);
    let (_, p) = record(
        |x| {
            let _unused = x[0].exp().sum_axes(&[0], false);
            vec![x[0].mul(&c)]
        },
        &[arr(&X, &[3])],
    );
    assert_eq!(p.len(), 2, "{p}"); // the constant and the product
    assert_eq!(
        vals(&p.run(&[arr(&[1.0, 1.0, 1.0], &[3])])[0]),
        vec![10.0, 20.0, 30.0]
    );
}

#[test]
fn reading_a_recorded_value_names_jit() {
    let r = std::panic::catch_unwind(|| {
        record(
            |x| vec![x[0].mul_scalar(x[0].item_f64())],
            &[arr(&[1.0], &[])],
        )
    });
    let payload = r.err().expect("panics");
    let msg = match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast::<&str>()
            .map(|s| s.to_string())
            .expect("a message"),
    };
    assert!(
        msg.contains("jit") && msg.contains("static_argnums"),
        "{msg}"
    );
}

#[test]
fn take_with_traced_indices_differentiates_records_and_batches() {
    let table = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let idx = Dyn::from(Array::from_vec(vec![2i64, 0, 2], &[3]));
    // gradient: rows 2 (twice) and 0 get the cotangent
    let g = grad(|t| t.take(0, &idx).sum_axes(&[0, 1], false), &table);
    assert_eq!(vals(&g), vec![1.0, 1.0, 0.0, 0.0, 2.0, 2.0]);
    // recorded with the indices as an input: replays with new indices
    let (_, p) = record(|x| vec![x[0].take(0, &x[1])], &[table.clone(), idx.clone()]);
    let other = Dyn::from(Array::from_vec(vec![1i64, 1, -1], &[3]));
    assert_eq!(
        vals(&p.run(&[table.clone(), other])[0]),
        vec![3.0, 4.0, 3.0, 4.0, 5.0, 6.0]
    );
    // batched indices: one gather per example
    let idxs = Dyn::from(Array::from_vec(vec![0i64, 1, 2, 2], &[2, 2]));
    let ys = vmap(
        |x| vec![x[0].take(0, &x[1]).sum_axes(&[1], false)],
        &[table.clone(), idxs],
        &[None, Some(0)],
        &[0],
    );
    assert_eq!(vals(&ys[0]), vec![3.0, 7.0, 11.0, 11.0]);
    // reverse mode through the batched gather
    let gb = grad(
        |t| {
            let i = Dyn::from(Array::from_vec(vec![0i64, 1, 2, 2], &[2, 2]));
            vmap(
                |x| vec![x[0].take(0, &x[1])],
                &[t.clone(), i],
                &[None, Some(0)],
                &[0],
            )
            .remove(0)
            .sum_axes(&[0, 1, 2], false)
        },
        &table,
    );
    assert_eq!(vals(&gb), vec![1.0, 1.0, 1.0, 1.0, 2.0, 2.0]);
}

#[test]
fn along_axis_positions_are_read_when_the_program_runs() {
    let idx = Dyn::from(Array::from_vec(vec![1i64, -1, 0, 2], &[2, 2]));
    // x of shape [3, 2], gathered along axis 0: out[r, c] = x[idx[r, c], c]
    let (_, p) = record(|x| vec![x[0].along_axis_positions(&[3, 2], 0)], &[idx]);
    let run = |v: Vec<i64>| {
        let i = Dyn::from(Array::from_vec(v, &[2, 2]));
        p.run(&[i])[0].to_array().to_vec::<i64>()
    };
    assert_eq!(run(vec![1, -1, 0, 2]), vec![2, 5, 0, 5]);
    assert_eq!(run(vec![2, 2, 0, 1]), vec![4, 5, 0, 3]);
    let bad = std::panic::AssertUnwindSafe(|| run(vec![3, 0, 0, 0]));
    let payload = std::panic::catch_unwind(bad).expect_err("panics");
    let msg = payload.downcast::<String>().map(|s| *s).unwrap_or_default();
    assert!(
        msg.contains("take_along_axis: index 3 is out of range"),
        "{msg}"
    );
    // batched indices: positions per example
    let idxs = Dyn::from(Array::from_vec(vec![-1i64, 2, 1, 1], &[2, 2]));
    let ys = vmap(
        |x| vec![x[0].along_axis_positions(&[3], 0)],
        &[idxs],
        &[Some(0)],
        &[0],
    );
    assert_eq!(ys[0].to_array().to_vec::<i64>(), vec![2, 2, 1, 1]);
}

#[test]
fn custom_op_rules_are_used_at_every_transform() {
    use std::sync::Arc;
    // forward: x³; rules deliberately 10× the true derivative, so their use shows
    let op = DynOp::new("cube", Arc::new(|x: &[Dyn]| vec![x[0].powi(3)]))
        .with_jvp(Arc::new(|x: &[Dyn], _y: &[Dyn], t: &[Option<Dyn>]| {
            vec![
                t[0].as_ref()
                    .expect("a tangent")
                    .mul(&x[0].square())
                    .mul_scalar(30.0),
            ]
        }))
        .with_vjp(Arc::new(|x: &[Dyn], _y: &[Dyn], c: &[Option<Dyn>]| {
            vec![
                c[0].as_ref()
                    .map(|c| c.mul(&x[0].square()).mul_scalar(30.0)),
            ]
        }));
    let x = arr(&[1.0, 2.0], &[2]);
    let f = |x: &Dyn| {
        op.apply(std::slice::from_ref(x))
            .remove(0)
            .sum_axes(&[0], false)
    };
    assert_eq!(vals(&grad(f, &x)), vec![30.0, 120.0]);
    let (_, t) = jvp(
        |x| vec![f(&x[0])],
        std::slice::from_ref(&x),
        &[arr(&[1.0, 0.0], &[2])],
    );
    assert_eq!(t[0].to_array().item(), 30.0);
    // vmap of grad: the rule runs per example
    let g = vmap(
        |x| vec![grad(f, &x[0])],
        &[arr(&[1.0, 2.0, 3.0, 4.0], &[2, 2])],
        &[Some(0)],
        &[0],
    );
    assert_eq!(vals(&g[0]), vec![30.0, 120.0, 270.0, 480.0]);
    // recorded by jit, replayed with the rule
    let (_, p) = record(|x| vec![grad(f, &x[0])], std::slice::from_ref(&x));
    assert_eq!(
        vals(&p.run(&[arr(&[3.0, 4.0], &[2])])[0]),
        vec![270.0, 480.0]
    );
}

#[test]
fn checkpoint_gives_the_same_derivatives() {
    let g = |x: &[Dyn]| vec![f(&x[0]), x[0].sin().sum_axes(&[0], false)];
    let x = arr(&X, &[3]);
    let plain = hessian(|x| g(x).remove(0), std::slice::from_ref(&x));
    let remat = hessian(|x| checkpoint(g, x).remove(0), std::slice::from_ref(&x));
    close(&vals(&remat[0][0]), &vals(&plain[0][0]), 1e-14);
    let both = value_and_grad(
        |x| {
            let o = checkpoint(g, x);
            o[0].add(&o[1])
        },
        std::slice::from_ref(&x),
    );
    let want = value_and_grad(
        |x| {
            let o = g(x);
            o[0].add(&o[1])
        },
        std::slice::from_ref(&x),
    );
    close(&vals(&both.1[0]), &vals(&want.1[0]), 1e-14);
}

#[test]
fn elementwise_runs_replay_as_one_pass_with_the_same_values() {
    // Rosenbrock's value and gradient: runs of elementwise ops between
    // slices and the sum, on more elements than one block.
    let n = 3 * super::fuse::BLOCK + 17;
    let xs: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37).sin()).collect();
    let x = arr(&xs, &[n]);
    let rosen = |x: &Dyn| {
        let a = x.slice(&[ndarray::Slice::new(0, Some(-1), 1)]);
        let b = x.slice(&[ndarray::Slice::new(1, None, 1)]);
        let t = b.sub(&a.square()).square().mul_scalar(100.0);
        t.add(&a.neg().add_scalar(1.0).square())
            .sum_axes(&[0], false)
    };
    let (_, p) = record(
        |x| vec![rosen(&x[0]), grad(rosen, &x[0])],
        std::slice::from_ref(&x),
    );
    assert!(p.fused_runs() >= 2, "{p}");
    let x2 = arr(&xs.iter().map(|v| v * 0.5 + 0.1).collect::<Vec<_>>(), &[n]);
    let got = p.run(std::slice::from_ref(&x2));
    close(&vals(&got[0]), &vals(&rosen(&x2)), 1e-14);
    close(&vals(&got[1]), &vals(&grad(rosen, &x2)), 1e-14);
    // f32 too
    let xf = Dyn::from(Array::from_vec(
        xs.iter().map(|&v| v as f32).collect(),
        &[n],
    ));
    let (_, pf) = record(|x| vec![grad(rosen, &x[0])], std::slice::from_ref(&xf));
    let gf = pf.run(std::slice::from_ref(&xf))[0]
        .to_array()
        .to_vec::<f32>();
    let ge = grad(rosen, &xf).to_array().to_vec::<f32>();
    for (a, b) in gf.iter().zip(&ge) {
        assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
    }
}
