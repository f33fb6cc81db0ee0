//! GPU arrays in the collectives (features `mpi` and `cuda`): NCCL moves
//! them device to device, one communicator per `Comm` and GPU, made on the
//! first collective from a unique id that rank 0 draws and MPI broadcasts.
//! Without NCCL (the library does not load, or `NABLA_NCCL=0`), GPU arrays
//! travel through the host over MPI.

use super::comm::{Comm, with};
use mpi::traits::{Communicator, Root};
use nabla_runtime::cuda::raw::{GpuArray, Nccl, nccl_available};
use std::sync::{Arc, Mutex, OnceLock};

/// Whether collectives on GPU arrays use NCCL in this process.
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("NABLA_NCCL").as_deref() != Ok("0") && nccl_available())
}

/// The NCCL communicators made so far, by communicator and device.
type Made = Vec<((Comm, usize), Arc<Nccl>)>;

/// The NCCL communicator of `comm` on the GPU of `x`, made the first time
/// (a collective call: every rank of `comm` reaches it together, in the
/// collective they all run).
#[track_caller]
pub(crate) fn communicator(comm: Comm, x: &GpuArray) -> Arc<Nccl> {
    static TABLE: Mutex<Made> = Mutex::new(Vec::new());
    let key = (comm, x.ordinal());
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, n)) = table.iter().find(|(k, _)| *k == key) {
        return n.clone();
    }
    let mut id = [0u8; 128];
    if comm.rank() == 0 {
        id = Nccl::unique_id().unwrap_or_else(|e| panic!("nabla::dist: {e}"));
    }
    with(comm, |c| c.process_at_rank(0).broadcast_into(&mut id[..]));
    let nccl = Nccl::new(x.gpu(), comm.rank(), comm.size(), id).unwrap_or_else(|e| {
        panic!(
            "nabla::dist: joining an NCCL communicator of {} ranks on cuda:{} failed ({e}); use one GPU per rank, or NABLA_NCCL=0 to move GPU arrays through the host",
            comm.size(),
            x.ordinal()
        )
    });
    let nccl = Arc::new(nccl);
    table.push((key, nccl.clone()));
    nccl
}
