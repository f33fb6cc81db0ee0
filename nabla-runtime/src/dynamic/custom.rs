//! Run-time custom ops: a forward function with optional JVP and VJP
//! rules given as closures ([`DynOp`]), applied to `Dyn` values at every
//! kind of tracer (what Python's `nabla.custom_op` and `nabla.checkpoint`
//! are). Without a rule for a mode, that mode differentiates through the
//! forward function itself.

use super::rev::Rev;
use super::{Dyn, Level, Top, top};
use std::sync::Arc;

/// A forward function: inputs to outputs.
pub type ForwardFn = dyn Fn(&[Dyn]) -> Vec<Dyn> + Send + Sync;
/// A JVP rule: `(inputs, outputs, tangents)` (`None`: zero) to the
/// outputs' tangents.
pub type JvpFn = dyn Fn(&[Dyn], &[Dyn], &[Option<Dyn>]) -> Vec<Dyn> + Send + Sync;
/// A VJP rule: `(inputs, outputs, cotangents)` (`None`: zero) to the
/// inputs' cotangents (`None`: zero).
pub type VjpFn = dyn Fn(&[Dyn], &[Dyn], &[Option<Dyn>]) -> Vec<Option<Dyn>> + Send + Sync;

/// An op defined by closures.
///
/// ```
/// use nabla::dynamic::{self, DynOp, Dyn};
/// use nabla::{Array, Value};
/// use std::sync::Arc;
/// // sin with a deliberately scaled VJP, to see the rule is used
/// let op = DynOp::new("my_sin", Arc::new(|x: &[Dyn]| vec![x[0].sin()]))
///     .with_vjp(Arc::new(|x: &[Dyn], _y: &[Dyn], ct: &[Option<Dyn>]| {
///         vec![ct[0].as_ref().map(|c| c.mul(&x[0].cos()).mul_scalar(2.0))]
///     }));
/// let x = Dyn::from(Array::scalar(0.5f64));
/// let g = dynamic::grad(|x| op.apply(std::slice::from_ref(x)).remove(0), &x);
/// assert!((g.to_array().item() - 2.0 * 0.5f64.cos()).abs() < 1e-15);
/// ```
#[derive(Clone)]
pub struct DynOp {
    name: Arc<str>,
    forward: Arc<ForwardFn>,
    jvp: Option<Arc<JvpFn>>,
    vjp: Option<Arc<VjpFn>>,
}

impl DynOp {
    /// An op computing `forward`, differentiated through it until rules
    /// are added.
    pub fn new(name: &str, forward: Arc<ForwardFn>) -> DynOp {
        DynOp {
            name: name.into(),
            forward,
            jvp: None,
            vjp: None,
        }
    }

    /// The op with a JVP rule for forward mode.
    pub fn with_jvp(mut self, rule: Arc<JvpFn>) -> DynOp {
        self.jvp = Some(rule);
        self
    }

    /// The op with a VJP rule for reverse mode.
    pub fn with_vjp(mut self, rule: Arc<VjpFn>) -> DynOp {
        self.vjp = Some(rule);
        self
    }

    /// The op's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The op on `xs`, at the innermost transform among them.
    #[track_caller]
    pub fn apply(&self, xs: &[Dyn]) -> Vec<Dyn> {
        match top(xs) {
            Top::Array => (self.forward)(xs),
            Top::Dual(l) => self.apply_dual(l, xs),
            Top::Batched(l) => self.apply_batched(l, xs),
            Top::Rev(l) => self.apply_rev(l, xs),
            Top::Staged(l) => self.apply_staged(l, xs),
        }
    }

    fn apply_dual(&self, l: Level, xs: &[Dyn]) -> Vec<Dyn> {
        let Some(rule) = &self.jvp else {
            return (self.forward)(xs);
        };
        let duals: Vec<_> = xs.iter().map(|x| x.dual_at(l)).collect();
        let primals: Vec<Dyn> = duals.iter().map(|d| d.primal.clone()).collect();
        let ys = self.apply(&primals);
        if duals.iter().all(|d| d.tangent.is_none()) {
            return ys.into_iter().map(|y| Dyn::dual(l, y, None)).collect();
        }
        let tangents: Vec<Option<Dyn>> = duals.into_iter().map(|d| d.tangent).collect();
        let ts = rule(&primals, &ys, &tangents);
        assert_eq!(
            ts.len(),
            ys.len(),
            "custom op {}: the JVP rule returned {} tangents for {} outputs; return one per output",
            self.name,
            ts.len(),
            ys.len()
        );
        ys.into_iter()
            .zip(ts)
            .map(|(y, t)| Dyn::dual(l, y, Some(t)))
            .collect()
    }

    /// Once per example, so the rules still apply at the levels below.
    fn apply_batched(&self, l: Level, xs: &[Dyn]) -> Vec<Dyn> {
        let bs: Vec<_> = xs.iter().map(|x| x.batched_at(l)).collect();
        super::gather::per_example(l, &bs, |ex| self.apply(ex))
    }

    fn apply_rev(&self, l: Level, xs: &[Dyn]) -> Vec<Dyn> {
        let Some(rule) = &self.vjp else {
            return (self.forward)(xs);
        };
        let revs: Vec<Rev> = xs.iter().map(|x| x.rev_at(l)).collect();
        let values: Vec<Dyn> = revs.iter().map(|r| r.value.clone()).collect();
        let ys = self.apply(&values);
        let inputs: Vec<&Rev> = revs.iter().collect();
        let m = ys.len();
        // One node per output; each runs the rule with its own cotangent
        // (the others zero).
        (0..m)
            .map(|j| {
                let (rule, xs, ys_all, name) = (rule.clone(), values.clone(), ys.clone(), self.name.clone());
                let r = Rev::record(ys[j].clone(), &inputs, move |ct, needs| {
                    let cts: Vec<Option<Dyn>> = (0..m).map(|k| (k == j).then(|| ct.clone())).collect();
                    let gs = rule(&xs, &ys_all, &cts);
                    assert_eq!(
                        gs.len(),
                        xs.len(),
                        "custom op {name}: the VJP rule returned {} cotangents for {} inputs; return one per input (None for zero)",
                        gs.len(),
                        xs.len()
                    );
                    gs.into_iter()
                        .zip(needs)
                        .map(|(g, &need)| if need { g } else { None })
                        .collect()
                });
                Dyn::Rev(l, Box::new(r))
            })
            .collect()
    }

    fn apply_staged(&self, l: Level, xs: &[Dyn]) -> Vec<Dyn> {
        let ss: Vec<_> = xs.iter().map(|x| x.staged_at(l)).collect();
        let values: Vec<Dyn> = ss.iter().map(|s| s.value.clone()).collect();
        let ys = self.apply(&values);
        let refs: Vec<&super::Staged> = ss.iter().collect();
        (0..ys.len())
            .map(|j| {
                let op = self.clone();
                let s = super::Staged::record(
                    ys[j].clone(),
                    &refs,
                    || format!("{}[{j}]", self.name),
                    move |x| {
                        let args: Vec<Dyn> = x.iter().map(|d| (*d).clone()).collect();
                        op.apply(&args).swap_remove(j)
                    },
                );
                Dyn::Staged(l, Box::new(s))
            })
            .collect()
    }
}

/// `f` whose reverse mode recomputes it instead of keeping its residuals:
/// under `vjp`/`grad`, the forward runs untraced and the pullback runs
/// `vjp(f)` again when it is needed (`jax.checkpoint`).
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let f = |x: &[Dyn]| vec![x[0].sin().exp()];
/// let x = Dyn::from(Array::scalar(0.3f64));
/// let plain = dynamic::grad(|x| f(std::slice::from_ref(x)).remove(0), &x);
/// let remat = dynamic::grad(|x| dynamic::checkpoint(f, std::slice::from_ref(x)).remove(0), &x);
/// assert_eq!(plain.to_array().item(), remat.to_array().item());
/// ```
pub fn checkpoint(f: impl Fn(&[Dyn]) -> Vec<Dyn> + Send + Sync + 'static, xs: &[Dyn]) -> Vec<Dyn> {
    checkpointed(Arc::new(f)).apply(xs)
}

/// The [`DynOp`] of [`checkpoint`].
pub fn checkpointed(f: Arc<ForwardFn>) -> DynOp {
    let g = f.clone();
    DynOp::new("checkpoint", f).with_vjp(Arc::new(move |xs, _ys, cts| {
        let (_, pb) = super::vjp(|x| g(x), xs);
        pb.call(cts).into_iter().map(Some).collect()
    }))
}
