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
import torch.nn as nn
import torch.nn.functional as F
from torch_gpt import Gpt

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


def chain8(x):
    return torch.log(torch.tanh(torch.sin(x * 2.0) + x) * 0.5 + 1.0) * x


def chain8_grad(x):
    x = x.detach().requires_grad_()
    chain8(x).sum().backward()
    return x.grad


VOCAB, CONTEXT, LAYERS, HEADS, EMBD, BATCH = 96, 256, 8, 8, 512, 32


def gpt_step():
    """The GPT step of benches/gpu.rs in eager PyTorch: forward,
    backward(), AdamW (lr 3e-4, weight decay 0.01; the default foreach
    implementation), zero_grad; the loss read back (as nabla's bench does)."""
    torch.manual_seed(0)
    gpt = Gpt(VOCAB, CONTEXT, LAYERS, HEADS, EMBD).to(dev)
    opt = torch.optim.AdamW(gpt.parameters(), lr=3e-4, weight_decay=0.01)
    idx = torch.randint(0, VOCAB, (BATCH, CONTEXT), device=dev)
    targets = torch.randint(0, VOCAB, (BATCH, CONTEXT), device=dev)

    def step():
        logits = gpt(idx)
        loss = F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    return median_time(step, 20)


def gpt_parts():
    """The pieces of benches/gpu.rs's `gpu_parts` group."""
    out = {}
    rows = BATCH * CONTEXT
    wide = torch.randn(rows, 4 * EMBD, device=dev)
    out["gpu_parts/sum0_8192x2048"] = median_time(lambda: wide.sum(0), 20)
    scores = torch.randn(BATCH, HEADS, CONTEXT, CONTEXT, device=dev)
    out["gpu_parts/softmax_32x8x256x256"] = median_time(lambda: scores.softmax(-1), 20)
    x = torch.randn(BATCH, CONTEXT, EMBD, device=dev)
    ln = nn.LayerNorm(EMBD).to(dev)
    out["gpu_parts/layernorm_32x256x512"] = median_time(lambda: ln(x), 20)
    lin = nn.Linear(EMBD, 3 * EMBD).to(dev)
    out["gpu_parts/linear_8192x512_to_1536"] = median_time(lambda: lin(x), 20)
    q = torch.randn(BATCH, HEADS, CONTEXT, EMBD // HEADS, device=dev)
    out["gpu_parts/attn_scores_32x8x256x64"] = median_time(lambda: q @ q.transpose(-2, -1), 20)
    torch.manual_seed(0)
    gpt = Gpt(VOCAB, CONTEXT, LAYERS, HEADS, EMBD).to(dev)
    idx = torch.randint(0, VOCAB, (BATCH, CONTEXT), device=dev)
    targets = torch.randint(0, VOCAB, (BATCH, CONTEXT), device=dev)

    def loss():
        return F.cross_entropy(gpt(idx).view(-1, VOCAB), targets.view(-1))

    out["gpu_parts/gpt_forward"] = median_time(lambda: loss().item(), 10)

    def fwd_bwd():
        l = loss()
        l.backward()
        gpt.zero_grad(set_to_none=True)
        return l.item()

    out["gpu_parts/gpt_forward_backward"] = median_time(fwd_bwd, 10)
    loss().backward()
    opt = torch.optim.AdamW(gpt.parameters(), lr=3e-4, weight_decay=0.01)
    out["gpu_parts/adamw_step"] = median_time(opt.step, 10)
    return out


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # full f32, like cuBLAS SGEMM in nabla
    out = {
        "gpu_mlp_step/b256": mlp_step(256),
        "gpu_mlp_step/b4096": mlp_step(4096),
    }
    # nabla's functional step (value_and_grad of #[differentiable] code)
    # has the same eager twin.
    out["gpu_mlp_step/fn_b256"] = out["gpu_mlp_step/b256"]
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
    out["gpu_chain8/fwd_f32_64m"] = median_time(lambda: chain8(a), 30)
    out["gpu_chain8/grad_f32_64m"] = median_time(lambda: chain8_grad(a), 30)
    c = torch.empty_like(a)
    out["copy_f32_64m"] = median_time(lambda: c.copy_(a), 30)
    del a, b, c
    t = gpt_step()
    out["gpu_gpt_step/tape"] = t
    out["gpu_gpt_step/fn"] = t
    out.update(gpt_parts())
    out["device"] = torch.cuda.get_device_name(0)
    out["torch"] = torch.__version__
    out["cuda"] = torch.version.cuda
    print(json.dumps(out))


if __name__ == "__main__":
    main()
