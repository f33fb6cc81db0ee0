//! The composable transforms of `spmd(f)` and of `auto(f)`: `vmap`,
//! `jacfwd`, `jacrev`, `hessian`, `jvp(grad(f))` (and `vjp(grad(f))` of
//! `spmd`, `jvp(f)` of `auto`) equal the same transforms of `f` in one
//! process, with the arguments laid out data-parallel, tensor-parallel
//! and both at once on (2, 2) under `spmd`, as planned under `auto`.

use super::spmd::{close, data, lay, meshes};
use nabla::dist::{self, CostModel, Mesh, Spec};
use nabla::prelude::*;

/// An array-valued function of two arrays (for `vmap` and the Jacobians).
#[nabla::differentiable]
fn layer(w: &Array, x: &Array) -> Array {
    x.matmul(w).tanh()
}

/// A scalar function of two arrays (for `hessian` and `jvp(grad)`).
#[nabla::differentiable]
fn loss(w: &Array, x: &Array) -> Array {
    let h = x.matmul(w).tanh();
    (&h * &h).mean() + (w * w).sum() * 0.1
}

/// `layer` planned over the mesh inside differentiable code, the rest of
/// the model on every rank.
#[nabla::differentiable]
fn planned_model(w: &Array, v: &Array, x: &Array, #[nondiff] mesh: &Mesh) -> Array {
    let h = dist::auto(layer, mesh)(w, x);
    (h.matmul(v) * &h.sum()).sum()
}

/// `model` in one process.
#[nabla::differentiable]
fn model_alone(w: &Array, v: &Array, x: &Array) -> Array {
    let h = layer(w, x);
    (h.matmul(v) * &h.sum()).sum()
}

/// Layouts of `(w, x)` on the mesh of `axes`: named data-parallel (the
/// rows of `x` split), tensor-parallel (the columns of `w` split), and on
/// (2, 2) both, one mesh axis each.
fn layouts(axes: &[(&'static str, usize)]) -> Vec<(&'static str, Spec, Spec)> {
    if axes.len() == 1 {
        let m = axes[0].0;
        vec![
            (
                "data-parallel",
                Spec::new(&[None, None]),
                Spec::new(&[Some(m), None]),
            ),
            (
                "tensor-parallel",
                Spec::new(&[None, Some(m)]),
                Spec::new(&[None, None]),
            ),
        ]
    } else {
        let (a, b) = (axes[0].0, axes[1].0);
        vec![(
            "data- and tensor-parallel",
            Spec::new(&[None, Some(b)]),
            Spec::new(&[Some(a), None]),
        )]
    }
}

/// `spec` with a leading axis (a `vmap` batch) split by `batch`.
fn batched(spec: &Spec, batch: Option<&str>) -> Spec {
    let mut dims: Vec<Vec<&str>> = vec![batch.into_iter().collect()];
    dims.extend((0..spec.ndim()).map(|k| spec.dim(k).iter().map(String::as_str).collect()));
    let refs: Vec<&[&str]> = dims.iter().map(|d| &d[..]).collect();
    Spec::split(&refs)
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn transforms_of_spmd() {
    let _mpi = dist::init();
    let (w, x) = (data(&[4, 8], 0.2) - 1.0, data(&[4, 4], 0.8));
    let (tw, tx) = (data(&[4, 8], 1.3), data(&[4, 4], 2.1));
    let (wb, xb) = (data(&[4, 4, 8], 0.4) - 1.0, data(&[4, 4, 4], 1.6));
    let want_vmap = vmap(layer)(&wb, &xb);
    let want_jacfwd = jacfwd(layer)(&w, &x);
    let want_jacrev = jacrev(layer)(&w, &x);
    let want_hessian = hessian(loss)(&w, &x);
    let (want_grad, want_hvp) = jvp(grad(loss))((&w, &x), (&tw, &tx));
    let (want_hw, want_hx) = vjp(grad(loss))(&w, &x).1(&tw);
    for (mesh, axes) in meshes() {
        for (name, sw, sx) in layouts(&axes) {
            let d = |a: &Array, s: &Spec| lay(a, &mesh, s);
            let (wd, xd) = (d(&w, &sw), d(&x, &sx));
            let what = |t: &str| format!("{t} of spmd at {name} on {}", mesh.shape());
            let (wbd, xbd) = (d(&wb, &batched(&sw, None)), d(&xb, &batched(&sx, None)));
            let got = vmap(dist::spmd(layer, &mesh))(&wbd, &xbd);
            close(&got.to_global(), &want_vmap, &what("vmap"));
            let got = jacfwd(dist::spmd(layer, &mesh))(&wd, &xd);
            close(&got.to_global(), &want_jacfwd, &what("jacfwd"));
            let got = jacrev(dist::spmd(layer, &mesh))(&wd, &xd);
            close(&got.to_global(), &want_jacrev, &what("jacrev"));
            let got = hessian(dist::spmd(loss, &mesh))(&wd, &xd);
            close(&got.to_global(), &want_hessian, &what("hessian"));
            let (twd, txd) = (d(&tw, &sw), d(&tx, &sx));
            let (g, hvp) = jvp(grad(dist::spmd(loss, &mesh)))((&wd, &xd), (&twd, &txd));
            close(&g.to_global(), &want_grad, &what("jvp(grad): the gradient"));
            close(&hvp.to_global(), &want_hvp, &what("jvp(grad): the tangent"));
            assert_eq!(g.spec(), sw, "{}: laid out like w", what("jvp(grad)"));
            let (g, pullback) = vjp(grad(dist::spmd(loss, &mesh)))(&wd, &xd);
            close(&g.to_global(), &want_grad, &what("vjp(grad): the gradient"));
            let (hw, hx) = pullback(&twd);
            close(&hw.to_global(), &want_hw, &what("vjp(grad): w's cotangent"));
            close(&hx.to_global(), &want_hx, &what("vjp(grad): x's cotangent"));
            assert_eq!(
                (hw.spec(), hx.spec()),
                (sw.clone(), sx.clone()),
                "{}",
                what("vjp(grad)")
            );
        }
        // The vmapped axis split over the first mesh axis (and the columns
        // of w over the second, if any).
        let second: Vec<&str> = axes.iter().skip(1).map(|a| a.0).collect();
        let first = [axes[0].0];
        let sw = Spec::split(&[&first, &[], &second]);
        let sx = Spec::split(&[&first, &[], &[]]);
        let got = vmap(dist::spmd(layer, &mesh))(&lay(&wb, &mesh, &sw), &lay(&xb, &mesh, &sx));
        close(
            &got.to_global(),
            &want_vmap,
            &format!("vmap of spmd at {sw}, {sx} on {}", mesh.shape()),
        );
    }
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn transforms_of_auto() {
    let _mpi = dist::init();
    let (w, x) = (data(&[4, 8], 0.2) - 1.0, data(&[4, 4], 0.8));
    let (tw, tx) = (data(&[4, 8], 1.3), data(&[4, 4], 2.1));
    let (wb, xb) = (data(&[4, 4, 8], 0.4) - 1.0, data(&[4, 4, 4], 1.6));
    let n = dist::world_size();
    let mut meshes = vec![Mesh::new(&[("x", n)])];
    if n == 4 {
        meshes.push(Mesh::new(&[("data", 2), ("model", 2)]));
    }
    for mesh in meshes {
        // Slow arithmetic and fast links: splitting the work pays.
        let model = CostModel::uniform(1e6, 1e10, 1e-9);
        let al = dist::auto(layer, &mesh).cost_model(model.clone());
        let a = dist::auto(loss, &mesh).cost_model(model);
        let what = |t: &str| format!("{t} of auto on {}", mesh.shape());
        // Each transform is planned as one program that splits the work.
        let distributed = |t: &str, plan: dist::Plan| {
            assert!(
                plan.bytes_per_call() > 0,
                "{}: the plan distributes the work:\n{plan}",
                what(t)
            );
        };
        close(&vmap(al)(&wb, &xb), &vmap(layer)(&wb, &xb), &what("vmap"));
        distributed("vmap", al.plan());
        close(&jacfwd(al)(&w, &x), &jacfwd(layer)(&w, &x), &what("jacfwd"));
        distributed("jacfwd", al.plan());
        close(&jacrev(al)(&w, &x), &jacrev(layer)(&w, &x), &what("jacrev"));
        distributed("jacrev", al.plan());
        close(
            &hessian(a)(&w, &x),
            &hessian(loss)(&w, &x),
            &what("hessian"),
        );
        distributed("hessian", a.plan());
        let (y, yt) = jvp(a)((&w, &x), (&tw, &tx));
        let (y1, yt1) = jvp(loss)((&w, &x), (&tw, &tx));
        close(&y, &y1, &what("jvp: the value"));
        close(&yt, &yt1, &what("jvp: the tangent"));
        distributed("jvp", a.plan());
        let (g, hvp) = jvp(grad(a))((&w, &x), (&tw, &tx));
        let (g1, hvp1) = jvp(grad(loss))((&w, &x), (&tw, &tx));
        close(&g, &g1, &what("jvp(grad): the gradient"));
        close(&hvp, &hvp1, &what("jvp(grad): the tangent"));
        distributed("jvp(grad)", a.plan());
        // `vjp` of a layer with an array output: the pullback is a second
        // planned program (the forward again, then the backward).
        let u = data(&[4, 8], 0.9);
        let (y, pullback) = vjp(al)(&w, &x);
        let (y1, pullback1) = vjp(layer)(&w, &x);
        close(&y, &y1, &what("vjp: the value"));
        let before = dist::bytes_sent();
        let (cw, cx) = pullback(&u);
        let sent = dist::bytes_sent() - before;
        let (cw1, cx1) = pullback1(&u);
        close(&cw, &cw1, &what("vjp: w's cotangent"));
        close(&cx, &cx1, &what("vjp: x's cotangent"));
        let plan = al.plan();
        distributed("vjp's pullback", plan.clone());
        assert_eq!(
            sent,
            plan.bytes_per_call(),
            "{}:\n{plan}",
            what("vjp's pullback: bytes")
        );
        let (g, pullback) = vjp(grad(a))(&w, &x);
        close(&g, &g1, &what("vjp(grad): the gradient"));
        let (hw, hx) = pullback(&tw);
        let (hw1, hx1) = vjp(grad(loss))(&w, &x).1(&tw);
        close(&hw, &hw1, &what("vjp(grad): w's cotangent"));
        close(&hx, &hx1, &what("vjp(grad): x's cotangent"));
        // Called inside differentiable code: the forward and the
        // pullback are planned programs (with `al`'s settings: the same
        // mesh keeps them), the rest runs on every rank.
        let v = data(&[8, 3], 1.7);
        let before = dist::bytes_sent();
        let (l, (gw, gv)) =
            nabla::value_and_grad!(planned_model, argnums = (0, 1))(&w, &v, &x, &mesh);
        assert!(
            dist::bytes_sent() > before,
            "{}",
            what("inside: distributed")
        );
        let (l1, (gw1, gv1)) = nabla::value_and_grad!(model_alone, argnums = (0, 1))(&w, &v, &x);
        close(&l, &l1, &what("inside differentiable code: the value"));
        close(&gw, &gw1, &what("inside differentiable code: w's gradient"));
        close(&gv, &gv1, &what("inside differentiable code: v's gradient"));
        close(
            &planned_model(&w, &v, &x, &mesh),
            &l1,
            &what("inside: a plain call"),
        );
    }
}
