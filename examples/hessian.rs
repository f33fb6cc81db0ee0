//! The seed example: `jacfwd(jacrev(vmap(foo)))`, composed through
//! variables, resolved at compile time.
//!
//! Run: `cargo run --release --example hessian`

use nabla::prelude::*;

#[differentiable]
fn foo(x: &Array) -> Array {
    nabla::sum(&nabla::sin(x))
}

fn main() {
    nabla::manual_seed(0);
    let foo_vmapped = nabla::vmap(foo);
    let foo_jacobian = nabla::jacrev(foo_vmapped);
    let foo_hessian = nabla::jacfwd(foo_jacobian);
    let x = nabla::randn(&[2, 3], DType::F32);
    let hessian_output = foo_hessian(&x);
    println!("x:\n{x}\n");
    println!("vmap(foo)(x) = {}", foo_vmapped(&x));
    println!(
        "jacrev(vmap(foo))(x) has shape {:?} (= cos x per row)",
        foo_jacobian(&x).shape()
    );
    println!("Hessian shape: {:?}", hessian_output.shape()); // [2, 2, 3, 2, 3]
    println!("Hessian: {hessian_output}");

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
