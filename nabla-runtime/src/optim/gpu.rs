//! Optimizer updates of GPU parameters as one kernel per parameter (feature
//! `cuda`): the update's formula as a fused kernel body
//! (`nabla_kernels::cuda::FusedBody`) whose step-dependent values (learning
//! rate, bias corrections) are scalar parameters, so one kernel serves
//! every step. It writes the new parameter and moments, which replace the
//! old buffers (the parameter keeps its autograd identity).

use crate::Array;
use crate::storage::Data;
use nabla_kernels::cuda::{FusedBody, GpuArray, fused_map};
use nabla_kernels::optim::AdamStep;
use std::sync::LazyLock;

/// Adam's step (the formula of `nabla_kernels::optim::adam`): operands
/// `p, g, m, v`; scalars decay, l2, 1−β₁, β₂, 1−β₂, −step size, √(1−β₂ᵗ),
/// eps; outputs `p', m', v'`.
static ADAM: LazyLock<FusedBody> = LazyLock::new(|| {
    FusedBody::with_scalars(
        4,
        8,
        3,
        "T ax = v0 * (T)s0;
T ag = v1 + (T)s1 * ax;
T am = v2 + (T)s2 * (ag - v2);
T av = v3 * (T)s3 + (T)s4 * ag * ag;
y0 = ax + (T)s5 * (am / (sqrt(av) / (T)s6 + (T)s7));
y1 = am;
y2 = av;"
            .into(),
    )
});

/// The device buffer of `x` when it is an untracked GPU float array of
/// `like`'s dtype, device and shape.
fn device_data<'a>(x: &'a Array, like: &Array) -> Option<&'a GpuArray> {
    match &*x.data {
        Data::Cuda(g)
            if x.dtype() == like.dtype()
                && x.shape() == like.shape()
                && x.device() == like.device()
                && !x.is_tracked() =>
        {
            Some(g)
        }
        _ => None,
    }
}

/// One Adam step of GPU parameter `p` in one kernel; false (nothing
/// touched) when `p`, `g` and the moments are not float arrays of one
/// GPU, dtype and shape.
pub(super) fn adam(p: &mut Array, g: &Array, bufs: &mut [Array], s: &AdamStep<f64>) -> bool {
    let [m, v] = bufs else { return false };
    if !matches!(p.dtype(), crate::DType::F32 | crate::DType::F64) || p.numel() == 0 {
        return false;
    }
    let detached = p.detach();
    let (Some(pd), Some(gd), Some(md), Some(vd)) = (
        device_data(&detached, p),
        device_data(g, p),
        device_data(m, p),
        device_data(v, p),
    ) else {
        return false;
    };
    let scalars = [
        s.decay,
        s.l2,
        s.one_minus_beta1,
        s.beta2,
        s.one_minus_beta2,
        -s.step_size,
        s.bias_correction2_sqrt,
        s.eps,
    ];
    let shape = p.shape().to_vec();
    let mut out = fused_map(&ADAM, &[pd, gd, md, vd], &scalars, &shape).into_iter();
    let mut next = || Array::from_data(Data::Cuda(out.next().expect("three outputs")));
    let (np, nm, nv) = (next(), next(), next());
    p.data = np.data;
    *m = nm;
    *v = nv;
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_adam_kernel_compiles_with_nvrtc() {
        for elem in ["float", "double"] {
            let src = nabla_kernels::cuda::fused_source(&super::ADAM, elem, false);
            match nabla_kernels::cuda::compile_source(&src, "adam.cu", 90) {
                Ok(image) => assert!(!image.is_empty()),
                Err(e) if e.0.starts_with("NVRTC (libnvrtc.so) not found") => {
                    eprintln!("skipped: {e}");
                    return;
                }
                Err(e) => panic!("{elem}: {e}\n{src}"),
            }
        }
    }
}
