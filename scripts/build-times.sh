#!/usr/bin/env bash
# Build times a user meets (issue 44): the first release build of the main
# example, a release rebuild after editing one `#[differentiable]` function,
# and the README's test command's build, each from a clean target
# directory, with `cargo build --timings` reports kept. Not run in CI.
#
# Usage: scripts/build-times.sh [CHECKOUT]   (default: this checkout)
# Environment:
#   TARGET   target directory (default /tmp/nabla-build-times/<commit>;
#            removed first, so every build is clean)
#   TESTS=0  skip the test build (the longest part)
# Prints one line per measurement: `what  seconds`; the `--timings` HTML
# reports (per-crate times) are copied next to TARGET.
set -euo pipefail

root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root"
commit=$(git rev-parse --short HEAD)
target="${TARGET:-/tmp/nabla-build-times/$commit}"
rm -rf "$target"
mkdir -p "$target"
export CARGO_TARGET_DIR="$target"
export CARGO_TERM_COLOR=never

secs() { # secs LABEL CMD..: runs CMD, prints LABEL and its wall time
  local label=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$target/$label.log" 2>&1
  t1=$(date +%s.%N)
  printf '%-44s %7.1f\n' "$label" "$(echo "$t1 - $t0" | bc)"
}

echo "checkout $root at $commit, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
# Dependencies are fetched first so that no measurement includes the network.
cargo fetch -q
secs release_example_clean cargo build --release --example imperative_mlp --timings
cp "$target"/cargo-timings/cargo-timing.html "$target/../$commit-release-example.html" 2>/dev/null || true

# One edit of a `#[differentiable]` function in an example: the example
# crate alone rebuilds (the library is unchanged). mlp_functional holds one
# differentiable function; second_order five, under nested transforms.
for name in mlp_functional second_order; do
  ex=examples/$name.rs
  secs "release_warm_$name" cargo build --release --example "$name"
  cp "$ex" "$target/example.bak"
  trap 'cp "$target/example.bak" "$root/$ex"' EXIT
  sed -i '0,/^#\[differentiable\]/s//#[differentiable] \/\/ edited/' "$ex"
  secs "release_rebuild_after_one_edit_$name" cargo build --release --example "$name"
  cp "$target/example.bak" "$ex"
  trap - EXIT
done

if [ "${TESTS:-1}" != 0 ]; then
  secs test_build_clean cargo test --workspace --no-run --timings
  cp "$target"/cargo-timings/cargo-timing.html "$target/../$commit-tests.html" 2>/dev/null || true
  du -sh "$target/debug" | awk '{print "debug target size", $1}'
  ls -S "$target"/debug/deps/it-* 2>/dev/null | head -n1 | xargs -r du -h | awk '{print "largest test binary (it)", $1}'
fi
