"""Pure-JAX `jit` twin of the `gpt_step` workload of BENCHMARKS.md
(benches/common/nn.rs builds the same in Nabla): the GPT of
tests/fixtures/torch/README.md (4 layers, 4 heads, width 128, context 64,
vocabulary 96, f32), batch 16; loss, gradient and an AdamW update
(torch.optim.AdamW's rule: lr 3e-4, betas (0.9, 0.999), eps 1e-8, decoupled
weight decay 0.01) in one jitted function.
Environment as twin_protocol.settings().
"""

import math
import os

import jax
import jax.numpy as jnp
from twin_protocol import measure, report, settings

VOCAB, CONTEXT, LAYERS, HEADS, EMBD, BATCH = 96, 64, 4, 4, 128, 16
LR, B1, B2, EPS, WD = 3e-4, 0.9, 0.999, 1e-8, 0.01


def init(key):
    keys = iter(jax.random.split(key, 64))

    def normal(*shape):
        return 0.02 * jax.random.normal(next(keys), shape, jnp.float32)

    def lin(i, o, bias=True):
        p = {"w": normal(o, i)}
        if bias:
            p["b"] = jnp.zeros(o, jnp.float32)
        return p

    def ln():
        return {"w": jnp.ones(EMBD, jnp.float32), "b": jnp.zeros(EMBD, jnp.float32)}

    blocks = [
        {
            "ln1": ln(),
            "qkv": lin(EMBD, 3 * EMBD),
            "proj": lin(EMBD, EMBD),
            "ln2": ln(),
            "fc": lin(EMBD, 4 * EMBD),
            "mproj": lin(4 * EMBD, EMBD),
        }
        for _ in range(LAYERS)
    ]
    return {
        "wte": normal(VOCAB, EMBD),
        "wpe": normal(CONTEXT, EMBD),
        "blocks": blocks,
        "ln_f": ln(),
        "head": lin(EMBD, VOCAB, bias=False),
    }


def linear(p, x):
    y = x @ p["w"].T
    return y + p["b"] if "b" in p else y


def layer_norm(p, x):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * p["w"] + p["b"]


def attn(p, x):
    b, t, c = x.shape
    q, k, v = jnp.split(linear(p["qkv"], x), 3, axis=-1)
    q, k, v = (z.reshape(b, t, HEADS, c // HEADS).transpose(0, 2, 1, 3) for z in (q, k, v))
    att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(c // HEADS)
    mask = jnp.tril(jnp.ones((t, t), bool))
    att = jax.nn.softmax(jnp.where(mask, att, -jnp.inf), axis=-1)
    return linear(p["proj"], (att @ v).transpose(0, 2, 1, 3).reshape(b, t, c))


def loss_fn(params, idx, targets):
    t = idx.shape[1]
    x = params["wte"][idx] + params["wpe"][:t]
    for bp in params["blocks"]:
        x = x + attn(bp, layer_norm(bp["ln1"], x))
        h = jax.nn.gelu(linear(bp["fc"], layer_norm(bp["ln2"], x)), approximate=False)
        x = x + linear(bp["mproj"], h)
    logits = linear(params["head"], layer_norm(params["ln_f"], x))
    lp = jax.nn.log_softmax(logits, -1)
    return -jnp.take_along_axis(lp, targets[..., None], -1).mean()


@jax.jit
def train_step(params, m, v, step, idx, targets):
    loss, g = jax.value_and_grad(loss_fn)(params, idx, targets)
    step = step + 1
    c1, c2 = 1 - B1**step, 1 - B2**step

    def upd(p, g, m, v):
        p = p * (1 - LR * WD)
        m = B1 * m + (1 - B1) * g
        v = B2 * v + (1 - B2) * g * g
        p = p - LR * (m / c1) / (jnp.sqrt(v / c2) + EPS)
        return p, m, v

    out = jax.tree_util.tree_map(upd, params, g, m, v)
    is_triple = lambda z: isinstance(z, tuple)  # noqa: E731
    params = jax.tree_util.tree_map(lambda z: z[0], out, is_leaf=is_triple)
    m = jax.tree_util.tree_map(lambda z: z[1], out, is_leaf=is_triple)
    v = jax.tree_util.tree_map(lambda z: z[2], out, is_leaf=is_triple)
    return params, m, v, step, loss


def main():
    warmup, meas, wanted = settings()
    results = {}
    # `gpt_step_fn` is Nabla's functional mode of the same step.
    for name in ["gpt_step", "gpt_step_fn"]:
        if not wanted(name):
            continue
        params = init(jax.random.PRNGKey(0))
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        state = [params, zeros, zeros, jnp.zeros((), jnp.float32)]
        k1, k2 = jax.random.split(jax.random.PRNGKey(1))
        idx = jax.random.randint(k1, (BATCH, CONTEXT), 0, VOCAB)
        targets = jax.random.randint(k2, (BATCH, CONTEXT), 0, VOCAB)

        def step():
            p, m, v, s, loss = train_step(*state, idx, targets)
            state[:] = [p, m, v, s]
            return float(loss.block_until_ready())

        results[name] = measure(step, warmup, meas)
    report("jax", jax.__version__, os.cpu_count(), results)


if __name__ == "__main__":
    main()
