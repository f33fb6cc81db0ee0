//! The convolution and pooling layers, the classifiers and
//! `cross_entropy` with class indices: gradients on the tape against
//! central finite differences in f64, and the layers against the
//! functions they are documented to equal.

use crate::common::*;
use nabla::nn::models::{Cnn, CnnConfig, MlpClassifier, accuracy};
use nabla::nn::{AvgPool2d, Conv1d, Conv2d, MaxPool2d};
use nabla::optim::Optimizer;
use nabla::prelude::*;
use nabla::tree::Tree;

/// `f` of `xs` on the tape: the gradient of `Σ f(xs)·ct` w.r.t. every input
/// against central differences (f64, step 1e-6, 1e-7 relative). Hand-rolled:
/// the gradient under test is the tape's, of a run-time closure over layers,
/// which `check_grads` (a checker of composable functions) does not take.
fn check_fd(what: &str, f: &dyn Fn(&[Array]) -> Array, xs: &[Array], key: Key) {
    let leaves: Vec<Array> = xs.iter().map(|x| x.clone().requires_grad()).collect();
    let y = f(&leaves);
    let ct = key.normal(y.shape(), DType::F64);
    (&y * &ct).sum().backward();
    for (i, l) in leaves.iter().enumerate() {
        let want = fd_grad(f, xs, &ct, i, 1e-6);
        assert_close(&l.grad(), &want, 1e-7, &format!("{what}: input {i}"));
    }
}

fn f64_leaves<T: Tree>(t: &T) -> Vec<Array> {
    nabla::tree::leaves(t)
        .iter()
        .map(|a| a.cast(DType::F64))
        .collect()
}

#[test]
fn conv_layers_match_finite_differences() {
    let k = Key::new(7).split(6);
    // Conv2d with stride, padding, dilation and groups; the input too.
    let conv = Conv2d::grouped(4, 6, [3, 2], 2, true, k[0])
        .stride(2)
        .padding(1)
        .dilation(1);
    let x = k[1].normal(&[2, 4, 6, 5], DType::F64);
    let mut ps = f64_leaves(&conv);
    ps.push(x);
    let run = |xs: &[Array]| {
        let mut c = conv.clone();
        c.weight = xs[0].clone();
        c.bias = Some(xs[1].clone());
        c.forward(&xs[2])
    };
    check_fd("Conv2d", &run, &ps, k[2]);
    // Conv1d without bias, dilation 2.
    let conv1 = Conv1d::grouped(3, 2, [3], 1, false, k[3])
        .dilation(2)
        .padding(2);
    let x1 = k[4].normal(&[2, 3, 7], DType::F64);
    let run1 = |xs: &[Array]| {
        let mut c = conv1.clone();
        c.weight = xs[0].clone();
        c.forward(&xs[1])
    };
    check_fd("Conv1d", &run1, &[conv1.weight.cast(DType::F64), x1], k[5]);
}

#[test]
fn pooling_layers_match_finite_differences() {
    let k = Key::new(11).split(4);
    let x = k[0].normal(&[2, 3, 6, 6], DType::F64);
    let max = MaxPool2d {
        kernel: [3, 3],
        stride: [2, 2],
        padding: [1, 1],
    };
    check_fd(
        "MaxPool2d",
        &|xs| max.forward(&xs[0]),
        std::slice::from_ref(&x),
        k[1],
    );
    let avg = AvgPool2d {
        kernel: [2, 3],
        stride: [1, 2],
        padding: [1, 1],
    };
    check_fd(
        "AvgPool2d",
        &|xs| avg.forward(&xs[0]),
        std::slice::from_ref(&x),
        k[2],
    );
    // Padding reads −∞ for max and zero (counted) for the average.
    let ones = Array::ones(&[1, 1, 2, 2], DType::F64);
    let pad = [1, 1];
    let m = MaxPool2d {
        kernel: [2, 2],
        stride: [2, 2],
        padding: pad,
    };
    assert_eq!(m.forward(&(-&ones)).to_vec::<f64>(), vec![-1.0; 4]);
    let a = AvgPool2d {
        kernel: [2, 2],
        stride: [2, 2],
        padding: pad,
    };
    assert_eq!(a.forward(&ones).to_vec::<f64>(), vec![0.25; 4]);
}

#[test]
fn classifiers_match_finite_differences_and_learn() {
    let k = Key::new(3).split(6);
    let cfg = CnnConfig {
        channels: 2,
        height: 4,
        width: 4,
        features: [3, 2],
        classes: 3,
    };
    let cnn = Cnn::new(&cfg, k[0]);
    let x = k[1].normal(&[2, 2, 4, 4], DType::F64);
    let labels = Array::from_vec(vec![2i64, 0], &[2]);
    let ps = f64_leaves(&cnn);
    let run = |xs: &[Array]| {
        let mut it = xs.iter().cloned();
        cnn.rebuild(&mut it).loss(&x, &labels)
    };
    check_fd("Cnn loss", &run, &ps, k[2]);

    // An MLP fits four points of two classes; accuracy reaches 1.
    let mut mlp = MlpClassifier::new(&[2, 8, 2], k[3]);
    mlp.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
    let x = Array::from_vec(vec![0.0f32, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0], &[4, 2]);
    let y = Array::from_vec(vec![0i64, 0, 1, 1], &[4]);
    let opt = nabla::optim::Adam::new(0.05);
    let mut state = opt.init(&mlp);
    for _ in 0..200 {
        mlp.loss(&x, &y).backward();
        opt.step(&mut mlp, &mut state);
        mlp.for_each_leaf(&mut |p| p.zero_grad());
    }
    assert_eq!(accuracy(&mlp.forward(&x), &y), 1.0);
}

#[test]
fn cross_entropy_takes_class_indices() {
    let k = Key::new(5);
    let logits = k.normal(&[4, 3, 5], DType::F64);
    let labels = Array::from_vec(vec![0i64, 4, 2, 1, 3, 3, 0, 1, 2, 4, 4, 0], &[4, 3]);
    let onehot = nabla::nn::one_hot(&labels, 5, DType::F64);
    let by_index = nabla::cross_entropy(&logits, &labels);
    let by_prob = nabla::cross_entropy(&logits, &onehot);
    assert!((by_index.item() - by_prob.item()).abs() < 1e-14);
    // By hand: −mean log softmax at the labels.
    let lp = logits.log_softmax(-1).to_vec::<f64>();
    let want = -(0..12)
        .map(|r| lp[r * 5 + labels.to_vec::<i64>()[r] as usize])
        .sum::<f64>()
        / 12.0;
    assert!((by_index.item() - want).abs() < 1e-14);
    check_fd(
        "cross_entropy(indices)",
        &|xs| nabla::cross_entropy(&xs[0], &labels),
        &[logits],
        k,
    );
    let bad = std::panic::catch_unwind(|| {
        nabla::cross_entropy(
            &Array::zeros(&[2, 3], DType::F64),
            &Array::zeros(&[3], DType::I64),
        )
    });
    let msg = *bad.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("class indices of shape [3] do not match logits of shape [2, 3]"),
        "{msg}"
    );
}
