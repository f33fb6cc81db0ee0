#!/usr/bin/env bash
# Runs benches/compare/run.sh for each TWIN mode, saves each output with a
# header line (date, commit, machine) as docs/bench/<mode>.txt, then
# rewrites the scoreboard at the top of docs/performance.md
# (scripts/scoreboard.py). Never run in CI: it needs the PyTorch/JAX venv
# run.sh makes, and (2 cores) about 6 minutes of an otherwise idle
# machine plus the release build.
#
# Usage: scripts/bench-all.sh [MODE...]     (default: torch jax fusion nn nn_jax)
# Environment:
#   ROUNDS      rounds of nabla/twin pairs per workload (default 2)
#   BENCH_DIR   where the outputs go (default docs/bench)
#   KEEP        if set, raw JSON of each mode is kept in $KEEP/<mode>
#   and everything run.sh reads (TWIN_WARMUP_S, TWIN_MEASURE_S, PYTHON).
# A mode whose run fails leaves its previous output in place and is named
# at the end; the script then exits 1 (after writing the scoreboard).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export ROUNDS="${ROUNDS:-2}"
dir="${BENCH_DIR:-$root/docs/bench}"
mkdir -p "$dir"
if [ "$#" -gt 0 ]; then modes=("$@"); else modes=(torch jax fusion nn nn_jax); fi

model="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)"
machine="${model:-unknown}, $(nproc) cores"

failed=()
for mode in "${modes[@]}"; do
    commit="$(git rev-parse --short HEAD)"
    # Uncommitted changes to what the benchmark binary is built from.
    if ! git diff --quiet HEAD -- . ':!docs' ':!scripts' ':!tests' ':!*.md'; then
        commit="$commit+modified"
    fi
    header="# nabla-bench twin=$mode rounds=$ROUNDS date=$(date -u +%Y-%m-%d) commit=$commit machine=$machine"
    tmp="$(mktemp)"
    echo "== TWIN=$mode ROUNDS=$ROUNDS at $commit ==" >&2
    keep=()
    if [ -n "${KEEP:-}" ]; then keep=(KEEP="$KEEP/$mode"); fi
    if env TWIN="$mode" "${keep[@]}" benches/compare/run.sh > "$tmp"; then
        { echo "$header"; cat "$tmp"; } > "$dir/$mode.txt"
        cat "$dir/$mode.txt"
    else
        echo "TWIN=$mode failed; $dir/$mode.txt left as it was" >&2
        failed+=("$mode")
    fi
    rm -f "$tmp"
done

python3 "$root/scripts/scoreboard.py" --bench-dir "$dir"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
