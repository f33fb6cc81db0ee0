#!/usr/bin/env bash
# The GPU check of the CUDA backend, in two halves:
#
#   scripts/gpu-check.sh build   # here (has the Rust toolchain): builds the GPU
#                                # test, example and benchmark binaries (release,
#                                # --features cuda, stripped) into target/gpu-check
#   scripts/gpu-check.sh run     # on the GPU machine, from the repository root,
#                                # with target/gpu-check.tgz carried there: runs the
#                                # GPU tests, the example, the benchmarks and the
#                                # PyTorch CUDA twin, and prints a summary
#
# `run` needs no Rust toolchain. It finds libnvrtc/libcublas in the CUDA
# toolkit or in PyTorch's pip packages. Everything it prints is also written
# to $OUT/gpu-check.log when $OUT is set (the device tool's output folder).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=target/gpu-check

build() {
  rm -rf "$DIR"
  mkdir -p "$DIR/fixtures"
  # Test binaries: the CUDA integration tests (`tests/cuda`) and the
  # kernel crate's own tests (NVRTC compile of every kernel, probing).
  cargo test --release --features cuda --no-run --message-format=json \
      -p nabla --test cuda -p nabla-kernels --lib 2>/dev/null |
    python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        name = {"cuda": "cuda_tests", "nabla_kernels": "kernel_tests"}.get(m["target"]["name"])
        if name:
            shutil.copy(m["executable"], "'"$DIR"'/" + name)
'
  # `nabla::dist` on GPU arrays (NCCL): runs where the GPU machine has
  # OpenMPI's libraries and mpirun.
  cargo test --release --features mpi,cuda --no-run --message-format=json \
      -p nabla --test dist 2>/dev/null |
    python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "dist":
        shutil.copy(m["executable"], "'"$DIR"'/dist_tests")
'
  strip "$DIR"/dist_tests
  cargo build --release --features cuda --example gpu_mlp -q
  cp target/release/examples/gpu_mlp "$DIR/"
  cargo bench --features cuda --bench gpu --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        shutil.copy(m["executable"], "'"$DIR"'/gpu_bench")
'
  strip "$DIR"/cuda_tests "$DIR"/kernel_tests "$DIR"/gpu_mlp "$DIR"/gpu_bench
  cp tests/fixtures/*.json "$DIR/fixtures/"
  cp -r tests/fixtures/torch "$DIR/fixtures/"
  ls -la "$DIR"
  du -sh "$DIR"
  # The device tool carries at most 64 MiB with the working tree: carry
  # this archive (about a third of the size) instead of the folder.
  tar czf "$DIR.tgz" -C target gpu-check
  du -sh "$DIR.tgz"
}

find_libs() {
  # CUDA libraries (NVRTC, cuBLAS, NCCL) from a toolkit or from PyTorch's
  # pip wheels.
  local dirs=()
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && dirs+=("$d")
  done
  local site
  site=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  for s in $site; do
    while IFS= read -r f; do dirs+=("$(dirname "$f")"); done < <(
      find "$s/nvidia" -name 'libnvrtc.so*' -o -name 'libcublas.so*' -o -name 'libnccl.so*' 2>/dev/null | sort -u)
  done
  local joined
  joined=$(printf '%s\n' "${dirs[@]}" | sort -u | paste -sd: -)
  export LD_LIBRARY_PATH="${joined}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

run() {
  if [ ! -x "$DIR/cuda_tests" ] && [ -f "$DIR.tgz" ]; then tar xzf "$DIR.tgz" -C target; fi
  [ -x "$DIR/cuda_tests" ] || { echo "no binaries in $DIR: run 'scripts/gpu-check.sh build' first"; exit 2; }
  find_libs
  export NABLA_FIXTURES="$PWD/$DIR/fixtures" RUST_BACKTRACE=1
  local status=0
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "== kernel tests (NVRTC compile of every kernel, probing)"
  "$DIR/kernel_tests" cuda --nocapture || status=1
  echo "== GPU tests (fixtures on the device, CPU/GPU agreement)"
  "$DIR/cuda_tests" --nocapture || status=1
  echo "== nabla::dist on GPU arrays (NCCL, one rank)"
  if command -v mpirun > /dev/null && ! ldd "$DIR/dist_tests" | grep -q 'not found'; then
    "$DIR/dist_tests" launch::gpu_collectives_agree_with_the_host --nocapture || status=1
  else
    echo "skipped: no OpenMPI (mpirun, libmpi) on this machine"
  fi
  echo "== example gpu_mlp"
  "$DIR/gpu_mlp" || status=1
  echo "== kernel cache: the example with an empty cache (NVRTC compiles), then a filled one"
  local cache
  cache=$(mktemp -d)
  for run in cold warm; do
    local t0 t1
    t0=$(date +%s.%N)
    NABLA_CACHE_DIR="$cache" "$DIR/gpu_mlp" > /dev/null || status=1
    t1=$(date +%s.%N)
    echo "$run cache: gpu_mlp took $(python3 -c "print(f'{$t1 - $t0:.2f}')") s"
  done
  ls "$cache"
  rm -rf "$cache"
  echo "== benchmarks"
  CRITERION_HOME="$PWD/$DIR/criterion" "$DIR/gpu_bench" --bench 2>&1 | grep -E 'time:|thrpt:|^gpu' || status=1
  if python3 benches/compare/torch_gpu_twin.py > "$DIR/torch.json"; then
    python3 benches/compare/gpu_summary.py "$DIR/criterion" "$DIR/torch.json" || status=1
  else
    echo "PyTorch CUDA twin failed (is torch with CUDA installed?)"
    status=1
  fi
  echo "== A/B: the same workloads with GPU regions op by op (NABLA_GPU_FUSION=0)"
  NABLA_GPU_FUSION=0 CRITERION_HOME="$PWD/$DIR/criterion-unfused" "$DIR/gpu_bench" --bench \
    'gpu_chain8|gpu_mlp_step/fn|gpu_gpt_step/fn' 2>&1 | grep -E 'time:|^gpu' || status=1
  echo "== A/B: softmax and layer norm as composites (NABLA_ROW_KERNELS=0)"
  NABLA_ROW_KERNELS=0 CRITERION_HOME="$PWD/$DIR/criterion-rows" "$DIR/gpu_bench" --bench \
    'gpu_gpt_step/fn|gpu_parts/(softmax|layernorm)' 2>&1 | grep -E 'time:|^gpu' || status=1
  echo "== GPU time by kernel (NABLA_GPU_PROFILE=1)"
  NABLA_GPU_PROFILE=1 "$DIR/gpu_bench" || status=1
  echo "== gpu-check status: $status"
  return $status
}

# A short run: the GPU tests, the GPU time by kernel of the GPT step, then
# the GPT step and its parts against the PyTorch twin.
profile() {
  if [ ! -x "$DIR/gpu_bench" ] && [ -f "$DIR.tgz" ]; then tar xzf "$DIR.tgz" -C target; fi
  find_libs
  NABLA_FIXTURES="$PWD/$DIR/fixtures" "$DIR/cuda_tests" 2>&1 | grep -E '^test |test result|panicked|assert'
  NABLA_GPU_PROFILE=1 "$DIR/gpu_bench"
  CRITERION_HOME="$PWD/$DIR/criterion" "$DIR/gpu_bench" --bench 'gpu_gpt_step|gpu_parts' 2>&1 | grep -E 'time:|^gpu'
  python3 benches/compare/torch_gpu_twin.py > "$DIR/torch.json" &&
    python3 benches/compare/gpu_summary.py "$DIR/criterion" "$DIR/torch.json"
}

case "${1:-}" in
  build) build ;;
  profile)
    if [ -n "${OUT:-}" ]; then profile 2>&1 | tee "$OUT/gpu-profile.log"; else profile; fi ;;
  run)
    if [ -n "${OUT:-}" ]; then run 2>&1 | tee "$OUT/gpu-check.log"; exit "${PIPESTATUS[0]}"; else run; fi ;;
  *) echo "usage: $0 build|run|profile"; exit 2 ;;
esac
