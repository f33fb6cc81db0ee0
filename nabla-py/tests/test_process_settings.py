"""Process settings from Python. Reproducibility: nabla.jit, grad and the
factorisations give the same bits whatever the number of kernel threads
(with nabla.set_deterministic for the factorisations), and a seeded thread
draws the same numbers whatever other threads draw. Memory: the kept-buffer
cap and release_buffers."""

import hashlib
import os
import subprocess
import sys
import threading
import unittest

import numpy as np

import nabla as N

# Run in a fresh process per thread count (rayon's pool is sized once).
CHILD = r"""
import hashlib, sys
import numpy as np
import nabla as N
N.set_deterministic(sys.argv[1] == "1")
x = N.random.normal(N.random.key(0), (1 << 18,), N.float64)
a = N.random.normal(N.random.key(1), (200, 200), N.float64)
def loss(x):
    return N.sum((N.sin(x) * x + 1.0) ** 2)
f = N.jit(loss)
g = N.jit(N.grad(loss))
outs = [f(x), f(x), g(x), g(x), N.matmul(a, a), *N.linalg.qr(a)]
h = hashlib.sha256()
for o in outs:
    h.update(np.ascontiguousarray(np.asarray(o)).tobytes())
print(h.hexdigest())
"""


def digest(threads, deterministic):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "1" if deterministic else "0"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class SameBits(unittest.TestCase):
    def test_the_same_bits_whatever_the_thread_count(self):
        want = digest(1, True)
        for t in (2, 3, 8):
            self.assertEqual(digest(t, True), want, f"{t} threads")

    def test_run_to_run_with_a_fixed_thread_count(self):
        self.assertEqual(digest(2, False), digest(2, False))

    def test_the_switch_reads_back(self):
        N.set_deterministic(True)
        self.assertTrue(N.deterministic_enabled())
        N.set_deterministic(False)
        self.assertFalse(N.deterministic_enabled())


class Buffers(unittest.TestCase):
    def test_the_cap_reads_back_and_release_runs(self):
        default = N.buffer_cap()
        N.set_buffer_cap(64 << 20)
        self.assertEqual(N.buffer_cap(), 64 << 20)
        N.set_buffer_cap(default)
        big = N.ones((1 << 20,))
        del big
        N.release_buffers()


class SeededThreads(unittest.TestCase):
    def test_a_seeded_thread_ignores_other_threads_draws(self):
        def mine(noise):
            stop = threading.Event()

            def draw():
                while not stop.is_set():
                    N.randn(7)

            others = [threading.Thread(target=draw) for _ in range(3)] if noise else []
            for t in others:
                t.start()
            N.seed(11)
            got = [np.asarray(N.randn(3)) for _ in range(30)]
            stop.set()
            for t in others:
                t.join()
            return hashlib.sha256(np.concatenate(got).tobytes()).hexdigest()

        self.assertEqual(mine(False), mine(True))


if __name__ == "__main__":
    unittest.main()
