"""The package's examples run and check their own results (each asserts
what it prints: accuracy reached, loss fallen, gradients equal to the
closed form)."""

import os
import subprocess
import sys
import unittest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def run(name, *args):
    r = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, name), *args], capture_output=True, text=True, timeout=600
    )
    if r.returncode != 0:
        raise AssertionError(f"{name} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


class Examples(unittest.TestCase):
    def test_mlp(self):
        self.assertIn("jit accuracy", run("mlp.py"))

    def test_per_example_grads(self):
        self.assertIn("max |vmap − closed form|", run("per_example_grads.py"))

    def test_gpt(self):
        out = run("gpt.py", "--steps", "100")
        self.assertIn("sample:", out)


if __name__ == "__main__":
    unittest.main()
