"""PyTorch CUDA twin of benches/gpu.rs: the same workloads, timed the same
way (each iteration ends with torch.cuda.synchronize()), median of repeats.
Prints one JSON object: {"name": seconds, ...} plus the device-to-device
copy bandwidth of 64M f32 elements (the memory-bandwidth reference).

Run on the GPU machine (PyTorch with CUDA installed there):
    python3 benches/compare/torch_gpu_twin.py
"""
import json
import statistics
import time

import torch

dev = torch.device("cuda")


def median_time(fn, repeats, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def mlp_step(batch):
    torch.manual_seed(0)
    x = torch.randn(batch, 784, device=dev)
    y = torch.randn(batch, 10, device=dev)
    ps = [
        (torch.randn(784, 512, device=dev) / 784 ** 0.5).requires_grad_(),
        torch.zeros(512, device=dev, requires_grad=True),
        (torch.randn(512, 512, device=dev) / 512 ** 0.5).requires_grad_(),
        torch.zeros(512, device=dev, requires_grad=True),
        (torch.randn(512, 10, device=dev) / 512 ** 0.5).requires_grad_(),
        torch.zeros(10, device=dev, requires_grad=True),
    ]

    def step():
        h1 = torch.tanh(x @ ps[0] + ps[1])
        h2 = torch.tanh(h1 @ ps[2] + ps[3])
        pred = h2 @ ps[4] + ps[5]
        loss = torch.mean((pred - y) ** 2)
        loss.backward()
        with torch.no_grad():
            for p in ps:
                p -= 0.01 * p.grad
                p.grad = None

    return median_time(step, 50)


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # full f32, like cuBLAS SGEMM in nabla
    out = {
        "gpu_mlp_step/b256": mlp_step(256),
        "gpu_mlp_step/b4096": mlp_step(4096),
    }
    n = 8192
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    out["gpu_gemm/f32_8192"] = median_time(lambda: a @ b, 10)
    del a, b
    m = 64 << 20
    a = torch.randn(m, device=dev)
    b = torch.randn(m, device=dev)
    out["gpu_eltwise/add_f32_64m"] = median_time(lambda: a + b, 30)
    out["gpu_eltwise/tanh_f32_64m"] = median_time(lambda: torch.tanh(a), 30)
    out["gpu_eltwise/sum_f32_64m"] = median_time(lambda: a.sum(), 30)
    c = torch.empty_like(a)
    out["copy_f32_64m"] = median_time(lambda: c.copy_(a), 30)
    out["device"] = torch.cuda.get_device_name(0)
    out["torch"] = torch.__version__
    out["cuda"] = torch.version.cuda
    print(json.dumps(out))


if __name__ == "__main__":
    main()
