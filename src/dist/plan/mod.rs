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
#[cfg(feature = "mpi")]
mod greedy;
mod json;
mod kept;
mod memory;
mod models;
mod pipeline;
mod planner;
mod replay;
mod search;
mod show;
mod solve;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_search;

pub use cost::CostModel;
pub use gpt::GptPipeline;
pub use json::PlanError;
#[cfg(feature = "mpi")]
pub(crate) use pipeline::one_f_one_b;
pub use pipeline::{PipelinePlan, Schedule, pipeline_schedule, split_stages};
pub use planner::UserArgs;

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
