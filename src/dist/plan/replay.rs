//! A given plan checked against a recorded program before it runs
//! (`dist::spmd_with`): the same mesh, the same ops in the same order on
//! the same shapes, and assignments that fit the ops' rules.

use super::super::factors::Assignment;
use super::super::graph::{Graph, Source};
use super::super::layout::{Layout, MeshShape};
use super::Plan;

/// What a run takes from a plan: each op's name and assignment in program
/// order (inputs left out), and each argument leaf's layout.
pub(crate) type Replay = (Vec<(&'static str, Assignment)>, Vec<Layout>);

impl Plan {
    /// The plan's ops and input layouts for program `g` on `mesh`, or the
    /// first difference between the plan and the program.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn replay(&self, g: &Graph, mesh: &MeshShape) -> Result<Replay, String> {
        if &self.mesh != mesh {
            return Err(format!(
                "the plan is for {} but the function runs on {mesh}",
                self.mesh
            ));
        }
        let (mut ops, mut inputs) = (Vec::new(), Vec::new());
        for (v, node) in g.nodes.iter().enumerate() {
            let rule = &node.rule;
            let input = match node.source {
                Source::Input(i) => Some(i),
                _ => None,
            };
            let what = |input: Option<usize>, op: &str, shape: &[usize]| match input {
                Some(i) => format!("input {i} of shape {shape:?}"),
                None => format!("`{op}` of shape {shape:?}"),
            };
            let Some(p) = self.nodes.get(v) else {
                return Err(format!(
                    "the program records {} nodes but the plan holds {}; node {v} of the program is {}",
                    g.nodes.len(),
                    self.nodes.len(),
                    what(input, rule.name, &rule.out)
                ));
            };
            if p.op != rule.name || p.input != input || p.shape != rule.out {
                return Err(format!(
                    "node {v} of the program is {} but the plan's node {v} is {}",
                    what(input, rule.name, &rule.out),
                    what(p.input, &p.op, &p.shape)
                ));
            }
            if p.assignment.len() != rule.factors as usize || !rule.valid(&p.assignment, mesh) {
                return Err(format!(
                    "the plan's split of node {v} ({}) does not fit the op's sharding rule (was the plan edited?)",
                    p.name
                ));
            }
            match input {
                Some(i) => {
                    let out = rule.targets(&p.assignment, &[]).1;
                    if inputs.len() <= i {
                        inputs.resize(i + 1, None);
                    }
                    inputs[i] = Some(out);
                }
                None => ops.push((rule.name, p.assignment.clone())),
            }
        }
        if self.nodes.len() != g.nodes.len() {
            return Err(format!(
                "the program records {} nodes but the plan holds {}",
                g.nodes.len(),
                self.nodes.len()
            ));
        }
        let outs: Vec<usize> = self.outputs.iter().map(|(o, _)| *o).collect();
        if outs != g.outputs {
            return Err(format!(
                "the program's outputs are nodes {:?} but the plan's are {outs:?}",
                g.outputs
            ));
        }
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(i, l)| l.ok_or_else(|| format!("the program has no input {i}")))
            .collect::<Result<_, _>>()?;
        Ok((ops, inputs))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::trace::record_fn;
    use super::*;
    use crate::compose::{ArgsOf, DiffFn};
    use crate::transforms::value_and_grad;
    use crate::{Array, DType};

    fn graph_of<G: DiffFn>(_: G, args: &ArgsOf<G, Array>) -> Graph {
        record_fn::<G>(args)
    }

    #[nabla::differentiable]
    fn loss(w: &Array, x: &Array) -> Array {
        x.matmul(w).tanh().sum()
    }

    #[test]
    fn a_plan_replays_on_its_program_and_names_the_first_difference_elsewhere() {
        let args = (
            Array::zeros(&[8, 4], DType::F32),
            Array::zeros(&[64, 8], DType::F32),
        );
        let step = graph_of(value_and_grad(loss), &args);
        let planner = Plan::for_mesh(&[("data", 4)]);
        let plan = planner.graph(&step);
        let mesh = plan.mesh().clone();
        let (ops, inputs) = plan.replay(&step, &mesh).unwrap();
        assert_eq!(ops.len() + inputs.len(), step.nodes.len());
        assert_eq!(inputs[1], plan.input_layout(1));
        let plain = graph_of(loss, &args);
        let err = plan.replay(&plain, &mesh).unwrap_err();
        // The forward ops match; the plan's backward ops are left over.
        let want = format!(
            "the program records {} nodes but the plan holds {}",
            plain.nodes.len(),
            step.nodes.len()
        );
        assert_eq!(err, want);
        let other = MeshShape::new(&[("data", 2), ("model", 2)]);
        let err = plan.replay(&step, &other).unwrap_err();
        assert!(
            err.contains("for mesh(data: 4) but the function runs on mesh(data: 2, model: 2)"),
            "{err}"
        );
        let wider = (
            Array::zeros(&[8, 4], DType::F32),
            Array::zeros(&[32, 8], DType::F32),
        );
        let err = plan
            .replay(&graph_of(value_and_grad(loss), &wider), &mesh)
            .unwrap_err();
        assert!(
            err.contains("node 1 of the program is input 1 of shape [32, 8]"),
            "{err}"
        );
    }
}
