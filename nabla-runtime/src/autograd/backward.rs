//! [`run_backward`]: the tape walked from a scalar output to the leaves.
//!
//! Nodes run in reverse topological order (an iterative post-order DFS).
//! Each node's closure is taken out when it runs, which frees its saved
//! values; a node reached a second time panics with a message saying to
//! recompute. A run of unary ops in which each op's result feeds only the
//! next (`x.sin().exp().tanh()`) is not run op by op: its cotangent is
//! carried down the run as links, and the first op whose input is not
//! such a link computes the cotangent of the run's input in one pass
//! (`fused::chain`), or, where that pass does not apply, runs the ops'
//! own VJPs in turn.

use super::GradMeta;
use crate::Array;
use crate::fused::chain;
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
                if let Some(ct) = chain::backward(&top, &links) {
                    return ct;
                }
                drop(links);
                nodes.into_iter().fold(top, |ct, (_, f)| {
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

fn link_of(m: &GradMeta) -> Option<&chain::Link> {
    match m {
        GradMeta::Node { link, .. } => link.as_ref(),
        GradMeta::Leaf { .. } => None,
    }
}

#[track_caller]
pub(super) fn run_backward(root: Arc<GradMeta>, seed: Array) {
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
    for m in order.into_iter().rev() {
        let Some(ct) = cts.remove(&key(&m)) else {
            continue;
        };
        match &*m {
            GradMeta::Leaf { grad } => {
                let ct = ct.ready();
                let mut g = grad.lock().expect("grad lock");
                *g = Some(match g.take() {
                    Some(old) => &old + &ct,
                    None => ct,
                });
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
                    continue;
                }
                let in_cts = f(&ct.ready());
                for (input, ict) in inputs.iter().zip(in_cts) {
                    if let (Some(input), Some(ict)) = (input, ict) {
                        add(&mut cts, input, ict);
                    }
                }
            }
        }
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
