//! Functions of a list of arrays returning a list (`fn f(args: &[Array]) ->
//! Vec<Array>`, the seed's literal form) in the composable transforms: the
//! seed example against JAX, Jacobian blocks `(output o, input i)` in
//! output-major order, every order of second derivatives agreeing and
//! matching finite differences, and `vmap` equal to a loop.

use crate::common::*;
use nabla::prelude::*;

#[differentiable]
fn foo(args: &[Array]) -> Vec<Array> {
    vec![nabla::sum(&nabla::sin(&args[0]))]
}

#[test]
fn seed_example_as_written() {
    let p = program("seed_hessian");
    let x = arr(&p["inputs"]["x"]);
    let o = &p["outputs"];
    let foo_vmapped = nabla::vmap(foo);
    let foo_jacobian = nabla::jacrev(foo_vmapped);
    let foo_hessian = nabla::jacfwd(foo_jacobian);
    let args = vec![x.clone()];
    let v = foo_vmapped(&args);
    assert_eq!(v.len(), 1);
    assert_close(&v[0], &arr(&o["vmap"]), 1e-12, "vmap");
    let j = foo_jacobian(&args);
    assert_eq!(j.len(), 1);
    assert_close(&j[0], &arr(&o["jacrev_vmap"]), 1e-12, "jacrev(vmap)");
    let hessian_output = foo_hessian(&args);
    assert_eq!(hessian_output.len(), 1);
    assert_eq!(hessian_output[0].shape(), &[2, 2, 3, 2, 3]);
    assert_close(
        &hessian_output[0],
        &arr(&o["hessian"]),
        1e-9,
        "jacfwd(jacrev(vmap))",
    );
    // The nested macros, and f32 as in the seed.
    let h = nabla::jacfwd!(nabla::jacrev!(nabla::vmap!(foo)))(&[x.cast(DType::F32)]);
    assert_eq!(h[0].dtype(), DType::F32);
    assert_close(&h[0], &arr(&o["hessian"]), 1e-5, "f32 via macros");
    // The function value itself still runs the code as written.
    assert_close(
        &foo(&args)[0],
        &nabla::sum(&x.sin()),
        0.0,
        "foo as a plain function",
    );
}

/// Two inputs (shapes [3] and [2]), two outputs (a scalar and a [3]).
#[differentiable]
fn two_by_two(args: &[Array]) -> Vec<Array> {
    let a = &args[0];
    let b = &args[1];
    let s = nabla::sum(&b.square());
    vec![nabla::sum(&(a.sin() * a)) * s, a.exp() * nabla::sum(b)]
}

fn inputs() -> Vec<Array> {
    vec![
        Array::from_vec(vec![0.3f64, -0.5, 0.9], &[3]),
        Array::from_vec(vec![0.7f64, -0.2], &[2]),
    ]
}

/// Central differences of `f`'s output `o` w.r.t. input `i`, shaped
/// `out_o ++ in_i` like a Jacobian block. Hand-rolled: the tests check the
/// blocks' layout (output-major), which `check_grads` does not see.
fn fd_block(f: impl Fn(&[Array]) -> Vec<Array>, x: &[Array], o: usize, i: usize) -> Array {
    let eps = 1e-6;
    let n = x[i].numel();
    let out_shape = f(x)[o].shape().to_vec();
    let m: usize = out_shape.iter().product();
    let mut cols = vec![0.0f64; m * n];
    for k in 0..n {
        let mut e = vec![0.0f64; n];
        e[k] = eps;
        let d = Array::from_vec(e, x[i].shape());
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[i] = &x[i] + &d;
        xm[i] = &x[i] - &d;
        let diff = ((&f(&xp)[o] - &f(&xm)[o]) / (2.0 * eps)).to_vec::<f64>();
        for r in 0..m {
            cols[r * n + k] = diff[r];
        }
    }
    let shape: Vec<usize> = out_shape.iter().chain(x[i].shape()).copied().collect();
    Array::from_vec(cols, &shape)
}

#[test]
fn jacobian_blocks_are_output_major_and_match_finite_differences() {
    let x = inputs();
    let jr = nabla::jacrev(two_by_two)(&x);
    let jf = nabla::jacfwd(two_by_two)(&x);
    assert_eq!(jr.len(), 4);
    assert_eq!(jf.len(), 4);
    let shapes: Vec<&[usize]> = jr.iter().map(|b| b.shape()).collect();
    assert_eq!(shapes, vec![&[3][..], &[2], &[3, 3], &[3, 2]]);
    for o in 0..2 {
        for i in 0..2 {
            let k = o * 2 + i;
            let fd = fd_block(*two_by_two, &x, o, i);
            assert_close(&jr[k], &fd, 1e-8, &format!("jacrev block ({o}, {i})"));
            assert_close(&jf[k], &jr[k], 1e-12, &format!("jacfwd block ({o}, {i})"));
        }
    }
}

#[test]
fn second_derivatives_agree_in_every_order_and_match_finite_differences() {
    let x = inputs();
    let fr = nabla::jacfwd(nabla::jacrev(two_by_two))(&x);
    let rr = nabla::jacrev(nabla::jacrev(two_by_two))(&x);
    let rf = nabla::jacrev(nabla::jacfwd(two_by_two))(&x);
    let ff = nabla::jacfwd(nabla::jacfwd(two_by_two))(&x);
    let h = nabla::hessian(two_by_two)(&x);
    // 4 first-order blocks (o, i), each differentiated w.r.t. 2 inputs j.
    assert_eq!(fr.len(), 8);
    for k in 0..8 {
        assert_close(&rr[k], &fr[k], 1e-11, &format!("jacrev(jacrev) block {k}"));
        assert_close(&rf[k], &fr[k], 1e-11, &format!("jacrev(jacfwd) block {k}"));
        assert_close(&ff[k], &fr[k], 1e-11, &format!("jacfwd(jacfwd) block {k}"));
        assert_close(&h[k], &fr[k], 0.0, &format!("hessian block {k}"));
    }
    // Against finite differences of the (checked) Jacobian: block (b, j) of
    // the second derivative is ∂ jacrev(f)[b] / ∂ x_j.
    let jac = |a: &[Array]| nabla::jacrev(two_by_two)(a);
    for b in 0..4 {
        for j in 0..2 {
            let fd = fd_block(jac, &x, b, j);
            assert_close(
                &fr[b * 2 + j],
                &fd,
                1e-7,
                &format!("second-derivative block ({b}, {j})"),
            );
        }
    }
    // Symmetry: block (b = (0, a), j = b) is ∂²f_0/∂a∂b, shaped [3, 2]; block
    // (b = (0, b), j = a) is ∂²f_0/∂b∂a, its transpose.
    let (ab, ba) = (&fr[1], &fr[2]);
    assert_eq!(ab.shape(), &[3, 2]);
    assert_close(ab, &ba.permute(&[1, 0]), 1e-12, "mixed partials");
}

#[test]
fn vmap_of_a_list_function_equals_a_loop() {
    let xs = vec![
        Array::from_vec(vec![0.3f64, -0.5, 0.9, 0.1, 0.2, -0.3], &[2, 3]),
        Array::from_vec(vec![0.7f64, -0.2, 0.4, 0.5], &[2, 2]),
    ];
    let batched = nabla::vmap(two_by_two)(&xs);
    let grads = nabla::vmap(nabla::jacrev(two_by_two))(&xs);
    for r in 0..2 {
        let row: Vec<Array> = xs
            .iter()
            .map(|x| x.index_select(0, &[r]).squeeze(0))
            .collect();
        let want = two_by_two(&row);
        let want_j = nabla::jacrev(two_by_two)(&row);
        for (o, w) in want.iter().enumerate() {
            let got = batched[o].index_select(0, &[r]).squeeze(0);
            assert_close(&got, w, 1e-14, &format!("vmap output {o}, row {r}"));
        }
        for (k, w) in want_j.iter().enumerate() {
            let got = grads[k].index_select(0, &[r]).squeeze(0);
            assert_close(&got, w, 1e-12, &format!("vmap(jacrev) block {k}, row {r}"));
        }
    }
}

#[test]
#[should_panic(expected = "got 1 cotangents")]
fn a_pullback_with_the_wrong_number_of_cotangents_is_a_clear_error() {
    use nabla::compose::DiffFn;
    let x = inputs();
    let (_, pullback) = <two_by_two::Function as DiffFn>::vjp::<Array>(&x);
    pullback(vec![Array::scalar(1.0f64)]);
}
