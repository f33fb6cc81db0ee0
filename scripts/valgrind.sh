#!/usr/bin/env bash
# The kernels' unit tests and the bad-input tests under Valgrind's memcheck
# (docs/design.md, "Unsafe code"): every invalid read or write, use of
# uninitialised memory or bad free fails the run. Leaks are not checked
# (rayon's pool threads and their thread-locals live until exit).
#
# Valgrind reports a CPU without AVX-512, so the kernels pick their AVX2 +
# FMA copies here (checked below: the run stops if the CPU Valgrind shows
# lacks AVX2, since the vector paths would then go untested).
#
# Usage: scripts/valgrind.sh   (from anywhere; builds the workspace's debug
# test binaries first, as `cargo test --workspace` does)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind > /dev/null || {
  echo "valgrind not found: apt-get install valgrind" >&2
  exit 1
}

# Each bad-input case runs on a thread with a time limit; calls run some
# 50 times slower under memcheck.
export NABLA_TEST_TIME_SCALE=50

# The test executables, built first if need be: the whole workspace's, as
# the README's test command builds them (the same feature set, so after it
# nothing is built again; `-p` would unify features differently and build
# the binaries anew). The JSON messages name each target's executable.
listing=$(cargo test --workspace --no-run --message-format=json |
  python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["kind"][0], m["target"]["name"], m["executable"])')
kernels=$(awk '$1 == "lib" && $2 == "nabla_kernels" {print $3}' <<< "$listing")
it=$(awk '$1 == "test" && $2 == "it" {print $3}' <<< "$listing")
[ -n "$kernels" ] && [ -n "$it" ] || {
  echo "test executables not found" >&2
  exit 1
}

memcheck() {
  valgrind --tool=memcheck --error-exitcode=1 --leak-check=no -q "$@"
}

# The kernels' tests print a note for each instruction set the CPU lacks:
# Valgrind's CPU model must lack AVX-512 and have AVX2 + FMA, so that the
# AVX2 copies of the vector loops run here.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
memcheck "$kernels" --nocapture 2>&1 | tee "$log"
grep -q 'lacks Avx512' "$log" || {
  echo "expected Valgrind's CPU to lack AVX-512 (its kernels' copies cannot run there)" >&2
  exit 1
}
if grep -q 'lacks Avx2' "$log"; then
  echo "Valgrind's CPU lacks AVX2: the vector copies of the loops went untested" >&2
  exit 1
fi

memcheck "$it" bad_input::
echo "valgrind: no errors"
