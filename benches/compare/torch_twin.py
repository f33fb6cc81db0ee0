"""PyTorch twin of benches/twin.rs (workloads of BENCHMARKS.md).

Times the same workloads with the same protocol as the Rust side (warm-up,
then many timed repetitions of one call each) and prints one JSON object.
Uses all cores: torch.set_num_threads(os.cpu_count()).

Environment: TWIN_WARMUP_S (default 1), TWIN_MEASURE_S (default 3),
TWIN_ONLY (comma-separated workloads to run, default all).
"""

import os

import torch
import torch.nn.functional as F
from twin_protocol import measure, report, settings

GEMM_N = 1024
ELTWISE_N = 1_000_000
MLP_SIZES = [784, 512, 512, 10]
MLP_BATCH = 256
MLP_LR = 0.01


class Mlp:
    """Parameters (w1, b1, w2, b2, w3, b3): weights randn / sqrt(fan_in),
    zero biases; a fixed randn input batch and randn targets."""

    def __init__(self):
        torch.manual_seed(2)
        self.params = []
        for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
            w = torch.randn(fan_in, fan_out) / fan_in**0.5
            self.params.append(w.requires_grad_())
            self.params.append(torch.zeros(fan_out).requires_grad_())
        self.x = torch.randn(MLP_BATCH, MLP_SIZES[0])
        self.y = torch.randn(MLP_BATCH, MLP_SIZES[3])

    def step(self):
        """Forward, backward(), SGD update, gradients cleared (set to None)."""
        p = self.params
        h1 = torch.tanh(self.x @ p[0] + p[1])
        h2 = torch.tanh(h1 @ p[2] + p[3])
        pred = h2 @ p[4] + p[5]
        loss = F.mse_loss(pred, self.y)
        loss.backward()
        with torch.no_grad():
            for w in p:
                w -= MLP_LR * w.grad
                w.grad = None
        return loss


def main():
    torch.set_num_threads(os.cpu_count())
    warmup, meas, wanted = settings()
    results = {}

    if wanted("gemm"):
        torch.manual_seed(0)
        a = torch.randn(GEMM_N, GEMM_N)
        b = torch.randn(GEMM_N, GEMM_N)
        results["gemm"] = measure(lambda: torch.matmul(a, b), warmup, meas)

    torch.manual_seed(1)
    a = torch.randn(ELTWISE_N)
    b = torch.randn(ELTWISE_N)
    if wanted("eltwise_add"):
        results["eltwise_add"] = measure(lambda: a + b, warmup, meas)
    if wanted("eltwise_tanh"):
        results["eltwise_tanh"] = measure(lambda: torch.tanh(a), warmup, meas)

    if wanted("mlp_step"):
        mlp = Mlp()
        results["mlp_step"] = measure(mlp.step, warmup, meas)

    report("torch", torch.__version__, torch.get_num_threads(), results)


if __name__ == "__main__":
    main()
