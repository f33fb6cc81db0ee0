//! Starting MPI, the communicators, and ending the whole job when a rank
//! panics.

use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// A communicator: the ranks of the world (`Comm::world()`) or a sub-group
/// made by [`Comm::split`]. A small copyable handle, so collectives take it
/// as a static parameter and the tape can hold it.
///
/// ```standalone_crate
/// let _mpi = nabla::dist::init();
/// let world = nabla::dist::Comm::world();
/// let pairs = world.split(world.rank() / 2, world.rank());
/// assert!(pairs.size() <= 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Comm(usize);

/// The communicators made so far (index 0: the world). `SimpleCommunicator`
/// holds a raw MPI handle; MPI is called from one thread at a time here
/// (`init` asks for `MPI_THREAD_SERIALIZED` and every call takes this lock).
struct Table(Vec<SimpleCommunicator>);
// SAFETY: the handles are only used under the `COMMS` lock, one thread at a
// time, which `MPI_THREAD_SERIALIZED` allows.
unsafe impl Send for Table {}

static COMMS: Mutex<Table> = Mutex::new(Table(Vec::new()));

/// Between `init` and `MPI_Finalize`: when the panic hook may abort.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// MPI for this process: keep it alive until the end of `main`; dropping it
/// calls `MPI_Finalize`. Returned by [`init`].
///
/// ```standalone_crate
/// let mpi = nabla::dist::init();
/// println!("rank {} of {}", nabla::dist::rank(), nabla::dist::world_size());
/// drop(mpi); // MPI_Finalize
/// ```
pub struct Mpi {
    _universe: mpi::environment::Universe,
}

impl Drop for Mpi {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
        COMMS.lock().unwrap_or_else(|e| e.into_inner()).0.clear();
    }
}

/// Starts MPI. Under `mpirun -n N` the world has `N` ranks; run plainly,
/// the program is a world of one rank and every collective is the
/// identity (or its single-rank meaning). Also installs a panic hook: a
/// panic on any rank prints its message and aborts the whole job
/// (`MPI_Abort`), so the other ranks end instead of waiting forever in
/// their next collective.
///
/// Panics when called twice in one process.
///
/// ```standalone_crate
/// let _mpi = nabla::dist::init();
/// assert!(nabla::dist::rank() < nabla::dist::world_size());
/// ```
#[track_caller]
pub fn init() -> Mpi {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Serialized) else {
        panic!(
            "nabla::dist::init: MPI is already initialised in this process; call init() once, at the start of main, and keep what it returns"
        )
    };
    COMMS.lock().unwrap_or_else(|e| e.into_inner()).0 = vec![universe.world()];
    ACTIVE.store(true, Ordering::SeqCst);
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if !ACTIVE.load(Ordering::SeqCst) {
                return;
            }
            let world = SimpleCommunicator::world();
            eprintln!(
                "nabla::dist: rank {} panicked; aborting every rank of the job (MPI_Abort)",
                world.rank()
            );
            world.abort(1);
        }));
    });
    Mpi {
        _universe: universe,
    }
}

/// Ends every rank of the job now (`MPI_Abort` with `code`), for a rank
/// that cannot go on while the others may be waiting for it in a
/// collective (Python's `nabla.dist` calls it on an uncaught exception).
///
/// ```no_run
/// let _mpi = nabla::dist::init();
/// if std::env::var("BAD_INPUT").is_ok() {
///     nabla::dist::abort(2);
/// }
/// ```
pub fn abort(code: i32) -> ! {
    SimpleCommunicator::world().abort(code)
}

/// The table of communicators, locked, after checking that `comm` is in
/// it (MPI is initialised).
#[track_caller]
fn locked(comm: Comm) -> MutexGuard<'static, Table> {
    let table = COMMS.lock().unwrap_or_else(|e| e.into_inner());
    if table.0.get(comm.0).is_none() {
        panic!(
            "nabla::dist: MPI is not initialised; call `let _mpi = nabla::dist::init();` at the start of main"
        )
    }
    table
}

/// Runs `f` on the communicator's handle, under the lock.
#[track_caller]
pub(crate) fn with<R>(comm: Comm, f: impl FnOnce(&SimpleCommunicator) -> R) -> R {
    f(&locked(comm).0[comm.0])
}

impl Comm {
    /// Every rank of the job.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// assert_eq!(nabla::dist::Comm::world().size(), nabla::dist::world_size());
    /// ```
    pub fn world() -> Comm {
        Comm(0)
    }

    /// This process's rank in the communicator (0-based).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// assert_eq!(nabla::dist::Comm::world().rank(), nabla::dist::rank());
    /// ```
    #[track_caller]
    pub fn rank(self) -> usize {
        with(self, |c| c.rank() as usize)
    }

    /// The number of ranks in the communicator.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// assert!(nabla::dist::Comm::world().size() >= 1);
    /// ```
    #[track_caller]
    pub fn size(self) -> usize {
        with(self, |c| c.size() as usize)
    }

    /// Sub-groups: every rank calls `split` (a collective); ranks passing
    /// the same `color` form one new communicator, ordered by `key` (ties
    /// by their rank here).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let world = nabla::dist::Comm::world();
    /// let evens_and_odds = world.split(world.rank() % 2, world.rank());
    /// assert_eq!(evens_and_odds.size(), (world.size() + 1 - world.rank() % 2) / 2);
    /// ```
    #[track_caller]
    pub fn split(self, color: usize, key: usize) -> Comm {
        let mut table = locked(self);
        let sub = table.0[self.0]
            .split_by_color_with_key(Color::with_value(color as i32), key as i32)
            .expect("a defined color always gives a communicator");
        table.0.push(sub);
        Comm(table.0.len() - 1)
    }

    /// Waits until every rank of the communicator has called `barrier`.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// nabla::dist::Comm::world().barrier();
    /// ```
    #[track_caller]
    pub fn barrier(self) {
        with(self, |c| c.barrier())
    }
}

/// This process's rank in the world.
///
/// ```standalone_crate
/// let _mpi = nabla::dist::init();
/// println!("I am rank {}", nabla::dist::rank());
/// ```
#[track_caller]
pub fn rank() -> usize {
    Comm::world().rank()
}

/// The number of ranks in the world (1 without `mpirun`).
///
/// ```standalone_crate
/// let _mpi = nabla::dist::init();
/// assert!(nabla::dist::world_size() >= 1);
/// ```
#[track_caller]
pub fn world_size() -> usize {
    Comm::world().size()
}
