//! `Rev`: the reverse-mode tracer of [`super::vjp`], and its tape.
//!
//! A `Rev` is a value one level down plus the tape node that made it
//! (`None`: a constant of this tape). Each op records a node holding its
//! inputs' nodes and a pullback that applies the op's VJP rule from
//! [`crate::primitives`] at `Dyn`; [`backward`] runs the pullbacks in reverse
//! topological order. Because the pullbacks compute on `Dyn`, a pullback
//! run inside another transform is itself traced by it: that is how
//! `grad(grad f)`, `jacfwd(jacrev f)` and `vmap(grad f)` work.

use super::Dyn;
use crate::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A pullback: the output cotangent to one cotangent per input node
/// (`None` where an input is a constant or the rule gives a zero).
pub(crate) type PullbackFn = Box<dyn Fn(&Dyn) -> Vec<Option<Dyn>> + Send + Sync>;

/// One recorded op (or an input of the transform, a leaf).
pub(crate) struct Node {
    /// The nodes of the op's inputs (`None`: a constant input).
    inputs: Vec<Option<Arc<Node>>>,
    /// The op's pullback; `None` for a leaf.
    pullback: Option<PullbackFn>,
    /// For a leaf, which input of the transform it is.
    pub(crate) leaf: Option<usize>,
}

/// A value traced by a reverse-mode transform.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let x = Dyn::from(Array::scalar(3.0f64));
/// let (y, pullback) = dynamic::vjp(|x| vec![x[0].square()], &[x]);
/// assert_eq!(y[0].to_array().item(), 9.0);
/// let ct = Dyn::from(Array::scalar(1.0f64));
/// assert_eq!(pullback.call(&[Some(ct)])[0].to_array().item(), 6.0);
/// ```
#[derive(Clone)]
pub struct Rev {
    /// The value, one level down.
    pub value: Dyn,
    pub(crate) node: Option<Arc<Node>>,
}

impl Rev {
    /// A constant of the tape: no node, so nothing flows back to it.
    pub(crate) fn constant(value: Dyn) -> Rev {
        Rev { value, node: None }
    }

    /// Input `index` of a reverse-mode transform.
    pub(crate) fn leaf(value: Dyn, index: usize) -> Rev {
        let node = Node {
            inputs: Vec::new(),
            pullback: None,
            leaf: Some(index),
        };
        Rev {
            value,
            node: Some(Arc::new(node)),
        }
    }

    /// The op's output `value`, recorded when any input is traced.
    /// `pullback` receives the output cotangent and which inputs need one.
    pub(crate) fn record(
        value: Dyn,
        inputs: &[&Rev],
        pullback: impl Fn(&Dyn, &[bool]) -> Vec<Option<Dyn>> + Send + Sync + 'static,
    ) -> Rev {
        if inputs.iter().all(|r| r.node.is_none()) {
            return Rev::constant(value);
        }
        let needs: Vec<bool> = inputs.iter().map(|r| r.node.is_some()).collect();
        let node = Node {
            inputs: inputs.iter().map(|r| r.node.clone()).collect(),
            pullback: Some(Box::new(move |ct| pullback(ct, &needs))),
            leaf: None,
        };
        Rev {
            value,
            node: Some(Arc::new(node)),
        }
    }

    /// A unary op with output `y`; `rule(x, y, ct)` is its VJP.
    pub(crate) fn unary(
        &self,
        y: Dyn,
        rule: impl Fn(&Dyn, &Dyn, &Dyn) -> Dyn + Send + Sync + 'static,
    ) -> Rev {
        if self.node.is_none() {
            return Rev::constant(y);
        }
        let (x, yy) = (self.value.clone(), y.clone());
        Rev::record(y, &[self], move |ct, _| vec![Some(rule(&x, &yy, ct))])
    }

    /// An op linear in its one input: `rule(ct)` is its VJP.
    pub(crate) fn linear(&self, y: Dyn, rule: impl Fn(&Dyn) -> Dyn + Send + Sync + 'static) -> Rev {
        Rev::record(y, &[self], move |ct, _| vec![Some(rule(ct))])
    }

    /// A binary op with output `y`; `rule_a(a, b, y, ct)` and `rule_b` are
    /// its VJPs (each run only when that input is traced).
    pub(crate) fn binary(
        &self,
        o: &Rev,
        y: Dyn,
        rule_a: fn(&Dyn, &Dyn, &Dyn, &Dyn) -> Dyn,
        rule_b: fn(&Dyn, &Dyn, &Dyn, &Dyn) -> Dyn,
    ) -> Rev {
        if self.node.is_none() && o.node.is_none() {
            return Rev::constant(y);
        }
        let (a, b, yy) = (self.value.clone(), o.value.clone(), y.clone());
        Rev::record(y, &[self, o], move |ct, needs| {
            vec![
                needs[0].then(|| rule_a(&a, &b, &yy, ct)),
                needs[1].then(|| rule_b(&a, &b, &yy, ct)),
            ]
        })
    }
}

/// Runs the tape backward from `outputs` (each a node and its cotangent)
/// and returns the cotangent reaching each of `n_leaves` leaves (`None`:
/// nothing reached it).
pub(crate) fn backward(outputs: Vec<(Arc<Node>, Dyn)>, n_leaves: usize) -> Vec<Option<Dyn>> {
    let key = |n: &Arc<Node>| Arc::as_ptr(n) as usize;
    // Reverse post-order of a depth-first walk: every node comes before
    // the nodes of its inputs.
    let mut order: Vec<Arc<Node>> = Vec::new();
    let mut seen: HashMap<usize, ()> = HashMap::new();
    let mut stack: Vec<(Arc<Node>, usize)> = Vec::new();
    for (n, _) in &outputs {
        if seen.insert(key(n), ()).is_some() {
            continue;
        }
        stack.push((n.clone(), 0));
        while let Some((node, i)) = stack.pop() {
            if let Some(child) = node.inputs.get(i) {
                stack.push((node.clone(), i + 1));
                if let Some(c) = child
                    && seen.insert(key(c), ()).is_none()
                {
                    stack.push((c.clone(), 0));
                }
            } else {
                order.push(node);
            }
        }
    }
    let mut cts: HashMap<usize, Dyn> = HashMap::new();
    for (n, ct) in outputs {
        accumulate(&mut cts, key(&n), ct);
    }
    let mut leaves: Vec<Option<Dyn>> = vec![None; n_leaves];
    for node in order.iter().rev() {
        let Some(ct) = cts.remove(&key(node)) else {
            continue;
        };
        if let Some(i) = node.leaf {
            leaves[i] = Some(ct);
            continue;
        }
        let Some(pullback) = &node.pullback else {
            continue;
        };
        let _rule = crate::array::nans::rule_scope("");
        for (input, ict) in node.inputs.iter().zip(pullback(&ct)) {
            if let (Some(input), Some(ict)) = (input, ict) {
                accumulate(&mut cts, key(input), ict);
            }
        }
    }
    leaves
}

fn accumulate(cts: &mut HashMap<usize, Dyn>, k: usize, ct: Dyn) {
    match cts.remove(&k) {
        Some(prev) => {
            cts.insert(k, prev.add(&ct));
        }
        None => {
            cts.insert(k, ct);
        }
    }
}
