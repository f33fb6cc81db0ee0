//! Optimizers with torch.optim's semantics: [`Sgd`] (momentum, dampening,
//! Nesterov, weight decay), [`Adam`] and [`AdamW`]; learning-rate
//! [`Schedule`]s (constant, linear, cosine, warm-up + cosine, any
//! function of the step); gradient clipping by global norm
//! ([`clip_grad_norm`], [`clip_leaf_grad_norm`]).
//!
//! They work on any [`Tree`] of arrays, two ways:
//! - **functional**: `let mut state = opt.init(&params);` then
//!   `opt.update(&mut params, &grads, &mut state)` with the gradient tree
//!   from [`grad`](crate::grad) or [`value_and_grad`](crate::value_and_grad);
//! - **imperative**: `opt.step(&mut params, &mut state)` reads each leaf's
//!   `.grad()` after [`Array::backward`] (leaves without one are skipped,
//!   as in PyTorch).
//!
//! Each update is **one pass per parameter, in place**: the parameter, its
//! gradient and the optimizer's buffers are read and written element by
//! element in one loop (`nabla_kernels::optim`), with PyTorch's arithmetic
//! in PyTorch's order. A buffer someone else still holds (a clone of the
//! parameter, a recorded graph not yet consumed) is copied first, never
//! changed under them. Adam's update of GPU arrays is one generated
//! kernel per parameter (`gpu.rs`); other updates of GPU arrays take the
//! same formula op by op.
//!
//! ```
//! use nabla::optim::{Optimizer, Sgd};
//! use nabla::prelude::*;
//!
//! #[differentiable]
//! fn loss(w: &Array) -> Array {
//!     (w * w).sum()
//! }
//!
//! fn main() {
//!     let mut w = Array::from_vec(vec![1.0f64, -2.0], &[2]);
//!     let opt = Sgd::new(0.1).momentum(0.9);
//!     let mut state = opt.init(&w);
//!     for _ in 0..300 {
//!         let g = grad(loss)(&w);
//!         opt.update(&mut w, &g, &mut state);
//!     }
//!     assert!(w.to_vec::<f64>().iter().all(|v| v.abs() < 1e-3));
//! }
//! ```

mod adam;
mod clip;
#[cfg(feature = "cuda")]
mod gpu;
mod schedule;
mod sgd;

pub use adam::{Adam, AdamW};
pub use clip::{clip_grad_norm, clip_leaf_grad_norm};
pub use schedule::Schedule;
pub use sgd::Sgd;

use crate::storage::Host;
use crate::storage::{DType, Data};
use crate::tree::{Seg, Tree};
use crate::{Array, no_grad};
use nabla_kernels::Float;

/// The state of one parameter: how many steps it has taken and the
/// optimizer's buffers for it (SGD with momentum: the momentum; Adam: the
/// first and second moments), each shaped like the parameter.
///
/// ```
/// use nabla::optim::{Adam, Optimizer};
/// use nabla::{Array, DType};
/// let s = Adam::new(1e-3).init(&Array::zeros(&[3], DType::F32));
/// assert_eq!(s.params[0].buffers.len(), 2);
/// assert_eq!(s.params[0].step.item(), 0.0);
/// ```
#[derive(Clone, Debug)]
pub struct ParamState {
    /// Steps taken, as a scalar `i64` array (so a state saves like any tree).
    pub step: Array,
    /// The buffers, in the optimizer's order.
    pub buffers: Vec<Array>,
}

/// An optimizer's state: one [`ParamState`] per leaf of the parameter
/// tree, in leaf order. A [`Tree`] itself, so it can be saved and loaded.
///
/// ```
/// use nabla::optim::{Optimizer, Sgd};
/// use nabla::{tree::Tree, Array, DType};
/// let params = vec![Array::zeros(&[2], DType::F64), Array::zeros(&[3], DType::F64)];
/// let s = Sgd::new(0.1).momentum(0.9).init(&params);
/// assert_eq!(s.num_leaves(), 4); // a step and a momentum per parameter
/// let names: Vec<String> = nabla::tree::named_leaves(&s).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["params.0.step", "params.0.buffers.0", "params.1.step", "params.1.buffers.0"]);
/// ```
#[derive(Clone, Debug)]
pub struct State {
    /// Per parameter, in leaf order.
    pub params: Vec<ParamState>,
}

/// The settings of one update rule, applied to one parameter at a time.
///
/// ```
/// use nabla::optim::{Optimizer, Sgd};
/// use nabla::Array;
/// let mut w = Array::from_vec(vec![1.0f32], &[1]);
/// let opt = Sgd::new(0.5);
/// let mut s = opt.init(&w);
/// opt.update(&mut w, &Array::from_vec(vec![1.0f32], &[1]), &mut s);
/// assert_eq!(w.to_vec::<f32>(), vec![0.5]);
/// ```
pub trait Optimizer {
    /// How many buffers each parameter needs.
    #[doc(hidden)]
    fn num_buffers(&self) -> usize;

    /// One step of one parameter (`step` counts from 1): `p` and `buffers`
    /// updated from the gradient `g`.
    #[doc(hidden)]
    fn apply(&self, step: u64, p: &mut Array, g: &Array, buffers: &mut [Array]);

    /// A fresh state for `params`: step 0, buffers of zeros.
    ///
    /// ```
    /// use nabla::optim::{Optimizer, Sgd};
    /// use nabla::{Array, DType};
    /// assert!(Sgd::new(0.1).init(&Array::zeros(&[2], DType::F32)).params[0].buffers.is_empty());
    /// ```
    fn init<T: Tree + ?Sized>(&self, params: &T) -> State {
        let mut out = Vec::with_capacity(params.num_leaves());
        params.for_each_leaf(&mut |p: &Array| {
            out.push(ParamState {
                step: Array::scalar(0i64),
                buffers: (0..self.num_buffers()).map(|_| p.zeros_like()).collect(),
            })
        });
        State { params: out }
    }

    /// One step of every parameter of `params` from the gradient tree
    /// `grads` (same leaves, same shapes), in place.
    ///
    /// ```
    /// use nabla::optim::{Adam, Optimizer};
    /// use nabla::Array;
    /// let mut w = vec![Array::from_vec(vec![1.0f64], &[1])];
    /// let opt = Adam::new(0.1);
    /// let mut s = opt.init(&w);
    /// opt.update(&mut w, &vec![Array::from_vec(vec![3.0f64], &[1])], &mut s);
    /// assert!((w[0].item() - 0.9).abs() < 1e-7); // Adam's first step moves by lr
    /// ```
    #[track_caller]
    fn update<T: Tree + ?Sized, G: Tree + ?Sized>(
        &self,
        params: &mut T,
        grads: &G,
        state: &mut State,
    ) {
        let mut gs = Vec::with_capacity(grads.num_leaves());
        grads.flatten_into(&mut gs);
        check_counts(params.num_leaves(), Some(gs.len()), state);
        let mut k = 0;
        params.for_each_leaf_mut(&mut |p: &mut Array| {
            self.advance(p, &gs[k], &mut state.params[k]);
            k += 1;
        });
    }

    /// One step of every parameter that has a gradient (`.grad()` after
    /// `backward()`), in place; the gradients stay (clear them with
    /// `zero_grad`).
    ///
    /// ```
    /// use nabla::optim::{Optimizer, Sgd};
    /// use nabla::Array;
    /// let mut w = Array::from_vec(vec![2.0f32], &[1]).requires_grad();
    /// let opt = Sgd::new(0.25);
    /// let mut s = opt.init(&w);
    /// (&w * &w).sum().backward(); // grad 4
    /// opt.step(&mut w, &mut s);
    /// assert_eq!(w.to_vec::<f32>(), vec![1.0]);
    /// assert!(w.is_leaf());
    /// ```
    #[track_caller]
    fn step<T: Tree + ?Sized>(&self, params: &mut T, state: &mut State) {
        check_counts(params.num_leaves(), None, state);
        let mut k = 0;
        params.for_each_leaf_mut(&mut |p: &mut Array| {
            if let Some(g) = p.try_grad() {
                self.advance(p, &g, &mut state.params[k]);
            }
            k += 1;
        });
    }

    /// Counts the step and applies it to one parameter.
    #[doc(hidden)]
    #[track_caller]
    fn advance(&self, p: &mut Array, g: &Array, s: &mut ParamState) {
        if g.shape() != p.shape() || g.dtype() != p.dtype() {
            panic!(
                "optimizer update: the gradient has shape {:?} ({}) but its parameter has shape {:?} ({}); pass \
                 the gradient tree of the same parameters",
                g.shape(),
                g.dtype(),
                p.shape(),
                p.dtype()
            );
        }
        let step = s.step.item() as u64 + 1;
        self.apply(step, p, g, &mut s.buffers);
        s.step = Array::scalar(step as i64);
    }
}

#[track_caller]
fn check_counts(params: usize, grads: Option<usize>, state: &State) {
    if let Some(g) = grads.filter(|&g| g != params) {
        panic!(
            "optimizer update: the parameters have {params} leaves, the gradients {g}; pass the gradient of the \
             same tree"
        );
    }
    if state.params.len() != params {
        panic!(
            "optimizer update: the parameters have {params} leaves, the state {}; make the state with \
             opt.init(&params)",
            state.params.len()
        );
    }
}

/// The element types the in-place passes run on.
trait HostFloat: Float + Clone {
    fn host(d: &Data) -> Option<&Host<Self>>;
    fn host_mut(d: &mut Data) -> Option<&mut Host<Self>>;
}

macro_rules! host_float {
    ($t:ty, $v:ident) => {
        impl HostFloat for $t {
            fn host(d: &Data) -> Option<&Host<Self>> {
                match d {
                    Data::$v(a) => Some(a),
                    _ => None,
                }
            }
            fn host_mut(d: &mut Data) -> Option<&mut Host<Self>> {
                match d {
                    Data::$v(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}
host_float!(f32, F32);
host_float!(f64, F64);

/// An update rule's loop over slices (`bufs` in the optimizer's order).
trait Pass {
    fn run<T: Float>(&self, p: &mut [T], g: &[T], bufs: &mut [&mut [T]]);
}

thread_local! {
    static OP_BY_OP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with this thread's optimizer updates op by op (the path GPU
/// arrays take) instead of in-place passes: what tests compare the passes
/// against.
///
/// ```
/// use nabla::optim::{op_by_op, Optimizer, Sgd};
/// use nabla::Array;
/// let (mut a, g) = (Array::from_vec(vec![1.0f32], &[1]), Array::from_vec(vec![2.0f32], &[1]));
/// let mut b = a.clone();
/// let opt = Sgd::new(0.5);
/// let (mut sa, mut sb) = (opt.init(&a), opt.init(&b));
/// opt.update(&mut a, &g, &mut sa);
/// op_by_op(|| opt.update(&mut b, &g, &mut sb));
/// assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
/// ```
#[doc(hidden)]
pub fn op_by_op<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            OP_BY_OP.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(OP_BY_OP.with(|c| c.replace(true)));
    f()
}

/// Whether [`op_by_op`] is in force on this thread.
fn op_by_op_now() -> bool {
    OP_BY_OP.with(|c| c.get())
}

/// Runs `pass` in place on host arrays of one float dtype; false (nothing
/// touched) for anything else, which then goes op by op.
fn in_place(pass: &impl Pass, p: &mut Array, g: &Array, bufs: &mut [Array]) -> bool {
    if op_by_op_now() {
        return false;
    }
    match p.dtype() {
        DType::F32 => typed::<f32>(pass, p, g, bufs),
        DType::F64 => typed::<f64>(pass, p, g, bufs),
        _ => false,
    }
}

fn typed<T: HostFloat>(pass: &impl Pass, p: &mut Array, g: &Array, bufs: &mut [Array]) -> bool {
    let dt = p.dtype();
    if g.dtype() != dt
        || bufs
            .iter()
            .any(|b| b.dtype() != dt || b.shape() != p.shape())
    {
        return false;
    }
    let Some(g) = T::host(&g.data) else {
        return false;
    };
    if T::host(&p.data).is_none() || bufs.iter().any(|b| T::host(&b.data).is_none()) {
        return false;
    }
    let copied;
    let g = match g.as_slice() {
        Some(s) => s,
        None => {
            copied = g.to_owned_standard();
            copied.as_slice().expect("row-major copy")
        }
    };
    let p = unshared(p);
    let mut bs: Vec<&mut [T]> = bufs.iter_mut().map(|b| unshared(b)).collect();
    pass.run(p, g, &mut bs);
    true
}

/// The array's elements as one mutable slice: its buffer copied first if
/// anyone else holds it, and made contiguous.
fn unshared<T: HostFloat>(a: &mut Array) -> &mut [T] {
    let arr = T::host_mut(std::sync::Arc::make_mut(&mut a.data)).expect("checked host float");
    arr.as_slice_mut()
}

/// Replaces `p`'s values by `f(p)` computed op by op without recording
/// (the path for GPU arrays), keeping `p`'s autograd identity.
fn assign(p: &mut Array, f: impl FnOnce(&Array) -> Array) {
    let new = no_grad(|| f(&p.detach()));
    p.data = new.data;
}

impl Tree for ParamState {
    type Grad = ParamState;
    fn flatten_into(&self, out: &mut Vec<Array>) {
        out.push(self.step.clone());
        out.extend(self.buffers.iter().cloned());
    }
    fn num_leaves(&self) -> usize {
        1 + self.buffers.len()
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> ParamState {
        ParamState {
            step: self.step.rebuild(leaves),
            buffers: self.buffers.rebuild(leaves),
        }
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut Array)) {
        f(&mut self.step);
        self.buffers.for_each_leaf_mut(f);
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        match path.first() {
            Some(Seg::Field("step")) => self.step.leaf_index(&path[1..]),
            Some(Seg::Field("buffers")) => 1 + self.buffers.leaf_index(&path[1..]),
            _ => panic!("tree access {path:?}: a ParamState has the fields `step` and `buffers`"),
        }
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        out.push(crate::tree::join_name(prefix, "step"));
        self.buffers
            .names_into(&crate::tree::join_name(prefix, "buffers"), out);
    }
}

impl Tree for State {
    type Grad = State;
    fn flatten_into(&self, out: &mut Vec<Array>) {
        self.params.flatten_into(out);
    }
    fn num_leaves(&self) -> usize {
        self.params.num_leaves()
    }
    fn rebuild(&self, leaves: &mut dyn Iterator<Item = Array>) -> State {
        State {
            params: self.params.rebuild(leaves),
        }
    }
    fn for_each_leaf_mut(&mut self, f: &mut dyn FnMut(&mut Array)) {
        self.params.for_each_leaf_mut(f);
    }
    #[track_caller]
    fn leaf_index(&self, path: &[Seg]) -> usize {
        match path.first() {
            Some(Seg::Field("params")) => self.params.leaf_index(&path[1..]),
            _ => panic!("tree access {path:?}: a State has the field `params`"),
        }
    }
    fn names_into(&self, prefix: &str, out: &mut Vec<String>) {
        self.params
            .names_into(&crate::tree::join_name(prefix, "params"), out);
    }
}
