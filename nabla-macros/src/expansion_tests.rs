//! Golden expansions: the generated code for a set of representative
//! functions, compared token for token with `tests-data/expansions/*.txt`.
//! Any change to what the macros emit shows up here; after an intended
//! change, `NABLA_BLESS_EXPANSIONS=1 cargo test -p nabla-macros` rewrites
//! the files (review the diff).

use proc_macro2::TokenStream;
use quote::quote;
use std::path::PathBuf;

/// Which macro a case runs.
enum Macro {
    Differentiable,
    CustomOp,
}

struct Case {
    name: &'static str,
    mac: Macro,
    attr: TokenStream,
    item: TokenStream,
}

fn diff(name: &'static str, attr: TokenStream, item: TokenStream) -> Case {
    Case {
        name,
        mac: Macro::Differentiable,
        attr,
        item,
    }
}

fn custom(name: &'static str, attr: TokenStream, item: TokenStream) -> Case {
    Case {
        name,
        mac: Macro::CustomOp,
        attr,
        item,
    }
}

fn cases() -> Vec<Case> {
    vec![
        diff(
            "straight_line",
            quote!(),
            quote! {
                /// A loss.
                pub fn loss(w: &Array, b: &Array, x: &Array, y: &Array) -> Array {
                    let h = x.matmul(w) + b;
                    let d = h.tanh() - y;
                    nabla::mean(&(&d * &d))
                }
            },
        ),
        diff(
            "scalar_f64",
            quote!(),
            quote! {
                fn f(x: f64, y: f64) -> f64 {
                    let z = x * x * y;
                    z + y.sin()
                }
            },
        ),
        diff(
            "scalar_f32_static",
            quote!(),
            quote! {
                pub(crate) fn g(x: &f32, n: usize) -> f32 {
                    let mut y = x * 1.0;
                    for _ in 0..n {
                        y = y.sin() * 2.0 - 1.0 / y;
                    }
                    y
                }
            },
        ),
        diff(
            "data_branch",
            quote!(),
            quote! {
                fn piecewise(x: &Array) -> Array {
                    let s = nabla::sum(x);
                    let y = if s.item() > 0.0 {
                        let t = x.sin() * 2.0;
                        t * x
                    } else if s.item() > -1.0 {
                        x.exp()
                    } else {
                        x.square() * 3.0
                    };
                    nabla::sum(&y)
                }
            },
        ),
        diff(
            "static_branch_and_call",
            quote!(),
            quote! {
                fn piecewise(x: &Array, w: &Array, mode: u8, scale: bool) -> Array {
                    let mut y = x.sin();
                    if scale {
                        y = &y * 2.0;
                    }
                    let z = if mode == 0 {
                        let e = (&y * w).exp();
                        e + 1.0
                    } else if mode == 1 {
                        &y * &y
                    } else {
                        let t = inner(&y, 0.5);
                        &t * w
                    };
                    nabla::sum(&z)
                }
            },
        ),
        diff(
            "nondiff_param",
            quote!(),
            quote! {
                fn inner(x: &Array, #[nondiff] k: f64) -> Array {
                    (x * k).tanh()
                }
            },
        ),
        diff(
            "match_arms",
            quote!(),
            quote! {
                fn activated(x: &Array, w: &Array, #[nondiff] act: Activation) -> Array {
                    let z = x.matmul(w);
                    let h = match act {
                        Activation::Tanh => z.tanh(),
                        Activation::Relu => z.relu(),
                        Activation::Scaled => z * 2.0,
                    };
                    let scale = match x.sum().item() > 0.0 {
                        true => 1.0,
                        false => 3.0,
                    };
                    nabla::sum(&h.square()) * scale
                }
            },
        ),
        diff(
            "match_bindings",
            quote!(),
            quote! {
                fn scaled(x: &Array, opt: Option<(usize, f64)>) -> Array {
                    let y = match opt {
                        Some((k, s)) if k > 1 => x * s + k as f64,
                        Some((_, s)) => x * s,
                        None => x.clone(),
                    };
                    let z = match opt {
                        Some((k, _)) => y.sin() * (k as f64),
                        _ => y.clone(),
                    };
                    z.sum()
                }
            },
        ),
        diff(
            "for_checkpoint_attribute",
            quote!(),
            quote! {
                fn snap2(x: &Array, w: &Array, n: usize) -> Array {
                    let mut h = x.clone();
                    let mut acc = nabla::sum(&x.zeros_like());
                    #[nabla::checkpoint(snapshots = 2)]
                    for i in 0..n {
                        let _ = crate::count_run();
                        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
                        acc += nabla::sum(&h.square());
                    }
                    acc + nabla::sum(&h)
                }
            },
        ),
        diff(
            "for_checkpoint_wildcard",
            quote!(),
            quote! {
                fn roll_snap(s: &Array) -> Array {
                    let mut h = s.clone();
                    #[checkpoint(snapshots = 3)]
                    for _ in 0..12 {
                        h = (&h * 0.9).sin() + h.square() * 0.1;
                    }
                    nabla::sum(&h.exp())
                }
            },
        ),
        diff(
            "for_plain_and_checkpointed_call",
            quote!(),
            quote! {
                fn remat(x: &Array, w: &Array, steps: &[usize]) -> Array {
                    let mut h = x.clone();
                    for i in 0..4 {
                        h = nabla::checkpoint(block)(&h, w);
                        if i == steps[0] {
                            h = &h * (i as f64);
                        }
                    }
                    for k in steps.iter() {
                        h = h.powi(*k as i32);
                    }
                    nabla::sum(&h.square())
                }
            },
        ),
        diff(
            "while_data_dependent",
            quote!(),
            quote! {
                fn halve_until_small(x: &Array) -> Array {
                    let mut y = x * 3.0;
                    let mut steps = 0;
                    while nabla::sum(&y).item() > 1.0 {
                        y = y.sin() * 0.5 + &y * 0.25;
                        steps += 1;
                    }
                    nabla::sum(&y.square()) * (1.0 + steps as f64)
                }
            },
        ),
        diff(
            "jumps_continue",
            quote!(),
            quote! {
                fn skip_negative(x: &Array) -> Array {
                    let mut acc = x.slice_axis(0, 0..1) * 0.0;
                    let mut run = x.slice_axis(0, 0..1);
                    for i in 1..6 {
                        run = (&run + x.slice_axis(0, i..i + 1)).sin();
                        if run.item() < 0.0 {
                            continue;
                        }
                        acc = &acc + run.square();
                    }
                    nabla::sum(&acc)
                }
            },
        ),
        diff(
            "jumps_break_scalar",
            quote!(),
            quote! {
                fn newton_sqrt(a: f64) -> f64 {
                    let mut x = a;
                    for _ in 0..100 {
                        if (x * x - a).abs() < 1e-12 {
                            break;
                        }
                        x = 0.5 * (x + a / x);
                    }
                    x
                }
            },
        ),
        diff(
            "jumps_nested",
            quote!(),
            quote! {
                fn nested(w: &Array) -> Array {
                    let mut h = w.clone();
                    for i in 0..4 {
                        if i == 1 {
                            continue;
                        }
                        for j in 0..10 {
                            if j >= i + 2 {
                                break;
                            }
                            h = (&h * 0.9 + w * 0.1).tanh();
                        }
                        if i == 3 {
                            h = h.square();
                        } else {
                            h = &h + w;
                            continue;
                        }
                        h = &h * 1.5;
                    }
                    nabla::sum(&h)
                }
            },
        ),
        diff(
            "jumps_while",
            quote!(),
            quote! {
                fn while_jumps(x: &Array) -> Array {
                    let mut y = x.clone();
                    let mut n = 0usize;
                    while n < 20 {
                        n += 1;
                        if n.is_multiple_of(3) {
                            continue;
                        }
                        y = (&y * 1.1).sin() + x * 0.05;
                        if nabla::sum(&y).item() > 2.5 {
                            break;
                        }
                    }
                    nabla::sum(&(&y * &y))
                }
            },
        ),
        diff(
            "early_return",
            quote!(),
            quote! {
                fn clipped(x: &Array, #[nondiff] limit: f64) -> Array {
                    let s = nabla::sum(x);
                    if s.item() > limit {
                        return s * 0.5;
                    }
                    let mut y = x.clone();
                    for _ in 0..3 {
                        y = y.sin();
                        if nabla::sum(&y).item() < 0.0 {
                            return nabla::sum(&y.exp());
                        }
                    }
                    nabla::sum(&y)
                }
            },
        ),
        diff(
            "early_return_scalar",
            quote!(),
            quote! {
                fn step(x: f64, y: f64) -> f64 {
                    if x > y {
                        return x * y;
                    }
                    x + y
                }
            },
        ),
        diff(
            "tree_struct",
            quote!(),
            quote! {
                fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
                    let h = (x.matmul(&p.hidden.w) + &p.hidden.b).tanh();
                    let o = h.matmul(&p.out.w) + &p.out.b;
                    nabla::mean(&(o - y).powi(2))
                }
            },
        ),
        diff(
            "tree_call",
            quote!(),
            quote! {
                fn calls_with_a_tree(p: &Mlp, x: &Array, y: &Array) -> Array {
                    let l = mlp_loss(p, x, y);
                    &l * 2.0 + nabla::sum(&p.extra[0].square())
                }
            },
        ),
        diff(
            "tree_vec_and_slice",
            quote!(),
            quote! {
                fn weighted(ws: &Vec<Array>, xs: &[Array], k: usize) -> Array {
                    let a = &ws[0] * &xs[k];
                    let b = &ws[1] * &xs[0];
                    nabla::sum(&(a + b).sin())
                }
            },
        ),
        diff(
            "for_over_tree_and_tuples",
            quote!(),
            quote! {
                fn layers(ws: &[Array], x: &Array, scales: &[f64]) -> Array {
                    let mut h = x.clone();
                    for w in ws.iter() {
                        h = h.matmul(w).tanh();
                    }
                    for (i, s) in scales.iter().enumerate() {
                        h = &h * *s + (i as f64);
                    }
                    nabla::sum(&h)
                }
            },
        ),
        diff(
            "list_function_seed",
            quote!(),
            quote! {
                fn foo(args: &[Array]) -> Vec<Array> {
                    vec![nabla::sum(&nabla::sin(&args[0]))]
                }
            },
        ),
        diff(
            "list_function_two",
            quote!(),
            quote! {
                pub fn two_by_two(args: &[Array]) -> Vec<Array> {
                    let a = &args[0];
                    let b = &args[1];
                    let s = nabla::sum(&b.square());
                    vec![nabla::sum(&(a.sin() * a)) * s, a.exp() * nabla::sum(b)]
                }
            },
        ),
        diff(
            "tuple_aux",
            quote!(),
            quote! {
                fn with_aux(x: &Array, w: &Array) -> (Array, Array) {
                    let h = x.matmul(w);
                    (nabla::sum(&h.square()), h)
                }
            },
        ),
        diff(
            "tuple_static_output",
            quote!(),
            quote! {
                fn with_count(x: &Array, n: usize) -> (Array, usize, Array) {
                    let (a, b) = (x.sin(), x.cos());
                    let (p, q) = pair(&a, &b);
                    (nabla::sum(&p), n + 1, q)
                }
            },
        ),
        diff(
            "tail_rosenbrock",
            quote!(),
            quote! {
                fn rosenbrock(x: &Array) -> Array {
                    let n = x.shape()[0];
                    let head = x.slice_axis(0, 0..n - 1);
                    let tail = x.slice_axis(0, 1..n);
                    let d = tail - head.square();
                    nabla::sum(&(d.square() * 100.0 + (1.0 - head).square()))
                }
            },
        ),
        diff(
            "ops_mix",
            quote!(),
            quote! {
                fn mix(a: &Array, b: &Array, #[nondiff] mask: &Array, axis: usize) -> Array {
                    let c = nabla::concat(&[a, b], axis);
                    let s = nabla::stack(&[a.clone(), b.clone()], 0);
                    let w = nabla::where_(mask, a, b);
                    let z = a.zeros_like() + b.stop_gradient() + nabla::stop_gradient(a);
                    let p = c.softmax(-1).sum() + s.clip(-1.0, 1.0).mean() + w.powf(2.0).sum();
                    let q = -(&z / 2.0) - 1.0 / &z + 3.0 - &z;
                    let mut r = q.reshape(&[a.numel()]);
                    r *= 2.0;
                    r -= &r.full_like(0.5);
                    r /= a.ndim() as f64;
                    let v = vec![1usize, 2];
                    let k = v.len() + [0usize; 2].len();
                    &p + nabla::sum(&r.index_select(0, &[k]))
                }
            },
        ),
        diff(
            "crate_option",
            quote!(crate = crate),
            quote! {
                /// Softplus.
                pub fn softplus(x: &Array) -> Array {
                    crate::maximum(x, &x.zeros_like()) + crate::log1p(&(-x.abs()).exp())
                }
            },
        ),
        diff(
            "error_unsupported_syntax",
            quote!(),
            quote! {
                fn bad(x: &Array, v: Vec<usize>) -> Array {
                    let y = loop { break x.clone(); };
                    println!("{}", 1);
                    let c = || x.sin();
                    x.frobnicate() + y[0]
                }
            },
        ),
        diff(
            "error_signature",
            quote!(),
            quote! {
                async fn bad<T>(x: f32, y: &Array) {
                    x
                }
            },
        ),
        diff(
            "error_option",
            quote!(krate = foo),
            quote! {
                fn f(x: &Array) -> Array { x.sin() }
            },
        ),
        diff(
            "error_not_a_function",
            quote!(),
            quote! {
                struct S;
            },
        ),
        diff(
            "error_loops",
            quote!(),
            quote! {
                fn f(x: &Array, n: usize) -> Array {
                    let mut y = x.clone();
                    #[nabla::checkpoint(snapshots = 2)]
                    while n > 0 {
                        y = y.sin();
                    }
                    #[nabla::checkpoint(snapshots = 0)]
                    for _ in 0..n {
                        y = y.cos();
                    }
                    'outer: for i in 0..n {
                        if i > 2 { break 'outer; }
                    }
                    y.sum()
                }
            },
        ),
        custom(
            "custom_op_unary",
            quote!(jvp = softplus_jvp, vjp = softplus_vjp),
            quote! {
                /// Softplus by hand.
                fn my_softplus(x: &Array) -> Array {
                    let v: Vec<f64> = x.to_vec::<f64>().iter().map(|&t| t.max(0.0)).collect();
                    Array::from_vec(v, x.shape()).cast(x.dtype())
                }
            },
        ),
        custom(
            "custom_op_statics",
            quote!(jvp = damped_jvp, vjp = damped_vjp, batch = elementwise),
            quote! {
                pub fn damped(x: &Array, v: Array, k: f64, c: f64) -> Array {
                    nabla::custom::cpu_kernel::<f64>(&[x, &v], x.shape(), |ins, out| {})
                }
            },
        ),
        custom(
            "custom_op_batch_rule",
            quote!(vjp = scaled_vjp, batch = scaled_batch),
            quote! {
                fn scaled_mul(a: &Array, b: &Array) -> Array {
                    a * b
                }
            },
        ),
        custom(
            "custom_op_error",
            quote!(),
            quote! {
                fn no_rules(a: &Array) -> Array {
                    a.clone()
                }
            },
        ),
    ]
}

fn expand(c: &Case) -> String {
    let out = match c.mac {
        Macro::Differentiable => crate::expand_differentiable(c.attr.clone(), c.item.clone()),
        Macro::CustomOp => crate::expand_custom_op(c.attr.clone(), c.item.clone()),
    };
    out.to_string()
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests-data/expansions")
}

/// Every case expands to its golden text.
#[test]
fn expansions_match_the_golden_files() {
    let bless = std::env::var_os("NABLA_BLESS_EXPANSIONS").is_some();
    let mut failed = Vec::new();
    for c in cases() {
        let got = expand(&c);
        let path = dir().join(format!("{}.txt", c.name));
        if bless {
            std::fs::create_dir_all(dir()).expect("create the golden directory");
            std::fs::write(&path, format!("{got}\n")).expect("write a golden file");
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (bless with NABLA_BLESS_EXPANSIONS=1)",
                path.display()
            )
        });
        let want = want.strip_suffix('\n').unwrap_or(&want);
        if got != want {
            let at = got
                .bytes()
                .zip(want.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            let from = at.saturating_sub(200);
            let show = |s: &str| {
                s.get(from..(at + 200).min(s.len()))
                    .unwrap_or("")
                    .to_string()
            };
            eprintln!(
                "{}: expansion differs at byte {at}\n  got:  ..{}..\n  want: ..{}..",
                c.name,
                show(&got),
                show(want)
            );
            failed.push(c.name);
        }
    }
    assert!(failed.is_empty(), "expansions differ: {failed:?}");
}
