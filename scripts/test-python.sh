#!/usr/bin/env bash
# Builds and tests the Python package as a user installs it: a fresh venv
# under target/, `pip install ./nabla-py` (maturin builds the extension in
# release), then the package's tests. Not yet part of the README's test
# command (issue 45 is in progress).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/py-venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" "$venv/bin/pip" install -q "$root/nabla-py"
cd "$root/nabla-py/tests"
"$venv/bin/python" -m unittest -v
