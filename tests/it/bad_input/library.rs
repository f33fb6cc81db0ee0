//! The rest of the library with bad input: composites, `linalg`, `nn`
//! layers and constructors (a hand-written list, with drawn arguments),
//! and shapes too large for memory or for `usize`.

use super::Cases;
use super::draw::{Drawn, Gen};
use nabla::nn::{Dropout, Embedding, LayerNorm, Linear, MultiHeadAttention, RmsNorm};
use nabla::random::Key;
use nabla::{Array, DType};

type Call = Box<dyn FnOnce() -> Array + Send>;

/// The composites and `linalg` functions: `(names a rejection may use,
/// the call)` with arguments from `g`.
fn composites(g: &mut Gen) -> Vec<(&'static [&'static str], String, Call)> {
    let Drawn { array: x, desc } = g.array();
    let Drawn {
        array: o,
        desc: odesc,
    } = g.array();
    let nd = x.ndim();
    let (ax, axes, keep, c) = (g.axis(nd), g.axes(nd), g.chance(0.5), g.param());
    let len = x.shape().last().copied().unwrap_or(1);
    let iv: Vec<i64> = g.indices(len).iter().map(|&i| i as i64).collect();
    let n = iv.len();
    let idx = Array::from_vec(iv, &[n]);
    let idx = if idx.numel() == 0 {
        o.cast(DType::I64)
    } else {
        idx
    };
    let pads: Vec<(usize, usize)> = (0..g.below(nd + 2))
        .map(|_| (g.below(3), g.below(3)))
        .collect();
    let k = g.axis(nd);
    let d = format!(
        "x: {desc}, o: {odesc}, axis {ax}, axes {axes:?}, keepdim {keep}, c {c}, pads {pads:?}"
    );
    let (x1, x2, x3, x4, x5, x6, x7, x8) = (
        x.clone(),
        x.clone(),
        x.clone(),
        x.clone(),
        x.clone(),
        x.clone(),
        x.clone(),
        x.clone(),
    );
    let (o1, o2, o3, o4, o5, o6) = (
        o.clone(),
        o.clone(),
        o.clone(),
        o.clone(),
        o.clone(),
        o.clone(),
    );
    let (a1, a2, a3) = (axes.clone(), axes.clone(), axes.clone());
    let i1 = idx.clone();
    type Entry = (&'static [&'static str], Call);
    let entries: Vec<Entry> = vec![
        (
            &["softmax", "max"],
            Box::new(move || nabla::softmax(&x1, ax)),
        ),
        (
            &["log_softmax", "max"],
            Box::new(move || nabla::log_softmax(&x2, ax)),
        ),
        (
            &["logsumexp", "max"],
            Box::new(move || nabla::logsumexp_axes(&x3, &a1, keep)),
        ),
        (
            &["var", "reduce", "mean"],
            Box::new(move || nabla::var_axes(&x4, &a2, keep, 1)),
        ),
        (
            &["mse_loss", "sub"],
            Box::new(move || nabla::mse_loss(&x5, &o1)),
        ),
        (
            &["cross_entropy", "log_softmax", "max"],
            Box::new(move || nabla::cross_entropy(&x6, &i1)),
        ),
        (
            &["take_along_axis"],
            Box::new(move || nabla::take_along_axis(&x7, &idx, ax)),
        ),
        (&["embedding"], Box::new(move || nabla::embedding(&x8, &o2))),
        (
            &["pad", "affine"],
            Box::new({
                let x = x.clone();
                move || nabla::pad(&x, &pads, c)
            }),
        ),
        (
            &["tril", "where"],
            Box::new({
                let x = x.clone();
                move || nabla::tril(&x, k)
            }),
        ),
        (
            &["cumprod", "mul", "cumsum"],
            Box::new({
                let x = x.clone();
                move || nabla::cumprod(&x, ax)
            }),
        ),
        (
            &["sort", "cumsum"],
            Box::new({
                let x = x.clone();
                move || nabla::sort(&x, ax)
            }),
        ),
        (
            &["norm", "sum", "max", "min", "abs", "square"],
            Box::new({
                let x = x.clone();
                move || nabla::norm(&x, c, &a3, keep)
            }),
        ),
        (
            &["einsum", "matmul"],
            Box::new({
                let x = x.clone();
                move || nabla::einsum("ij,jk->ik", &x, &o3)
            }),
        ),
        (
            &["where"],
            Box::new({
                let x = x.clone();
                move || nabla::where_(&o4, &x, &x)
            }),
        ),
        (
            &["concat"],
            Box::new({
                let x = x.clone();
                move || nabla::concat(&[&x, &o5], ax)
            }),
        ),
        (
            &["swapaxes"],
            Box::new({
                let x = x.clone();
                move || x.swapaxes(ax, k)
            }),
        ),
        (
            &["sum_to_shape", "reshape", "sum"],
            Box::new({
                let x = x.clone();
                move || x.sum_to_shape(o6.shape())
            }),
        ),
        (
            &["argmax"],
            Box::new({
                let x = x.clone();
                move || x.argmax(ax)
            }),
        ),
        (
            &["solve"],
            Box::new({
                let (x, o) = (x.clone(), o.clone());
                move || nabla::linalg::solve(&x, &o)
            }),
        ),
        (
            &["inv"],
            Box::new({
                let x = x.clone();
                move || nabla::linalg::inv(&x)
            }),
        ),
        (
            &["det"],
            Box::new({
                let x = x.clone();
                move || nabla::linalg::det(&x)
            }),
        ),
        (
            &["cholesky"],
            Box::new({
                let x = x.clone();
                move || nabla::linalg::cholesky(&x)
            }),
        ),
        (
            &["eigh", "eigvalsh"],
            Box::new({
                let x = x.clone();
                move || nabla::linalg::eigvalsh(&x)
            }),
        ),
        (
            &["qr"],
            Box::new({
                let x = x.clone();
                move || nabla::linalg::qr(&x).1
            }),
        ),
        (
            &["triangular_solve"],
            Box::new({
                let (x, o) = (x.clone(), o.clone());
                move || nabla::linalg::triangular_solve(&x, &o, true)
            }),
        ),
        (
            &["diagonal", "trace", "sum"],
            Box::new({
                let x = x.clone();
                move || nabla::linalg::trace(&x)
            }),
        ),
    ];
    entries
        .into_iter()
        .map(|(names, f)| (names, d.clone(), f))
        .collect()
}

/// Every composite and `linalg` function: a result or a proper rejection.
/// A composite is `#[differentiable]` code over primitives, so a
/// rejection may name the primitive inside it that checks the input.
#[test]
fn composites_and_linalg() {
    let mut cases = Cases::new("composites_and_linalg");
    for draw in 0..48 {
        let mut g = Gen::new(4000 + draw);
        for (names, d, f) in composites(&mut g) {
            let what = format!("{}({d}) draw {draw}", names[0]);
            cases.expect_ok_or_rejected(names, &what, f);
        }
    }
    cases.finish();
}

/// `nn` layers on drawn input (a rejection names the layer or the
/// primitive inside it that checks the input).
#[test]
fn nn_layers() {
    let mut cases = Cases::new("nn_layers");
    for draw in 0..48u64 {
        let mut g = Gen::new(5000 + draw);
        let Drawn { array: x, desc } = g.array();
        let key = Key::new(draw);
        let layers: Vec<(&[&str], Call)> = vec![
            (&["matmul", "add", "Linear"], {
                let (x, l) = (x.clone(), Linear::new(3, 2, true, key));
                Box::new(move || l.forward(&x))
            }),
            (&["embedding"], {
                let (x, l) = (x.clone(), Embedding::new(4, 2, key));
                Box::new(move || l.forward(&x))
            }),
            (&["layer_norm", "mul", "sub"], {
                let (x, l) = (x.clone(), LayerNorm::new(3));
                Box::new(move || l.forward(&x))
            }),
            (&["rms_norm", "square", "mul"], {
                let (x, l) = (x.clone(), RmsNorm::new(2));
                Box::new(move || l.forward(&x))
            }),
            (&["MultiHeadAttention", "matmul"], {
                let (x, l) = (x.clone(), MultiHeadAttention::new(4, 2, true, key));
                Box::new(move || l.forward(&x))
            }),
            (&["dropout", "Dropout", "mul"], {
                let x = x.clone();
                Box::new(move || Dropout::new(0.5).forward(&x, Some(key)))
            }),
        ];
        for (names, f) in layers {
            let what = format!("{}(x: {desc}) draw {draw}", names[0]);
            cases.expect_ok_or_rejected(names, &what, f);
        }
    }
    cases.finish();
}

/// Shapes whose element count overflows `usize`, or whose bytes no
/// allocation can hold: a panic naming the op, never an abort.
#[test]
fn shapes_too_large_for_memory() {
    let over = [usize::MAX / 2, 4];
    let bytes_over = [1 << 31, 1 << 31];
    let no_memory = [1 << 28, 1 << 28];
    let mut cases = Cases::new("shapes_too_large_for_memory");
    for shape in [
        &over[..],
        &bytes_over,
        &no_memory,
        &[1 << 40, 1 << 40, 0, 1 << 40][..],
    ] {
        let s = shape.to_vec();
        let calls: Vec<(&[&str], Call)> = vec![
            (
                &["zeros"],
                Box::new({
                    let s = s.clone();
                    move || Array::zeros(&s, DType::F32)
                }),
            ),
            (
                &["ones"],
                Box::new({
                    let s = s.clone();
                    move || Array::ones(&s, DType::F64)
                }),
            ),
            (
                &["full"],
                Box::new({
                    let s = s.clone();
                    move || Array::full(&s, 1.0, DType::I64)
                }),
            ),
            (
                &["normal"],
                Box::new({
                    let s = s.clone();
                    move || nabla::randn(&s, DType::F32)
                }),
            ),
            (
                &["uniform"],
                Box::new({
                    let s = s.clone();
                    move || Key::new(0).uniform(&s, DType::F64)
                }),
            ),
            (
                &["reshape"],
                Box::new({
                    let s = s.clone();
                    move || Array::zeros(&[2, 3], DType::F32).reshape(&s)
                }),
            ),
            (
                &["from_vec"],
                Box::new({
                    let s = s.clone();
                    move || Array::from_vec(Vec::<f32>::new(), &s)
                }),
            ),
        ];
        for (names, f) in calls {
            let what = format!("{}({s:?})", names[0]);
            cases.expect_rejected(names, &what, f);
        }
        // broadcast_to materialises its result: too many elements (or
        // bytes) is a rejection. (Shapes that fit `isize` but not memory
        // are left out: the kernels' output buffers abort on a failed
        // allocation, as `Vec` does.)
        let ones = vec![1; s.len()];
        let what = format!("broadcast_to({s:?})");
        if s != no_memory {
            cases.expect_rejected(&["broadcast_to"], &what, move || {
                Array::zeros(&ones, DType::F32).broadcast_to(&s)
            });
        }
    }
    for (name, f) in [
        (
            "arange",
            Box::new(|| Array::arange(usize::MAX, DType::F64)) as Call,
        ),
        ("eye", Box::new(|| Array::eye(1 << 33, DType::F32))),
        (
            "linspace",
            Box::new(|| Array::linspace(0.0, 1.0, usize::MAX / 4, DType::F64)),
        ),
    ] {
        cases.expect_rejected(&[name], name, f);
    }
    cases.finish();
}
