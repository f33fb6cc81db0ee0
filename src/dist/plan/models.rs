//! Programs written out by hand as graphs, for plans of models no
//! recorded program exists for yet, the planner's tests and its bench.

use super::super::factors::Rule;
use super::super::graph::{Graph, Node, Source};
use super::super::rules;

/// Appends nodes to a graph.
#[derive(Default)]
pub(crate) struct Builder {
    pub g: Graph,
}

impl Builder {
    /// Argument leaf `i` of `shape`.
    pub fn input(&mut self, i: usize, shape: &[usize], elem: usize) -> usize {
        self.push(Rule::source("input", shape), vec![], elem, Source::Input(i))
    }

    /// An op reading `operands`.
    pub fn op(&mut self, rule: Rule, operands: &[usize], elem: usize) -> usize {
        self.push(rule, operands.to_vec(), elem, Source::Op)
    }

    fn push(&mut self, rule: Rule, operands: Vec<usize>, elem: usize, source: Source) -> usize {
        self.g.nodes.push(Node {
            rule,
            operands,
            elem,
            source,
        });
        self.g.nodes.len() - 1
    }

    /// The output shape of node `n`.
    pub fn shape(&self, n: usize) -> Vec<usize> {
        self.g.nodes[n].rule.out.clone()
    }
}

/// One training step of a multilayer perceptron, forward and backward:
/// `h ↦ relu(h·W + b)` per layer (no ReLU after the last), loss the sum
/// of the last layer's output. Inputs: `x: [batch, widths[0]]`, then
/// `W_l: [widths[l], widths[l+1]]` and `b_l: [widths[l+1]]`; outputs: the
/// loss, then each layer's weight and bias gradients.
pub(crate) fn mlp_graph(batch: usize, widths: &[usize], elem: usize) -> Graph {
    let mut b = Builder::default();
    let x = b.input(0, &[batch, widths[0]], elem);
    let layers = widths.len() - 1;
    let mut params = Vec::with_capacity(layers);
    for l in 0..layers {
        let w = b.input(1 + 2 * l, &[widths[l], widths[l + 1]], elem);
        let bias = b.input(2 + 2 * l, &[widths[l + 1]], elem);
        params.push((w, bias));
    }
    // Forward: keep each layer's input and pre-activation.
    let mut h = x;
    let mut saved = Vec::with_capacity(layers);
    for (l, &(w, bias)) in params.iter().enumerate() {
        let z = b.op(rules::matmul(&b.shape(h), &b.shape(w)), &[h, w], elem);
        let a = b.op(
            rules::binary("add", &b.shape(z), &b.shape(bias)),
            &[z, bias],
            elem,
        );
        saved.push((h, a));
        h = if l + 1 < layers {
            b.op(rules::unary("relu", &b.shape(a)), &[a], elem)
        } else {
            a
        };
    }
    let loss = b.op(
        rules::reduce("sum_axes", &b.shape(h), &[0, 1], false),
        &[h],
        elem,
    );
    // Backward: the loss's cotangent is ones shaped like the last layer.
    let mut g = b.op(rules::full_like(&b.shape(h)), &[h], elem);
    let mut grads = vec![(0, 0); layers];
    for l in (0..layers).rev() {
        let (hin, a) = saved[l];
        let (w, _) = params[l];
        let ga = if l + 1 < layers {
            let step = b.op(rules::unary("relu_mask", &b.shape(a)), &[a], elem);
            b.op(
                rules::binary("mul", &b.shape(g), &b.shape(step)),
                &[g, step],
                elem,
            )
        } else {
            g
        };
        let ht = b.op(rules::permute(&b.shape(hin), &[1, 0]), &[hin], elem);
        let gw = b.op(rules::matmul(&b.shape(ht), &b.shape(ga)), &[ht, ga], elem);
        let gb = b.op(
            rules::sum_to_shape(&b.shape(ga), &[widths[l + 1]]),
            &[ga],
            elem,
        );
        grads[l] = (gw, gb);
        if l > 0 {
            let wt = b.op(rules::permute(&b.shape(w), &[1, 0]), &[w], elem);
            g = b.op(rules::matmul(&b.shape(ga), &b.shape(wt)), &[ga, wt], elem);
        }
    }
    b.g.outputs = std::iter::once(loss)
        .chain(grads.iter().flat_map(|&(gw, gb)| [gw, gb]))
        .collect();
    b.g
}
