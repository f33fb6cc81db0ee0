//! NCCL collectives on device arrays, for `nabla::dist` (features `mpi` and
//! `cuda`): one communicator per process and GPU, made from a unique id
//! that the caller shares between the ranks (over MPI). NCCL is loaded at
//! run time like the rest of CUDA; [`nccl_available`] says whether it is.
//!
//! Every call is queued on the device's one stream, so it is ordered after
//! the kernels that produced its input and before those that read its
//! output, with no host synchronisation.

use super::array::{Buf, GpuArray, HostElem, check};
use super::device::{Gpu, GpuError};
use super::launch::contiguous;
use crate::DType;
use cudarc::driver::{CudaSlice, CudaView};
use cudarc::nccl::{Comm, Id, NcclType, ReduceOp};
use std::sync::{Arc, Mutex};

/// True when the NCCL library (`libnccl.so`) loads. Never panics.
///
/// ```
/// println!("NCCL: {}", nabla_kernels::cuda::nccl_available());
/// ```
pub fn nccl_available() -> bool {
    // SAFETY: only tries to dlopen the library by name.
    std::panic::catch_unwind(|| unsafe { cudarc::nccl::sys::is_culib_present() }).unwrap_or(false)
}

/// How [`Nccl::all_reduce`] combines the ranks' arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcclReduce {
    /// Elementwise sum.
    Sum,
    /// Elementwise maximum.
    Max,
}

/// An NCCL communicator of `size` ranks, this process being `rank`, on one
/// GPU.
///
/// ```no_run
/// use nabla_kernels::cuda::{Gpu, GpuArray, Nccl, NcclReduce};
/// let gpu = Gpu::get(0).unwrap();
/// let id = Nccl::unique_id().unwrap(); // rank 0 makes it, the others receive it
/// let nccl = Nccl::new(&gpu, 0, 1, id).unwrap();
/// let x = GpuArray::from_host(&gpu, &[1.0f32, 2.0], &[2]);
/// assert_eq!(nccl.all_reduce(&x, NcclReduce::Sum).to_host::<f32>(), vec![1.0, 2.0]);
/// ```
pub struct Nccl {
    comm: Mutex<Comm>,
    gpu: Arc<Gpu>,
    rank: usize,
    size: usize,
}

// SAFETY: the NCCL communicator is used under its mutex, one thread at a
// time, and only queues work on the device's stream.
unsafe impl Send for Nccl {}
// SAFETY: as for `Send`: every shared use locks the mutex first.
unsafe impl Sync for Nccl {}

impl std::fmt::Debug for Nccl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Nccl(rank {} of {} on {:?})",
            self.rank, self.size, self.gpu
        )
    }
}

fn nccl_err(what: &str, e: impl std::fmt::Debug) -> GpuError {
    GpuError(format!("NCCL {what}: {e:?}"))
}

impl Nccl {
    /// A fresh unique id (`ncclGetUniqueId`): made on one rank and handed
    /// to every other before [`Nccl::new`].
    pub fn unique_id() -> Result<[u8; 128], GpuError> {
        if !nccl_available() {
            return Err(GpuError(
                "NCCL did not load (libnccl.so.2 not found)".into(),
            ));
        }
        let id = Id::new().map_err(|e| nccl_err("ncclGetUniqueId", e))?;
        Ok(id.internal().map(|c| c as u8))
    }

    /// Joins the communicator (`ncclCommInitRank`): every rank calls this
    /// at the same time with the same `id` and `size`.
    pub fn new(gpu: &Arc<Gpu>, rank: usize, size: usize, id: [u8; 128]) -> Result<Nccl, GpuError> {
        gpu.stream
            .context()
            .bind_to_thread()
            .map_err(|e| nccl_err("binding the device", e))?;
        let id = Id::uninit(id.map(|b| b as ::core::ffi::c_char));
        let comm = Comm::from_rank(gpu.stream.clone(), rank, size, id)
            .map_err(|e| nccl_err("ncclCommInitRank", e))?;
        Ok(Nccl {
            comm: Mutex::new(comm),
            gpu: gpu.clone(),
            rank,
            size,
        })
    }

    /// The device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Every rank's `x` combined elementwise (`ncclAllReduce`).
    #[track_caller]
    pub fn all_reduce(&self, x: &GpuArray, op: NcclReduce) -> GpuArray {
        let op = match op {
            NcclReduce::Sum => ReduceOp::Sum,
            NcclReduce::Max => ReduceOp::Max,
        };
        self.run(x, x.shape(), |c, src, dst| match (src, dst) {
            (Src::F32(s), Dst::F32(d)) => c.all_reduce(&s, d, &op).map(drop),
            (Src::F64(s), Dst::F64(d)) => c.all_reduce(&s, d, &op).map(drop),
            _ => unreachable!("one element type"),
        })
    }

    /// Every rank's `x` concatenated along the first axis, in rank order
    /// (`ncclAllGather`).
    #[track_caller]
    pub fn all_gather(&self, x: &GpuArray) -> GpuArray {
        let mut shape = x.shape().to_vec();
        shape[0] *= self.size;
        self.run(x, &shape, |c, src, dst| match (src, dst) {
            (Src::F32(s), Dst::F32(d)) => c.all_gather(&s, d).map(drop),
            (Src::F64(s), Dst::F64(d)) => c.all_gather(&s, d).map(drop),
            _ => unreachable!("one element type"),
        })
    }

    /// The ranks' `x` summed, rank `r` keeping block `r` of the first axis
    /// (`ncclReduceScatter`); the first axis splits evenly.
    #[track_caller]
    pub fn reduce_scatter(&self, x: &GpuArray) -> GpuArray {
        let mut shape = x.shape().to_vec();
        shape[0] /= self.size;
        self.run(x, &shape, |c, src, dst| match (src, dst) {
            (Src::F32(s), Dst::F32(d)) => c.reduce_scatter(&s, d, &ReduceOp::Sum).map(drop),
            (Src::F64(s), Dst::F64(d)) => c.reduce_scatter(&s, d, &ReduceOp::Sum).map(drop),
            _ => unreachable!("one element type"),
        })
    }

    /// Rank `root`'s `x` on every rank (`ncclBroadcast`).
    #[track_caller]
    pub fn broadcast(&self, x: &GpuArray, root: usize) -> GpuArray {
        let root = root as i32;
        self.run(x, x.shape(), |c, src, dst| match (src, dst) {
            (Src::F32(s), Dst::F32(d)) => c.broadcast(Some(&s), d, root).map(drop),
            (Src::F64(s), Dst::F64(d)) => c.broadcast(Some(&s), d, root).map(drop),
            _ => unreachable!("one element type"),
        })
    }

    /// Block `j` of `x`'s first axis to rank `j`, the received blocks in
    /// rank order (grouped `ncclSend`/`ncclRecv`, NCCL's all-to-all).
    #[track_caller]
    pub fn all_to_all(&self, x: &GpuArray) -> GpuArray {
        match x.elem() {
            DType::F32 => self.all_to_all_typed::<f32>(x),
            DType::F64 => self.all_to_all_typed::<f64>(x),
            e => panic!(
                "NCCL all_to_all: takes f32 or f64 arrays, got {}",
                e.cuda_name()
            ),
        }
    }

    fn all_to_all_typed<T: HostElem + NcclType>(&self, x: &GpuArray) -> GpuArray {
        let n = x.numel();
        if n == 0 {
            return GpuArray::zeros(&self.gpu, x.elem(), x.shape());
        }
        let x = dense(x);
        let src = T::unwrap(&x.buf).expect("element type");
        let src = src.slice(x.offset()..x.offset() + n);
        let mut out: CudaSlice<T> = alloc(&self.gpu, n);
        let block = n / self.size;
        let comm = self.comm.lock().unwrap_or_else(|e| e.into_inner());
        check_nccl("ncclGroupStart", cudarc::nccl::group_start());
        for j in 0..self.size {
            let part = j * block..(j + 1) * block;
            check_nccl("ncclSend", comm.send(&src.slice(part.clone()), j as i32));
            check_nccl("ncclRecv", comm.recv(&mut out.slice_mut(part), j as i32));
        }
        check_nccl("ncclGroupEnd", cudarc::nccl::group_end());
        drop(comm);
        GpuArray::from_buf(&self.gpu, T::wrap(out), x.shape())
    }

    /// `x` made contiguous, an output buffer of `shape`, and `call` on the
    /// pair (skipped when either is empty: every rank has the same shapes).
    #[track_caller]
    fn run(
        &self,
        x: &GpuArray,
        shape: &[usize],
        call: impl FnOnce(&Comm, Src<'_>, Dst<'_>) -> Result<(), cudarc::nccl::result::NcclError>,
    ) -> GpuArray {
        let (n, m) = (x.numel(), shape.iter().product::<usize>());
        if n == 0 || m == 0 {
            return GpuArray::zeros(&self.gpu, x.elem(), shape);
        }
        let x = dense(x);
        let comm = self.comm.lock().unwrap_or_else(|e| e.into_inner());
        let out = match &*x.buf {
            Buf::F32(s) => {
                let mut out = alloc::<f32>(&self.gpu, m);
                let src = s.slice(x.offset()..x.offset() + n);
                check_nccl("call", call(&comm, Src::F32(src), Dst::F32(&mut out)));
                Buf::F32(out)
            }
            Buf::F64(s) => {
                let mut out = alloc::<f64>(&self.gpu, m);
                let src = s.slice(x.offset()..x.offset() + n);
                check_nccl("call", call(&comm, Src::F64(src), Dst::F64(&mut out)));
                Buf::F64(out)
            }
            _ => panic!(
                "NCCL collectives take f32 or f64 arrays, got {}",
                x.elem().cuda_name()
            ),
        };
        GpuArray::from_buf(&self.gpu, out, shape)
    }
}

/// A contiguous input.
enum Src<'a> {
    F32(CudaView<'a, f32>),
    F64(CudaView<'a, f64>),
}

/// An output buffer.
enum Dst<'a> {
    F32(&'a mut CudaSlice<f32>),
    F64(&'a mut CudaSlice<f64>),
}

fn dense(x: &GpuArray) -> GpuArray {
    if x.is_contiguous() {
        x.clone()
    } else {
        contiguous(x)
    }
}

/// An output buffer of `n` elements, every one written by the collective.
fn alloc<T: HostElem>(gpu: &Arc<Gpu>, n: usize) -> CudaSlice<T> {
    // SAFETY: the collective writes all `n` elements before anything reads
    // them (the stream orders the reads after it).
    check(unsafe { gpu.stream.alloc::<T>(n) })
}

#[track_caller]
fn check_nccl<T>(what: &str, r: Result<T, cudarc::nccl::result::NcclError>) -> T {
    r.unwrap_or_else(|e| panic!("NCCL {what}: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a communicator of one rank every collective returns its input:
    /// each NCCL call, the contiguous copy of a strided input, both element
    /// types and empty arrays, against the host values. Skips with a
    /// printed reason without a GPU or NCCL.
    #[test]
    fn one_rank_collectives_return_their_input() {
        let Ok(gpu) = Gpu::get(0) else {
            println!("skipped: no GPU");
            return;
        };
        if !nccl_available() {
            println!("skipped: NCCL did not load");
            return;
        }
        let id = Nccl::unique_id().expect("a unique id");
        let nccl = Nccl::new(&gpu, 0, 1, id).expect("a one-rank communicator");
        let host: Vec<f64> = (0..12).map(|i| i as f64 * 0.5 - 2.0).collect();
        let x = GpuArray::from_host(&gpu, &host, &[4, 3]);
        let xf = GpuArray::from_host(
            &gpu,
            &host.iter().map(|&v| v as f32).collect::<Vec<_>>(),
            &[4, 3],
        );
        for (name, y) in [
            ("all_reduce sum", nccl.all_reduce(&x, NcclReduce::Sum)),
            ("all_reduce max", nccl.all_reduce(&x, NcclReduce::Max)),
            ("all_gather", nccl.all_gather(&x)),
            ("reduce_scatter", nccl.reduce_scatter(&x)),
            ("broadcast", nccl.broadcast(&x, 0)),
            ("all_to_all", nccl.all_to_all(&x)),
        ] {
            assert_eq!(y.shape(), &[4, 3], "{name}");
            assert_eq!(y.to_host::<f64>(), host, "{name}");
        }
        for (name, y) in [
            ("all_reduce f32", nccl.all_reduce(&xf, NcclReduce::Sum)),
            ("all_to_all f32", nccl.all_to_all(&xf)),
        ] {
            let want: Vec<f32> = host.iter().map(|&v| v as f32).collect();
            assert_eq!(y.to_host::<f32>(), want, "{name}");
        }
        let t = x.permute(&[1, 0]);
        assert_eq!(
            nccl.all_reduce(&t, NcclReduce::Sum).to_host::<f64>(),
            t.to_host::<f64>(),
            "a strided input"
        );
        let empty = GpuArray::from_host::<f64>(&gpu, &[], &[0, 3]);
        assert_eq!(nccl.all_gather(&empty).shape(), &[0, 3]);
    }
}
