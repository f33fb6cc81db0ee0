//! Initialisers with `torch.nn.init`'s formulas, each drawing from an
//! explicit [`Key`]: fans from the shape (`[out, in, k..]`: `fan_in = in ·
//! k..`, `fan_out = out · k..`), Xavier/Glorot and Kaiming/He in uniform
//! and normal forms.
//!
//! ```
//! use nabla::nn::init;
//! use nabla::prelude::*;
//! let w = init::kaiming_uniform(&[128, 64], 0.0, init::Fan::In, DType::F32, Key::new(0));
//! let bound = 6f64.sqrt() / 8.0; // √3 · √2 / √64
//! assert!(w.to_vec::<f32>().iter().all(|v| (v.abs() as f64) <= bound));
//! ```

use crate::{Array, DType, random::Key};

/// Which fan a Kaiming initialiser keeps the variance of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fan {
    /// The forward pass's (PyTorch's default).
    In,
    /// The backward pass's.
    Out,
}

/// `(fan_in, fan_out)` of a weight of `shape` (`[out, in, k..]`), as
/// PyTorch computes them.
///
/// ```
/// use nabla::nn::init::fans;
/// assert_eq!(fans(&[16, 8, 3, 3]), (72, 144));
/// assert_eq!(fans(&[512, 256]), (256, 512));
/// ```
#[track_caller]
pub fn fans(shape: &[usize]) -> (usize, usize) {
    if shape.len() < 2 {
        panic!(
            "nn::init: fans need a weight of at least 2 axes ([out, in, ..]), got shape {shape:?}"
        );
    }
    let receptive: usize = shape[2..].iter().product();
    (shape[1] * receptive, shape[0] * receptive)
}

/// PyTorch's gain for a leaky ReLU of negative slope `a` (`a = 0`: ReLU,
/// `√2`).
///
/// ```
/// assert!((nabla::nn::init::relu_gain(0.2) - 1.3867504905630728).abs() < 1e-15);
/// ```
pub fn relu_gain(a: f64) -> f64 {
    (2.0 / (1.0 + a * a)).sqrt()
}

/// Uniform in `[low, high)`.
///
/// ```
/// use nabla::{nn::init, DType, random::Key};
/// let w = init::uniform(&[100], -0.5, 0.5, DType::F64, Key::new(1));
/// assert!(w.to_vec::<f64>().iter().all(|v| (-0.5..0.5).contains(v)));
/// ```
pub fn uniform(shape: &[usize], low: f64, high: f64, dtype: DType, key: Key) -> Array {
    key.uniform(shape, dtype) * (high - low) + low
}

/// Normal with mean `mean` and standard deviation `std`.
///
/// ```
/// use nabla::{nn::init, DType, random::Key};
/// assert_eq!(init::normal(&[3, 2], 0.0, 0.02, DType::F32, Key::new(1)).shape(), &[3, 2]);
/// ```
pub fn normal(shape: &[usize], mean: f64, std: f64, dtype: DType, key: Key) -> Array {
    key.normal(shape, dtype) * std + mean
}

/// Xavier/Glorot uniform: bound `gain · √(6 / (fan_in + fan_out))`.
///
/// ```
/// use nabla::{nn::init, DType, random::Key};
/// let w = init::xavier_uniform(&[4, 2], 1.0, DType::F32, Key::new(0));
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 1.0)); // √(6/6)
/// ```
#[track_caller]
pub fn xavier_uniform(shape: &[usize], gain: f64, dtype: DType, key: Key) -> Array {
    let bound = 3f64.sqrt() * xavier_std(shape, gain);
    uniform(shape, -bound, bound, dtype, key)
}

/// Xavier/Glorot normal: standard deviation `gain · √(2 / (fan_in +
/// fan_out))`.
///
/// ```
/// use nabla::{nn::init, DType, random::Key};
/// assert_eq!(init::xavier_normal(&[4, 2], 1.0, DType::F32, Key::new(0)).shape(), &[4, 2]);
/// ```
#[track_caller]
pub fn xavier_normal(shape: &[usize], gain: f64, dtype: DType, key: Key) -> Array {
    normal(shape, 0.0, xavier_std(shape, gain), dtype, key)
}

/// Kaiming/He uniform for a leaky ReLU of slope `a` (0: ReLU): bound
/// `√3 · relu_gain(a) / √fan`.
///
/// ```
/// use nabla::{nn::init, DType, random::Key};
/// let w = init::kaiming_uniform(&[3, 6], 0.0, init::Fan::In, DType::F32, Key::new(0));
/// assert!(w.to_vec::<f32>().iter().all(|v| v.abs() <= 1.0)); // √3·√2/√6
/// ```
#[track_caller]
pub fn kaiming_uniform(shape: &[usize], a: f64, fan: Fan, dtype: DType, key: Key) -> Array {
    let bound = 3f64.sqrt() * kaiming_std(shape, a, fan);
    uniform(shape, -bound, bound, dtype, key)
}

/// Kaiming/He normal for a leaky ReLU of slope `a` (0: ReLU): standard
/// deviation `relu_gain(a) / √fan`.
///
/// ```
/// use nabla::{nn::init, DType, random::Key};
/// assert_eq!(init::kaiming_normal(&[3, 6], 0.0, init::Fan::Out, DType::F64, Key::new(0)).dtype(), DType::F64);
/// ```
#[track_caller]
pub fn kaiming_normal(shape: &[usize], a: f64, fan: Fan, dtype: DType, key: Key) -> Array {
    normal(shape, 0.0, kaiming_std(shape, a, fan), dtype, key)
}

#[track_caller]
fn xavier_std(shape: &[usize], gain: f64) -> f64 {
    let (fi, fo) = fans(shape);
    gain * (2.0 / (fi + fo) as f64).sqrt()
}

#[track_caller]
fn kaiming_std(shape: &[usize], a: f64, fan: Fan) -> f64 {
    let (fi, fo) = fans(shape);
    let n = match fan {
        Fan::In => fi,
        Fan::Out => fo,
    };
    relu_gain(a) / (n as f64).sqrt()
}
