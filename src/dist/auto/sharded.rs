//! `auto(f, &mesh).sharded()`: the planner's layouts for everything but
//! the arguments, which arrive as `DArray`s (and `DTree`s) in the layouts
//! they have. The plan is keyed by the transform, the argument shapes and
//! their layouts; it is made with the arguments' layouts fixed
//! (`Planner::fix_inputs`), every cotangent pinned to its argument's
//! layout (a `like_input` op, so `grad` returns gradients laid out like
//! their parameters and the planner prices the move there) and the
//! outputs returned where the program leaves them, not gathered. So a
//! training loop keeps its parameters and optimizer state in blocks
//! between steps, as with `spmd`, while the planner chooses the rest.

use super::*;
use crate::compose::ArgsOf;
use crate::dist::pin::Pinned;
use crate::dist::spmd::{DSlot, DUser};
use crate::dist::trace::record_on;

/// `f` planned by [`auto`], on `DArray` arguments in their own layouts
/// (see [`Auto::sharded`]).
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
///
/// #[nabla::differentiable]
/// fn f(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh().sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("d", dist::world_size())]);
///     let w = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[3, 4]);
///     let x = Array::linspace(0.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
///     let wd = dist::distribute(&w, &mesh, &Spec::new(&[None, None]));
///     let xd = dist::distribute(&x, &mesh, &Spec::new(&[Some("d"), None]));
///     let s: dist::AutoSharded<_> = dist::auto(f, &mesh).sharded();
///     assert!((s(&wd, &xd).to_global().item() - f(&w, &x).item()).abs() < 1e-12);
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AutoSharded<F> {
    f: F,
    mesh: Mesh,
}

impl<F: 'static> Auto<F> {
    /// This function on [`DArray`]s (and [`DTree`](crate::dist::DTree)s)
    /// kept in the layouts they have: called directly, through `grad` or
    /// `value_and_grad`, the planner lays out every intermediate with the
    /// arguments' layouts given, returns gradients laid out like their
    /// parameters and leaves the other outputs where the program leaves
    /// them. The plan (one per transform, argument shapes and layouts)
    /// uses this `auto`'s settings; [`Auto::plan`] shows the latest.
    /// To keep the planner's choice for the arguments too, lay them out
    /// as a plan made on global arrays says ([`Plan::input_specs`], in
    /// leaf order).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
    ///
    /// #[nabla::differentiable]
    /// fn loss(w: &Array, x: &Array) -> Array {
    ///     x.matmul(w).tanh().sum()
    /// }
    ///
    /// fn main() {
    ///     let _mpi = dist::init();
    ///     let n = dist::world_size();
    ///     let mesh = Mesh::new(&[("d", n)]);
    ///     let w = Array::linspace(-1.0, 1.0, 6 * n, DType::F64).reshape(&[3, 2 * n]);
    ///     let x = Array::linspace(0.0, 1.0, 12, DType::F64).reshape(&[4, 3]);
    ///     let wd = dist::distribute(&w, &mesh, &Spec::new(&[None, Some("d")]));
    ///     let xd = dist::distribute(&x, &mesh, &Spec::new(&[None, None]));
    ///     let step = dist::auto(loss, &mesh).sharded();
    ///     let (l, g) = nabla::value_and_grad(step)(&wd, &xd);
    ///     assert_eq!(g.spec(), wd.spec()); // laid out like the parameter
    ///     let (l1, g1) = nabla::value_and_grad(loss)(&w, &x);
    ///     assert!((l.to_global().item() - l1.item()).abs() < 1e-12);
    ///     assert!((&g.to_global() - &g1).abs().max().item() < 1e-12);
    /// }
    /// ```
    pub fn sharded(self) -> AutoSharded<F> {
        AutoSharded {
            f: self.f,
            mesh: self.mesh,
        }
    }
}

impl<F: 'static> AutoSharded<F> {
    /// The plan of the latest call of this function, sharded or not (see
    /// [`Auto::plan`]).
    ///
    /// ```standalone_crate
    /// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
    /// #[nabla::differentiable]
    /// fn f(x: &Array) -> Array { x.sum() }
    /// fn main() {
    ///     let _mpi = dist::init();
    ///     let mesh = Mesh::new(&[("d", dist::world_size())]);
    ///     let x = dist::distribute(&Array::ones(&[4], DType::F64), &mesh, &Spec::new(&[None]));
    ///     let s = dist::auto(f, &mesh).sharded();
    ///     s(&x);
    ///     assert_eq!(s.plan().input_specs(), vec![Spec::new(&[None])]);
    /// }
    /// ```
    #[track_caller]
    pub fn plan(&self) -> Plan {
        latest_plan::<F>()
    }

    /// The mesh it plans for.
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    ///     assert_eq!(nabla::dist::auto(f, &mesh).sharded().mesh(), mesh);
    /// }
    /// ```
    pub fn mesh(&self) -> Mesh {
        self.mesh
    }

    /// The function it runs.
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    ///     let g = nabla::dist::auto(f, &mesh).sharded().function();
    ///     assert_eq!(g(&nabla::Array::ones(&[2], nabla::DType::F64)).item(), 2.0);
    /// }
    /// ```
    pub fn function(&self) -> F
    where
        F: Copy,
    {
        self.f
    }
}

/// Arguments passed as `DArray`s in their own layouts, planned with the
/// settings of the function `F` (see [`OnMesh`]).
pub struct Sharded<F>(PhantomData<F>);

impl<F: DiffFn> DiffFn for AutoSharded<F> {
    type Arity = OnMesh<F::Arity, Sharded<F>>;
    type Out = F::Out;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        F::eval::<V>(x)
    }
    #[allow(clippy::type_complexity)]
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        Pinned::<F>::vjp::<V>(x)
    }
    #[allow(clippy::type_complexity)]
    fn vjp_masked<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        Pinned::<F>::vjp_masked::<V>(x, want)
    }
    #[allow(clippy::type_complexity)]
    fn vjp_masked_shapes<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        SpecsOf<Self>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        Pinned::<F>::vjp_masked_shapes::<V>(x, want)
    }
}

impl<F> Tiered for AutoSharded<F> {
    type Tier = ArrayTier;
}

/// Whether two layouts split alike on `mesh` (mesh axes of one rank
/// split nothing).
fn alike(a: &Layout, b: &Layout, mesh: &Mesh) -> bool {
    let ms = mesh.shape();
    let strip = |l: &Layout| -> Vec<Vec<u8>> {
        l.dims
            .iter()
            .map(|d| {
                d.iter()
                    .copied()
                    .filter(|&m| ms.size(m as usize) > 1)
                    .collect()
            })
            .collect()
    };
    a.partial == b.partial && strip(a) == strip(b)
}

/// `G` on `DArray`s in their layouts, as planned for those layouts.
#[track_caller]
fn run_sharded<G: DiffFn, F: 'static>(x: &ArgsOf<G, DArray>) -> <G::Out as DUser>::DUser
where
    G::Out: DUser,
{
    let n = G::Arity::len(x);
    let mesh = with_entry::<F, _>(|e| e.mesh);
    // An argument is planned whole or split: pending sums complete first.
    let x = G::Arity::map(x, |i, d| {
        if d.mesh != mesh {
            panic!(
                "nabla::dist::auto(..).sharded(): argument leaf {i} is on the mesh {} but the function plans for {}; distribute it on the function's mesh",
                d.mesh.shape(),
                mesh.shape()
            );
        }
        if d.layout.partial == 0 {
            return d.clone();
        }
        let whole = Layout {
            dims: d.layout.dims.clone(),
            partial: 0,
        };
        d.moved(&whole)
    });
    let leaves: Vec<(Vec<usize>, DType)> = (0..n)
        .map(|i| {
            let d = G::Arity::get(&x, i);
            (d.shape.to_vec(), d.local.dtype())
        })
        .collect();
    let layouts: Vec<Layout> = (0..n)
        .map(|i| G::Arity::get(&x, i).layout.clone())
        .collect();
    let key = (TypeId::of::<G>(), leaves.clone(), layouts);
    let record = || {
        let mut g = record_on::<G, DArray>(&x, &leaves);
        g.keep_outputs = true;
        g
    };
    let (_, solved) = planned_for::<F>(&key, record);
    let trial = trial_for::<F>(&key, solved, record);
    let (ready, measured) = trial.lock().unwrap_or_else(|e| e.into_inner()).next();
    with_entry::<F, _>(|e| e.latest = Some(ready.clone()));
    let start = std::time::Instant::now();
    // A given plan (`spmd_with`) may lay the arguments out otherwise.
    let x = G::Arity::map(&x, |i, d| {
        if alike(&d.layout, &ready.inputs[i], &mesh) {
            d.clone()
        } else {
            d.moved(&ready.inputs[i])
        }
    });
    let out = with_plan(ready.ops.clone(), || G::eval::<DArray>(&x));
    if let Some(k) = measured {
        // The slowest rank's time, so every rank chooses alike.
        let t = slowest(mesh, start.elapsed().as_secs_f64());
        trial.lock().unwrap_or_else(|e| e.into_inner()).record(k, t);
    }
    <G::Out as DUser>::user(out)
}

/// Calls each candidate runs before one is chosen (the first of each is
/// not counted: it warms caches and allocators).
const TRIAL_CALLS: usize = 4;

/// The candidate plans of one sharded call and their measured times: the
/// solver's plan and the plan of `spmd`'s own choices from the same
/// argument layouts (`Planner::greedy`), when it differs. Calls take them
/// in turn until each has run [`TRIAL_CALLS`] times; then the one of
/// least median time runs from there on.
pub(super) struct Trial {
    candidates: Vec<Arc<Ready>>,
    times: Vec<Vec<f64>>,
    calls: usize,
    chosen: Option<usize>,
}

impl Trial {
    /// The plan for the next call, and its index when the call is timed.
    fn next(&mut self) -> (Arc<Ready>, Option<usize>) {
        if let Some(c) = self.chosen {
            return (self.candidates[c].clone(), None);
        }
        let k = self.calls % self.candidates.len();
        self.calls += 1;
        (self.candidates[k].clone(), Some(k))
    }

    /// Candidate `k` took `t` seconds; choose once every one has run.
    fn record(&mut self, k: usize, t: f64) {
        self.times[k].push(t);
        if self.times.iter().all(|t| t.len() >= TRIAL_CALLS) {
            let median = |t: &[f64]| {
                let mut t = t[1..].to_vec();
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            };
            let best = (0..self.times.len())
                .min_by(|&a, &b| median(&self.times[a]).total_cmp(&median(&self.times[b])))
                .expect("at least one candidate");
            self.chosen = Some(best);
        }
    }
}

/// The trial of the call under `key`: made on the first call from the
/// solver's plan `solved` and the greedy plan of the same recording.
fn trial_for<F: 'static>(
    key: &Key,
    solved: Arc<Ready>,
    record: impl FnOnce() -> Graph,
) -> Arc<Mutex<Trial>> {
    if let Some(t) = with_entry::<F, _>(|e| e.trials.get(key).cloned()) {
        return t;
    }
    let (mesh, limit, model, fixed) =
        with_entry::<F, _>(|e| (e.mesh, e.limit, e.model.clone(), e.fixed.is_some()));
    let mut candidates = vec![solved.clone()];
    // A given plan (`spmd_with`) runs as given.
    if !fixed {
        let graph = record();
        let planner = planner_with(mesh, limit, model, &key.2);
        if let Some(plan) = planner.greedy(&graph) {
            let fits = limit.is_none_or(|l| plan.memory_per_rank() <= l);
            let r = ready_of(plan, &graph, key.1.len(), mesh);
            if fits && r.ops != solved.ops {
                candidates.push(Arc::new(r));
            }
        }
    }
    let n = candidates.len();
    let t = Arc::new(Mutex::new(Trial {
        candidates,
        times: vec![Vec::new(); n],
        calls: 0,
        chosen: (n == 1).then_some(0),
    }));
    with_entry::<F, _>(|e| e.trials.insert(key.clone(), t.clone()));
    t
}

/// The largest of `t` over the ranks of `mesh` (a raw all-reduce: not
/// counted in `bytes_sent`, which the plans predict).
fn slowest(mesh: Mesh, t: f64) -> f64 {
    use mpi::collective::SystemOperation;
    use mpi::traits::CommunicatorCollectives;
    let mut out = [0.0f64];
    crate::dist::comm::with(mesh.comm(), |c| {
        c.all_reduce_into(&[t], &mut out, SystemOperation::max())
    });
    out[0]
}

/// The user form of `G`'s output on `DArray`s.
type DOut<G> = <<G as DiffFn>::Out as DUser>::DUser;

macro_rules! sharded {
    ($call:ident; $($a:ident $s:ident),*) => {
        #[track_caller]
        fn $call<G: DiffFn<Arity = OnMesh<($($s,)*), Sharded<F>>>, F: 'static, $($s: DSlot),*>($($a: &$s::DTy),*) -> DOut<G>
        where
            G::Out: DUser,
        {
            run_sharded::<G, F>(&($($s::darg($a),)*))
        }
        impl<G: DiffFn<Arity = OnMesh<($($s,)*), Sharded<F>>>, F: 'static, $($s: DSlot),*> Caller<G>
            for OnMesh<($($s,)*), Sharded<F>>
        where
            G::Out: DUser,
        {
            type Ptr = fn($(&$s::DTy),*) -> DOut<G>;
            const PTR: &'static Self::Ptr = &($call::<G, F, $($s),*> as fn($(&$s::DTy),*) -> DOut<G>);
        }
    };
}
sharded!(call1; a S0);
sharded!(call2; a S0, b S1);
sharded!(call3; a S0, b S1, c S2);
sharded!(call4; a S0, b S1, c S2, d S3);
sharded!(call5; a S0, b S1, c S2, d S3, e S4);
sharded!(call6; a S0, b S1, c S2, d S3, e S4, f S5);

/// The arguments of [`AutoSharded`].
type ShardedOf<F> = OnMesh<<F as DiffFn>::Arity, Sharded<F>>;

impl<F, const I: usize> GradFn<Argnum<I>, NoAux> for AutoSharded<F>
where
    F: DiffFn,
    Grad<AutoSharded<F>, Argnum<I>, NoAux>: DiffFn<Arity = ShardedOf<F>>,
    ShardedOf<F>: Caller<Grad<AutoSharded<F>, Argnum<I>, NoAux>>,
{
    type Ptr = <ShardedOf<F> as Caller<Grad<AutoSharded<F>, Argnum<I>, NoAux>>>::Ptr;
    const PTR: &'static Self::Ptr =
        <ShardedOf<F> as Caller<Grad<AutoSharded<F>, Argnum<I>, NoAux>>>::PTR;
}

impl<F, const I: usize> ValueAndGradFn<Argnum<I>, NoAux> for AutoSharded<F>
where
    F: DiffFn,
    ValueAndGrad<AutoSharded<F>, Argnum<I>, NoAux>: DiffFn<Arity = ShardedOf<F>>,
    ShardedOf<F>: Caller<ValueAndGrad<AutoSharded<F>, Argnum<I>, NoAux>>,
{
    type Ptr = <ShardedOf<F> as Caller<ValueAndGrad<AutoSharded<F>, Argnum<I>, NoAux>>>::Ptr;
    const PTR: &'static Self::Ptr =
        <ShardedOf<F> as Caller<ValueAndGrad<AutoSharded<F>, Argnum<I>, NoAux>>>::PTR;
}

impl<F: DiffFn> std::ops::Deref for AutoSharded<F>
where
    ShardedOf<F>: Caller<AutoSharded<F>>,
{
    type Target = <ShardedOf<F> as Caller<AutoSharded<F>>>::Ptr;
    fn deref(&self) -> &Self::Target {
        <ShardedOf<F> as Caller<AutoSharded<F>>>::PTR
    }
}
