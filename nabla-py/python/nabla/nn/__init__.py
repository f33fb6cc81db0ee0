"""Layers and models with PyTorch's parameter names, as pytrees.

A module keeps its parameters in `module.params`, a dict from PyTorch's
state-dict names (`"weight"`, `"blocks.0.attn.qkv.weight"`, ...) to
arrays, initialised exactly as the Rust layers initialise them. Call it
imperatively (`model(x)`, `loss.backward()`, `nabla.optim`) or
functionally with explicit parameters (`model.apply(params, x)`, so
`nabla.grad(lambda p: loss(model.apply(p, x)))(model.params)` is a dict of
gradients). The forward passes use the same ops as the Rust layers, so
they run under every transform.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import nabla as _nb
from nabla._nabla import Array, _nn
from nabla.nn import functional  # noqa: F401
from nabla.nn import functional as F

Params = Dict[str, Array]


class Module:
    """A layer or model: `params` and a functional `apply(params, *x)`."""

    params: Params

    def __init__(self, params: Params):
        self.params = dict(params)

    def apply(self, params: Params, *args: Any) -> Any:
        raise NotImplementedError

    def __call__(self, *args: Any) -> Any:
        return self.apply(self.params, *args)

    def parameters(self) -> List[Array]:
        """The parameter arrays, in name order of definition."""
        return list(self.params.values())

    def named_parameters(self) -> List[Tuple[str, Array]]:
        return list(self.params.items())

    def state_dict(self) -> Params:
        return dict(self.params)

    def load_state_dict(self, arrays: Params) -> None:
        """Replaces the parameters' values (same names and shapes required);
        a parameter that requires grad keeps requiring it."""
        missing = sorted(set(self.params) - set(arrays))
        extra = sorted(set(arrays) - set(self.params))
        if missing or extra:
            raise ValueError(f"load_state_dict: missing {missing}, unexpected {extra}")
        for k, old in self.params.items():
            new = arrays[k]
            if tuple(new.shape) != tuple(old.shape):
                raise ValueError(f"load_state_dict: {k} has shape {new.shape}, the model needs {old.shape}")
            a = _nb.array(new, old.dtype)
            self.params[k] = a.requires_grad_() if old.requires_grad else a

    def requires_grad_(self, flag: bool = True) -> "Module":
        """Makes every parameter a leaf that accumulates `.grad()`."""
        for a in self.params.values():
            a.requires_grad_(flag)
        return self

    def zero_grad(self) -> None:
        for a in self.params.values():
            a.zero_grad()


def _init(kind: str, seed: int, **cfg: Any) -> Params:
    return dict(_nn.init_params(kind, cfg, seed))


def linear(p: Params, name: str, x: Array) -> Array:
    """`x Wᵀ + b` with the parameters `name.weight`, `name.bias`."""
    y = x @ p[_join(name, "weight")].T
    b = p.get(_join(name, "bias"))
    return y if b is None else y + b


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _layer_norm(p: Params, name: str, x: Array, eps: float = 1e-5) -> Array:
    mean = _nb.mean(x, axis=-1, keepdims=True)
    var = _nb.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / _nb.sqrt(var + eps) * p[_join(name, "weight")] + p[_join(name, "bias")]


class Linear(Module):
    """`y = x Wᵀ + b` (`torch.nn.Linear`; `weight` is `[out, in]`)."""

    def __init__(self, inputs: int, outputs: int, bias: bool = True, seed: int = 0):
        super().__init__(_init("linear", seed, inputs=inputs, outputs=outputs, bias=bias))

    def apply(self, params: Params, x: Array) -> Array:
        return linear(params, "", x)


class Embedding(Module):
    """Row `i` of `weight` for each index `i` (`torch.nn.Embedding`)."""

    def __init__(self, num: int, dim: int, seed: int = 0):
        super().__init__(_init("embedding", seed, num=num, dim=dim))

    def apply(self, params: Params, idx: Array) -> Array:
        return params["weight"][idx]


class LayerNorm(Module):
    """Normalises the last axis (`torch.nn.LayerNorm`, eps 1e-5)."""

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__(_init("layer_norm", 0, dim=dim))
        self.eps = eps

    def apply(self, params: Params, x: Array) -> Array:
        return _layer_norm(params, "", x, self.eps)


class MlpClassifier(Module):
    """Linear layers with ReLU between them; `loss` is the cross-entropy
    of integer labels."""

    def __init__(self, widths: Sequence[int], seed: int = 0):
        super().__init__(_init("mlp_classifier", seed, widths=list(widths)))
        self.depth = len(widths) - 1

    def apply(self, params: Params, x: Array) -> Array:
        h = x
        for i in range(self.depth):
            h = linear(params, f"layers.{i}", h)
            if i + 1 < self.depth:
                h = _nb.relu(h)
        return h

    def loss(self, params: Params, x: Array, labels: Array) -> Array:
        return _nb.cross_entropy(self.apply(params, x), labels)


class Conv2d(Module):
    """A 2-D convolution (`torch.nn.Conv2d`: `weight` `[out, in, kh, kw]`,
    `bias` `[out]`), input `[N, C, H, W]`."""

    def __init__(self, inputs: int, outputs: int, kernel: Tuple[int, int], stride: int = 1, padding: int = 0, seed: int = 0):
        super().__init__(_init("conv2d", seed, inputs=inputs, outputs=outputs, kernel=list(kernel)))
        self.stride, self.padding = stride, padding

    def apply(self, params: Params, x: Array) -> Array:
        return F.conv2d(x, params["weight"], params.get("bias"), stride=self.stride, padding=self.padding)


class Cnn(Module):
    """Two 3×3 convolutions (padding 1) with ReLU and 2×2 max pooling,
    then a linear layer (`nabla::nn::models::Cnn`)."""

    def __init__(
        self, channels: int, height: int, width: int, features: Tuple[int, int], classes: int, seed: int = 0
    ):
        cfg = dict(channels=channels, height=height, width=width, features=list(features), classes=classes)
        super().__init__(_init("cnn", seed, **cfg))

    def apply(self, params: Params, x: Array) -> Array:
        h = F.conv2d(x, params["conv1.weight"], params["conv1.bias"], padding=1)
        h = F.max_pool2d(_nb.relu(h), 2, 2)
        h = F.conv2d(h, params["conv2.weight"], params["conv2.bias"], padding=1)
        h = F.max_pool2d(_nb.relu(h), 2, 2)
        n = h.shape[0]
        return linear(params, "fc", _nb.reshape(h, (n, -1)))

    def loss(self, params: Params, x: Array, labels: Array) -> Array:
        return _nb.cross_entropy(self.apply(params, x), labels)


class Gpt(Module):
    """A nanoGPT-style decoder (`nabla::nn::models::Gpt`): token and
    position embeddings, pre-LayerNorm blocks with causal attention and
    GELU MLPs, a final LayerNorm and an output projection without bias."""

    def __init__(self, vocab: int, context: int, layers: int, heads: int, embd: int, seed: int = 0):
        super().__init__(_init("gpt", seed, vocab=vocab, context=context, layers=layers, heads=heads, embd=embd))
        self.vocab, self.context, self.layers, self.heads, self.embd = vocab, context, layers, heads, embd

    def _attention(self, p: Params, name: str, x: Array) -> Array:
        b, t, c = x.shape
        h = self.heads
        d = c // h
        qkv = linear(p, f"{name}.qkv", x)

        def split(i: int) -> Array:
            part = qkv[:, :, i * c : (i + 1) * c]
            return _nb.transpose(_nb.reshape(part, (b, t, h, d)), (0, 2, 1, 3))

        q, k, v = split(0), split(1), split(2)
        scores = q @ _nb.transpose(k, (0, 1, 3, 2))
        att = _nn.attention_softmax(scores, 1.0 / d**0.5, True)
        y = _nb.reshape(_nb.transpose(att @ v, (0, 2, 1, 3)), (b, t, c))
        return linear(p, f"{name}.proj", y)

    def apply(self, params: Params, idx: Array) -> Array:
        t = idx.shape[1]
        if t > self.context:
            raise ValueError(f"Gpt: {t} tokens exceed the context of {self.context}; pass at most {self.context}")
        x = params["wte.weight"][idx] + params["wpe.weight"][:t]
        for i in range(self.layers):
            blk = f"blocks.{i}"
            x = x + self._attention(params, f"{blk}.attn", _layer_norm(params, f"{blk}.ln1", x))
            hdn = _nb.gelu(linear(params, f"{blk}.mlp.fc", _layer_norm(params, f"{blk}.ln2", x)))
            x = x + linear(params, f"{blk}.mlp.proj", hdn)
        return linear(params, "lm_head", _layer_norm(params, "ln_f", x))

    def loss(self, params: Params, idx: Array, targets: Array) -> Array:
        logits = self.apply(params, idx)
        n = logits.shape[0] * logits.shape[1]
        return _nb.cross_entropy(_nb.reshape(logits, (n, self.vocab)), _nb.reshape(targets, (n,)))

    def generate(self, idx: Array, steps: int, temperature: float = 1.0, seed: Optional[int] = None) -> Array:
        """`steps` tokens appended to each row of `idx`, each sampled from
        the softmax of the last logits (greedy when `temperature` is 0)."""
        import numpy as np

        rng = np.random.default_rng(seed)
        out = np.asarray(idx).astype(np.int64)
        with _nb.no_grad():
            for _ in range(steps):
                ctx = out[:, -self.context :]
                logits = np.asarray(self(_nb.array(ctx)))[:, -1, :].astype(np.float64)
                if temperature == 0.0:
                    nxt = logits.argmax(axis=-1)
                else:
                    z = logits / temperature
                    z = np.exp(z - z.max(axis=-1, keepdims=True))
                    z /= z.sum(axis=-1, keepdims=True)
                    nxt = np.array([rng.choice(len(row), p=row) for row in z])
                out = np.concatenate([out, nxt[:, None]], axis=1)
        return _nb.array(out)


__all__ = ["Module", "Linear", "Embedding", "LayerNorm", "Conv2d", "MlpClassifier", "Cnn", "Gpt", "functional", "linear", "F"]
