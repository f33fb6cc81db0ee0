"""nabla.nn, nabla.optim and nabla.io from Python against PyTorch's tiny
GPT (tests/fixtures/torch/: logits and loss 1e-5 relative, gradients 1e-4,
one AdamW and one SGD step 1e-6, the tolerances of the Rust tests), and a
classifier trained end to end."""

import json
import os
import tempfile
import unittest

import numpy as np

import nabla as N

TORCH = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "torch")


def close(test, got, want, tol, what):
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    test.assertEqual(g.shape, w.shape, what)
    bad = np.abs(g - w) > tol * np.maximum(np.abs(w), 1.0)
    test.assertFalse(bad.any(), f"{what}: {np.argwhere(bad)[:5]} got {g[bad][:5]} want {w[bad][:5]}")


class TorchGpt(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(os.path.join(TORCH, "torch_gpt_tiny.json")) as f:
            cls.meta = json.load(f)
        cfg = cls.meta["config"]
        cls.model = N.nn.Gpt(cfg["vocab"], cfg["context"], cfg["layers"], cfg["heads"], cfg["embd"])
        N.io.load(cls.model, os.path.join(TORCH, "torch_gpt_tiny.safetensors"))
        cls.expected = N.io.load_file(os.path.join(TORCH, "torch_gpt_tiny_expected.safetensors"))
        cls.idx = N.array(cls.meta["idx"])
        cls.targets = N.array(cls.meta["targets"])

    def test_parameter_names_are_pytorchs(self):
        self.assertEqual(sorted(self.model.params), sorted(self.meta["parameters"]))
        for k, shape in self.meta["parameters"].items():
            self.assertEqual(self.model.params[k].shape, tuple(shape), k)

    def test_logits_loss_and_gradients(self):
        logits = self.model(self.idx)
        close(self, logits, self.expected["logits"], 1e-5, "logits")
        loss, grads = N.value_and_grad(self.model.loss)(self.model.params, self.idx, self.targets)
        self.assertLessEqual(abs(loss.item() - self.meta["loss"]), 1e-5 * self.meta["loss"])
        for k, g in grads.items():
            close(self, g, self.expected["grad." + k], 1e-4, "grad " + k)

    def test_the_tape_gives_the_same_gradients(self):
        m = N.nn.Gpt(**{k: self.meta["config"][k] for k in ("vocab", "context", "layers", "heads", "embd")})
        m.load_state_dict(self.model.state_dict())
        m.requires_grad_()
        m.loss(m.params, self.idx, self.targets).backward()
        for k, p in m.params.items():
            close(self, p.grad(), self.expected["grad." + k], 1e-4, "tape grad " + k)

    def _one_step(self, make, prefix):
        m = N.nn.Gpt(**{k: self.meta["config"][k] for k in ("vocab", "context", "layers", "heads", "embd")})
        m.load_state_dict(self.model.state_dict())
        grads = [self.expected["grad." + k] for k in m.params]
        opt = make(m.parameters())
        opt.step(grads)
        for k, p in m.params.items():
            close(self, p, self.expected[f"{prefix}.{k}"], 1e-6, f"{prefix} {k}")

    def test_one_adamw_step_matches_pytorch(self):
        a = self.meta["adamw"]
        self._one_step(
            lambda ps: N.optim.AdamW(ps, lr=a["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"], weight_decay=a["weight_decay"]),
            "adamw1",
        )

    def test_one_sgd_step_matches_pytorch(self):
        s = self.meta["sgd"]
        self._one_step(
            lambda ps: N.optim.SGD(ps, lr=s["lr"], momentum=s["momentum"], nesterov=s["nesterov"], weight_decay=s["weight_decay"]),
            "sgd_momentum1",
        )

    def test_save_and_load_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "gpt.safetensors")
            N.io.save(self.model, path)
            back = N.io.load_file(path)
            for k, v in self.model.params.items():
                np.testing.assert_array_equal(np.asarray(back[k]), np.asarray(v))

    def test_io_errors_are_os_and_value_errors(self):
        with self.assertRaises(OSError):
            N.io.load_file("/nonexistent/model.safetensors")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.safetensors")
            with open(path, "wb") as f:
                f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
            with self.assertRaises(ValueError):
                N.io.load_file(path)
        m = N.nn.Linear(3, 2)
        with self.assertRaisesRegex(ValueError, "shape"):
            m.load_state_dict({"weight": N.zeros((3, 3)), "bias": N.zeros((2,))})


class Training(unittest.TestCase):
    def test_an_mlp_classifier_learns_with_each_optimizer(self):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((256, 2)).astype(np.float32)
        labels = (x[:, 0] * x[:, 1] > 0).astype(np.int64)  # XOR of signs
        X, Y = N.array(x), N.array(labels)
        for make in (
            lambda ps: N.optim.Adam(ps, lr=0.02),
            lambda ps: N.optim.SGD(ps, lr=0.5, momentum=0.9),
            lambda ps: N.optim.AdamW(ps, lr=N.optim.schedules.cosine(0.02, 300)),
        ):
            model = N.nn.MlpClassifier([2, 32, 32, 2], seed=1).requires_grad_()
            opt = make(model.parameters())
            first = None
            for _ in range(300):
                loss = model.loss(model.params, X, Y)
                loss.backward()
                N.optim.clip_grad_norm_(model.parameters(), 5.0)
                opt.step()
                opt.zero_grad()
                first = first if first is not None else loss.item()
            acc = (np.asarray(model(X)).argmax(axis=1) == labels).mean()
            self.assertLess(loss.item(), 0.5 * first)
            self.assertGreater(acc, 0.9)

    def test_cnn_matches_a_numpy_forward_and_learns(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((8, 1, 8, 8)).astype(np.float32)
        labels = (x[:, 0, :4].mean(axis=(1, 2)) > x[:, 0, 4:].mean(axis=(1, 2))).astype(np.int64)
        model = N.nn.Cnn(1, 8, 8, (4, 8), 2, seed=3)
        p = {k: np.asarray(v, np.float64) for k, v in model.params.items()}

        def conv(h, w, b):  # 3x3, padding 1
            n, c, hh, ww = h.shape
            hp = np.pad(h, ((0, 0), (0, 0), (1, 1), (1, 1)))
            out = np.zeros((n, w.shape[0], hh, ww))
            for i in range(3):
                for j in range(3):
                    out += np.einsum("nchw,oc->nohw", hp[:, :, i : i + hh, j : j + ww], w[:, :, i, j])
            return out + b[None, :, None, None]

        def pool(h):
            n, c, hh, ww = h.shape
            return h.reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))

        h = pool(np.maximum(conv(x.astype(np.float64), p["conv1.weight"], p["conv1.bias"]), 0))
        h = pool(np.maximum(conv(h, p["conv2.weight"], p["conv2.bias"]), 0))
        want = h.reshape(8, -1) @ p["fc.weight"].T + p["fc.bias"]
        close(self, model(N.array(x)), want, 1e-4, "cnn logits")
        model.requires_grad_()
        opt = N.optim.Adam(model.parameters(), lr=0.01)
        first = None
        for _ in range(60):
            loss = model.loss(model.params, N.array(x), N.array(labels))
            loss.backward()
            opt.step()
            opt.zero_grad()
            first = first if first is not None else loss.item()
        self.assertLess(loss.item(), 0.5 * first)

    def test_functional_training_with_grad_and_jit(self):
        rng = np.random.default_rng(1)
        x = N.array(rng.standard_normal((64, 3)).astype(np.float32))
        y = N.array(rng.integers(0, 2, 64))
        model = N.nn.MlpClassifier([3, 16, 2])
        step = N.jit(N.value_and_grad(model.loss))
        opt = N.optim.Adam(model.parameters(), lr=0.05)
        losses = []
        for _ in range(50):
            loss, grads = step(model.params, x, y)
            opt.step(N.optim.grads_list(model.params, grads))
            losses.append(loss.item())
        self.assertLess(losses[-1], 0.8 * losses[0])


if __name__ == "__main__":
    unittest.main()
