"""Prints nabla-vs-PyTorch ratios for the GPU benchmarks.

Usage: python3 gpu_summary.py CRITERION_DIR TORCH_JSON
CRITERION_DIR holds criterion's results of `benches/gpu.rs` (group/id/new/
estimates.json); TORCH_JSON is the output of torch_gpu_twin.py.
"""
import json
import os
import sys

crit, torch_json = sys.argv[1], sys.argv[2]
theirs = json.load(open(torch_json))
N = 64 << 20
BYTES = {  # bytes each op moves (reads + writes), f32
    "gpu_eltwise/add_f32_64m": 3 * 4 * N,
    "gpu_eltwise/tanh_f32_64m": 2 * 4 * N,
    "gpu_eltwise/sum_f32_64m": 4 * N,
    # One read of x, one write of y (the fused region); the gradient reads
    # x and writes x̄ (the sum's cotangent is a scalar).
    "gpu_chain8/fwd_f32_64m": 2 * 4 * N,
    "gpu_chain8/grad_f32_64m": 2 * 4 * N,
}
copy_bw = 2 * 4 * N / theirs["copy_f32_64m"]
print(f"device: {theirs['device']}  torch {theirs['torch']}  CUDA {theirs['cuda']}")
print(f"reference d2d copy bandwidth (torch): {copy_bw / 1e12:.2f} TB/s")
print(f"{'workload':28} {'nabla':>12} {'torch':>12} {'ratio':>7}  note")
for name in [
    "gpu_mlp_step/b256",
    "gpu_mlp_step/b4096",
    "gpu_mlp_step/fn_b256",
    "gpu_gemm/f32_8192",
    "gpu_eltwise/add_f32_64m",
    "gpu_eltwise/tanh_f32_64m",
    "gpu_eltwise/sum_f32_64m",
    "gpu_chain8/fwd_f32_64m",
    "gpu_chain8/grad_f32_64m",
    "gpu_gpt_step/tape",
    "gpu_gpt_step/fn",
    "gpu_parts/sum0_8192x2048",
    "gpu_parts/softmax_32x8x256x256",
    "gpu_parts/layernorm_32x256x512",
    "gpu_parts/linear_8192x512_to_1536",
    "gpu_parts/attn_scores_32x8x256x64",
    "gpu_parts/gpt_forward",
    "gpu_parts/gpt_forward_backward",
    "gpu_parts/adamw_step",
]:
    path = os.path.join(crit, name, "new", "estimates.json")
    if not os.path.exists(path):
        print(f"{name:28} (no criterion result)")
        continue
    ours = json.load(open(path))["median"]["point_estimate"] * 1e-9
    ref = theirs[name]
    note = ""
    if name in BYTES:
        bw = BYTES[name] / ours
        note = f"{bw / 1e12:.2f} TB/s = {100 * bw / copy_bw:.0f}% of copy"
    if name.startswith("gpu_gemm"):
        flops = 2 * 8192 ** 3
        note = f"{flops / ours / 1e12:.1f} TFLOP/s = {100 * ref / ours:.0f}% of torch/cuBLAS"
    print(f"{name:28} {ours * 1e3:10.3f}ms {ref * 1e3:10.3f}ms {ours / ref:6.2f}x  {note}")
