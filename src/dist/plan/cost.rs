//! The planner's cost model ([`CostModel`]) and its pricer: the time of an
//! op under an assignment, and the time and bytes of taking a value from
//! one layout to another, move by move, with the byte formula the
//! collectives count ([`wire_bytes`]).

use super::super::factors::{Assignment, Rule};
use super::super::layout::{Layout, MeshShape};
use super::super::moves::{moves, wire_bytes};
use std::collections::HashMap;

/// What the planner's modelled time is made of: the arithmetic rate of one
/// rank, the link bandwidth along each mesh axis, and the fixed latency of
/// one collective.
///
/// An op split into `p` parts by its assignment costs
/// `flops / p / flops_per_s`; every collective that moves a value between
/// layouts costs `bytes / bandwidth[axis] + latency_s`, where `bytes` is
/// what one rank sends. The default describes CPU ranks of one thread
/// each on one machine: 10 GFLOP/s, 5 GB/s between any two ranks, 5 µs a
/// collective.
///
/// ```
/// use nabla::dist::CostModel;
/// let cpu = CostModel::default();
/// assert_eq!((cpu.flops_per_s, cpu.bandwidth(3), cpu.latency_s), (1e10, 5e9, 5e-6));
/// let gpu = CostModel { bandwidth: vec![25e9, 300e9], ..CostModel::uniform(1e14, 300e9, 1e-5) };
/// assert_eq!((gpu.bandwidth(0), gpu.bandwidth(1)), (25e9, 300e9));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// Floating-point operations per second of one rank.
    pub flops_per_s: f64,
    /// Bytes per second one rank sends along each mesh axis, major first;
    /// a list shorter than the mesh repeats its last entry.
    pub bandwidth: Vec<f64>,
    /// Seconds each collective costs on top of its bytes.
    pub latency_s: f64,
}

impl Default for CostModel {
    fn default() -> CostModel {
        CostModel::uniform(1e10, 5e9, 5e-6)
    }
}

impl CostModel {
    /// The same bandwidth along every mesh axis.
    ///
    /// ```
    /// let m = nabla::dist::CostModel::uniform(1e12, 1e10, 1e-5);
    /// assert_eq!(m.bandwidth(0), 1e10);
    /// ```
    pub fn uniform(flops_per_s: f64, bandwidth: f64, latency_s: f64) -> CostModel {
        CostModel {
            flops_per_s,
            bandwidth: vec![bandwidth],
            latency_s,
        }
    }

    /// The bandwidth along mesh axis `axis` (the last entry for axes past
    /// the list's end). Panics on an empty list.
    ///
    /// ```
    /// let m = nabla::dist::CostModel { bandwidth: vec![1.0, 2.0], ..Default::default() };
    /// assert_eq!((m.bandwidth(0), m.bandwidth(5)), (1.0, 2.0));
    /// ```
    #[track_caller]
    pub fn bandwidth(&self, axis: usize) -> f64 {
        match self.bandwidth.get(axis).or(self.bandwidth.last()) {
            Some(&b) => b,
            None => panic!(
                "nabla::dist::CostModel: the bandwidth list is empty; give one bytes-per-second entry per mesh axis (or one for all)"
            ),
        }
    }
}

/// How many parts an assignment cuts an op into: the product of the sizes
/// of the mesh axes it uses.
pub(crate) fn parts(a: &Assignment, mesh: &MeshShape) -> usize {
    a.iter().flatten().map(|&m| mesh.size(m as usize)).product()
}

/// Prices ops and moves for one mesh and cost model, remembering each
/// (layout, layout, shape) it has priced: a model's repeated layers ask
/// the same questions many times.
pub(crate) struct Pricer<'a> {
    pub mesh: &'a MeshShape,
    pub model: &'a CostModel,
    layouts: HashMap<Layout, u32>,
    layout_list: Vec<Layout>,
    shapes: HashMap<(Vec<usize>, usize), u32>,
    shape_list: Vec<(Vec<usize>, usize)>,
    cache: HashMap<(u32, u32, u32), (f64, u64)>,
    partial: HashMap<(u32, u8), u32>,
}

impl<'a> Pricer<'a> {
    pub fn new(mesh: &'a MeshShape, model: &'a CostModel) -> Pricer<'a> {
        Pricer {
            mesh,
            model,
            layouts: HashMap::new(),
            layout_list: Vec::new(),
            shapes: HashMap::new(),
            shape_list: Vec::new(),
            cache: HashMap::new(),
            partial: HashMap::new(),
        }
    }

    /// The id of a layout (the same id for equal layouts).
    pub fn layout(&mut self, l: &Layout) -> u32 {
        if let Some(&id) = self.layouts.get(l) {
            return id;
        }
        let id = self.layout_list.len() as u32;
        self.layouts.insert(l.clone(), id);
        self.layout_list.push(l.clone());
        id
    }

    /// The id of layout `id` with its pending sums replaced by `partial`.
    pub fn with_partial(&mut self, id: u32, partial: u8) -> u32 {
        if let Some(&w) = self.partial.get(&(id, partial)) {
            return w;
        }
        let mut l = self.get(id).clone();
        l.partial = partial;
        let w = self.layout(&l);
        self.partial.insert((id, partial), w);
        w
    }

    /// The layout of an id.
    pub fn get(&self, id: u32) -> &Layout {
        &self.layout_list[id as usize]
    }

    /// The id of a global shape with its bytes per element.
    pub fn shape(&mut self, shape: &[usize], elem: usize) -> u32 {
        let key = (shape.to_vec(), elem);
        if let Some(&id) = self.shapes.get(&key) {
            return id;
        }
        let id = self.shape_list.len() as u32;
        self.shapes.insert(key.clone(), id);
        self.shape_list.push(key);
        id
    }

    /// Seconds an op takes under `a` on one rank.
    pub fn compute(&self, rule: &Rule, a: &Assignment) -> f64 {
        rule.flops / parts(a, self.mesh) as f64 / self.model.flops_per_s
    }

    /// Seconds and bytes per rank to take a value from layout `from` to
    /// `to`.
    pub fn reshard(&mut self, from: u32, to: u32, shape: u32) -> (f64, u64) {
        if from == to {
            return (0.0, 0);
        }
        if let Some(&c) = self.cache.get(&(from, to, shape)) {
            return c;
        }
        let (s, elem) = &self.shape_list[shape as usize];
        let c = price(
            self.get(from),
            self.get(to),
            s,
            *elem,
            self.mesh,
            self.model,
        );
        self.cache.insert((from, to, shape), c);
        c
    }
}

/// Seconds and bytes per rank of the moves from `from` to `to` for a value
/// of global `shape`: each collective's bytes on the block it starts from
/// ([`wire_bytes`], as [`reshard_bytes`](super::super::moves::reshard_bytes)
/// counts them), over its axis's bandwidth, plus one latency.
pub(crate) fn price(
    from: &Layout,
    to: &Layout,
    shape: &[usize],
    elem: usize,
    mesh: &MeshShape,
    model: &CostModel,
) -> (f64, u64) {
    let mut cur = from.clone();
    let (mut time, mut bytes) = (0.0, 0);
    for m in moves(from, to, shape, mesh) {
        if let Some(w) = m.wire() {
            let local: usize = cur.local_shape(shape, mesh).iter().product();
            let axis = m.mesh() as usize;
            if mesh.size(axis) > 1 {
                let b = wire_bytes(w, mesh.size(axis), local * elem);
                bytes += b;
                time += b as f64 / model.bandwidth(axis) + model.latency_s;
            }
        }
        m.apply(&mut cur);
    }
    (time, bytes)
}
