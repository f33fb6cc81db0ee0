//! [`Planner`]'s settings and entry points (a program recorded from a
//! function, a hand-built MLP step, fixed inputs) and the solve: the
//! assignment per node under the memory limit, then the [`Plan`].

use super::*;

/// How many of the search's plans are costed exactly.
const EXACT: usize = 2;

impl Planner {
    /// Plans for at most `bytes` live on one rank at once.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("model", 4)]).memory_limit(1 << 20).mlp(8, &[256, 256]);
    /// assert!(p.fits() && p.memory_per_rank() <= 1 << 20);
    /// ```
    pub fn memory_limit(mut self, bytes: u64) -> Planner {
        self.limit = Some(bytes);
        self
    }

    /// Plans with `model` instead of [`CostModel::default`].
    ///
    /// ```
    /// use nabla::dist::{CostModel, Plan};
    /// let m = CostModel::uniform(1e12, 1e9, 1e-6);
    /// assert_eq!(Plan::for_mesh(&[("x", 2)]).cost_model(m.clone()).mlp(8, &[4, 4]).cost_model(), &m);
    /// ```
    pub fn cost_model(mut self, model: CostModel) -> Planner {
        self.model = model;
        self
    }

    /// Plans with argument leaf `i` laid out as `specs[i]` where that is
    /// `Some` (data that arrives sharded, or a hand-written layout to
    /// price); the other leaves and every intermediate are chosen as
    /// usual. Leaves are in argument order, a tree's in its leaf order, as
    /// [`Plan::input_specs`] lists them. The specs are checked when a
    /// program is planned: each must resolve against its leaf's shape and
    /// the mesh, with nothing pending, and there must be no more specs
    /// than leaves.
    ///
    /// ```
    /// use nabla::dist::{Plan, Spec};
    /// // Megatron's layout for a two-layer MLP: the first weight split by
    /// // columns, the second by rows, the batch and biases whole.
    /// let megatron = vec![
    ///     None,
    ///     Some(Spec::new(&[None, Some("model")])),
    ///     Some(Spec::new(&[Some("model")])),
    ///     Some(Spec::new(&[Some("model"), None])),
    /// ];
    /// let tp = Plan::for_mesh(&[("model", 4)]).fix_inputs(&megatron).mlp(8, &[64, 256, 64]);
    /// assert_eq!(tp.input_specs()[1].to_string(), "[-, model]");
    /// let free = Plan::for_mesh(&[("model", 4)]).mlp(8, &[64, 256, 64]);
    /// assert!(free.time_s() <= tp.time_s() * (1.0 + 1e-9)); // the planner does at least as well
    /// ```
    pub fn fix_inputs(mut self, specs: &[Option<Spec>]) -> Planner {
        self.fixed = specs.to_vec();
        self
    }

    /// The plan for one training step of a multilayer perceptron (dense
    /// layers of the given widths, ReLU between them, loss the sum of the
    /// last layer; f32): inputs the batch `[batch, widths[0]]` then each
    /// layer's weight and bias, outputs the loss and every weight's and
    /// bias's gradient. For inspecting plans of shapes no program has yet.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(64, &[8, 16, 4]);
    /// assert_eq!(p.input_specs().len(), 5);
    /// ```
    #[track_caller]
    pub fn mlp(&self, batch: usize, widths: &[usize]) -> Plan {
        if widths.len() < 2 {
            panic!(
                "nabla::dist::Planner::mlp: widths {widths:?} name no layer; give the input width and at least one layer's width"
            );
        }
        self.graph(&models::mlp_graph(batch, widths, 4))
    }

    /// The plan for one call of `f` (a `#[differentiable]` function or a
    /// transform of one: `value_and_grad(loss)` plans a training step,
    /// backward pass included) on arguments shaped like `args` (global
    /// arrays and trees, as the function takes them, in a tuple of
    /// references). The program is recorded from shapes alone: nothing
    /// runs but custom ops' forwards on zeros, and no MPI is needed.
    ///
    /// ```
    /// use nabla::{Array, DType, dist::Plan};
    ///
    /// #[nabla::differentiable]
    /// fn loss(w: &Array, x: &Array) -> Array {
    ///     x.matmul(w).tanh().sum()
    /// }
    ///
    /// fn main() {
    ///     let w = Array::zeros(&[64, 64], DType::F32);
    ///     let x = Array::zeros(&[4096, 64], DType::F32);
    ///     let step = nabla::value_and_grad(loss);
    ///     let plan = Plan::for_mesh(&[("data", 8)]).function(step, (&w, &x));
    ///     let alone = Plan::for_mesh(&[("data", 1)]).function(step, (&w, &x));
    ///     assert!(plan.time_s() < alone.time_s() / 4.0); // the batch's work is split
    ///     println!("{plan}");
    /// }
    /// ```
    pub fn function<G: crate::compose::DiffFn, U: UserArgs<G::Arity>>(
        &self,
        f: G,
        args: U,
    ) -> Plan {
        let _ = f;
        self.graph(&crate::dist::trace::record_fn::<G>(&args.args()))
    }

    /// The plan for one call of the recorded program `g`.
    pub(crate) fn graph(&self, g: &Graph) -> Plan {
        let weight = memory::weights(g);
        let fixed = self.fixed_assignments(g);
        let mut pr = Pricer::new(&self.mesh, &self.model);
        let model = Model::build_fixed(g, &mut pr, &weight, &fixed);
        let lower = model.lower_bound(&mut pr, g);
        let cands: Vec<&[Assignment]> = model.nodes.iter().map(|n| &n.assigns[..]).collect();
        // Ties in time go to the plan with less memory: a penalty of a
        // millionth of the time it takes to send a byte.
        let fastest = self.model.bandwidth.iter().copied().fold(0.0, f64::max);
        let tie = if fastest > 0.0 { 1e-6 / fastest } else { 0.0 };
        let mut run = |lambda: f64| {
            let lambda = lambda + tie;
            // The unrestricted start and the search's best few on the
            // exact cost (the pairwise model misprices some plans): where
            // times agree to a millionth, the plan that sends fewer bytes.
            let found = model.search(g, &self.mesh, lambda);
            let floor = found
                .iter()
                .map(|c| model.objective(c, lambda))
                .fold(f64::INFINITY, f64::min);
            let mut best: Option<(f64, u64, Vec<Assignment>, Vec<u64>)> = None;
            for (i, choice) in found.iter().enumerate().take(EXACT + 1) {
                if i > 0 && model.objective(choice, lambda) > floor * (1.0 + 1e-2) {
                    break;
                }
                let mut assign: Vec<Assignment> = (0..choice.len())
                    .map(|v| model.nodes[v].states[choice[v]].a.clone())
                    .collect();
                let mut ev = Eval::new(g, &mut pr, &assign, &weight, lambda);
                // Where the pairwise model mispriced the solution (two
                // pending operands of one op), move nodes on the exact cost.
                let modelled = model.objective(choice, lambda);
                if (ev.total() - modelled).abs() > 1e-9 * modelled.abs() {
                    ev.refine(g, &mut pr, &mut assign, &cands, &weight, lambda, 2);
                }
                let total = ev.total();
                let sent = ev.bytes(g, &mut pr, &assign);
                let better = match &best {
                    None => true,
                    Some(b) if (total - b.0).abs() <= 1e-6 * b.0.abs() => sent < b.1,
                    Some(b) => total < b.0,
                };
                if better {
                    let out_bytes = (0..g.nodes.len())
                        .map(|v| {
                            let n = &g.nodes[v];
                            (ev.outs[v]
                                .local_shape(&n.rule.out, &self.mesh)
                                .iter()
                                .product::<usize>()
                                * n.elem) as u64
                        })
                        .collect();
                    best = Some((total, sent, assign, out_bytes));
                }
            }
            let (_, _, assign, bytes) = best.expect("the search's best is within reach");
            let time = Eval::new(g, &mut pr, &assign, &weight, 0.0).total();
            (assign, time, memory::peak(g, &bytes))
        };
        let first = run(0.0);
        let chosen = match self.limit {
            Some(limit) if first.2 > limit => {
                // Raise λ until a plan fits, then bisect down to the
                // fitting plan of least time.
                let mut smallest = first.clone();
                let mut lo = 0.0;
                let mut lambda = first.1.max(1e-12) / limit as f64;
                let mut fit = None;
                for _ in 0..40 {
                    let c = run(lambda);
                    if c.2 < smallest.2 {
                        smallest = c.clone();
                    }
                    if c.2 <= limit {
                        fit = Some((lambda, c));
                        break;
                    }
                    lo = lambda;
                    lambda *= 4.0;
                }
                match fit {
                    None => smallest,
                    Some((mut hi, mut best)) => {
                        for _ in 0..8 {
                            let mid = 0.5 * (lo + hi);
                            let c = run(mid);
                            if c.2 <= limit {
                                if c.1 < best.1 {
                                    best = c;
                                }
                                hi = mid;
                            } else {
                                lo = mid;
                            }
                        }
                        best
                    }
                }
            }
            _ => first,
        };
        self.finish(g, &chosen.0, chosen.2, lower)
    }

    /// Per node, the assignment [`Planner::fix_inputs`] holds it to: an
    /// input's factors are its axes, so its layout's splits are the
    /// assignment. Panics naming the leaf where a spec does not fit.
    pub(super) fn fixed_assignments(&self, g: &Graph) -> Vec<Option<Assignment>> {
        let leaves = g
            .nodes
            .iter()
            .filter(|n| matches!(n.source, Source::Input(_)))
            .count();
        if self.fixed.len() > leaves {
            panic!(
                "nabla::dist::Planner::fix_inputs: {} specs for a program of {leaves} argument leaves; give at most one per leaf (None where the planner chooses)",
                self.fixed.len()
            );
        }
        let mut fixed: Vec<Option<Assignment>> = g
            .nodes
            .iter()
            .map(|n| {
                let Source::Input(i) = n.source else {
                    return None;
                };
                let spec = self.fixed.get(i)?.as_ref()?;
                let op = format!("Planner::fix_inputs (argument leaf {i})");
                let l = spec.resolve(&n.rule.out, &self.mesh, &op);
                if l.partial != 0 {
                    panic!(
                        "nabla::dist::{op}: the spec {spec} is a pending sum; an argument is held whole or split, so drop `partial_over`"
                    );
                }
                // Mesh axes of one rank split nothing (the planner's
                // strategies leave them out).
                let a = l
                    .dims
                    .iter()
                    .map(|d| {
                        d.iter()
                            .copied()
                            .filter(|&m| self.mesh.size(m as usize) > 1)
                            .collect()
                    })
                    .collect();
                Some(a)
            })
            .collect();
        // A value pinned to a leaf's layout takes the leaf's split (its
        // rule is elementwise: factor k is axis k, as for the leaf).
        for &(v, leaf) in &g.pins {
            let input = g.nodes.iter().position(|n| n.source == Source::Input(leaf));
            fixed[v] = input.and_then(|u| fixed[u].clone());
        }
        fixed
    }

    /// The plan of one assignment per node: the layouts and moves the
    /// runtime will meet, priced.
    pub(super) fn finish(
        &self,
        g: &Graph,
        assign: &[Assignment],
        memory: u64,
        lower_bound_s: f64,
    ) -> Plan {
        let (mesh, model) = (&self.mesh, &self.model);
        let pr = Pricer::new(mesh, model);
        let mut nodes: Vec<PlanNode> = Vec::with_capacity(g.nodes.len());
        for (v, node) in g.nodes.iter().enumerate() {
            let rule = &node.rule;
            let from: Vec<&Layout> = node.operands.iter().map(|&u| &nodes[u].out).collect();
            let (targets, out) = rule.targets(&assign[v], &from);
            let edges = node
                .operands
                .iter()
                .enumerate()
                .map(|(k, &u)| {
                    Edge::new(
                        from[k],
                        &targets[k],
                        &nodes[u].shape,
                        nodes[u].elem,
                        mesh,
                        model,
                    )
                })
                .collect();
            let input = match node.source {
                Source::Input(i) => Some(i),
                _ => None,
            };
            nodes.push(PlanNode {
                name: match input {
                    Some(i) => format!("input {i}"),
                    None => format!("{}#{v}", rule.name),
                },
                op: rule.name.to_string(),
                input,
                shape: rule.out.clone(),
                elem: node.elem,
                operands: node.operands.clone(),
                assignment: assign[v].clone(),
                out,
                compute_s: pr.compute(rule, &assign[v]),
                edges,
            });
        }
        let outputs = g
            .outputs
            .iter()
            .map(|&o| {
                let n = &nodes[o];
                let to = if g.keep_outputs {
                    n.out.clone()
                } else {
                    Layout::replicated(n.shape.len())
                };
                (o, Edge::new(&n.out, &to, &n.shape, n.elem, mesh, model))
            })
            .collect();
        Plan {
            mesh: mesh.clone(),
            model: model.clone(),
            nodes,
            outputs,
            memory,
            limit: self.limit,
            lower_bound_s,
        }
    }
}

/// Arguments as users pass them to a function of arity `A` (a tuple of
/// references to arrays and trees), as the program's arguments.
pub trait UserArgs<A: crate::compose::Arity> {
    /// The program's arguments.
    fn args(&self) -> A::Args<crate::Array>;
}

macro_rules! user_args {
    ($($s:ident $a:ident $i:tt),*) => {
        impl<'a, $($s: crate::compose::Slot),*> UserArgs<($($s,)*)> for ($(&'a $s::Ty,)*) {
            fn args(&self) -> <($($s,)*) as crate::compose::Arity>::Args<crate::Array> {
                ($($s::arg(self.$i),)*)
            }
        }
    };
}
user_args!(S0 a 0);
user_args!(S0 a 0, S1 b 1);
user_args!(S0 a 0, S1 b 1, S2 c 2);
user_args!(S0 a 0, S1 b 1, S2 c 2, S3 d 3);
user_args!(S0 a 0, S1 b 1, S2 c 2, S3 d 3, S4 e 4);
user_args!(S0 a 0, S1 b 1, S2 c 2, S3 d 3, S4 e 4, S5 f 5);
