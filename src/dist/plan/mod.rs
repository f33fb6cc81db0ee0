//! The planner: a layout for every value of a program over a mesh,
//! chosen to minimise the modelled time of one call under a memory limit
//! per rank (ALPA's intra-operator pass), and the pipeline model of its
//! inter-operator pass ([`PipelinePlan`]).
//!
//! [`Plan::for_mesh`] gives a [`Planner`]; it reads a recorded program
//! (`Graph`), prices every strategy of every op with a [`CostModel`],
//! solves ([`solve`]), and returns a [`Plan`]: per node the chosen
//! assignment and layout, per edge the collectives and their bytes, the
//! totals, the memory per rank and the optimality gap. Nothing here needs
//! MPI, so plans for machines this process is not part of can be made and
//! read.

mod cost;
mod evaluate;
mod gpt;
mod json;
mod memory;
mod models;
mod pipeline;
mod replay;
mod show;
mod solve;
#[cfg(test)]
mod tests;

pub use cost::CostModel;
pub use gpt::GptPipeline;
pub use json::PlanError;
pub use pipeline::{PipelinePlan, Schedule, pipeline_schedule, split_stages};

use super::factors::Assignment;
use super::graph::{Graph, Source};
use super::layout::{Layout, MeshShape, Spec};
use super::moves::{Move, moves};
use cost::Pricer;
use evaluate::Eval;
use solve::Model;

/// Where every value of one program call lives on a mesh, what moves
/// between them, and what that costs: the planner's answer. Printable
/// (a table of the input specs and of every op that communicates),
/// saveable ([`Plan::save`], JSON) and reusable.
///
/// ```
/// use nabla::dist::Plan;
/// // A training step of an MLP with a wide batch on four ranks: data-parallel.
/// let plan = Plan::for_mesh(&[("data", 4)]).mlp(4096, &[16, 32, 16]);
/// assert_eq!(plan.input_specs()[0].to_string(), "[data, -]"); // the batch is split
/// assert!(plan.input_specs()[1].is_replicated()); // the weights are not
/// assert!(plan.fits() && plan.gap() >= 0.0);
/// println!("{plan}");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    mesh: MeshShape,
    model: CostModel,
    nodes: Vec<PlanNode>,
    /// Each output: its node and the moves that gather it to the caller.
    outputs: Vec<(usize, Edge)>,
    memory: u64,
    limit: Option<u64>,
    lower_bound_s: f64,
}

/// One node of a plan.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlanNode {
    /// A readable name (`input 0`, `matmul#12`).
    pub name: String,
    /// The op (the rule's name).
    pub op: String,
    /// The argument leaf, for an input.
    pub input: Option<usize>,
    /// The global shape and bytes per element of the output.
    pub shape: Vec<usize>,
    pub elem: usize,
    /// The nodes it reads.
    pub operands: Vec<usize>,
    /// Mesh axes per factor of its rule.
    pub assignment: Assignment,
    /// Its output's layout.
    pub out: Layout,
    /// Seconds of arithmetic on one rank.
    pub compute_s: f64,
    /// The moves of each operand before the op.
    pub edges: Vec<Edge>,
}

/// The moves that take one value from its layout to the one a user needs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Edge {
    pub from: Layout,
    pub to: Layout,
    pub moves: Vec<Move>,
    /// Bytes one rank sends.
    pub bytes: u64,
    /// Modelled seconds.
    pub time_s: f64,
}

impl Edge {
    fn new(
        from: &Layout,
        to: &Layout,
        shape: &[usize],
        elem: usize,
        mesh: &MeshShape,
        model: &CostModel,
    ) -> Edge {
        let (time_s, bytes) = cost::price(from, to, shape, elem, mesh, model);
        Edge {
            from: from.clone(),
            to: to.clone(),
            moves: moves(from, to, shape, mesh),
            bytes,
            time_s,
        }
    }
}

/// Builds [`Plan`]s for one mesh: [`Plan::for_mesh`], then the memory
/// limit and the cost model, then the program.
///
/// ```
/// use nabla::dist::{CostModel, Plan};
/// let planner = Plan::for_mesh(&[("data", 2), ("model", 2)])
///     .memory_limit(1 << 30)
///     .cost_model(CostModel::uniform(1e12, 1e11, 1e-5));
/// assert_eq!(planner.mlp(64, &[32, 32]).mesh().devices(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct Planner {
    mesh: MeshShape,
    limit: Option<u64>,
    model: CostModel,
    /// Per argument leaf, the layout the caller holds it in, if fixed.
    fixed: Vec<Option<Spec>>,
}

impl Plan {
    /// A planner for a mesh of named axes `(name, size)`, major first. No
    /// MPI needed: any mesh can be planned for.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 8), ("model", 4)]).mlp(256, &[64, 64]);
    /// assert_eq!(p.mesh().devices(), 32);
    /// ```
    #[track_caller]
    pub fn for_mesh(axes: &[(&str, usize)]) -> Planner {
        Planner {
            mesh: MeshShape::new(axes),
            limit: None,
            model: CostModel::default(),
            fixed: Vec::new(),
        }
    }

    /// The mesh it is for.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("x", 2)]).mlp(8, &[4, 4]);
    /// assert_eq!(p.mesh().axis("x"), Some(0));
    /// ```
    pub fn mesh(&self) -> &MeshShape {
        &self.mesh
    }

    /// The cost model it was made with.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("x", 2)]).mlp(8, &[4, 4]);
    /// assert_eq!(p.cost_model(), &nabla::dist::CostModel::default());
    /// ```
    pub fn cost_model(&self) -> &CostModel {
        &self.model
    }

    /// Bytes one rank sends per call: every collective of the plan
    /// (including the gather of the outputs), counted as the collectives
    /// count them when they run.
    ///
    /// ```
    /// // A tiny layer on a long batch: what moves is the loss's all-reduce
    /// // (2·b·(n−1)/n bytes of a 4-byte scalar) and the small gradients.
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!(p.bytes_per_call() >= 4 && p.bytes_per_call() <= 4 + 2 * (16 + 4) * 4);
    /// ```
    pub fn bytes_per_call(&self) -> u64 {
        self.edges().map(|e| e.bytes).sum()
    }

    /// Each input's (argument leaf's) layout, in argument order.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert_eq!(p.input_specs().len(), 3); // x, w, b
    /// ```
    pub fn input_specs(&self) -> Vec<Spec> {
        self.inputs().map(|n| n.out.spec(&self.mesh)).collect()
    }

    /// Modelled seconds of one call: compute plus communication.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!((p.time_s() - p.compute_s() - p.comm_s()).abs() < 1e-15);
    /// ```
    pub fn time_s(&self) -> f64 {
        self.compute_s() + self.comm_s()
    }

    /// Modelled seconds of arithmetic per call on one rank.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!(p.compute_s() > 0.0);
    /// ```
    pub fn compute_s(&self) -> f64 {
        self.nodes.iter().map(|n| n.compute_s).sum()
    }

    /// Modelled seconds of communication per call.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!(p.comm_s() > 0.0);
    /// ```
    pub fn comm_s(&self) -> f64 {
        self.edges().map(|e| e.time_s).sum()
    }

    /// A lower bound on the modelled time of every plan for this program
    /// and mesh.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!(p.lower_bound_s() <= p.time_s());
    /// ```
    pub fn lower_bound_s(&self) -> f64 {
        self.lower_bound_s
    }

    /// The optimality gap: how far above the lower bound the plan's time
    /// may be, as a fraction of its time (0: optimal).
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!((0.0..1.0).contains(&p.gap()));
    /// ```
    pub fn gap(&self) -> f64 {
        let t = self.time_s();
        if t > 0.0 {
            ((t - self.lower_bound_s) / t).max(0.0)
        } else {
            0.0
        }
    }

    /// Peak bytes live on one rank during a call.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(1 << 16, &[4, 4]);
    /// assert!(p.memory_per_rank() >= (1 << 16) / 2 * 4 * 4); // the input's block
    /// ```
    pub fn memory_per_rank(&self) -> u64 {
        self.memory
    }

    /// The memory limit per rank it was planned under, if any.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).memory_limit(1 << 20).mlp(8, &[4, 4]);
    /// assert_eq!(p.memory_limit(), Some(1 << 20));
    /// ```
    pub fn memory_limit(&self) -> Option<u64> {
        self.limit
    }

    /// Whether the plan fits the memory limit (when no plan does, the
    /// plan is the smallest found, and this says so).
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).memory_limit(16).mlp(8, &[4, 4]);
    /// assert!(!p.fits());
    /// ```
    pub fn fits(&self) -> bool {
        self.limit.is_none_or(|l| self.memory <= l)
    }

    /// The nodes' names, in program order.
    ///
    /// ```
    /// let p = nabla::dist::Plan::for_mesh(&[("data", 2)]).mlp(8, &[4, 4]);
    /// assert_eq!(p.node_names()[0], "input 0");
    /// ```
    pub fn node_names(&self) -> Vec<&str> {
        self.nodes.iter().map(|n| n.name.as_str()).collect()
    }

    /// The assignment node `node` runs under.
    #[allow(dead_code)] // read by the distributed runtime
    pub(crate) fn assignment(&self, node: usize) -> &Assignment {
        &self.nodes[node].assignment
    }

    /// Argument leaf `i`'s layout.
    #[allow(dead_code)] // read by the distributed runtime
    pub(crate) fn input_layout(&self, i: usize) -> Layout {
        self.inputs()
            .find(|n| n.input == Some(i))
            .map(|n| n.out.clone())
            .unwrap_or_else(|| panic!("nabla::dist::Plan: the plan has no input {i}"))
    }

    /// Renames the nodes (a recorder that knows better names).
    #[allow(dead_code)]
    pub(crate) fn name_nodes(&mut self, names: Vec<String>) {
        for (n, name) in self.nodes.iter_mut().zip(names) {
            n.name = name;
        }
    }

    fn inputs(&self) -> impl Iterator<Item = &PlanNode> {
        let mut ins: Vec<&PlanNode> = self.nodes.iter().filter(|n| n.input.is_some()).collect();
        ins.sort_by_key(|n| n.input);
        ins.into_iter()
    }

    /// Every edge, the outputs' gathers last.
    fn edges(&self) -> impl Iterator<Item = &Edge> {
        self.nodes
            .iter()
            .flat_map(|n| n.edges.iter())
            .chain(self.outputs.iter().map(|(_, e)| e))
    }
}

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
        self.graph(&super::trace::record_fn::<G>(&args.args()))
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
            let choice = model.solve(lambda);
            let mut assign: Vec<Assignment> = (0..choice.len())
                .map(|v| model.nodes[v].states[choice[v]].a.clone())
                .collect();
            let mut ev = Eval::new(g, &mut pr, &assign, &weight, lambda);
            // Where the pairwise model mispriced the solution (two pending
            // operands of one op), move nodes on the exact cost.
            let modelled = model.objective(&choice, lambda);
            if (ev.total() - modelled).abs() > 1e-9 * modelled.abs() {
                ev.refine(g, &mut pr, &mut assign, &cands, &weight, lambda, 2);
            }
            let time = Eval::new(g, &mut pr, &assign, &weight, 0.0).total();
            let bytes: Vec<u64> = (0..g.nodes.len())
                .map(|v| {
                    let n = &g.nodes[v];
                    (ev.outs[v]
                        .local_shape(&n.rule.out, &self.mesh)
                        .iter()
                        .product::<usize>()
                        * n.elem) as u64
                })
                .collect();
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
    fn fixed_assignments(&self, g: &Graph) -> Vec<Option<Assignment>> {
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
        g.nodes
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
            .collect()
    }

    /// The plan of one assignment per node: the layouts and moves the
    /// runtime will meet, priced.
    fn finish(&self, g: &Graph, assign: &[Assignment], memory: u64, lower_bound_s: f64) -> Plan {
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
                let repl = Layout::replicated(n.shape.len());
                (o, Edge::new(&n.out, &repl, &n.shape, n.elem, mesh, model))
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
