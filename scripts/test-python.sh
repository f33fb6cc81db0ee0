#!/usr/bin/env bash
# Builds and tests the Python package as a user installs it: a fresh venv
# under target/ (kept between runs), `pip install ./nabla-py` (maturin builds
# the extension in release, into the workspace's target/), then pytest on
# nabla-py/tests and the package's examples. Part of the README's test
# command.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/py-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q pytest numpy
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" "$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$root/nabla-py"
cd "$root/nabla-py"
"$venv/bin/python" -m pytest -q tests "$@"
