//! Process-wide settings on the GPU: `set_deterministic` makes scatter-adds
//! (the backward pass of gathers and embeddings) add in index order, the
//! CPU's bits; `release_buffers` and `set_buffer_cap` reach the device's
//! memory pool.

use crate::gpu_or_skip as gpu;
use nabla::prelude::*;
use nabla::primitives::index::index_add;

fn bits(a: &Array) -> Vec<u32> {
    a.to_vec::<f32>().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn deterministic_scatter_adds_give_the_cpus_bits() {
    let Some(dev) = gpu() else { return };
    // 100 000 rows added into 13: with atomic adds the order, and so the
    // rounding, changes from run to run.
    let n = 100_000;
    let idx: Vec<usize> = (0..n).map(|i| (i * 7919) % 13).collect();
    let src = Key::new(0).normal(&[n, 4], DType::F32);
    let cpu = index_add::forward(&src, &[13, 4], 0, &idx);
    let on_gpu = src.to_device(dev);
    nabla::set_deterministic(true);
    let runs: Vec<Array> = (0..2)
        .map(|_| index_add::forward(&on_gpu, &[13, 4], 0, &idx))
        .collect();
    nabla::set_deterministic(false);
    for r in &runs {
        assert_eq!(r.device(), dev, "the result stays on the device");
        assert_eq!(bits(&r.to_device(Device::Cpu)), bits(&cpu));
    }
}

#[test]
fn the_memory_pool_follows_the_cap_and_release() {
    let Some(dev) = gpu() else { return };
    let default = nabla::buffer_cap();
    let big = Array::ones(&[1 << 26], DType::F32).to_device(dev); // 256 MiB
    assert_eq!(big.sum().item(), (1u64 << 26) as f64);
    drop(big);
    nabla::release_buffers();
    nabla::set_buffer_cap(64 << 20);
    let again = Array::ones(&[1 << 24], DType::F32).to_device(dev);
    assert_eq!((&again * 2.0).sum().item(), (1u64 << 25) as f64);
    drop(again);
    nabla::set_buffer_cap(default);
    nabla::release_buffers();
}
