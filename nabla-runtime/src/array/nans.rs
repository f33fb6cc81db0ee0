//! `debug_nans`: the first primitive that turns finite inputs into NaN or
//! infinity panics, naming the op, its operands' shapes and dtype, where
//! it was called, and, in a backward pass, the op whose derivative rule
//! produced it (as JAX's `jax_debug_nans` and PyTorch's `detect_anomaly`).
//!
//! Off, a check is one relaxed atomic load per primitive. On, every
//! primitive's result is scanned (GPU results are copied to the host for
//! it), and the tape runs each unary op's VJP on its own instead of fusing
//! a chain of them, so the report can name the rule.

use super::Array;
use nabla_kernels::switch::Switch;
use std::cell::Cell;
use std::panic::Location;

static CHECKING: Switch = Switch::new("NABLA_DEBUG_NANS");

thread_local! {
    /// The op whose derivative rule is running on this thread, if any.
    static RULE: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Turns NaN hunting on or off for the whole process (it starts as
/// `NABLA_DEBUG_NANS=1` in the environment says, else off). On, the first
/// primitive that turns finite inputs into NaN or infinity panics with the
/// op, the shapes, the dtype, the caller's source line and, in a backward
/// pass, the op whose derivative rule produced the value. The switch is
/// process-wide (this example runs in a process of its own).
///
/// ```standalone_crate
/// use nabla::Array;
/// nabla::debug_nans(true);
/// let x = Array::from_vec(vec![1.0f64, -1.0], &[2]);
/// let r = std::panic::catch_unwind(|| x.ln());
/// nabla::debug_nans(false);
/// let msg = *r.unwrap_err().downcast::<String>().unwrap();
/// assert!(msg.starts_with("debug_nans: `log` turned finite inputs into NaN"), "{msg}");
/// ```
pub fn debug_nans(on: bool) {
    CHECKING.set(on);
}

/// Whether [`debug_nans`] is on.
///
/// ```
/// nabla::debug_nans(false);
/// assert!(!nabla::debug_nans_enabled());
/// ```
#[inline(always)]
pub fn debug_nans_enabled() -> bool {
    CHECKING.get()
}

/// While alive, checks on this thread report that they run inside the
/// derivative rule of `op`.
pub(crate) struct RuleScope(Option<&'static str>);

impl Drop for RuleScope {
    fn drop(&mut self) {
        RULE.with(|r| r.set(self.0));
    }
}

/// Marks the derivative rule of `op` as running (when checking is on);
/// `""` marks an unnamed rule.
#[inline]
pub(crate) fn rule_scope(op: &'static str) -> Option<RuleScope> {
    debug_nans_enabled().then(|| RuleScope(RULE.with(|r| r.replace(Some(op)))))
}

/// Panics when checking is on, `out` holds a NaN or infinity and every
/// float input is finite.
#[track_caller]
#[inline]
pub(crate) fn check(op: &str, inputs: &[&Array], out: &Array) {
    if debug_nans_enabled() {
        report(op, inputs, out, Location::caller());
    }
}

/// The flat index of the first non-finite element and the NaN and
/// infinity counts, or `None` when all are finite (or `a` is not float).
fn non_finite(a: &Array) -> Option<(usize, usize, usize)> {
    if !a.dtype().is_float() {
        return None;
    }
    let v = a.to_vec::<f64>();
    let first = v.iter().position(|x| !x.is_finite())?;
    let nans = v.iter().filter(|x| x.is_nan()).count();
    let infs = v.iter().filter(|x| x.is_infinite()).count();
    Some((first, nans, infs))
}

#[cold]
#[inline(never)]
fn report(op: &str, inputs: &[&Array], out: &Array, at: &Location<'_>) {
    let Some((first, nans, infs)) = non_finite(out) else {
        return;
    };
    if inputs.iter().any(|x| non_finite(x).is_some()) {
        return; // not the first: an input already holds one
    }
    let what = match (nans, infs) {
        (_, 0) => format!("NaN ({nans} of {} elements", out.numel()),
        (0, _) => format!("infinity ({infs} of {} elements", out.numel()),
        _ => format!(
            "NaN and infinity ({nans} and {infs} of {} elements",
            out.numel()
        ),
    };
    let mut index = vec![0; out.ndim()];
    let mut rest = first;
    for (k, &n) in out.shape().iter().enumerate().rev() {
        index[k] = rest % n.max(1);
        rest /= n.max(1);
    }
    let shapes: Vec<&[usize]> = inputs.iter().map(|x| x.shape()).collect();
    let pass = match RULE.with(Cell::get) {
        Some("") => "in the backward pass, inside a derivative rule (run-time transforms, \
                     of closures and Python functions, do not record which)"
            .to_string(),
        Some(rule) => format!("in the backward pass, inside the derivative rule of `{rule}`"),
        None => "in the forward pass".to_string(),
    };
    // A line of the library's own code (a rule's body) says nothing to a
    // user; the rule's name does.
    let own = ["nabla-runtime", "nabla-kernels"]
        .iter()
        .any(|c| at.file().contains(c));
    let called = if own {
        String::new()
    } else {
        format!("; called at {at}")
    };
    panic!(
        "debug_nans: `{op}` turned finite inputs into {what}, the first at {index:?}); \
         operands of shapes {shapes:?}, {dtype}, result {out_shape:?}; {pass}{called}. \
         Keep the op's inputs in its domain (log and sqrt of negatives, 0/0, exp overflow), e.g. \
         with clamp or where; nabla::debug_nans(false) turns the check off",
        dtype = out.dtype(),
        out_shape = out.shape(),
    );
}
