//! The seed example, as written in the brief: `jacfwd(jacrev(vmap(foo)))`
//! of a function of a list of arrays returning a list, composed through
//! variables and resolved at compile time.
//!
//! Run: `cargo run --release --example hessian`

use nabla::prelude::*;

#[differentiable]
fn foo(args: &[Array]) -> Vec<Array> {
    vec![nabla::sum(&nabla::sin(&args[0]))]
}

/// The same function of one array (one `Array` in, one out).
#[differentiable]
fn foo_single(x: &Array) -> Array {
    nabla::sum(&nabla::sin(x))
}

fn main() {
    nabla::manual_seed(0);
    let foo_vmapped = nabla::vmap(foo);
    let foo_jacobian = nabla::jacrev(foo_vmapped);
    let foo_hessian = nabla::jacfwd(foo_jacobian);
    let args = vec![nabla::randn(&[2, 3], DType::F32)];
    let hessian_output = foo_hessian(&args);
    let x = &args[0];
    println!("x:\n{x}\n");
    println!("vmap(foo)(args)[0] = {}", foo_vmapped(&args)[0]);
    println!(
        "jacrev(vmap(foo))(args)[0] has shape {:?} (= cos x per row)",
        foo_jacobian(&args)[0].shape()
    );
    println!("Hessian shape: {:?}", hessian_output[0].shape()); // [2, 2, 3, 2, 3]
    println!("Hessian: {}", hessian_output[0]);

    // The single-array form gives the same Hessian.
    let single = nabla::jacfwd(nabla::jacrev(nabla::vmap(foo_single)))(x);
    assert_eq!(single.to_vec::<f32>(), hessian_output[0].to_vec::<f32>());
    let hessian_output = &hessian_output[0];

    // Check: H[i, j, a, k, b] = ∂²(Σ_c sin x[i, c]) / ∂x[j, a] ∂x[k, b]
    //                         = -sin x[i, a] if i = j = k and a = b, else 0.
    let mut max_err = 0.0f64;
    let (h, xs) = (hessian_output.to_vec::<f32>(), x.to_vec::<f32>());
    for i in 0..2 {
        for j in 0..2 {
            for a in 0..3 {
                for k in 0..2 {
                    for b in 0..3 {
                        let got = h[(((i * 2 + j) * 3 + a) * 2 + k) * 3 + b] as f64;
                        let diag = i == j && j == k && a == b;
                        let want = if diag {
                            -(xs[i * 3 + a] as f64).sin()
                        } else {
                            0.0
                        };
                        max_err = max_err.max((got - want).abs());
                    }
                }
            }
        }
    }
    println!("max |H - diag(-sin x)| = {max_err:.2e}");
    assert!(max_err < 1e-6);
}
