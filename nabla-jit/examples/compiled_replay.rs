//! Rosenbrock's gradient recorded once and replayed, by the block
//! interpreter and as a compiled loop, timed in the same run.
//!
//! ```sh
//! cargo run --release -p nabla-jit --example compiled_replay [N]
//! ```

use nabla::dynamic::{Dyn, Program, grad, record};
use nabla::{Array, ArrayValue, Value};
use ndarray::Slice;
use std::time::Instant;

fn rosenbrock(x: &Dyn) -> Dyn {
    let a = x.slice(&[Slice::new(0, Some(-1), 1)]);
    let b = x.slice(&[Slice::new(1, None, 1)]);
    let t = b.sub(&a.mul(&a)).powi(2).mul_scalar(100.0);
    t.add(&a.neg().add_scalar(1.0).powi(2))
        .sum_axes(&[0], false)
}

/// Median and best of `reps` replays, in microseconds.
fn time(p: &Program, x: &Dyn, reps: usize) -> (f64, f64) {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            drop(p.run(std::slice::from_ref(x)));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[reps / 2], t[0])
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let x = Dyn::from(Array::from_vec(
        (0..n).map(|i| (i as f64 * 0.37).sin()).collect(),
        &[n],
    ));
    let args = std::slice::from_ref(&x);
    // Recorded before the generator is installed: the block interpreter.
    let (_, interpreted) = record(|x| vec![grad(rosenbrock, &x[0])], args);
    nabla_jit::install();
    let (_, compiled) = record(|x| vec![grad(rosenbrock, &x[0])], args);
    println!("{compiled}");
    let (a, b) = (interpreted.run(args), compiled.run(args));
    let (a, b) = (
        a[0].to_array().to_vec::<f64>(),
        b[0].to_array().to_vec::<f64>(),
    );
    let eager = grad(rosenbrock, &x).to_array().to_vec::<f64>();
    assert_eq!(b, eager, "the compiled replay equals the eager gradient");
    assert_eq!(a, eager, "so does the interpreted one");
    println!(
        "gradient[..4] = {:?} (equal to the eager gradient)",
        &b[..4.min(n)]
    );
    let reps = (2e8 as usize / n.max(1)).clamp(5, 300);
    for _ in 0..3 {
        let (im, ib) = time(&interpreted, &x, reps);
        let (cm, cb) = time(&compiled, &x, reps);
        println!(
            "n = {n}: interpreted {im:.0} us (best {ib:.0}), compiled {cm:.0} us (best {cb:.0}): {:.2}x",
            im / cm
        );
    }
}
