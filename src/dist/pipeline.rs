//! Pipeline execution (ALPA's inter-operator parallelism, run): a model's
//! repeated layers cut into stages along one mesh axis, each stage on the
//! ranks with that coordinate, micro-batches run in the 1F1B order that
//! [`pipeline_schedule`](super::pipeline_schedule) simulates. A stage
//! receives its input from the stage before, runs its layers (the body's
//! VJP, its pullback kept until the micro-batch's backward), and sends the
//! output on; the last stage also runs the head (the loss). Backward
//! passes flow the other way. The other mesh axes split the batch
//! (data-parallel): their gradients and losses are averaged.
//!
//! Messages between neighbours are the stages' boundary activations and
//! their cotangents, each of the micro-batch input's shape (the body maps
//! `[micro-batch, …]` to the same shape, as residual blocks do, so no
//! shapes are exchanged). A send followed by a receive from the same
//! neighbour is one `MPI_Sendrecv` (Megatron's `send_forward_recv_backward`
//! and its mirror), which keeps neighbours that both send at once from
//! blocking each other.

use super::mesh::Mesh;
use super::plan::one_f_one_b;
use crate::tree::Tree;
use crate::{Array, DType};
use link::Link;
use std::cell::OnceCell;
use std::ops::Range;

mod link;

/// A stage's pullback: the output's cotangent to the layers' gradient
/// and the input's cotangent.
///
/// ```
/// use nabla::{Array, DType};
/// #[nabla::differentiable]
/// fn layer(w: &Array, h: &Array) -> Array { h.matmul(w) }
/// fn main() {
///     let (w, h) = (Array::eye(2, DType::F64), Array::ones(&[1, 2], DType::F64));
///     let (_, pb): (Array, nabla::dist::StagePullback<'_, Array>) = nabla::vjp(layer)(&w, &h);
///     let (gw, gh) = pb(&Array::ones(&[1, 2], DType::F64));
///     assert_eq!((gw.shape(), gh.shape()), (&[2usize, 2][..], &[1usize, 2][..]));
/// }
/// ```
pub type StagePullback<'a, G> = Box<dyn FnOnce(&Array) -> (G, Array) + 'a>;
/// `nabla::vjp` of a stage: `fn(&P, &Array) -> (output, pullback)`.
///
/// ```
/// use nabla::Array;
/// #[nabla::differentiable]
/// fn layer(w: &Array, h: &Array) -> Array { h.matmul(w).tanh() }
/// fn main() {
///     let _body: nabla::dist::StageVjp<Array, Array> = *nabla::vjp(layer);
/// }
/// ```
pub type StageVjp<P, G> = for<'a> fn(&'a P, &'a Array) -> (Array, StagePullback<'a, G>);
/// The head's pullback: the loss's cotangent to the head's gradient and
/// the cotangents of its input and targets.
///
/// ```
/// use nabla::{Array, DType};
/// #[nabla::differentiable]
/// fn loss(q: &Array, h: &Array, y: &Array) -> Array { (h.matmul(q) - y).square().mean() }
/// fn main() {
///     let (q, h, y) = (Array::ones(&[2, 1], DType::F64), Array::ones(&[3, 2], DType::F64), Array::zeros(&[3, 1], DType::F64));
///     let (l, pb): (Array, nabla::dist::HeadPullback<'_, Array>) = nabla::vjp(loss)(&q, &h, &y);
///     let (gq, _, _) = pb(&Array::ones(&[], DType::F64));
///     assert_eq!((l.item(), gq.shape()), (4.0, &[2usize, 1][..]));
/// }
/// ```
pub type HeadPullback<'a, H> = Box<dyn FnOnce(&Array) -> (H, Array, Array) + 'a>;
/// `nabla::vjp` of the head: `fn(&Q, &Array, &Array) -> (loss, pullback)`.
///
/// ```
/// use nabla::Array;
/// #[nabla::differentiable]
/// fn loss(q: &Array, h: &Array, y: &Array) -> Array { (h.matmul(q) - y).square().mean() }
/// fn main() {
///     let _head: nabla::dist::HeadVjp<Array, Array> = *nabla::vjp(loss);
/// }
/// ```
pub type HeadVjp<Q, H> = for<'a> fn(&'a Q, &'a Array, &'a Array) -> (Array, HeadPullback<'a, H>);

/// A pipeline over one axis of a mesh (see the module docs and
/// [`Pipeline::value_and_grad`]).
///
/// ```standalone_crate
/// use nabla::dist::{self, Mesh, Pipeline};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("pipe", dist::world_size())]);
/// let pipe = Pipeline::new(&mesh, "pipe", 4);
/// assert_eq!((pipe.stages(), pipe.stage()), (dist::world_size(), dist::rank()));
/// assert_eq!(pipe.layers(8).len(), 8 / dist::world_size());
/// ```
#[derive(Clone, Debug)]
pub struct Pipeline {
    mesh: Mesh,
    axis: usize,
    micro_batches: usize,
    /// Each stage's layers, when given.
    ranges: Option<Vec<Range<usize>>>,
}

/// What [`Pipeline::value_and_grad`] returns on each rank.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Pipeline}};
///
/// #[nabla::differentiable]
/// fn layer(w: &Array, h: &Array) -> Array { h.matmul(w).tanh() }
///
/// #[nabla::differentiable]
/// fn loss(q: &Array, h: &Array, y: &Array) -> Array { (h.matmul(q) - y).square().mean() }
///
/// fn main() {
///     let _mpi = dist::init();
///     let pipe = Pipeline::new(&Mesh::new(&[("pipe", dist::world_size())]), "pipe", 2);
///     let w = Array::eye(2, DType::F64);
///     let (q, x, y) = (Array::ones(&[2, 1], DType::F64), Array::ones(&[4, 2], DType::F64), Array::zeros(&[4, 1], DType::F64));
///     let step = pipe.value_and_grad(*nabla::vjp(layer), &w, *nabla::vjp(loss), &q, &x, &y);
///     assert_eq!(step.grad.shape(), &[2, 2]);
///     assert_eq!(step.order.len(), 2 * pipe.micro_batches()); // a forward and a backward each
///     assert_eq!(step.head_grad.is_some(), pipe.stage() + 1 == pipe.stages());
/// }
/// ```
#[derive(Clone, Debug)]
pub struct PipelineStep<G, H> {
    /// The loss of the whole batch (the mean of the micro-batches'), on
    /// every rank.
    pub loss: f64,
    /// The gradient of this stage's layers.
    pub grad: G,
    /// The gradient of the head's parameters, on the last stage.
    pub head_grad: Option<H>,
    /// The `(micro-batch, is_backward)` order this stage ran.
    pub order: Vec<(usize, bool)>,
}

impl Pipeline {
    /// A pipeline of as many stages as mesh axis `axis` has ranks,
    /// running `micro_batches` micro-batches a step. Panics naming the
    /// mesh when it has no such axis, or when `micro_batches` is zero.
    ///
    /// ```standalone_crate
    /// use nabla::dist::{self, Mesh, Pipeline};
    /// let _mpi = dist::init();
    /// let mesh = Mesh::new(&[("pipe", dist::world_size())]);
    /// assert_eq!(Pipeline::new(&mesh, "pipe", 8).micro_batches(), 8);
    /// ```
    #[track_caller]
    pub fn new(mesh: &Mesh, axis: &str, micro_batches: usize) -> Pipeline {
        let Some(a) = mesh.shape().axis(axis) else {
            panic!(
                "nabla::dist::Pipeline::new: {} has no axis named {axis:?}; name one of its axes",
                mesh.shape()
            )
        };
        if micro_batches == 0 {
            panic!("nabla::dist::Pipeline::new: zero micro-batches; give at least one");
        }
        Pipeline {
            mesh: *mesh,
            axis: a,
            micro_batches,
            ranges: None,
        }
    }

    /// The same pipeline with stage `s` holding layers `ranges[s]` (as
    /// [`PipelinePlan::stages`](super::PipelinePlan) gives them) instead
    /// of an even split. Panics when there is not one range per stage.
    ///
    /// ```standalone_crate
    /// use nabla::dist::{self, Mesh, Pipeline, PipelinePlan};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mesh = Mesh::new(&[("pipe", n)]);
    /// let plan = PipelinePlan::new(&vec![1.0; 2 * n], &vec![2.0; 2 * n], n, 4);
    /// let pipe = Pipeline::new(&mesh, "pipe", 4).with_stages(&plan.stages);
    /// assert_eq!(pipe.layers(2 * n), plan.stages[dist::rank()]);
    /// ```
    #[track_caller]
    pub fn with_stages(mut self, ranges: &[Range<usize>]) -> Pipeline {
        if ranges.len() != self.stages() {
            panic!(
                "nabla::dist::Pipeline::with_stages: {} ranges for {} stages; give one range of layers per stage",
                ranges.len(),
                self.stages()
            );
        }
        self.ranges = Some(ranges.to_vec());
        self
    }

    /// How many stages.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("p", nabla::dist::world_size())]);
    /// assert_eq!(nabla::dist::Pipeline::new(&mesh, "p", 1).stages(), nabla::dist::world_size());
    /// ```
    pub fn stages(&self) -> usize {
        self.mesh.shape().size(self.axis)
    }

    /// This rank's stage.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("p", nabla::dist::world_size())]);
    /// assert_eq!(nabla::dist::Pipeline::new(&mesh, "p", 1).stage(), nabla::dist::rank());
    /// ```
    pub fn stage(&self) -> usize {
        self.mesh.coord(self.axis)
    }

    /// Micro-batches per step.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let mesh = nabla::dist::Mesh::new(&[("p", nabla::dist::world_size())]);
    /// assert_eq!(nabla::dist::Pipeline::new(&mesh, "p", 3).micro_batches(), 3);
    /// ```
    pub fn micro_batches(&self) -> usize {
        self.micro_batches
    }

    /// The layers of `n` this rank's stage holds: the given ranges, or
    /// an even split (the first stages take one more when `n` does not
    /// divide). Panics when there are fewer layers than stages.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let n = nabla::dist::world_size();
    /// let mesh = nabla::dist::Mesh::new(&[("p", n)]);
    /// let r = nabla::dist::Pipeline::new(&mesh, "p", 1).layers(3 * n);
    /// assert_eq!(r, 3 * nabla::dist::rank()..3 * nabla::dist::rank() + 3);
    /// ```
    #[track_caller]
    pub fn layers(&self, n: usize) -> Range<usize> {
        let (p, s) = (self.stages(), self.stage());
        if let Some(r) = &self.ranges {
            return r[s].clone();
        }
        if n < p {
            panic!(
                "nabla::dist::Pipeline::layers: {n} layers for {p} stages; give each stage at least one layer (fewer stages, or more layers)"
            );
        }
        let (base, extra) = (n / p, n % p);
        let start = s * base + s.min(extra);
        start..start + base + usize::from(s < extra)
    }

    /// One training step of `head(h, body_L(…body_1(x)), y)` split over
    /// the stages: `body` is the VJP of this stage's layers
    /// (`nabla::vjp(stage)` of a `#[differentiable] fn stage(p: &P, h:
    /// &Array) -> Array` that keeps `h`'s shape), `params` this stage's
    /// layers, `head` the VJP of the loss on the last stage's output
    /// (`nabla::vjp(loss)` of `fn loss(q: &Q, h: &Array, y: &Array) ->
    /// Array`, a mean over the micro-batch's rows) with its parameters
    /// `head_params` (read on the last stage). Every rank passes the whole
    /// batch `x` and targets `y` (rows first); the ranks of one stage
    /// split it along the other mesh axes, each stage cuts its share into
    /// the micro-batches. Returns the batch's loss on every rank and this
    /// stage's gradients, equal to one process's (the losses of equal
    /// micro-batches averaged). Panics naming the shapes when the batch
    /// does not split evenly or a stage changes the activation's shape.
    ///
    /// ```standalone_crate
    /// use nabla::prelude::*;
    /// use nabla::dist::{self, Mesh, Pipeline};
    ///
    /// #[derive(Clone, Tree)]
    /// struct Layers {
    ///     ws: Vec<Array>,
    /// }
    ///
    /// #[differentiable]
    /// fn layers(p: &Layers, h: &Array) -> Array {
    ///     let mut h = h.clone();
    ///     for k in 0..p.ws.len() {
    ///         h = h.matmul(&p.ws[k]).tanh();
    ///     }
    ///     h
    /// }
    ///
    /// #[differentiable]
    /// fn loss(q: &Array, h: &Array, y: &Array) -> Array {
    ///     let d = h.matmul(q) - y;
    ///     (&d * &d).mean()
    /// }
    ///
    /// #[differentiable]
    /// fn whole(p: &Layers, q: &Array, x: &Array, y: &Array) -> Array {
    ///     loss(q, &layers(p, x), y)
    /// }
    ///
    /// fn main() {
    ///     let _mpi = dist::init();
    ///     let n = dist::world_size();
    ///     let pipe = Pipeline::new(&Mesh::new(&[("pipe", n)]), "pipe", 4);
    ///     let all = Layers {
    ///         ws: (0..2 * n)
    ///             .map(|k| Array::linspace(-0.5, 0.5, 9, DType::F64).reshape(&[3, 3]) * (1.0 + k as f64 / 8.0))
    ///             .collect(),
    ///     };
    ///     let q = Array::linspace(0.0, 1.0, 6, DType::F64).reshape(&[3, 2]);
    ///     let x = Array::linspace(-1.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
    ///     let y = Array::linspace(0.0, 1.0, 16, DType::F64).reshape(&[8, 2]);
    ///     // This stage's layers only.
    ///     let mine = Layers { ws: all.ws[pipe.layers(2 * n)].to_vec() };
    ///     let step = pipe.value_and_grad(*nabla::vjp(layers), &mine, *nabla::vjp(loss), &q, &x, &y);
    ///     let (l, g) = nabla::value_and_grad(whole)(&all, &q, &x, &y);
    ///     assert!((step.loss - l.item()).abs() < 1e-12);
    ///     for (k, gk) in pipe.layers(2 * n).zip(&step.grad.ws) {
    ///         assert!((gk - &g.ws[k]).abs().max().item() < 1e-12);
    ///     }
    /// }
    /// ```
    #[track_caller]
    #[allow(clippy::too_many_arguments)]
    pub fn value_and_grad<P, G, Q, H>(
        &self,
        body: StageVjp<P, G>,
        params: &P,
        head: HeadVjp<Q, H>,
        head_params: &Q,
        x: &Array,
        y: &Array,
    ) -> PipelineStep<G, H>
    where
        G: Tree<Grad = G> + Clone,
        H: Tree<Grad = H> + Clone,
    {
        let (p, s, m) = (self.stages(), self.stage(), self.micro_batches);
        let (xs, ys) = (self.share(x, "x"), self.share(y, "y"));
        let xm = split("x", &xs, m);
        let ym = split("y", &ys, m);
        let (shape, dtype) = (xm[0].shape().to_vec(), xm[0].dtype());
        if !matches!(dtype, DType::F32 | DType::F64) {
            panic!(
                "nabla::dist::Pipeline::value_and_grad: x is {dtype:?}; stages pass float activations, give x as f32 or f64 (embed token ids before the pipeline)"
            );
        }
        let link = Link {
            comm: self.mesh.axis_comm(self.axis),
            stage: s,
            shape: shape.clone(),
            dtype,
        };
        let inputs: Vec<OnceCell<Array>> = (0..m).map(|_| OnceCell::new()).collect();
        let mut pullbacks: Vec<Option<StagePullback<'_, G>>> = (0..m).map(|_| None).collect();
        let outputs: Vec<OnceCell<Array>> = (0..m).map(|_| OnceCell::new()).collect();
        let mut heads: Vec<Option<HeadPullback<'_, H>>> = (0..m).map(|_| None).collect();
        let (mut grad, mut head_grad): (Option<G>, Option<H>) = (None, None);
        let mut loss = 0.0;
        let order = one_f_one_b(p, s, m);
        // What the previous op left to send, and to whom.
        let mut pending: Option<(Array, bool)> = None;
        for &(i, back) in &order {
            // The message this op needs, received together with what the
            // previous op sends where the peer is the same.
            let need = match (back, s) {
                (false, 0) => None,
                (false, _) => Some(false),
                (true, _) if s + 1 == p => None,
                (true, _) => Some(true),
            };
            let got = link.exchange(pending.take(), need);
            if back {
                let ct = match got {
                    Some(g) => g,
                    None => {
                        // The last stage: the head's pullback, seeded with
                        // 1/m (the batch loss is the micro-batches' mean).
                        let seed = Array::ones(&[], dtype) * (1.0 / m as f64);
                        let (hq, dh, _) = heads[i].take().expect("the head ran")(&seed);
                        head_grad = Some(add(head_grad, hq));
                        dh
                    }
                };
                let (dp, dx) = pullbacks[i].take().expect("the forward ran")(&ct);
                grad = Some(add(grad, dp));
                if s > 0 {
                    pending = Some((dx, true));
                }
            } else {
                let h = got.unwrap_or_else(|| xm[i].clone());
                let h = inputs[i].get_or_init(|| h);
                let (out, pb) = body(params, h);
                if out.shape() != &shape[..] || out.dtype() != dtype {
                    panic!(
                        "nabla::dist::Pipeline::value_and_grad: stage {s} maps the micro-batch {:?} {:?} to {:?} {:?}; a pipeline stage keeps its input's shape and dtype (end the body with the same shape, move the rest into the head)",
                        shape,
                        dtype,
                        out.shape(),
                        out.dtype()
                    );
                }
                pullbacks[i] = Some(pb);
                if s + 1 == p {
                    let o = outputs[i].get_or_init(|| out);
                    let (l, pb) = head(head_params, o, &ym[i]);
                    loss += l.item() / m as f64;
                    heads[i] = Some(pb);
                } else {
                    pending = Some((out, false));
                }
            }
        }
        link.exchange(pending.take(), None);
        drop(pullbacks);
        drop(heads);
        // The loss from the last stage; means over the data-parallel axes.
        let l = super::broadcast(&Array::from_vec(vec![loss], &[]), p - 1, link.comm);
        let grad = grad.expect("every stage runs a backward");
        let mut loss = l.item();
        let mut leaves = crate::tree::leaves(&grad);
        let mut head_leaves = head_grad.as_ref().map(crate::tree::leaves);
        for a in (0..self.mesh.shape().len()).filter(|&a| a != self.axis) {
            let c = self.mesh.axis_comm(a);
            if c.size() == 1 {
                continue;
            }
            let mean = |v: &Array| super::all_reduce(v, super::Reduce::Mean, c);
            loss = mean(&Array::from_vec(vec![loss], &[])).item();
            leaves = leaves.iter().map(mean).collect();
            head_leaves = head_leaves.map(|h| h.iter().map(mean).collect());
        }
        PipelineStep {
            loss,
            grad: rebuild(&grad, leaves),
            head_grad: head_grad.map(|h| rebuild(&h, head_leaves.expect("with the head"))),
            order,
        }
    }

    /// This rank's rows of `x` along the mesh axes other than the
    /// pipeline's (row-major over them).
    #[track_caller]
    fn share(&self, x: &Array, what: &str) -> Array {
        let shape = self.mesh.shape();
        let (mut parts, mut index) = (1, 0);
        for a in (0..shape.len()).filter(|&a| a != self.axis) {
            parts *= shape.size(a);
            index = index * shape.size(a) + self.mesh.coord(a);
        }
        let rows = split(what, x, parts);
        rows[index].clone()
    }
}

/// `x` cut into `n` equal blocks of rows.
#[track_caller]
fn split(what: &str, x: &Array, n: usize) -> Vec<Array> {
    let rows = x.shape().first().copied().unwrap_or(0);
    if rows == 0 || rows % n != 0 {
        panic!(
            "nabla::dist::Pipeline::value_and_grad: {what} of shape {:?} does not split into {n} equal blocks of rows (micro-batches times data-parallel ranks); give a batch whose first axis {n} divides",
            x.shape()
        );
    }
    let b = rows / n;
    (0..n)
        .map(|i| x.slice_axis(0, i * b..(i + 1) * b))
        .collect()
}

/// `acc + g` leaf by leaf (`g` when nothing is accumulated yet).
fn add<T: Tree<Grad = T> + Clone>(acc: Option<T>, g: T) -> T {
    match acc {
        None => g,
        Some(a) => {
            let sum: Vec<Array> = crate::tree::leaves(&a)
                .iter()
                .zip(crate::tree::leaves(&g))
                .map(|(x, y)| x + &y)
                .collect();
            rebuild(&a, sum)
        }
    }
}

/// A tree like `like` with the given leaves.
fn rebuild<T: Tree<Grad = T>>(like: &T, leaves: Vec<Array>) -> T {
    like.rebuild(&mut leaves.into_iter())
}
