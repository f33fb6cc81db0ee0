//! Row primitives: softmax and normalisation over the last axis, each one
//! kernel pass per row on the CPU (`nabla_kernels::rows`) and on a GPU
//! (one warp per row), where the composite definitions take several
//! passes (a maximum, an exponential, a sum, a division; a mean, a
//! variance, a scaling) and, backward, more.
//!
//! Each is a [`custom_op`](nabla_macros::custom_op) with a backward op of
//! its own: the Jacobians of softmax and of normalisation are symmetric,
//! so one kernel serves the VJP and the JVP. The backward ops' own
//! derivatives (second order: `hessian`, the JVP of a gradient) are those
//! of their `#[differentiable]` composite definitions below, so they need
//! no hand-derived rules. Every op batches by running on the stacked
//! batch (rows stay rows).
//!
//! `nabla::softmax` over the last axis, `nabla::layer_norm` with a 1-D
//! weight and attention's scaled, masked softmax ([`attention_softmax`])
//! call these; `NABLA_ROW_KERNELS=0` makes them run their
//! composite definitions instead (for A/B measurements).
//!
//! ```
//! use nabla::{Array, composite::rows::softmax_rows};
//! let x = Array::from_vec(vec![0.0f64, 0.0, 0.0, 2f64.ln()], &[2, 2]);
//! assert_eq!(softmax_rows(&x, 1.0, false).to_vec::<f64>(), vec![0.5, 0.5, 1.0 / 3.0, 2.0 / 3.0]);
//! ```

use crate::array::{on_gpu, on_gpus};
use crate::primitives::unary::not_float;
use crate::storage::{float_map, float_map2};
use crate::{Array, ArrayValue};
use nabla_kernels::rows as kernels;
use nabla_macros::{custom_op, differentiable};

/// Whether `softmax` and `layer_norm` use the row primitives (the
/// default; `NABLA_ROW_KERNELS=0` turns them off, read once).
///
/// ```
/// let _ = nabla::composite::rows::enabled();
/// ```
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("NABLA_ROW_KERNELS").map_or(true, |v| v != "0"))
}

/// `softmax(scale · x)` over the last axis, as one primitive; with
/// `causal`, each `[T, S]` block of the last two axes is masked as
/// attention's `torch.tril` mask does (row `t` keeps columns `j ≤ t`, the
/// others are 0).
///
/// ```
/// use nabla::{Array, composite::rows::softmax_rows};
/// let x = Array::from_vec(vec![1.0f32, 1.0], &[2]);
/// assert_eq!(softmax_rows(&x, 1.0, false).to_vec::<f32>(), vec![0.5, 0.5]);
/// let s = Array::from_vec(vec![3.0f64, 7.0, 2.0, 2.0], &[2, 2]);
/// assert_eq!(softmax_rows(&s, 0.5, true).to_vec::<f64>(), vec![1.0, 0.0, 0.5, 0.5]);
/// ```
#[custom_op(jvp = softmax_rows_jvp, vjp = softmax_rows_vjp, batch = rows_batch, shard = last(2), crate = crate)]
pub fn softmax_rows(x: &Array, scale: f64, causal: bool) -> Array {
    on_gpu!(&*x.data, |g| nabla_kernels::cuda::softmax_rows(
        g, scale, causal
    ));
    Array::from_data(float_map!(
        &*x.data,
        |a| kernels::scaled_softmax(a.view(), scale, causal),
        not_float("softmax", x)
    ))
}

fn softmax_rows_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, scale: f64, _causal: bool) -> V {
    dx.map_or_else(
        || y.zeros_like(),
        |t| softmax_rows_backward::forward(y, t, scale),
    )
}

fn softmax_rows_vjp<V: ArrayValue>(_x: &V, y: &V, ct: &V, scale: f64, _causal: bool) -> V {
    softmax_rows_backward::forward(y, ct, scale)
}

fn rows_batch<V: ArrayValue>(x: &V, _batched: [bool; 1], scale: f64, causal: bool) -> V {
    softmax_rows::forward(x, scale, causal)
}

/// The VJP (and JVP) of [`softmax_rows`] from its output `y` and a
/// cotangent `g`: `scale · y ⊙ (g − Σ y ⊙ g)` over the last axis, as one
/// primitive (masked entries have `y = 0`).
///
/// ```
/// use nabla::{Array, composite::rows::softmax_rows_backward};
/// let y = Array::from_vec(vec![0.5f64, 0.5], &[2]);
/// let g = Array::from_vec(vec![1.0f64, 0.0], &[2]);
/// assert_eq!(softmax_rows_backward(&y, &g, 1.0).to_vec::<f64>(), vec![0.25, -0.25]);
/// ```
#[custom_op(jvp = softmax_backward_jvp, vjp = softmax_backward_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn softmax_rows_backward(y: &Array, g: &Array, scale: f64) -> Array {
    on_gpus!("softmax backward", [y, g], |v| {
        nabla_kernels::cuda::softmax_backward_rows(&v[0], &v[1], scale)
    });
    Array::from_data(float_map2!(
        &*y.data,
        &*g.data,
        |a, b| kernels::softmax_backward(a.view(), b.view(), scale),
        mixed("softmax backward", y, g)
    ))
}

/// [`softmax_rows_backward`] as `#[differentiable]` code: what its
/// derivatives are taken from.
#[differentiable(crate = crate)]
fn softmax_backward_composite(y: &Array, g: &Array, #[nondiff] scale: f64) -> Array {
    let last = [y.ndim() as isize - 1];
    y * &(g - &(y * g).sum_axes(&last, true)) * scale
}

fn softmax_backward_jvp<V: ArrayValue>(
    y: &V,
    g: &V,
    _o: &V,
    dy: Option<&V>,
    dg: Option<&V>,
    scale: f64,
) -> V {
    softmax_backward_composite::jvp::<V>(y, g, scale, dy, dg).1
}

fn softmax_backward_vjp<V: ArrayValue>(y: &V, g: &V, _o: &V, ct: &V, scale: f64) -> (V, V) {
    let (_, pullback) = softmax_backward_composite::vjp::<V>(y, g, scale);
    let (cy, cg, _) = pullback(ct.clone());
    (cy, cg)
}

/// Attention's softmax: `softmax(scale · scores + mask)` over the last
/// axis, with `mask` attention's causal mask (`−∞` above the diagonal of
/// each `[T, S]` block) when `causal`, as one row primitive
/// ([`softmax_rows`]); as the composite with the mask added when
/// `NABLA_ROW_KERNELS=0`.
///
/// ```
/// use nabla::{Array, composite::rows::attention_softmax};
/// let s = Array::from_vec(vec![3.0f64, 7.0, 2.0, 2.0], &[2, 2]);
/// assert_eq!(attention_softmax(&s, 0.5, true).to_vec::<f64>(), vec![1.0, 0.0, 0.5, 0.5]);
/// ```
#[differentiable(crate = crate)]
pub fn attention_softmax(scores: &Array, #[nondiff] scale: f64, causal: bool) -> Array {
    if enabled() {
        softmax_rows(scores, scale, causal)
    } else if causal {
        let mask = causal_mask(scores.shape(), scores.dtype(), scores.device());
        (scores * scale + mask).softmax(-1)
    } else {
        (scores * scale).softmax(-1)
    }
}

/// The `[T, S]` causal mask of scores of shape `shape` (its last two
/// axes): 0 where column ≤ row, `−∞` elsewhere, on `device`.
///
/// ```
/// use nabla::{DType, Device, composite::rows::causal_mask};
/// let m = causal_mask([2, 2], DType::F64, Device::Cpu);
/// assert_eq!(m.to_vec::<f64>(), vec![0.0, f64::NEG_INFINITY, 0.0, 0.0]);
/// ```
pub fn causal_mask(
    shape: impl AsRef<[usize]>,
    dtype: crate::DType,
    device: crate::Device,
) -> Array {
    let shape = shape.as_ref();
    let nd = shape.len();
    assert!(
        nd >= 2,
        "causal_mask: scores of shape {shape:?} need two axes [T, S]"
    );
    let (t, s) = (shape[nd - 2], shape[nd - 1]);
    let v: Vec<f64> = (0..t * s)
        .map(|i| {
            if i % s <= i / s {
                0.0
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect();
    Array::from_vec(v, &[t, s]).cast(dtype).to_device(device)
}

/// `(x − mean) / √(var + eps)` over the last axis (biased variance), as
/// one primitive: `layer_norm` before its weight and bias.
///
/// ```
/// use nabla::{Array, composite::rows::normalize_rows};
/// let x = Array::from_vec(vec![1.0f64, 3.0], &[1, 2]);
/// assert_eq!(normalize_rows(&x, 0.0).to_vec::<f64>(), vec![-1.0, 1.0]);
/// ```
#[custom_op(jvp = normalize_rows_jvp, vjp = normalize_rows_vjp, batch = normalize_batch, shard = last(1), crate = crate)]
pub fn normalize_rows(x: &Array, eps: f64) -> Array {
    on_gpu!(&*x.data, |g| nabla_kernels::cuda::normalize_rows(g, eps));
    Array::from_data(float_map!(
        &*x.data,
        |a| kernels::normalize(a.view(), eps),
        not_float("layer_norm", x)
    ))
}

fn normalize_rows_jvp<V: ArrayValue>(x: &V, y: &V, dx: Option<&V>, eps: f64) -> V {
    dx.map_or_else(
        || y.zeros_like(),
        |t| normalize_rows_backward::forward(x, t, eps),
    )
}

fn normalize_rows_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V, eps: f64) -> V {
    normalize_rows_backward::forward(x, ct, eps)
}

fn normalize_batch<V: ArrayValue>(x: &V, _batched: [bool; 1], eps: f64) -> V {
    normalize_rows::forward(x, eps)
}

/// [`normalize_rows`]' VJP (and JVP) from its input `x` and a cotangent
/// `g`: with `x̂` the normalised rows and `r = 1/√(var + eps)`,
/// `r · (g − mean(g) − x̂ · mean(g ⊙ x̂))`, as one primitive.
///
/// ```
/// use nabla::{Array, composite::rows::normalize_rows_backward};
/// let x = Array::from_vec(vec![1.0f64, 3.0], &[2]);
/// let g = Array::from_vec(vec![1.0f64, 1.0], &[2]);
/// assert_eq!(normalize_rows_backward(&x, &g, 0.0).to_vec::<f64>(), vec![0.0, 0.0]);
/// ```
#[custom_op(jvp = normalize_backward_jvp, vjp = normalize_backward_vjp, batch = elementwise, shard = last(1), crate = crate)]
pub fn normalize_rows_backward(x: &Array, g: &Array, eps: f64) -> Array {
    on_gpus!("layer_norm backward", [x, g], |v| {
        nabla_kernels::cuda::normalize_backward_rows(&v[0], &v[1], eps)
    });
    Array::from_data(float_map2!(
        &*x.data,
        &*g.data,
        |a, b| kernels::normalize_backward(a.view(), b.view(), eps),
        mixed("layer_norm backward", x, g)
    ))
}

/// [`normalize_rows_backward`] as `#[differentiable]` code: what its
/// derivatives are taken from.
#[differentiable(crate = crate)]
fn normalize_backward_composite(x: &Array, g: &Array, #[nondiff] eps: f64) -> Array {
    let last = [x.ndim() as isize - 1];
    let c = x - &x.mean_axes(&last, true);
    let r = (c.square().mean_axes(&last, true) + eps).rsqrt();
    let xh = &c * &r;
    (g - &g.mean_axes(&last, true) - &xh * &(g * &xh).mean_axes(&last, true)) * &r
}

fn normalize_backward_jvp<V: ArrayValue>(
    x: &V,
    g: &V,
    _o: &V,
    dx: Option<&V>,
    dg: Option<&V>,
    eps: f64,
) -> V {
    normalize_backward_composite::jvp::<V>(x, g, eps, dx, dg).1
}

fn normalize_backward_vjp<V: ArrayValue>(x: &V, g: &V, _o: &V, ct: &V, eps: f64) -> (V, V) {
    let (_, pullback) = normalize_backward_composite::vjp::<V>(x, g, eps);
    let (cx, cg, _) = pullback(ct.clone());
    (cx, cg)
}

/// The panic of a two-operand row op on arrays of different float types.
#[track_caller]
fn mixed(op: &str, a: &Array, b: &Array) -> ! {
    panic!(
        "{op}: operands of dtypes {} and {} (shapes {:?}, {:?}); both must be f32 or both f64",
        a.dtype(),
        b.dtype(),
        a.shape(),
        b.shape()
    )
}
