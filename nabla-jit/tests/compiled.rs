//! Compiled loops against the registry's kernels (bit for bit) and
//! compiled replays against eager runs of the same programs.

use nabla::dynamic::loops::{BinaryOp, Expr, LoopBody, LoopCompiler, Sink, UnaryOp};
use nabla::dynamic::{Dyn, grad, record, value_and_grad};
use nabla::{Array, ArrayValue, DType, Value};
use nabla_kernels::ops::OpKernels;
use ndarray::Slice;

const UNARY: &[UnaryOp] = &[
    UnaryOp::Neg(),
    UnaryOp::Abs(),
    UnaryOp::Sqrt(),
    UnaryOp::Rsqrt(),
    UnaryOp::Square(),
    UnaryOp::Recip(),
    UnaryOp::Relu(),
    UnaryOp::Floor(),
    UnaryOp::Ceil(),
    UnaryOp::Powi(0),
    UnaryOp::Powi(1),
    UnaryOp::Powi(2),
    UnaryOp::Powi(3),
    UnaryOp::Affine(0.3, -1.5),
    UnaryOp::Affine(1.0, 2.5),
    UnaryOp::Affine(-1.0, 2.5),
    UnaryOp::Affine(-1.0, -0.0),
    UnaryOp::Affine(7.0, -0.0),
    UnaryOp::Affine(7.0, 0.0),
    UnaryOp::RDiv(3.0),
];

const BINARY: &[BinaryOp] = &[
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
];

/// Awkward values: signed zeros, infinities, NaN, subnormals, halves.
fn specials() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-310,
        -1e-310,
        2.5,
        -2.5,
        0.5,
        -1.5,
        1e300,
        -7.0,
        3.0,
    ];
    v.extend((0..37).map(|i| ((i as f64) * 0.77).sin() * 4.0));
    v
}

fn same_bits<T: Copy + Into<f64>>(a: T, b: T) -> bool {
    let (a, b): (f64, f64) = (a.into(), b.into());
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `body` compiled and run on `inputs` over `lo..lo + n` (one output of
/// `n` elements, one sum), as `T`.
fn run_compiled<T: Copy + Default>(
    body: &LoopBody,
    inputs: &[&[T]],
    lo: usize,
    n: usize,
) -> (Vec<T>, f64) {
    let code = nabla_jit::Cranelift
        .compile(body)
        .unwrap_or_else(|| panic!("{body:?} compiles"));
    let mut out = vec![T::default(); n];
    let mut sums = [0.0, 0.0];
    let ins: Vec<*const u8> = inputs.iter().map(|s| s.as_ptr().cast()).collect();
    // SAFETY: the bodies below load inputs[k][i] for i in lo..lo + n, all
    // inside the slices, and store one output of n elements.
    unsafe {
        code.run(
            &ins,
            &[out.as_mut_ptr().cast(), std::ptr::null_mut()],
            lo,
            n,
            &mut sums,
        )
    };
    (out, sums[1])
}

fn kernel_body(dtype: DType, e: Expr) -> LoopBody {
    let mut exprs = vec![
        Expr::Load {
            input: 0,
            offset: 0,
        },
        Expr::Load {
            input: 1,
            offset: 0,
        },
    ];
    exprs.push(e);
    LoopBody {
        dtype,
        inputs: 2,
        exprs,
        sinks: vec![(2, Sink::Store(0)), (2, Sink::Sum(1))],
    }
}

fn check_kernels<T>(dtype: DType, cast: impl Fn(f64) -> T)
where
    T: OpKernels + Copy + Default + Into<f64> + std::fmt::Debug,
{
    let a: Vec<T> = specials().into_iter().map(&cast).collect();
    for (lo, n) in [(0, a.len()), (3, a.len() - 3), (1, 2), (5, 1), (2, 0)] {
        let xa = &a[lo..lo + n];
        for &op in UNARY {
            let (got, sum) =
                run_compiled(&kernel_body(dtype, Expr::Unary(op, 0)), &[&a, &a], lo, n);
            let want = T::unary_slice(xa, op);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(same_bits(*g, *w), "{op:?}({:?}) = {g:?}, want {w:?}", xa[k]);
            }
            let total: f64 = want.iter().map(|&v| v.into()).sum();
            assert!(
                same_bits(sum, total) || (sum - total).abs() <= 1e-12 * total.abs(),
                "{op:?} sum {sum} vs {total}"
            );
        }
    }
    // every pair of values, through every rotation of the second operand
    for r in 0..a.len() {
        let mut b = a.clone();
        b.rotate_left(r);
        for &op in BINARY {
            let (lo, n) = (r % 3, a.len() - r % 3);
            let (got, _) = run_compiled(
                &kernel_body(dtype, Expr::Binary(op, 0, 1)),
                &[&a, &b],
                lo,
                n,
            );
            let want = T::binary_slices(&a[lo..], &b[lo..], op);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    same_bits(*g, *w),
                    "{op:?}({:?}, {:?}) = {g:?}, want {w:?}",
                    a[lo + k],
                    b[lo + k]
                );
            }
        }
    }
}

#[test]
fn every_kernel_matches_the_registry_bit_for_bit() {
    check_kernels::<f64>(DType::F64, |v| v);
    check_kernels::<f32>(DType::F32, |v| v as f32);
}

#[test]
fn shifted_loads_splats_and_constants() {
    // out[i] = (x[i + 2] - x[i - 1]) * x[0] + 0.25, over the interior
    let x: Vec<f64> = (0..40).map(|i| (i as f64 * 0.3).cos()).collect();
    let body = LoopBody {
        dtype: DType::F64,
        inputs: 1,
        exprs: vec![
            Expr::Load {
                input: 0,
                offset: 2,
            },
            Expr::Load {
                input: 0,
                offset: -1,
            },
            Expr::Binary(BinaryOp::Sub, 0, 1),
            Expr::Splat { input: 0, index: 0 },
            Expr::Binary(BinaryOp::Mul, 2, 3),
            Expr::Const(0.25),
            Expr::Binary(BinaryOp::Add, 4, 5),
        ],
        sinks: vec![(6, Sink::Store(0))],
    };
    let (got, _) = run_compiled(&body, &[&x], 1, 37);
    for (j, g) in got.iter().enumerate() {
        assert_eq!(*g, body.eval_f64(&[&x], 1 + j)[0]);
    }
}

#[test]
fn other_kernels_are_declined() {
    let body = kernel_body(DType::F64, Expr::Unary(UnaryOp::Exp(), 0));
    assert!(nabla_jit::Cranelift.compile(&body).is_none());
    let body = kernel_body(DType::I64, Expr::Binary(BinaryOp::Add, 0, 1));
    assert!(nabla_jit::Cranelift.compile(&body).is_none());
}

fn arr(v: &[f64], shape: &[usize]) -> Dyn {
    Dyn::from(Array::from_vec(v.to_vec(), shape))
}

fn vals(d: &Dyn) -> Vec<f64> {
    d.to_array().to_vec::<f64>()
}

fn wave(n: usize, k: f64) -> Vec<f64> {
    (0..n).map(|i| ((i as f64) * k).sin() + 0.1).collect()
}

/// `f` recorded on `xs` and replayed on other values equals `f` run eagerly
/// to `tol` (relative; 0: equal, the sign of zero aside).
fn replays_like_eager(
    f: impl Fn(&[Dyn]) -> Vec<Dyn>,
    xs: &[Dyn],
    tol: f64,
) -> nabla::dynamic::Program {
    let (_, p) = record(&f, xs);
    let again: Vec<Dyn> = xs
        .iter()
        .map(|x| Dyn::from(x.to_array().mul_scalar(0.7)))
        .collect();
    for (g, w) in p.run(&again).iter().zip(f(&again)) {
        assert_eq!(g.shape_vec(), w.shape_vec(), "{p}");
        for (a, b) in vals(g).iter().zip(vals(&w)) {
            let same =
                a == &b || (a - b).abs() <= tol * (1.0 + b.abs()) || (a.is_nan() && b.is_nan());
            assert!(same, "{a} vs {b}\n{p}");
        }
    }
    p
}

#[test]
fn rosenbrock_compiles_to_one_loop_and_matches_eager() {
    nabla_jit::install();
    let n = 5 * 1024 + 3;
    let rosen = |x: &Dyn| {
        let a = x.slice(&[Slice::new(0, Some(-1), 1)]);
        let b = x.slice(&[Slice::new(1, None, 1)]);
        let t = b.sub(&a.mul(&a)).powi(2).mul_scalar(100.0);
        t.add(&a.neg().add_scalar(1.0).powi(2))
            .sum_axes(&[0], false)
    };
    let x = arr(&wave(n, 0.37), &[n]);
    let p = replays_like_eager(|x| vec![grad(rosen, &x[0])], std::slice::from_ref(&x), 0.0);
    assert_eq!((p.fused_runs(), p.compiled_runs()), (1, 1), "{p}");
    assert!(p.to_string().contains("# one compiled pass"), "{p}");
    let p = replays_like_eager(
        |x| {
            let (v, g) = value_and_grad(|x| rosen(&x[0]), &x[..1]);
            vec![v, g[0].clone()]
        },
        std::slice::from_ref(&x),
        1e-13,
    );
    assert_eq!(p.compiled_runs(), 1, "{p}");
    // f32: the same values as the f32 eager gradient
    let xf = Dyn::from(Array::from_vec(
        wave(n, 0.37).iter().map(|&v| v as f32).collect(),
        &[n],
    ));
    let (_, p) = record(|x| vec![grad(rosen, &x[0])], std::slice::from_ref(&xf));
    assert_eq!(p.compiled_runs(), 1, "{p}");
    let got = p.run(std::slice::from_ref(&xf))[0]
        .to_array()
        .to_vec::<f32>();
    let want = grad(rosen, &xf).to_array().to_vec::<f32>();
    assert!(got.iter().zip(&want).all(|(a, b)| a == b), "{p}");
}

#[test]
fn plain_elementwise_runs_compile() {
    // A run of kernels each reading its operands at its own index: the
    // interpreter leaves it to the eager kernels (one pass over blocks was
    // slower than whole-array kernels), the generator makes it one loop.
    nabla_jit::install();
    let n = 4 * 1024 + 5;
    let f = |x: &[Dyn]| {
        let (a, b) = (&x[0], &x[1]);
        vec![a.mul(b).add(&a.mul(a)).sub(b).mul_scalar(0.5)]
    };
    let xs = [arr(&wave(n, 0.1), &[n]), arr(&wave(n, 0.3), &[n])];
    let p = replays_like_eager(f, &xs, 0.0);
    assert_eq!((p.fused_runs(), p.compiled_runs()), (1, 1), "{p}");
}

#[test]
fn runs_with_other_kernels_stay_with_the_interpreter() {
    nabla_jit::install();
    let n = 3000;
    let f = |x: &[Dyn]| {
        let a = x[0].slice(&[Slice::new(1, None, 1)]);
        let b = x[0].slice(&[Slice::new(0, Some(-1), 1)]);
        vec![a.sub(&b).exp().sum_axes(&[0], false)]
    };
    let p = replays_like_eager(f, &[arr(&wave(n, 0.01), &[n])], 1e-13);
    assert_eq!((p.fused_runs(), p.compiled_runs()), (1, 0), "{p}");
}

#[test]
fn random_arithmetic_chains_replay_like_eager() {
    // Chains of the generator's kernels, slices, placements, repeats and
    // sums in orders drawn by a fixed generator, f64 and f32, over sizes
    // with interior blocks (compiled) and edge blocks (interpreted).
    nabla_jit::install();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |k: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % k as u64) as usize
    };
    let mut compiled = 0;
    for case in 0..40 {
        let n = 1 + next(5 * 1024);
        let ops: Vec<(usize, usize)> = (0..8).map(|_| (next(10), 1 + next(5))).collect();
        let chain = move |x: &[Dyn]| {
            let mut y = x[0].clone();
            let mut outs = Vec::new();
            for &(op, k) in &ops {
                let len = y.shape_vec()[0];
                y = match op {
                    0 => y.mul(&y).add_scalar(k as f64).sqrt(),
                    1 => y.mul(&y.abs()).sub(&y),
                    2 => y.relu().add(&y.mul_scalar(0.5)),
                    3 if len > k => y.slice(&[Slice::new(k as isize, None, 1)]),
                    4 => y.slice_place(
                        &[len + k],
                        &[Slice::new(k as isize, Some((len + k) as isize), 1)],
                    ),
                    5 => {
                        let mean = y.sum_axes(&[0], true).mul_scalar(1.0 / len as f64);
                        y.sub(&mean.broadcast_to(&[len]))
                    }
                    6 => {
                        outs.push(y.sum_axes(&[0], false));
                        y.neg().mul_scalar(0.5)
                    }
                    7 => y
                        .maximum(&y.mul_scalar(-0.3))
                        .div(&y.square().add_scalar(1.0)),
                    8 => y.powi(3).mul_scalar(0.1).sub(&y),
                    _ => y.minimum(&y.recip()),
                };
            }
            outs.push(y);
            outs
        };
        let xs = wave(n, 0.05 + case as f64 * 0.01);
        let p = replays_like_eager(&chain, &[arr(&xs, &[n])], 1e-9);
        compiled += p.compiled_runs();
        let xf = Dyn::from(Array::from_vec(
            xs.iter().map(|&v| v as f32).collect(),
            &[n],
        ));
        let (_, p) = record(&chain, std::slice::from_ref(&xf));
        // against f32 eager runs (whose sums round more than the pass's,
        // which adds in f64)
        let eager = chain(std::slice::from_ref(&xf));
        for (g, w) in p.run(std::slice::from_ref(&xf)).iter().zip(eager) {
            let w = w.to_array().to_vec::<f32>();
            for (&a, &b) in g.to_array().to_vec::<f32>().iter().zip(&w) {
                let same = (a - b).abs() <= 1e-3 * (1.0 + b.abs()) || (a.is_nan() && b.is_nan());
                assert!(same, "case {case}: {a} vs {b}\n{p}");
            }
        }
    }
    assert!(compiled >= 20, "only {compiled} of the runs compiled");
}
