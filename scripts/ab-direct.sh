#!/usr/bin/env bash
# A/B of this checkout against a parent commit on the `benches/twin.rs`
# workloads, without the Python twins: both binaries are built (release,
# `cargo bench --no-run`), then every workload runs in each, alternately,
# PASSES times (odd passes this checkout first, even passes the parent
# first). Prints one line per workload and side with the per-pass medians
# in ms, then the ratio of the best medians (HEAD / parent). Not run in CI.
#
# Usage: scripts/ab-direct.sh PARENT [WORKLOAD...]
# Environment:
#   PASSES          alternations (default 3)
#   TWIN_WARMUP_S   warm-up seconds per workload and run (default 0.5)
#   TWIN_MEASURE_S  measured seconds per workload and run (default 1.5)
#   BASE_DIR        worktree of PARENT (default /tmp/nabla-ab/<PARENT>)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
parent="${1:?usage: scripts/ab-direct.sh PARENT [WORKLOAD...]}"
shift
if [ "$#" -gt 0 ]; then
  workloads=("$@")
else
  workloads=(gemm eltwise_add eltwise_tanh mlp_step seed_hessian rosen_hessian
    per_example mlp_fn gpt_step gpt_step_fn conv2d rosen_grad rosen_grad_unfused
    rosen_fwd rosen_jvp rosen_jvp_unfused eltwise_loss eltwise_loss_unfused)
fi
passes="${PASSES:-3}"
export TWIN_WARMUP_S="${TWIN_WARMUP_S:-0.5}" TWIN_MEASURE_S="${TWIN_MEASURE_S:-1.5}"
base="${BASE_DIR:-/tmp/nabla-ab/$parent}"
if [ ! -d "$base" ]; then
  git -C "$root" worktree add -f --detach "$base" "$parent" >&2
fi

binary() { # binary DIR: builds the twin bench there, prints its path
  (cd "$1" && cargo bench --bench twin --no-run --message-format=json 2>/dev/null) |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "twin" and m.get("executable"):
        print(m["executable"])'
}
echo "building $parent and $(git -C "$root" rev-parse --short HEAD) ..." >&2
head_bin=$(binary "$root")
base_bin=$(binary "$base")

median() { # median BIN WORKLOAD: the workload's median in ms
  TWIN_ONLY="$2" "$1" |
    python3 -c "import json,sys; print('%.3f' % json.load(sys.stdin)['results']['$2']['median_ms'])"
}
declare -A h b
for p in $(seq 1 "$passes"); do
  for w in "${workloads[@]}"; do
    if [ $((p % 2)) = 1 ]; then
      h[$w]+=" $(median "$head_bin" "$w")"
      b[$w]+=" $(median "$base_bin" "$w")"
    else
      b[$w]+=" $(median "$base_bin" "$w")"
      h[$w]+=" $(median "$head_bin" "$w")"
    fi
  done
  echo "pass $p/$passes done" >&2
done

echo "# $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
  "H = $(git -C "$root" rev-parse --short HEAD), B = $parent; medians in ms; ratio = best H / best B"
for w in "${workloads[@]}"; do
  python3 - "$w" "${h[$w]}" "${b[$w]}" <<'PY'
import sys
w, hs, bs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print(f"{w:<22} H {' '.join(f'{float(x):9.3f}' for x in hs)}")
print(f"{w:<22} B {' '.join(f'{float(x):9.3f}' for x in bs)}   ratio {min(map(float, hs)) / min(map(float, bs)):.3f}")
PY
done
