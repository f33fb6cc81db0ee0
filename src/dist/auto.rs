//! [`auto`]: the planner chooses every layout. `auto(f, &mesh)` is `f`
//! (its programs unchanged) with arguments taken as global arrays; called
//! directly or through any transform, the outermost call records the
//! transformed program once per argument shape (`trace.rs`), plans it
//! (`plan/`), lays the arguments out as planned, runs the program at
//! `DArray` with every op taking its planned assignment, and gathers the
//! results. So `value_and_grad(auto(f))` plans the whole training step,
//! backward pass included, as ALPA does.

use super::darray::DArray;
use super::factors::Assignment;
use super::graph::Graph;
use super::graph::Source;
use super::layout::{Layout, Spec};
use super::mesh::Mesh;
use super::plan::{CostModel, Plan};
use super::propagate::with_plan;
use super::spmd::OnMesh;
use super::trace::{Traced, record, record_fn};
use crate::compose::{
    ArgsOf, Arity, ArrayTier, Caller, DiffFn, One, OutOf, Slot, SpecsOf, Structure, Tiered, UserOf,
};
use crate::transforms::{
    Argnum, Grad, GradFn, GradJvpFn, GradVjpFn, JvpFn, NoAux, ValueAndGrad, ValueAndGradFn, VjpFn,
};
use crate::{Array, ArrayValue, DType, Dual, Shape};
use std::any::TypeId;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

mod at_arrays;
mod jvp;
mod sharded;
mod vjp;

pub use sharded::{AutoSharded, Sharded};
pub use vjp::{PlannedPullback, PlannedVjp};

/// A plan ready to run: the plan, each op's name and assignment in
/// program order, and each argument leaf's layout.
struct Ready {
    plan: Plan,
    ops: Vec<(&'static str, Assignment)>,
    inputs: Vec<Layout>,
}

/// What a program's call is planned for: the transform's type, the
/// argument leaves' shapes and dtypes
/// and, for sharded arguments, their layouts.
type Key = (TypeId, Vec<(Vec<usize>, DType)>, Vec<Layout>);

/// One `auto` function's settings and plans.
struct Entry {
    mesh: Mesh,
    limit: Option<u64>,
    model: Option<CostModel>,
    plans: HashMap<Key, Arc<Ready>>,
    latest: Option<Arc<Ready>>,
    /// The plan every call runs ([`spmd_with`]) instead of planning.
    fixed: Option<Plan>,
    /// Per sharded call, the candidate plans measured against each other.
    trials: HashMap<Key, Arc<Mutex<sharded::Trial>>>,
}

static AUTOS: Mutex<Option<HashMap<TypeId, Entry>>> = Mutex::new(None);

fn autos() -> MutexGuard<'static, Option<HashMap<TypeId, Entry>>> {
    AUTOS.lock().unwrap_or_else(|e| e.into_inner())
}

#[track_caller]
fn with_entry<F: 'static, R>(f: impl FnOnce(&mut Entry) -> R) -> R {
    let mut t = autos();
    let Some(e) = t
        .get_or_insert_with(HashMap::new)
        .get_mut(&TypeId::of::<F>())
    else {
        panic!(
            "nabla::dist::auto: this function has no mesh; make it with `dist::auto(f, &mesh)` before calling it"
        )
    };
    f(e)
}

/// `f` with every layout chosen by the planner (see [`auto`]).
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh}};
///
/// #[nabla::differentiable]
/// fn f(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh().sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("x", dist::world_size())]);
///     let a = dist::auto(f, &mesh);
///     let w = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[3, 4]);
///     let x = Array::linspace(0.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
///     let g = nabla::grad(a)(&w, &x);
///     let diff = (&g - &nabla::grad(f)(&w, &x)).abs().max().item();
///     assert!(diff < 1e-12);
///     println!("{}", a.plan());
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Auto<F> {
    f: F,
    mesh: Mesh,
}

/// The planner chooses how every array of `f` is laid out over `mesh`:
/// parameters, inputs and intermediates, minimising the modelled step
/// time within the memory limit ([`Auto::memory_limit`]). Called with
/// global arrays (the same on every rank), directly or through `grad`,
/// `value_and_grad`, `vmap`, `jacfwd`, `jacrev` or `hessian`, it returns
/// global arrays equal to the one-process results. The first call with
/// given shapes records and plans the program (the transform's, backward
/// pass included); later calls reuse the plan. The latest `auto(f, ..)`
/// of a function decides its mesh: on another mesh it starts with the
/// default settings and no plans, on the same mesh it keeps both.
///
/// Inside `#[differentiable]` code, `dist::auto(f, mesh)(x, ..)` (with
/// `#[nondiff] mesh: &Mesh` a parameter of the enclosing function) runs
/// `f` planned over the mesh when the enclosing function runs on plain
/// arrays, its backward pass as a planned program of its own, and `f`
/// itself under other transforms (which compute the same numbers).
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh}};
///
/// #[nabla::differentiable]
/// fn dense(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh()
/// }
///
/// // One layer planned over the mesh, the rest on every rank.
/// #[nabla::differentiable]
/// fn model(w: &Array, v: &Array, x: &Array, #[nondiff] mesh: &Mesh) -> Array {
///     let h = dist::auto(dense, mesh)(w, x);
///     h.matmul(v).sum()
/// }
///
/// #[nabla::differentiable]
/// fn alone(w: &Array, v: &Array, x: &Array) -> Array {
///     dense(w, x).matmul(v).sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("d", dist::world_size())]);
///     let w = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[3, 4]);
///     let v = Array::linspace(0.5, 1.0, 8, DType::F64).reshape(&[4, 2]);
///     let x = Array::linspace(0.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
///     let (l, g) = nabla::value_and_grad(model)(&w, &v, &x, &mesh);
///     let (l1, g1) = nabla::value_and_grad(alone)(&w, &v, &x);
///     assert!((l.item() - l1.item()).abs() < 1e-12);
///     assert!((&g - &g1).abs().max().item() < 1e-12);
/// }
/// ```
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh}};
///
/// #[nabla::differentiable]
/// fn loss(w: &Array, x: &Array) -> Array {
///     x.matmul(w).sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("x", dist::world_size())]);
///     let w = Array::ones(&[4, 2], DType::F64);
///     let x = Array::ones(&[8, 4], DType::F64);
///     let (l, g) = nabla::value_and_grad(dist::auto(loss, &mesh))(&w, &x);
///     assert_eq!((l.item(), g.shape()), (64.0, &[4usize, 2][..]));
/// }
/// ```
pub fn auto<F: DiffFn>(f: F, mesh: &Mesh) -> Auto<F> {
    let mut table = autos();
    let table = table.get_or_insert_with(HashMap::new);
    // On the same mesh, the settings and the plans made stay (a call of
    // `dist::auto(f, mesh)(..)` inside differentiable code makes the
    // function on every call).
    if let Some(e) = table.get(&TypeId::of::<F>())
        && e.mesh == *mesh
        && e.fixed.is_none()
    {
        return Auto { f, mesh: *mesh };
    }
    table.insert(
        TypeId::of::<F>(),
        Entry {
            mesh: *mesh,
            limit: None,
            model: None,
            plans: HashMap::new(),
            latest: None,
            fixed: None,
            trials: HashMap::new(),
        },
    );
    Auto { f, mesh: *mesh }
}

/// `f` run with `plan` instead of planning: as [`auto`] (global arrays
/// in, global results out, through the same transforms), but every call
/// lays the arguments out and splits every op as `plan` says. `plan` is
/// typically loaded from JSON ([`Plan::load`]) after being made by
/// [`Plan::for_mesh`]`(..).function(..)` for the same transform of `f`
/// and the same argument shapes, on a mesh of the same axes. The first
/// call with given shapes records the program and checks it against the
/// plan: a different mesh, node count, op or shape panics naming the
/// first difference. The latest `auto(f, ..)` or `spmd_with(f, ..)` of a
/// function decides its mesh and plan.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Plan}};
///
/// #[nabla::differentiable]
/// fn loss(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh().sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("x", dist::world_size())]);
///     let w = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[3, 4]);
///     let x = Array::linspace(0.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
///     let shape = mesh.shape();
///     let axes: Vec<(&str, usize)> = shape.axes().collect();
///     let plan = Plan::for_mesh(&axes).function(nabla::value_and_grad(loss), (&w, &x));
///     let plan = Plan::from_json(&plan.to_json()).unwrap();
///     let (l, g) = nabla::value_and_grad(dist::spmd_with(loss, &mesh, &plan))(&w, &x);
///     let (l1, g1) = nabla::value_and_grad(loss)(&w, &x);
///     assert!((l.item() - l1.item()).abs() < 1e-12 && (&g - &g1).abs().max().item() < 1e-12);
/// }
/// ```
#[track_caller]
pub fn spmd_with<F: DiffFn>(f: F, mesh: &Mesh, plan: &Plan) -> Auto<F> {
    if plan.mesh() != &mesh.shape() {
        panic!(
            "nabla::dist::spmd_with: the plan is for {} but the mesh is {}; plan for this mesh (Plan::for_mesh with its axes)",
            plan.mesh(),
            mesh.shape()
        );
    }
    autos().get_or_insert_with(HashMap::new).insert(
        TypeId::of::<F>(),
        Entry {
            mesh: *mesh,
            limit: None,
            model: None,
            plans: HashMap::new(),
            latest: None,
            fixed: Some(plan.clone()),
            trials: HashMap::new(),
        },
    );
    Auto { f, mesh: *mesh }
}

impl<F: 'static> Auto<F> {
    /// The function it runs.
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    ///     let g = nabla::dist::auto(f, &mesh).function();
    ///     assert_eq!(g(&nabla::Array::ones(&[2], nabla::DType::F64)).item(), 2.0);
    /// }
    /// ```
    pub fn function(&self) -> F
    where
        F: Copy,
    {
        self.f
    }

    /// Plans for at most `bytes` live on one rank at once (plans made
    /// before are dropped).
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("x", nabla::dist::world_size())]);
    ///     let a = nabla::dist::auto(f, &mesh).memory_limit(1 << 30);
    ///     a(&nabla::Array::ones(&[4], nabla::DType::F64));
    ///     assert_eq!(a.plan().memory_limit(), Some(1 << 30));
    /// }
    /// ```
    #[track_caller]
    pub fn memory_limit(self, bytes: u64) -> Self {
        with_entry::<F, _>(|e| {
            no_fixed(e, "memory_limit");
            e.limit = Some(bytes);
            e.plans.clear();
            e.trials.clear();
        });
        self
    }

    /// Plans with `model` (plans made before are dropped).
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("x", nabla::dist::world_size())]);
    ///     let m = nabla::dist::CostModel::uniform(1e10, 1e9, 1e-6);
    ///     let a = nabla::dist::auto(f, &mesh).cost_model(m.clone());
    ///     a(&nabla::Array::ones(&[4], nabla::DType::F64));
    ///     assert_eq!(a.plan().cost_model(), &m);
    /// }
    /// ```
    #[track_caller]
    pub fn cost_model(self, model: CostModel) -> Self {
        with_entry::<F, _>(|e| {
            no_fixed(e, "cost_model");
            e.model = Some(model);
            e.plans.clear();
            e.trials.clear();
        });
        self
    }

    /// The plan of the latest call (its layouts, collectives, bytes and
    /// memory per rank; `Display` prints it). Panics before the first
    /// call.
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("x", nabla::dist::world_size())]);
    ///     let a = nabla::dist::auto(f, &mesh);
    ///     a(&nabla::Array::ones(&[4], nabla::DType::F64));
    ///     assert!(a.plan().fits());
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
    ///     let mesh = nabla::dist::Mesh::new(&[("x", nabla::dist::world_size())]);
    ///     assert_eq!(nabla::dist::auto(f, &mesh).mesh(), mesh);
    /// }
    /// ```
    pub fn mesh(&self) -> Mesh {
        self.mesh
    }
}

/// The plan of the latest call of `F`'s `auto`; panics before the first.
#[track_caller]
fn latest_plan<F: 'static>() -> Plan {
    with_entry::<F, _>(|e| e.latest.as_ref().map(|r| r.plan.clone())).unwrap_or_else(|| {
        panic!("nabla::dist::Auto::plan: nothing is planned yet; call the function once first")
    })
}

/// Panics when the function runs a given plan: settings of the planner
/// would not apply.
#[track_caller]
fn no_fixed(e: &Entry, what: &str) {
    if e.fixed.is_some() {
        panic!(
            "nabla::dist::Auto::{what}: this function runs a given plan (dist::spmd_with), so the planner's settings do not apply; set them on the planner that makes the plan (Plan::for_mesh(..).{what}(..)), or use dist::auto"
        );
    }
}

/// Arguments passed as global arrays, planned with the settings of the
/// function `F` (see [`OnMesh`]).
pub struct Global<F>(PhantomData<F>);

/// The arguments of [`Auto`]: those of `A` as global arrays.
pub type Planned<A, F> = OnMesh<A, Global<F>>;

impl<F> Tiered for Auto<F> {
    type Tier = ArrayTier;
}

/// The shapes and dtypes of the argument leaves.
fn leaves<A: Arity>(x: &A::Args<Array>) -> Vec<(Vec<usize>, DType)> {
    (0..A::len(x))
        .map(|i| {
            let a = A::get(x, i);
            (a.shape().to_vec(), a.dtype())
        })
        .collect()
}

/// The plan for `G` on these arguments: cached, or recorded and planned.
fn ready<G: DiffFn, F: 'static>(x: &ArgsOf<G, Array>) -> (Mesh, Arc<Ready>) {
    let key = (TypeId::of::<G>(), leaves::<G::Arity>(x), Vec::new());
    planned_for::<F>(&key, || record_fn::<G>(x))
}

/// The plan under `key` (a program and its inputs' shapes and dtypes):
/// cached, the given plan (`spmd_with`) checked against the recording,
/// or recorded by `record` and planned (with the argument leaves held to
/// the key's layouts where it has them).
fn planned_for<F: 'static>(key: &Key, record: impl FnOnce() -> Graph) -> (Mesh, Arc<Ready>) {
    let (mesh, limit, model, fixed, cached) = with_entry::<F, _>(|e| {
        let cached = e.plans.get(key).cloned();
        (e.mesh, e.limit, e.model.clone(), e.fixed.clone(), cached)
    });
    let ready = cached.unwrap_or_else(|| {
        let graph = record();
        if let Some(plan) = fixed {
            let (ops, inputs) = plan.replay(&graph, &mesh.shape()).unwrap_or_else(|e| {
                panic!(
                    "nabla::dist::spmd_with: {e}; the plan was made for another program, transform or argument shapes: make it with Plan::for_mesh(..).function(<the same transform of f>, (&a, &b, ..)) on arguments of these shapes"
                )
            });
            let r = Arc::new(Ready { plan, ops, inputs });
            with_entry::<F, _>(|e| e.plans.insert(key.clone(), r.clone()));
            return r;
        }
        let planner = planner_with(mesh, limit, model, &key.2);
        let r = Arc::new(ready_of(planner.graph(&graph), &graph, key.1.len(), mesh));
        with_entry::<F, _>(|e| e.plans.insert(key.clone(), r.clone()));
        r
    });
    with_entry::<F, _>(|e| e.latest = Some(ready.clone()));
    (mesh, ready)
}

/// A planner for `mesh` with these settings, the argument leaves held to
/// `layouts` where there are any.
fn planner_with(
    mesh: Mesh,
    limit: Option<u64>,
    model: Option<CostModel>,
    layouts: &[Layout],
) -> super::plan::Planner {
    let mut planner = Plan::for_mesh(&mesh.shape().axes().collect::<Vec<_>>());
    if let Some(limit) = limit {
        planner = planner.memory_limit(limit);
    }
    if let Some(model) = model {
        planner = planner.cost_model(model);
    }
    if !layouts.is_empty() {
        let shape = mesh.shape();
        let specs: Vec<Option<Spec>> = layouts.iter().map(|l| Some(l.spec(&shape))).collect();
        planner = planner.fix_inputs(&specs);
    }
    planner
}

/// `plan` of `graph` (with `leaves` argument leaves) ready to run, after
/// checking that every rank made the same.
#[track_caller]
fn ready_of(plan: Plan, graph: &Graph, leaves: usize, mesh: Mesh) -> Ready {
    let ops: Vec<(&'static str, Assignment)> = (0..graph.nodes.len())
        .filter(|&v| !matches!(graph.nodes[v].source, Source::Input(_)))
        .map(|v| (graph.nodes[v].rule.name, plan.assignment(v).clone()))
        .collect();
    let inputs: Vec<Layout> = (0..leaves).map(|i| plan.input_layout(i)).collect();
    agree(mesh, &ops, &inputs);
    Ready { plan, ops, inputs }
}

/// Checks that every rank of `mesh` made the same plan (a cost model
/// measured on each rank alone, or arguments of other shapes, would give
/// ranks different plans and mismatched collectives): a clear panic on
/// every rank instead.
#[track_caller]
fn agree(mesh: Mesh, ops: &[(&'static str, Assignment)], inputs: &[Layout]) {
    use mpi::collective::SystemOperation;
    use mpi::traits::CommunicatorCollectives;
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ops.hash(&mut h);
    inputs.hash(&mut h);
    let mine = h.finish();
    let (mut hi, mut lo) = ([0u64], [0u64]);
    super::comm::with(mesh.comm(), |c| {
        c.all_reduce_into(&[mine], &mut hi, SystemOperation::max());
        c.all_reduce_into(&[mine], &mut lo, SystemOperation::min());
    });
    if hi[0] != lo[0] {
        panic!(
            "nabla::dist::auto: the ranks made different plans; every rank must call with arguments of the same shapes and plan with the same cost model (dist::calibrate gives every rank the same one)"
        );
    }
}

/// `G` on global arrays, distributed as planned.
#[track_caller]
fn run<G: DiffFn, F: 'static>(x: &ArgsOf<G, Array>) -> UserOf<G> {
    G::Out::to_user(run_out::<G, F>(x))
}

/// `G` on global arrays, distributed as planned, the outputs gathered.
#[track_caller]
fn run_out<G: DiffFn, F: 'static>(x: &ArgsOf<G, Array>) -> OutOf<G, Array> {
    let (mesh, ready) = ready::<G, F>(x);
    let args = G::Arity::map(x, |i, a| DArray {
        local: mesh.block(a, &ready.inputs[i]),
        shape: Shape::from_slice(a.shape()),
        layout: ready.inputs[i].clone(),
        mesh,
    });
    let out = with_plan(ready.ops.clone(), || G::eval::<DArray>(&args));
    G::Out::map(out, |_, d| d.to_global())
}
