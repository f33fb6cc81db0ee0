//! Imperative (PyTorch-style) autograd on [`Array`].
//!
//! Only arrays that require grad record anything: an op whose inputs carry
//! no `GradMeta` returns a plain array. A recorded op stores its inputs'
//! metadata and a boxed closure that calls the op's shared VJP rule (the
//! same rule function the generated code calls; no derivative is written
//! twice). [`Array::backward`] walks the recorded nodes in reverse
//! topological order and frees each node's closure (and so its residuals)
//! as soon as it has run.

mod backward;
pub(crate) mod chain;

use crate::Array;
use backward::run_backward;
use chain::Link;
use std::cell::Cell;
use std::sync::{Arc, Mutex};

/// A VJP closure: maps the output cotangent to one cotangent per input
/// (`None` where an input needs none).
pub(crate) type BackwardFn = Box<dyn FnOnce(&Array) -> Vec<Option<Array>> + Send>;

/// Autograd metadata attached to an array that requires grad.
pub(crate) enum GradMeta {
    /// A user-created array that accumulates `.grad()`.
    Leaf { grad: Mutex<Option<Array>> },
    /// The output of a recorded op.
    Node {
        op: &'static str,
        inputs: Vec<Option<Arc<GradMeta>>>,
        backward: Mutex<Option<BackwardFn>>,
        /// A unary op's chain rule and saved values, so that a chain of
        /// them runs backward as one pass (`autograd::chain`).
        link: Option<Link>,
    },
}

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Runs `f` without recording any operation on the autograd tape (like
/// `torch.no_grad()`); recording resumes afterwards, even if `f` panics.
///
/// ```
/// use nabla::{no_grad, Array};
/// let w = Array::scalar(2.0f64).requires_grad();
/// let y = no_grad(|| &w * 3.0);
/// assert!(!y.is_tracked());
/// ```
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            GRAD_ENABLED.with(|g| g.set(self.0));
        }
    }
    let _restore = Restore(GRAD_ENABLED.with(|g| g.replace(false)));
    f()
}

/// Turns recording on the tape on or off for this thread until the next
/// call, returning the previous setting (`torch.set_grad_enabled`); for
/// front ends whose scopes are not closures (Python's `with`). Prefer
/// [`no_grad`] in Rust.
///
/// ```
/// let prev = nabla::autograd::set_grad_enabled(false);
/// assert!(!nabla::is_grad_enabled());
/// nabla::autograd::set_grad_enabled(prev);
/// assert!(nabla::is_grad_enabled());
/// ```
pub fn set_grad_enabled(enabled: bool) -> bool {
    GRAD_ENABLED.with(|g| g.replace(enabled))
}

/// True unless inside [`no_grad`].
///
/// ```
/// assert!(nabla::is_grad_enabled());
/// assert!(!nabla::no_grad(nabla::is_grad_enabled));
/// ```
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|g| g.get())
}

/// True when an op on `inputs` must be recorded.
#[inline]
pub(crate) fn needs_grad(inputs: &[&Array]) -> bool {
    inputs.iter().any(|a| a.grad.is_some()) && is_grad_enabled()
}

/// Attaches a tape node to `out`, whose VJP is `backward`.
pub(crate) fn record(
    out: Array,
    op: &'static str,
    inputs: &[&Array],
    backward: BackwardFn,
) -> Array {
    record_linked(out, op, inputs, backward, None)
}

/// [`record`] with a unary op's [`Link`].
fn record_linked(
    out: Array,
    op: &'static str,
    inputs: &[&Array],
    backward: BackwardFn,
    link: Option<Link>,
) -> Array {
    let node = GradMeta::Node {
        op,
        inputs: inputs.iter().map(|a| a.grad.clone()).collect(),
        backward: Mutex::new(Some(backward)),
        link,
    };
    Array {
        data: out.data,
        grad: Some(Arc::new(node)),
    }
}

/// Records a unary op if its input requires grad. `make_vjp` (given the
/// output) is called only then (so untracked ops never clone what a pullback would keep); the
/// closure it returns receives the output cotangent.
#[inline]
pub(crate) fn unary_node<B>(
    out: Array,
    op: &'static str,
    x: &Array,
    make_vjp: impl FnOnce(&Array) -> B,
) -> Array
where
    B: FnOnce(&Array) -> Array + Send + 'static,
{
    unary_with(out, op, x, make_vjp, |_, _| None)
}

/// [`unary_node`] that also attaches `link(x, y)` to the node (a unary
/// op's chain rule, so that a chain of such ops runs backward as one pass).
#[inline]
pub(crate) fn unary_with<B>(
    out: Array,
    op: &'static str,
    x: &Array,
    make_vjp: impl FnOnce(&Array) -> B,
    link: impl FnOnce(&Array, &Array) -> Option<Link>,
) -> Array
where
    B: FnOnce(&Array) -> Array + Send + 'static,
{
    if needs_grad(&[x]) {
        let vjp = make_vjp(&out);
        let link = link(x, &out);
        record_linked(out, op, &[x], Box::new(move |ct| vec![Some(vjp(ct))]), link)
    } else {
        out
    }
}

/// Records a binary op if an input requires grad. `make_vjp` (given the
/// output) is called only then; its closure gets the output cotangent and which inputs need one,
/// and returns their cotangents.
#[inline]
pub(crate) fn binary_node<B>(
    out: Array,
    op: &'static str,
    a: &Array,
    b: &Array,
    make_vjp: impl FnOnce(&Array) -> B,
) -> Array
where
    B: FnOnce(&Array, [bool; 2]) -> [Option<Array>; 2] + Send + 'static,
{
    if needs_grad(&[a, b]) {
        let vjp = make_vjp(&out);
        let want = [a.grad.is_some(), b.grad.is_some()];
        record(out, op, &[a, b], Box::new(move |ct| vjp(ct, want).into()))
    } else {
        out
    }
}

impl Array {
    /// Marks this array as a leaf that accumulates gradients, like
    /// PyTorch's `requires_grad_()`. Applied to the result of tracked ops it
    /// starts a fresh leaf (the history is cut).
    ///
    /// Panics for integer and bool arrays.
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0], &[2]).requires_grad();
    /// let y = (&x * &x).sum();
    /// y.backward();
    /// assert_eq!(x.grad().to_vec::<f64>(), vec![2.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn requires_grad(self) -> Array {
        if !self.dtype().is_float() {
            panic!(
                "requires_grad: only f32/f64 arrays can require grad, this one is {}; use .cast(DType::F32) first",
                self.dtype()
            );
        }
        if matches!(self.grad.as_deref(), Some(GradMeta::Leaf { .. })) {
            return self;
        }
        Array {
            data: self.data,
            grad: Some(Arc::new(GradMeta::Leaf {
                grad: Mutex::new(None),
            })),
        }
    }

    /// True if this array is a leaf that requires grad or the result of a
    /// recorded op.
    ///
    /// ```
    /// use nabla::Array;
    /// assert!(!Array::scalar(1.0f32).is_tracked());
    /// assert!(Array::scalar(1.0f32).requires_grad().is_tracked());
    /// ```
    pub fn is_tracked(&self) -> bool {
        self.grad.is_some()
    }

    /// True for a leaf created by [`Array::requires_grad`].
    ///
    /// ```
    /// use nabla::Array;
    /// let w = Array::scalar(1.0f32).requires_grad();
    /// assert!(w.is_leaf() && !(&w * 2.0).is_leaf());
    /// ```
    pub fn is_leaf(&self) -> bool {
        matches!(self.grad.as_deref(), Some(GradMeta::Leaf { .. }))
    }

    /// The same values with no autograd history (shares storage).
    ///
    /// ```
    /// use nabla::Array;
    /// let w = Array::scalar(1.0f32).requires_grad();
    /// assert!(!w.detach().is_tracked());
    /// ```
    pub fn detach(&self) -> Array {
        Array {
            data: self.data.clone(),
            grad: None,
        }
    }

    /// The accumulated gradient of a leaf.
    ///
    /// Panics if there is none yet; [`Array::try_grad`] returns an `Option`.
    ///
    /// ```
    /// use nabla::Array;
    /// let w = Array::scalar(3.0f64).requires_grad();
    /// (&w * &w).backward();
    /// assert_eq!(w.grad().item(), 6.0);
    /// ```
    #[track_caller]
    pub fn grad(&self) -> Array {
        match self.grad.as_deref() {
            Some(GradMeta::Leaf { grad }) => match grad.lock().expect("grad lock").clone() {
                Some(g) => g,
                None => panic!(
                    "grad(): this array has no gradient yet; call backward() on a loss that depends on it first"
                ),
            },
            Some(GradMeta::Node { .. }) => panic!(
                "grad(): this array is the result of an operation, not a leaf; gradients are kept only for arrays \
                 made with requires_grad()"
            ),
            None => {
                panic!("grad(): this array does not require grad; create it with .requires_grad()")
            }
        }
    }

    /// The accumulated gradient of a leaf, if any.
    ///
    /// ```
    /// use nabla::Array;
    /// assert!(Array::scalar(1.0f32).requires_grad().try_grad().is_none());
    /// ```
    pub fn try_grad(&self) -> Option<Array> {
        match self.grad.as_deref() {
            Some(GradMeta::Leaf { grad }) => grad.lock().expect("grad lock").clone(),
            _ => None,
        }
    }

    /// Replaces the accumulated gradient of a leaf (PyTorch's `p.grad = g`):
    /// what gradient clipping and other edits of `.grad()` between
    /// `backward()` and the optimizer's `step` use.
    ///
    /// ```
    /// use nabla::Array;
    /// let w = Array::from_vec(vec![1.0f32, 2.0], &[2]).requires_grad();
    /// w.set_grad(Array::from_vec(vec![0.5f32, 0.5], &[2]));
    /// assert_eq!(w.grad().to_vec::<f32>(), vec![0.5, 0.5]);
    /// ```
    #[track_caller]
    pub fn set_grad(&self, g: Array) {
        let Some(GradMeta::Leaf { grad }) = self.grad.as_deref() else {
            panic!(
                "set_grad: only arrays made with requires_grad() keep a gradient; call .requires_grad() on this one first"
            );
        };
        if g.shape() != self.shape() || g.dtype() != self.dtype() {
            panic!(
                "set_grad: the gradient has shape {:?} ({}) but the array has shape {:?} ({}); pass a gradient shaped like the array",
                g.shape(),
                g.dtype(),
                self.shape(),
                self.dtype()
            );
        }
        *grad.lock().expect("grad lock") = Some(g.detach());
    }

    /// Clears the accumulated gradient of a leaf (like `zero_grad` with
    /// `set_to_none=True`).
    ///
    /// ```
    /// use nabla::Array;
    /// let w = Array::scalar(3.0f64).requires_grad();
    /// (&w * 2.0).backward();
    /// w.zero_grad();
    /// assert!(w.try_grad().is_none());
    /// ```
    pub fn zero_grad(&self) {
        if let Some(GradMeta::Leaf { grad }) = self.grad.as_deref() {
            *grad.lock().expect("grad lock") = None;
        }
    }

    /// Computes the gradient of this scalar with respect to every leaf it
    /// depends on and adds it to their `.grad()`.
    ///
    /// The recorded graph is freed as it is consumed: a second `backward()`
    /// through the same ops panics (recompute the loss instead).
    ///
    /// ```
    /// use nabla::Array;
    /// let x = Array::scalar(2.0f64).requires_grad();
    /// let y = x.exp();
    /// y.backward();
    /// assert!((x.grad().item() - 2f64.exp()).abs() < 1e-12);
    /// ```
    #[track_caller]
    pub fn backward(&self) {
        self.backward_from("backward", &mut |_, _| {});
    }

    /// [`Array::backward`] that also calls `ready(leaf, grad)` for each leaf
    /// as soon as its gradient is complete, while the rest of the backward
    /// pass is still to run (PyTorch's post-accumulate-grad hooks): `grad`
    /// is the leaf's accumulated `.grad()`. A leaf is complete once every
    /// recorded op that reads it has passed its cotangent on, so the leaves
    /// of the last layers come first. What data-parallel training uses to
    /// start reducing gradients early
    /// (`nabla::dist::DataParallel::backward`).
    ///
    /// ```
    /// use nabla::Array;
    /// let w1 = Array::scalar(2.0f64).requires_grad();
    /// let w2 = Array::scalar(3.0f64).requires_grad();
    /// let loss = (&w1 * 2.0).exp() * &w2;
    /// let mut seen = Vec::new();
    /// loss.backward_with(|leaf, g| seen.push((leaf, g.item())));
    /// assert_eq!(seen[0].0, w2.leaf_id().unwrap()); // w2 is complete first
    /// assert_eq!(seen.len(), 2);
    /// ```
    #[track_caller]
    pub fn backward_with(&self, mut ready: impl FnMut(LeafId, &Array)) {
        self.backward_from("backward_with", &mut ready);
    }

    /// The backward pass from this scalar, for `who` (its panics' name).
    #[track_caller]
    fn backward_from(&self, who: &str, ready: &mut dyn FnMut(LeafId, &Array)) {
        if self.numel() != 1 {
            panic!(
                "{who}: the output has shape {:?} but {who}() needs a scalar (one element); reduce it first, \
                 e.g. loss.sum() or loss.mean()",
                self.shape()
            );
        }
        let Some(root) = self.grad.clone() else {
            panic!(
                "{who}: this array does not depend on any array that requires grad; call .requires_grad() on \
                 the parameters before computing it"
            );
        };
        let seed = self.detach().ones_like();
        no_grad(|| run_backward(root, seed, ready));
    }

    /// The identity of a leaf made with [`Array::requires_grad`] (the same
    /// for its clones), as [`Array::backward_with`] names it; `None` for
    /// other arrays.
    ///
    /// ```
    /// use nabla::Array;
    /// let w = Array::scalar(1.0f32).requires_grad();
    /// assert_eq!(w.leaf_id(), w.clone().leaf_id());
    /// assert!((&w * 2.0).leaf_id().is_none());
    /// ```
    pub fn leaf_id(&self) -> Option<LeafId> {
        match &self.grad {
            Some(m) if matches!(**m, GradMeta::Leaf { .. }) => {
                Some(LeafId(Arc::as_ptr(m) as usize))
            }
            _ => None,
        }
    }
}

/// A leaf's identity (see [`Array::leaf_id`]): valid while the leaf or a
/// clone of it lives.
///
/// ```
/// let w = nabla::Array::scalar(1.0f64).requires_grad();
/// println!("{:?}", w.leaf_id().unwrap());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeafId(usize);
