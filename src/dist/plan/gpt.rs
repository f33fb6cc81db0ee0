//! Pipeline stages for a GPT (ALPA's inter-operator pass on repeated
//! layers): one transformer block's training step is planned on the mesh
//! without the stage axis (the intra-operator plan every stage runs), its
//! forward and backward times become the layers' costs, and the blocks
//! are cut into balanced stages over the stage axis with a 1F1B schedule
//! of micro-batches.

use super::pipeline::PipelinePlan;
use super::{Plan, Planner};
use crate::nn::TransformerBlock;
use crate::nn::models::GptConfig;
use crate::random::Key;
use crate::{Array, DType};

/// One block's output, summed: its forward pass as a scalar function.
#[crate::differentiable]
fn block_sum(block: &TransformerBlock, x: &Array) -> Array {
    block.forward(x).sum()
}

/// [`block_sum`] with the activations first: its gradient is the
/// backward pass a stage sends to the one before it.
#[crate::differentiable]
fn block_sum_x(x: &Array, block: &TransformerBlock) -> Array {
    block.forward(x).sum()
}

/// A GPT's blocks as pipeline stages: the plan each stage runs for one
/// block, the stages and the 1F1B schedule.
///
/// ```
/// use nabla::{dist::Plan, nn::models::GptConfig};
/// let cfg = GptConfig { vocab: 64, context: 16, embd: 32, heads: 4, layers: 4 };
/// let p = Plan::for_mesh(&[("pipe", 2), ("data", 2)]).gpt_pipeline(&cfg, 16, "pipe", 8);
/// assert_eq!(p.pipeline.stages, vec![0..2, 2..4]);
/// assert!((p.pipeline.schedule.bubble - 1.0 / 9.0).abs() < 1e-12); // (p − 1) / (m + p − 1)
/// println!("{p}");
/// ```
#[derive(Clone, Debug)]
pub struct GptPipeline {
    /// The stage axis.
    pub axis: String,
    /// One block's forward pass on one micro-batch, planned on the other
    /// mesh axes.
    pub forward: Plan,
    /// One block's gradient (parameters) on one micro-batch, planned
    /// likewise.
    pub backward: Plan,
    /// The stages and their schedule.
    pub pipeline: PipelinePlan,
}

impl Planner {
    /// Pipeline stages of a GPT of shape `cfg` over the mesh axis `axis`,
    /// training on batches of `batch` sequences of `cfg.context` tokens
    /// cut into `micro_batches` micro-batches. The embeddings and the head
    /// are left out of the stages' costs (they are not repeated layers).
    /// Panics naming the problem when the axis is missing, the batch does
    /// not split into the micro-batches, or there are fewer blocks than
    /// stages.
    #[track_caller]
    pub fn gpt_pipeline(
        &self,
        cfg: &GptConfig,
        batch: usize,
        axis: &str,
        micro_batches: usize,
    ) -> GptPipeline {
        let Some(stage_axis) = self.mesh.axis(axis) else {
            panic!(
                "nabla::dist::Planner::gpt_pipeline: {} has no axis {axis:?}; name one of its axes",
                self.mesh
            )
        };
        if micro_batches == 0 || !batch.is_multiple_of(micro_batches) {
            panic!(
                "nabla::dist::Planner::gpt_pipeline: a batch of {batch} does not split into {micro_batches} micro-batches; pick a divisor of {batch}"
            );
        }
        let stages = self.mesh.size(stage_axis);
        let others: Vec<(&str, usize)> = self.mesh.axes().filter(|&(n, _)| n != axis).collect();
        let inner = Planner {
            mesh: super::MeshShape::new(&others),
            ..self.clone()
        };
        let block = TransformerBlock::new(cfg.embd, cfg.heads, 0.02, Key::new(0));
        let x = Array::zeros(&[batch / micro_batches, cfg.context, cfg.embd], DType::F32);
        let forward = inner.function(block_sum, (&block, &x));
        let params = inner.function(crate::value_and_grad(block_sum), (&block, &x));
        let acts = inner.function(crate::value_and_grad(block_sum_x), (&x, &block));
        let fwd = forward.time_s();
        // Each gradient plan runs the forward once more.
        let bwd = (params.time_s() - fwd).max(0.0) + (acts.time_s() - fwd).max(0.0);
        let pipeline = PipelinePlan::new(
            &vec![fwd; cfg.layers],
            &vec![bwd; cfg.layers],
            stages,
            micro_batches,
        );
        GptPipeline {
            axis: axis.to_string(),
            forward,
            backward: params,
            pipeline,
        }
    }
}

impl std::fmt::Display for GptPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.pipeline;
        writeln!(
            f,
            "pipeline over {:?}: {} stages of blocks {:?}, {} micro-batches, 1F1B: step {:.3} ms modelled, bubble {:.1}%",
            self.axis,
            p.stages.len(),
            p.stages,
            p.micro_batches,
            p.schedule.time_s * 1e3,
            100.0 * p.schedule.bubble
        )?;
        writeln!(f, "each stage runs, per block and micro-batch:")?;
        write!(f, "{}", self.backward)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_stage_gpt_pipeline_has_the_1f1b_bubble() {
        let cfg = GptConfig {
            vocab: 32,
            context: 8,
            embd: 16,
            heads: 2,
            layers: 4,
        };
        for m in [2, 4, 8] {
            let p = Plan::for_mesh(&[("pipe", 2)]).gpt_pipeline(&cfg, 8, "pipe", m);
            assert_eq!(p.pipeline.stages, vec![0..2, 2..4]);
            let want = 1.0 / (m as f64 + 1.0);
            assert!(
                (p.pipeline.schedule.bubble - want).abs() < 1e-12,
                "m = {m}: {}",
                p.pipeline.schedule.bubble
            );
            assert!(
                p.pipeline.stage_fwd_s[0] > 0.0
                    && p.pipeline.stage_bwd_s[0] > p.pipeline.stage_fwd_s[0]
            );
        }
        // Three blocks on two stages cannot balance: more idle time.
        let cfg3 = GptConfig { layers: 3, ..cfg };
        let p = Plan::for_mesh(&[("pipe", 2)]).gpt_pipeline(&cfg3, 8, "pipe", 4);
        assert!(p.pipeline.schedule.bubble > 1.0 / 5.0);
    }
}
