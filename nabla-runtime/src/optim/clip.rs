//! Gradient clipping by global norm, as `torch.nn.utils.clip_grad_norm_`:
//! [`clip_grad_norm`] for a gradient tree (the functional style),
//! [`clip_leaf_grad_norm`] for the `.grad()` of parameters (the
//! imperative style).

use crate::Array;
use crate::tree::Tree;

/// Scales the gradient tree `grads` in place so that its global L2 norm
/// (over all leaves together) is at most `max_norm`, and returns the norm
/// it had. As PyTorch's `clip_grad_norm_`: the factor is `max_norm /
/// (norm + 1e-6)`, applied only when it is below 1; each leaf's sum of
/// squares is taken in its own dtype and the total in `f64`. A non-finite
/// norm (an `inf` or `nan` in a gradient) is returned as is and clips as
/// in PyTorch by default (factor 0 or `nan`), without an error.
///
/// ```
/// use nabla::{optim::clip_grad_norm, Array};
/// let mut g = vec![Array::from_vec(vec![3.0f64], &[1]), Array::from_vec(vec![4.0f64], &[1])];
/// let norm = clip_grad_norm(&mut g, 1.0);
/// assert_eq!(norm, 5.0);
/// assert!((g[0].item() - 0.6).abs() < 1e-6 && (g[1].item() - 0.8).abs() < 1e-6);
/// ```
#[track_caller]
pub fn clip_grad_norm<T: Tree + ?Sized>(grads: &mut T, max_norm: f64) -> f64 {
    let mut squares = 0.0;
    grads.for_each_leaf(&mut |g: &Array| squares += sum_of_squares(g));
    let norm = squares.sqrt();
    if let Some(c) = factor(norm, max_norm) {
        grads.for_each_leaf_mut(&mut |g: &mut Array| *g = g.detach() * c);
    }
    norm
}

/// [`clip_grad_norm`] over the gradients of `params`' leaves (their
/// `.grad()` after `backward()`, replaced in place); leaves without a
/// gradient are skipped. Returns the norm before clipping.
///
/// ```
/// use nabla::{optim::clip_leaf_grad_norm, Array};
/// let w = Array::from_vec(vec![1.0f32, 1.0], &[2]).requires_grad();
/// (&w * 10.0).sum().backward(); // grad [10, 10]
/// let norm = clip_leaf_grad_norm(&w, 1.0);
/// assert!((norm - 200f64.sqrt()).abs() < 1e-5);
/// assert!((w.grad().to_vec::<f32>()[0] - 0.5f32.sqrt()).abs() < 1e-6);
/// ```
#[track_caller]
pub fn clip_leaf_grad_norm<T: Tree + ?Sized>(params: &T, max_norm: f64) -> f64 {
    let mut squares = 0.0;
    params.for_each_leaf(&mut |p: &Array| {
        if let Some(g) = p.try_grad() {
            squares += sum_of_squares(&g)
        }
    });
    let norm = squares.sqrt();
    if let Some(c) = factor(norm, max_norm) {
        params.for_each_leaf(&mut |p: &Array| {
            if let Some(g) = p.try_grad() {
                p.set_grad(g * c)
            }
        });
    }
    norm
}

/// `Σ g²` of one gradient, summed in its dtype.
#[track_caller]
fn sum_of_squares(g: &Array) -> f64 {
    if !g.dtype().is_float() {
        panic!(
            "clip_grad_norm: a gradient has dtype {}; gradients are f32 or f64 arrays",
            g.dtype()
        );
    }
    g.detach().square().sum().item()
}

/// The factor that brings `norm` to `max_norm`, when it is below 1.
#[track_caller]
fn factor(norm: f64, max_norm: f64) -> Option<f64> {
    if max_norm.is_nan() || max_norm < 0.0 {
        panic!("clip_grad_norm: max_norm is {max_norm}; pass a norm >= 0");
    }
    let c = max_norm / (norm + 1e-6);
    (c < 1.0 || c.is_nan()).then_some(c)
}
