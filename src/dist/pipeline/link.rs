//! A pipeline stage's messages to its neighbours: activations forward,
//! cotangents backward, a send and the next receive paired into one
//! `MPI_Sendrecv`.

use crate::dist::comm::{self, Comm};
use crate::{Array, DType};
use mpi::point_to_point::{Destination, Source, send_receive_into_with_tags};
use mpi::topology::Communicator;

/// Tags of the two directions.
const FORWARD: i32 = 11;
const BACKWARD: i32 = 12;

/// This stage's links to its neighbours on the pipeline axis.
pub(super) struct Link {
    pub comm: Comm,
    pub stage: usize,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl Link {
    /// Sends `send` (an activation forward, or a cotangent backward when
    /// the flag is set) and receives what `recv` asks for (a cotangent
    /// from the next stage when `Some(true)`, an activation from the
    /// previous when `Some(false)`); one `Sendrecv` when both concern the
    /// same neighbour.
    pub fn exchange(&self, send: Option<(Array, bool)>, recv: Option<bool>) -> Option<Array> {
        match self.dtype {
            DType::F32 => self.exchange_as::<f32>(send, recv),
            _ => self.exchange_as::<f64>(send, recv),
        }
    }

    /// [`Link::exchange`] with the elements as `T` (the arrays' dtype).
    fn exchange_as<T>(&self, send: Option<(Array, bool)>, recv: Option<bool>) -> Option<Array>
    where
        T: mpi::traits::Equivalence + crate::Element + Default + Clone,
    {
        let peer = |back: bool| {
            if back { self.stage - 1 } else { self.stage + 1 }
        };
        let from = |back: bool| {
            if back { self.stage + 1 } else { self.stage - 1 }
        };
        let tag = |back: bool| if back { BACKWARD } else { FORWARD };
        let mut buf = vec![T::default(); self.shape.iter().product()];
        comm::with(self.comm, |c| match (send, recv) {
            (None, None) => None,
            (Some((a, back)), None) => {
                let dest = c.process_at_rank(peer(back) as i32);
                dest.send_with_tag(&a.to_vec::<T>()[..], tag(back));
                None
            }
            (None, Some(back)) => {
                let src = c.process_at_rank(from(back) as i32);
                src.receive_into_with_tag(&mut buf[..], tag(back));
                Some(Array::from_vec(buf, &self.shape))
            }
            (Some((a, sb)), Some(rb)) => {
                let (dest, src) = (
                    c.process_at_rank(peer(sb) as i32),
                    c.process_at_rank(from(rb) as i32),
                );
                let out = a.to_vec::<T>();
                send_receive_into_with_tags(&out[..], &dest, tag(sb), &mut buf[..], &src, tag(rb));
                Some(Array::from_vec(buf, &self.shape))
            }
        })
    }
}
