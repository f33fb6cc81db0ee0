#!/usr/bin/env bash
# Side-by-side timing of Nabla against PyTorch eager or JAX on this machine.
#
# TWIN=torch (default): the `gemm`, `eltwise` and `mlp_step` workloads of
# BENCHMARKS.md in Nabla (benches/twin.rs, release mode) and in PyTorch
# (torch_twin.py). TWIN=jax: the composable-transform workloads
# `seed_hessian`, `rosen_hessian`, `per_example` and the functional MLP
# step `mlp_fn` in Nabla and in JAX (jax_compose_twin.py, `jax.jit`).
# TWIN=fusion: Rosenbrock 1e6 f64 and the
# elementwise loss on 4M f32, fused and unfused (`fuse = false`), against
# the same JAX `jit` (the unfused rows are the A/B, with no target).
# TWIN=nn: `gpt_step` (GPT train step with AdamW, on the tape),
# `gpt_step_fn` (the same step from differentiable code) and `conv2d`
# (forward + backward) against PyTorch eager (torch_nn_twin.py);
# TWIN=nn_jax: both GPT steps against a pure-JAX `jit` twin (jax_nn_twin.py). Both sides use all cores, in the same
# run; prints medians and ratios (nabla / twin). Never run in CI.
#
# Shared machines are noisy, so each workload is timed in Nabla and then at
# once in PyTorch, and that pair is repeated ROUNDS times. Contention from
# other processes only ever adds time, so each framework's figure is its
# best (lowest) per-round median, the ratio is taken between those, and the
# range of the per-round ratios is printed beside it as a noise gauge.
#
# Usage: benches/compare/run.sh
# Environment:
#   TWIN            torch (default), jax, fusion, nn or nn_jax
#   ROUNDS          rounds of nabla/twin pairs per workload (default 3)
#   TWIN_WARMUP_S   warm-up seconds per workload and run (default 1)
#   TWIN_MEASURE_S  measured seconds per workload and run (default 2)
#   KEEP            directory to keep the raw JSON of every run in
#   PYTHON          interpreter used to create the venv (default python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$here/.venv"
rounds="${ROUNDS:-3}"
export TWIN_MEASURE_S="${TWIN_MEASURE_S:-2}"
twin="${TWIN:-torch}"
case "$twin" in
    torch) workloads=(gemm eltwise_add eltwise_tanh mlp_step); script="$here/torch_twin.py" ;;
    jax) workloads=(seed_hessian rosen_hessian per_example mlp_fn); script="$here/jax_compose_twin.py" ;;
    nn) workloads=(gpt_step gpt_step_fn conv2d); script="$here/torch_nn_twin.py" ;;
    nn_jax) workloads=(gpt_step gpt_step_fn); script="$here/jax_nn_twin.py" ;;
    fusion) workloads=(rosen_grad rosen_grad_unfused rosen_fwd rosen_jvp rosen_jvp_unfused eltwise_loss eltwise_loss_unfused); script="$here/jax_compose_twin.py" ;;
    *) echo "TWIN must be torch, jax, fusion, nn or nn_jax, not '$twin'" >&2; exit 2 ;;
esac

if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
fi
module="$twin"
case "$twin" in fusion | nn_jax) module=jax ;; nn) module=torch ;; esac
if ! "$venv/bin/python" -c "import $module, numpy" 2>/dev/null; then
    echo "installing $twin and numpy into $venv ..." >&2
    if [ "$module" = jax ]; then
        "$venv/bin/pip" install -q jax jaxlib numpy
    elif ! "$venv/bin/pip" install -q torch numpy --index-url https://download.pytorch.org/whl/cpu; then
        echo "CPU wheel index unreachable; installing torch from PyPI" >&2
        "$venv/bin/pip" install -q torch numpy
    fi
fi

cd "$root"
echo "building benches/twin.rs (release) ..." >&2
cargo bench --bench twin --no-run >&2

if [ -n "${KEEP:-}" ]; then
    out="$KEEP"
    mkdir -p "$out"
else
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
fi
for r in $(seq 1 "$rounds"); do
    for w in "${workloads[@]}"; do
        echo "round $r/$rounds: $w ..." >&2
        TWIN_ONLY="$w" cargo bench -q --bench twin > "$out/nabla_${w}_$r.json"
        TWIN_ONLY="$w" "$venv/bin/python" "$script" > "$out/twin_${w}_$r.json"
    done
done

"$venv/bin/python" - "$out" "$rounds" "$twin" <<'PY'
import json, os, sys

out, twin = sys.argv[1], sys.argv[3]
# Targets: a ratio nabla / twin, or an absolute time ("abs", ms) for nabla.
targets = {
    "torch": {"gemm": 1.25, "eltwise_add": 1.5, "eltwise_tanh": 1.5, "mlp_step": 1.2},
    "jax": {"seed_hessian": ("abs", 0.002), "rosen_hessian": 1.0, "per_example": 1.0,
            "mlp_fn": 0.9},
    "nn": {"gpt_step": 1.0, "gpt_step_fn": 1.0, "conv2d": 1.2},
    "nn_jax": {"gpt_step": 1.2, "gpt_step_fn": 1.2},
    "fusion": {"rosen_grad": 1.5, "rosen_grad_unfused": 1e9, "rosen_fwd": 1.0,
               "rosen_jvp": 1e9, "rosen_jvp_unfused": 1e9,
               "eltwise_loss": 1.2, "eltwise_loss_unfused": 1e9},
}[twin]

def run(fw, w, r):
    return json.load(open(os.path.join(out, f"{fw}_{w}_{r}.json")))

rounds = int(sys.argv[2])
model = "unknown"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
first = next(iter(targets))
t0 = run("twin", first, 1)
print(f"machine: {model}, {os.cpu_count()} cores; nabla threads {run('nabla', first, 1)['threads']}, "
      f"{t0['framework']} {t0['version']} threads {t0['threads']}; {rounds} rounds")
print(f"{'workload':<14}{'nabla ms':>10}{'twin ms':>10}{'ratio':>7}  {'range':<11}{'target':>10}  result")
for w, t in targets.items():
    n = [run("nabla", w, r)["results"][w]["median_ms"] for r in range(1, rounds + 1)]
    p = [run("twin", w, r)["results"][w]["median_ms"] for r in range(1, rounds + 1)]
    ratios = [a / b for a, b in zip(n, p)]
    ratio = min(n) / min(p)
    span = f"{min(ratios):.2f}-{max(ratios):.2f}"
    if isinstance(t, tuple):
        ok, shown = min(n) <= t[1], f"<={t[1]}ms"
    else:
        ok, shown = ratio <= t, f"<={t}"
    print(f"{w:<14}{min(n):>10.4f}{min(p):>10.4f}{ratio:>7.2f}  {span:<11}"
          f"{shown:>10}  {'PASS' if ok else 'FAIL'}")
PY
