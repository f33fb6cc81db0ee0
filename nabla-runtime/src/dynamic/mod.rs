//! Transforms of closures at run time: the machinery behind the Python
//! API's `grad`, `vjp`, `jvp`, `vmap`, `jacfwd`, `jacrev` and `hessian`, and
//! the tool for Rust code the `#[differentiable]` macro cannot see (a
//! closure, a function pointer chosen at run time, a model read from a
//! file).
//!
//! A [`Dyn`] is an array or a *tracer* of one transform: a `Dual<Dyn>`
//! (forward mode), a `Batched<Dyn>` (`vmap`) or a [`Rev`] (reverse mode,
//! recorded on a tape). Every transform call opens a new [`Level`]; levels
//! grow with nesting, so an op on tracers of several transforms runs at the
//! innermost one (the highest level) and treats the others as constants
//! there, as JAX's tracers do. The op then runs at that level's
//! interpretation type, whose methods are the primitives' shared rules
//! (`Dual` applies the JVP rules, `Batched` the batching rules, `Rev`
//! records the VJP rules), on `Dyn` values one level down. No derivative
//! rule is written twice: the rules are the ones generated code calls,
//! instantiated at `Dyn`.
//!
//! ```
//! use nabla::dynamic::{self, Dyn};
//! use nabla::{Array, ArrayValue, Value};
//! // d/dx sum(sin(x)) = cos(x), through a closure
//! let x = Dyn::from(Array::from_vec(vec![0.0f64, 1.0], &[2]));
//! let g = dynamic::grad(|x: &Dyn| x.sin().sum_axes(&[0], false), &x);
//! assert!((g.to_array().to_vec::<f64>()[1] - 1f64.cos()).abs() < 1e-15);
//! // and nested: the second derivative of sum(sin) is -sin
//! let h = dynamic::grad(|x: &Dyn| dynamic::grad(|x: &Dyn| x.sin(), x), &Dyn::from(Array::scalar(1.0f64)));
//! assert!((h.to_array().item() + 1f64.sin()).abs() < 1e-15);
//! ```

mod custom;
mod extra;
pub(crate) mod fuse;
mod gather;
mod lift;
pub mod loops;
mod methods;
mod rev;
mod rev_value;
mod staged;
mod staged_value;
mod transforms;
mod value;

pub use custom::{DynOp, ForwardFn, JvpFn, VjpFn, checkpoint, checkpointed};
pub(crate) use lift::lift;
pub use rev::Rev;
pub use staged::{Program, Staged, record};
pub use transforms::{
    Pullback, grad, hessian, jacfwd, jacrev, jvp, pullback, rev_leaf, value_and_grad, vjp, vmap,
};

use crate::Array;
use crate::interp::batched::Batched;
use crate::interp::dual::Dual;
use std::sync::atomic::{AtomicU64, Ordering};

/// The nesting depth of one transform call: tracers of a later (inner)
/// call have a higher level.
pub type Level = u64;

static NEXT_LEVEL: AtomicU64 = AtomicU64::new(1);

/// A level no tracer has yet: the level of a new transform call.
///
/// ```
/// let (a, b) = (nabla::dynamic::new_level(), nabla::dynamic::new_level());
/// assert!(b > a);
/// ```
pub fn new_level() -> Level {
    NEXT_LEVEL.fetch_add(1, Ordering::Relaxed)
}

/// An array, or a tracer of one transform wrapping values of lower levels.
///
/// `Dyn` implements [`crate::Value`] and [`crate::ArrayValue`], so generic
/// code (the primitives' rules, `nabla::functions`) runs on it unchanged.
/// Shape queries report the per-example shape under `vmap`.
///
/// ```
/// use nabla::dynamic::Dyn;
/// use nabla::{Array, Value};
/// let x = Dyn::from(Array::from_vec(vec![1.0f32, 2.0], &[2]));
/// assert_eq!(x.exp().to_array().shape(), &[2]);
/// ```
#[derive(Clone)]
pub enum Dyn {
    /// A concrete array (it may require grad on the imperative tape).
    Array(Array),
    /// A forward-mode tracer of the `jvp` at this level.
    Dual(Level, Box<Dual<Dyn>>),
    /// A batching tracer of the `vmap` at this level.
    Batched(Level, Box<Batched<Dyn>>),
    /// A reverse-mode tracer of the `vjp` at this level.
    Rev(Level, Box<Rev>),
    /// A value being recorded into a [`Program`] by [`record`] at this level.
    Staged(Level, Box<Staged>),
}

impl From<Array> for Dyn {
    fn from(a: Array) -> Dyn {
        Dyn::Array(a)
    }
}

impl std::fmt::Debug for Dyn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dyn::Array(a) => write!(f, "{a:?}"),
            Dyn::Dual(l, d) => write!(f, "Dual@{l}({:?})", d.primal),
            Dyn::Batched(l, b) => write!(f, "Batched@{l}[axis {:?}]({:?})", b.bdim, b.value),
            Dyn::Rev(l, r) => write!(f, "Rev@{l}({:?})", r.value),
            Dyn::Staged(l, s) => write!(f, "Staged@{l}({:?})", s.value),
        }
    }
}

impl Dyn {
    /// The level of this tracer (0 for a concrete array).
    ///
    /// ```
    /// let x = nabla::dynamic::Dyn::from(nabla::Array::scalar(1.0f64));
    /// assert_eq!(x.level(), 0);
    /// ```
    pub fn level(&self) -> Level {
        match self {
            Dyn::Array(_) => 0,
            Dyn::Dual(l, _) | Dyn::Batched(l, _) | Dyn::Rev(l, _) | Dyn::Staged(l, _) => *l,
        }
    }

    /// True for a concrete array.
    ///
    /// ```
    /// assert!(nabla::dynamic::Dyn::from(nabla::Array::scalar(1.0f64)).is_concrete());
    /// ```
    pub fn is_concrete(&self) -> bool {
        matches!(self, Dyn::Array(_))
    }

    /// The concrete array underneath, taking the primal of forward- and
    /// reverse-mode tracers. Panics on a batching tracer, whose per-example
    /// value is not an array (what `print` inside `vmap` would need); the
    /// message names the op.
    ///
    /// ```
    /// use nabla::dynamic::Dyn;
    /// let x = Dyn::from(nabla::Array::scalar(2.0f64));
    /// assert_eq!(x.to_array().item(), 2.0);
    /// ```
    #[track_caller]
    pub fn to_array(&self) -> Array {
        self.primal_array("to_array")
    }

    /// [`Dyn::to_array`] naming `op` when it panics.
    #[track_caller]
    pub fn primal_array(&self, op: &str) -> Array {
        match self {
            Dyn::Array(a) => a.clone(),
            Dyn::Dual(_, d) => d.primal.primal_array(op),
            Dyn::Rev(_, r) => r.value.primal_array(op),
            Dyn::Batched(..) => panic!(
                "{op}: the value is batched by `vmap` here, so it has no single concrete array; \
                 read it outside the vmapped function, or return it from it"
            ),
            Dyn::Staged(..) => panic!(
                "{op}: the value depends on the inputs of a function being recorded by jit, so it has no \
                 concrete array yet; return it from the function, or mark the argument static (static_argnums)"
            ),
        }
    }

    /// The array of a value known to be concrete (what [`lift!`] binds
    /// when no operand is a tracer).
    pub(crate) fn concrete(&self) -> &Array {
        match self {
            Dyn::Array(a) => a,
            _ => unreachable!("`top` found no tracer among the operands"),
        }
    }

    /// The tracer of the transform at `level` as a forward-mode value:
    /// its own when `self` is that level's tracer, else a constant.
    pub(crate) fn dual_at(&self, level: Level) -> Dual<Dyn> {
        match self {
            Dyn::Dual(l, d) if *l == level => (**d).clone(),
            _ => Dual::constant(self.clone()),
        }
    }

    /// As [`Dyn::dual_at`], for a batching level (unbatched otherwise).
    pub(crate) fn batched_at(&self, level: Level) -> Batched<Dyn> {
        match self {
            Dyn::Batched(l, b) if *l == level => (**b).clone(),
            _ => Batched::unbatched(self.clone()),
        }
    }

    /// As [`Dyn::dual_at`], for a reverse-mode level (a constant on its
    /// tape otherwise).
    pub(crate) fn rev_at(&self, level: Level) -> Rev {
        match self {
            Dyn::Rev(l, r) if *l == level => (**r).clone(),
            _ => Rev::constant(self.clone()),
        }
    }

    /// A forward-mode tracer of `level`: `primal` with `tangent`.
    ///
    /// ```
    /// use nabla::dynamic::{new_level, Dyn};
    /// let l = new_level();
    /// let x = Dyn::dual(l, Dyn::from(nabla::Array::scalar(1.0f64)), None);
    /// assert_eq!(x.level(), l);
    /// ```
    pub fn dual(level: Level, primal: Dyn, tangent: Option<Dyn>) -> Dyn {
        Dyn::Dual(level, Box::new(Dual::new(primal, tangent)))
    }

    /// The primal and tangent of `self` at `level` (a zero tangent,
    /// `None`, when `self` does not depend on that level's inputs).
    pub fn split_dual(&self, level: Level) -> (Dyn, Option<Dyn>) {
        let d = self.dual_at(level);
        (d.primal, d.tangent)
    }

    /// A batching tracer of `level` whose batch axis is `axis` of `value`
    /// (`None`: the same for every example).
    pub fn batched(level: Level, value: Dyn, axis: Option<usize>) -> Dyn {
        Dyn::Batched(level, Box::new(Batched::new(value, axis)))
    }

    /// The value of `self` at batching `level` with the batch axis moved to
    /// `axis` (an unbatched value broadcast to `size` examples).
    pub fn unbatch(&self, level: Level, size: usize, axis: usize) -> Dyn {
        self.batched_at(level).materialize(size, axis)
    }

    /// The value of `self` one level below `level`: a tracer of that level
    /// gives its primal (its value), anything else is returned as it is.
    /// What a transform returns for an output it does not transform
    /// (`has_aux`). A batching tracer is returned as it is.
    pub fn lower(&self, level: Level) -> Dyn {
        match self {
            Dyn::Dual(l, d) if *l == level => d.primal.clone(),
            Dyn::Rev(l, r) if *l == level => r.value.clone(),
            Dyn::Staged(l, s) if *l == level => s.value.clone(),
            _ => self.clone(),
        }
    }

    /// The batch size of `self` at batching `level`, if it is batched there.
    pub fn batch_size_at(&self, level: Level) -> Option<usize> {
        match self {
            Dyn::Batched(l, b) if *l == level => b.batch_size(),
            _ => None,
        }
    }
}

/// What kind of tracer, if any, an op on several values runs as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Top {
    Array,
    Dual(Level),
    Batched(Level),
    Rev(Level),
    Staged(Level),
}

/// The innermost transform among the operands.
pub(crate) fn top<'a>(vals: impl IntoIterator<Item = &'a Dyn>) -> Top {
    let mut best = Top::Array;
    let mut level = 0;
    for v in vals {
        let (l, t) = match v {
            Dyn::Array(_) => continue,
            Dyn::Dual(l, _) => (*l, Top::Dual(*l)),
            Dyn::Batched(l, _) => (*l, Top::Batched(*l)),
            Dyn::Rev(l, _) => (*l, Top::Rev(*l)),
            Dyn::Staged(l, _) => (*l, Top::Staged(*l)),
        };
        if l > level {
            level = l;
            best = t;
        }
    }
    best
}

#[cfg(test)]
mod tests;
