//! [`Planner::training_step`]: the layouts to keep a training step's
//! arguments in between calls. With `auto(loss, &mesh).sharded()` the
//! parameters, data and optimizer state stay in blocks and each gradient
//! is pinned to its parameter's layout, so a parameter's layout decides
//! both how the forward pass reads it and where its gradient must end:
//! the planner's layouts for global arrays (where every layout of an
//! input is free) do not say which to keep. The search alternates: plan
//! with the arguments' layouts fixed, lay each parameter out as its
//! gradient comes out of that plan's backward pass (pending sums
//! completed), and plan again, keeping the fastest plan, starting from
//! the layouts the free plan gives the inputs and from its gradients'.

use super::*;
use crate::DType;
use crate::compose::DiffFn;
use crate::dist::pin::Pinned;
use crate::dist::trace::record_on;
use crate::transforms::{Argnum, NoAux, ValueAndGrad};

/// Rounds of the alternation from each start (it usually settles in
/// two).
const ROUNDS: usize = 4;

impl Planner {
    /// The plan of one training step, `value_and_grad(loss)` with respect
    /// to the first argument, whose arguments are kept in their layouts
    /// between calls and whose gradients come back laid out like their
    /// parameters: what `auto(loss, &mesh).sharded()` runs. The planner
    /// chooses the arguments' layouts as well (those not given by
    /// [`Planner::fix_inputs`]); [`Plan::input_specs`] lists them in leaf
    /// order, to lay the parameters, the data and the optimizer state out
    /// with. No MPI is needed.
    ///
    /// ```
    /// use nabla::{Array, DType, dist::{Plan, Spec}};
    ///
    /// #[nabla::differentiable]
    /// fn loss(w: &Array, x: &Array) -> Array {
    ///     x.matmul(w).tanh().sum()
    /// }
    ///
    /// fn main() {
    ///     // A wide layer on a small batch: split the weight, keep it split.
    ///     let w = Array::zeros(&[1024, 1024], DType::F32);
    ///     let x = Array::zeros(&[8, 1024], DType::F32);
    ///     let plan = Plan::for_mesh(&[("model", 4)]).training_step(loss, (&w, &x));
    ///     assert!(!plan.input_specs()[0].is_replicated());
    ///     println!("{plan}");
    /// }
    /// ```
    pub fn training_step<F, U>(&self, loss: F, args: U) -> Plan
    where
        F: DiffFn<Out = crate::compose::One>,
        Argnum<0>: crate::compose::ArgIndex<F::Arity>,
        U: UserArgs<F::Arity>,
    {
        let _ = loss;
        let args = args.args();
        let leaves: Vec<(Vec<usize>, DType)> = (0..<F::Arity as crate::compose::Arity>::len(&args))
            .map(|i| {
                let a = <F::Arity as crate::compose::Arity>::get(&args, i);
                (a.shape().to_vec(), a.dtype())
            })
            .collect();
        let mut g =
            record_on::<ValueAndGrad<Pinned<F>, Argnum<0>, NoAux>, crate::Array>(&args, &leaves);
        g.keep_outputs = true;
        self.kept(&g)
    }

    /// The fastest plan of `g` (a recording with pins) over argument
    /// layouts found by the alternation of the module docs.
    pub(crate) fn kept(&self, g: &Graph) -> Plan {
        let free = self.graph(g);
        let n = g
            .nodes
            .iter()
            .filter(|n| matches!(n.source, Source::Input(_)))
            .count();
        let starts = [
            (0..n).map(|i| free.input_layout(i)).collect::<Vec<_>>(),
            self.gradient_layouts(g, &free),
        ];
        let mut best: Option<Plan> = None;
        for start in starts {
            let mut layouts = start;
            for _ in 0..ROUNDS {
                let plan = self.with_layouts(&layouts).graph(g);
                let next = self.gradient_layouts(g, &plan);
                if best.as_ref().is_none_or(|b| plan.time_s() < b.time_s()) {
                    best = Some(plan);
                }
                if next == layouts {
                    break;
                }
                layouts = next;
            }
        }
        best.expect("at least one round")
    }

    /// This planner with the argument leaves held to `layouts` (where the
    /// caller fixed none).
    fn with_layouts(&self, layouts: &[Layout]) -> Planner {
        let specs = layouts
            .iter()
            .enumerate()
            .map(|(i, l)| match self.fixed.get(i) {
                Some(Some(s)) => Some(s.clone()),
                _ => Some(l.spec(&self.mesh)),
            })
            .collect::<Vec<_>>();
        self.clone().fix_inputs(&specs)
    }

    /// Per argument leaf, its layout in `plan`, or, for a leaf with a
    /// pinned gradient, the layout the gradient has before its pin
    /// (pending sums completed).
    fn gradient_layouts(&self, g: &Graph, plan: &Plan) -> Vec<Layout> {
        let mut layouts: Vec<Layout> = plan.inputs().map(|n| n.out.clone()).collect();
        for &(v, leaf) in &g.pins {
            let u = g.nodes[v].operands[0];
            layouts[leaf] = Layout {
                dims: plan.nodes[u].out.dims.clone(),
                partial: 0,
            };
        }
        layouts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Array;

    #[crate::differentiable(crate = crate)]
    fn mlp(w1: &Array, w2: &Array, x: &Array) -> Array {
        x.matmul(w1).tanh().matmul(w2).sum()
    }

    /// The pins: one `like_input` per gradient leaf, fixed to the leaf's
    /// split, and the outputs returned where they are.
    #[test]
    fn gradients_are_pinned_to_their_parameters() {
        let (w1, w2) = (
            Array::zeros(&[64, 256], DType::F32),
            Array::zeros(&[256, 64], DType::F32),
        );
        let x = Array::zeros(&[8, 64], DType::F32);
        let plan = Plan::for_mesh(&[("model", 4)]).training_step(mlp, (&w1, &w2, &x));
        let specs = plan.input_specs();
        let pins: Vec<&PlanNode> = plan.nodes.iter().filter(|n| n.op == "like_input").collect();
        assert_eq!(
            pins.len(),
            1,
            "value_and_grad w.r.t. w1 pins one gradient:\n{plan}"
        );
        assert_eq!(pins[0].out.spec(&plan.mesh), specs[0], "{plan}");
        assert!(
            plan.outputs.iter().all(|(_, e)| e.moves.is_empty()),
            "{plan}"
        );
    }

    #[crate::differentiable(crate = crate)]
    fn two(p: &(Array, Array), x: &Array) -> Array {
        x.matmul(&p.0).tanh().matmul(&p.1).sum()
    }

    /// A wide layer on a small batch: the search finds a plan at least as
    /// fast as Megatron's layout and as the layouts a plan for global
    /// arrays gives the inputs, and it splits the weights.
    #[test]
    fn the_search_does_at_least_as_well_as_megatron_and_the_free_layouts() {
        let p = (
            Array::zeros(&[784, 512], DType::F32),
            Array::zeros(&[512, 512], DType::F32),
        );
        let x = Array::zeros(&[256, 784], DType::F32);
        let planner = Plan::for_mesh(&[("model", 4)]);
        let best = planner.training_step(two, (&p, &x));
        let free: Vec<Option<Spec>> = planner
            .function(crate::value_and_grad(two), (&p, &x))
            .input_specs()
            .into_iter()
            .map(Some)
            .collect();
        let as_free = planner
            .clone()
            .fix_inputs(&free)
            .training_step(two, (&p, &x));
        let megatron = planner
            .clone()
            .fix_inputs(&[
                Some(Spec::new(&[None, Some("model")])),
                Some(Spec::new(&[Some("model"), None])),
                Some(Spec::replicated(2)),
            ])
            .training_step(two, (&p, &x));
        assert!(
            best.time_s() <= as_free.time_s() * (1.0 + 1e-12),
            "{best}\n{as_free}"
        );
        assert!(
            best.time_s() <= megatron.time_s() * (1.0 + 1e-12),
            "{best}\n{megatron}"
        );
        // Megatron's layout sends nothing here (the batch whole, the
        // second product's sum left pending into the loss).
        assert_eq!(best.bytes_per_call(), 0, "{best}");
        assert!(
            best.input_specs()[..2].iter().all(|s| !s.is_replicated()),
            "{best}"
        );
    }
}
