//! [`run_backward`]: the tape walked from a scalar output to the leaves.
//!
//! Nodes run in reverse topological order (an iterative post-order DFS).
//! Each node's closure is taken out when it runs, which frees its saved
//! values; a node reached a second time panics with a message saying to
//! recompute. A run of unary ops in which each op's result feeds only the
//! next (`x.sin().exp().tanh()`) is not run op by op: its cotangent is
//! carried down the run as links, and the first op whose input is not
//! such a link computes the cotangent of the run's input in one pass
//! (`autograd::chain`), or, where that pass does not apply, runs the ops'
//! own VJPs in turn.

use super::GradMeta;
use super::chain;
use crate::Array;
use std::collections::HashMap;
use std::sync::Arc;

fn key(m: &Arc<GradMeta>) -> *const GradMeta {
    Arc::as_ptr(m)
}

/// A node's cotangent: ready, or still to be pulled through the links of
/// the unary ops between it and `top`'s node (output side first), whose
/// closures are already taken.
enum Ct {
    Ready(Array),
    Chain {
        top: Array,
        nodes: Vec<(Arc<GradMeta>, super::BackwardFn)>,
    },
}

impl Ct {
    /// The cotangent itself: the chain's one pass, or its VJPs in turn.
    fn ready(self) -> Array {
        match self {
            Ct::Ready(a) => a,
            Ct::Chain { top, nodes } => {
                let links: Vec<&chain::Link> = nodes
                    .iter()
                    .map(|(m, _)| link_of(m).expect("a linked node"))
                    .collect();
                // Checking for NaNs runs each VJP on its own, so that a
                // report names the rule.
                if !crate::array::nans::debug_nans_enabled()
                    && let Some(ct) = chain::backward(&top, &links)
                {
                    return ct;
                }
                drop(links);
                nodes.into_iter().fold(top, |ct, (m, f)| {
                    let _rule = op_of(&m).and_then(crate::array::nans::rule_scope);
                    f(&ct)
                        .into_iter()
                        .next()
                        .flatten()
                        .expect("a unary op's cotangent")
                })
            }
        }
    }
}

fn op_of(m: &GradMeta) -> Option<&'static str> {
    match m {
        GradMeta::Node { op, .. } => Some(op),
        GradMeta::Leaf { .. } => None,
    }
}

fn link_of(m: &GradMeta) -> Option<&chain::Link> {
    match m {
        GradMeta::Node { link, .. } => link.as_ref(),
        GradMeta::Leaf { .. } => None,
    }
}

#[track_caller]
pub(super) fn run_backward(
    root: Arc<GradMeta>,
    seed: Array,
    ready: &mut dyn FnMut(super::LeafId, &Array),
) {
    // Reverse topological order, and how many times each node is an input.
    let mut order: Vec<Arc<GradMeta>> = Vec::new();
    let mut uses: HashMap<*const GradMeta, usize> = HashMap::new();
    let mut seen: HashMap<*const GradMeta, ()> = HashMap::new();
    let mut stack: Vec<(Arc<GradMeta>, bool)> = vec![(root.clone(), false)];
    while let Some((m, expanded)) = stack.pop() {
        if expanded {
            order.push(m);
            continue;
        }
        if seen.insert(key(&m), ()).is_some() {
            continue;
        }
        stack.push((m.clone(), true));
        if let GradMeta::Node { inputs, .. } = &*m {
            for i in inputs.iter().flatten() {
                *uses.entry(key(i)).or_insert(0) += 1;
                if !seen.contains_key(&key(i)) {
                    stack.push((i.clone(), false));
                }
            }
        }
    }
    let mut cts: HashMap<*const GradMeta, Ct> = HashMap::new();
    cts.insert(key(&root), Ct::Ready(seed));
    // The leaves' uses not yet run: a leaf whose count reaches zero is
    // complete and is accumulated at once, not at its own turn.
    let mut left = uses.clone();
    let mut leaves_done: Vec<Arc<GradMeta>> = Vec::new();
    for m in order.into_iter().rev() {
        if let GradMeta::Node { inputs, .. } = &*m {
            for i in inputs.iter().flatten() {
                let n = left.get_mut(&key(i)).expect("counted");
                *n -= 1;
                if *n == 0 && matches!(**i, GradMeta::Leaf { .. }) {
                    leaves_done.push(i.clone());
                }
            }
        }
        let Some(ct) = cts.remove(&key(&m)) else {
            finish_leaves(&mut leaves_done, &mut cts, ready);
            continue;
        };
        match &*m {
            GradMeta::Leaf { .. } => {
                // Only the root itself reaches here (a leaf that is the loss).
                cts.insert(key(&m), ct);
                leaves_done.push(m.clone());
            }
            GradMeta::Node {
                op,
                inputs,
                backward,
                link,
            } => {
                let Some(f) = backward.lock().expect("tape lock").take() else {
                    panic!(
                        "backward: the graph through `{op}` was already used by an earlier backward() and its \
                         saved values were freed; recompute the forward pass before calling backward() again"
                    )
                };
                if link.is_some() {
                    let (top, mut nodes) = match ct {
                        Ct::Ready(a) => (a, Vec::new()),
                        Ct::Chain { top, nodes } => (top, nodes),
                    };
                    nodes.push((m.clone(), f));
                    let input = inputs[0].as_ref();
                    // The input is the next link when it is a linked unary
                    // op with no other consumer.
                    if let Some(i) =
                        input.filter(|i| link_of(i).is_some() && uses.get(&key(i)) == Some(&1))
                    {
                        cts.insert(key(i), Ct::Chain { top, nodes });
                    } else if let Some(i) = input {
                        add(&mut cts, i, Ct::Chain { top, nodes }.ready());
                    }
                } else {
                    let ct = ct.ready();
                    let _rule = crate::array::nans::rule_scope(op);
                    let in_cts = f(&ct);
                    for (input, ict) in inputs.iter().zip(in_cts) {
                        if let (Some(input), Some(ict)) = (input, ict) {
                            add(&mut cts, input, ict);
                        }
                    }
                }
            }
        }
        finish_leaves(&mut leaves_done, &mut cts, ready);
    }
}

/// Accumulates the cotangents of the leaves that are complete into their
/// `.grad()` and reports each to `ready`.
fn finish_leaves(
    done: &mut Vec<Arc<GradMeta>>,
    cts: &mut HashMap<*const GradMeta, Ct>,
    ready: &mut dyn FnMut(super::LeafId, &Array),
) {
    for m in done.drain(..) {
        let (Some(ct), GradMeta::Leaf { grad }) = (cts.remove(&key(&m)), &*m) else {
            continue;
        };
        let ct = ct.ready();
        let total = {
            let mut g = grad.lock().expect("grad lock");
            let total = match g.take() {
                Some(old) => &old + &ct,
                None => ct,
            };
            *g = Some(total.clone());
            total
        };
        ready(super::LeafId(Arc::as_ptr(&m) as usize), &total);
    }
}

/// Adds `ict` into the cotangent of `input`.
fn add(cts: &mut HashMap<*const GradMeta, Ct>, input: &Arc<GradMeta>, ict: Array) {
    let k = key(input);
    let acc = match cts.remove(&k) {
        Some(old) => &old.ready() + &ict,
        None => ict,
    };
    cts.insert(k, Ct::Ready(acc));
}
