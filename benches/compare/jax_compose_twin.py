"""JAX twin of the composable-transform workloads in benches/twin.rs
(functions as in benches/common/compose.rs, op for op):

- seed_hessian: jit(jacfwd(jacrev(vmap(foo)))) on a (2, 3) f32 input;
- rosen_hessian: jit(hessian(rosenbrock)), n = 100, f64;
- mlp_fn: jit(step) of value_and_grad of an MLP 784->512->512->10 tanh
  MSE loss over a dict of parameters, then SGD (lr 0.01), parameters
  donated, batch 256, f32;
- per_example: jit(vmap(grad(loss), in_axes=(None,) * 4 + (0, 0))),
  MLP 64->128->10, batch 256, f32;
- rosen_grad (and rosen_grad_unfused, the same twin): jit(grad(rosenbrock)),
  1e6 f64; rosen_fwd: jit(rosenbrock); rosen_jvp (and rosen_jvp_unfused):
  jit(jvp(rosenbrock)) with a tangent of ones;
- eltwise_loss (and eltwise_loss_unfused): jit(grad(loss, argnums=(0, 1)))
  of sum(softplus(x) * tanh(y) + exp(-x^2) * sin(y)), two 4M f32 arrays.

Same protocol as the Rust side and torch_twin.py (warm-up, then many timed
repetitions of one call each, each ending in block_until_ready); prints one
JSON object. Run by `TWIN=jax benches/compare/run.sh`; never in CI.

Environment: TWIN_WARMUP_S (default 1), TWIN_MEASURE_S (default 3),
TWIN_ONLY (comma-separated workloads to run, default all).
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
from twin_protocol import measure, report, settings

jax.config.update("jax_enable_x64", True)


def foo(x):
    return jnp.sum(jnp.sin(x))


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def eltwise_loss(x, y):
    return jnp.sum(jax.nn.softplus(x) * jnp.tanh(y) + jnp.exp(-(x**2)) * jnp.sin(y))


def example_loss(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


def mlp_loss(p, x, y):
    h1 = jnp.tanh(x @ p["l1"]["w"] + p["l1"]["b"])
    h2 = jnp.tanh(h1 @ p["l2"]["w"] + p["l2"]["b"])
    return jnp.mean((h2 @ p["l3"]["w"] + p["l3"]["b"] - y) ** 2)


def mlp_fn_step(p, x, y):
    loss, g = jax.value_and_grad(mlp_loss)(p, x, y)
    return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), loss


def main():
    warmup, meas, wanted = settings()
    results = {}

    if wanted("seed_hessian"):
        x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 3)), dtype=jnp.float32)
        seed = jax.jit(jax.jacfwd(jax.jacrev(jax.vmap(foo))))
        results["seed_hessian"] = measure(lambda: jax.block_until_ready(seed(x)), warmup, meas)

    if wanted("rosen_hessian"):
        xr = jnp.asarray(np.random.default_rng(1).standard_normal(100), dtype=jnp.float64)
        rh = jax.jit(jax.hessian(rosen))
        results["rosen_hessian"] = measure(lambda: jax.block_until_ready(rh(xr)), warmup, meas)

    for name in ("rosen_grad", "rosen_grad_unfused", "rosen_fwd"):
        if wanted(name):
            xb = jnp.asarray(np.random.default_rng(3).standard_normal(1_000_000), dtype=jnp.float64)
            f = jax.jit(rosen if name == "rosen_fwd" else jax.grad(rosen))
            results[name] = measure(lambda: jax.block_until_ready(f(xb)), warmup, meas)

    for name in ("rosen_jvp", "rosen_jvp_unfused"):
        if wanted(name):
            xb = jnp.asarray(np.random.default_rng(3).standard_normal(1_000_000), dtype=jnp.float64)
            tb = jnp.ones_like(xb)
            fj = jax.jit(lambda x, t: jax.jvp(rosen, (x,), (t,)))
            results[name] = measure(lambda: jax.block_until_ready(fj(xb, tb)), warmup, meas)

    for name in ("eltwise_loss", "eltwise_loss_unfused"):
        if wanted(name):
            rng = np.random.default_rng(4)
            xe = jnp.asarray(rng.standard_normal(4 << 20), dtype=jnp.float32)
            ye = jnp.asarray(rng.standard_normal(4 << 20), dtype=jnp.float32)
            g = jax.jit(jax.grad(eltwise_loss, argnums=(0, 1)))
            results[name] = measure(lambda: jax.block_until_ready(g(xe, ye)), warmup, meas)

    if wanted("mlp_fn"):
        rng = np.random.default_rng(2)
        f32 = jnp.float32

        def layer(fan_in, fan_out):
            w = rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
            return {"w": jnp.asarray(w, dtype=f32), "b": jnp.zeros(fan_out, dtype=f32)}

        state = {"p": {"l1": layer(784, 512), "l2": layer(512, 512), "l3": layer(512, 10)}}
        xm = jnp.asarray(rng.standard_normal((256, 784)), dtype=f32)
        ym = jnp.asarray(rng.standard_normal((256, 10)), dtype=f32)
        # The parameters are donated: XLA updates them in place, as the
        # Rust side does.
        step = jax.jit(mlp_fn_step, donate_argnums=0)

        def run():
            state["p"], loss = step(state["p"], xm, ym)
            jax.block_until_ready(loss)

        results["mlp_fn"] = measure(run, warmup, meas)

    if wanted("per_example"):
        rng = np.random.default_rng(2)
        f32 = jnp.float32
        w1 = jnp.asarray(rng.standard_normal((64, 128)) * 0.125, dtype=f32)
        b1 = jnp.zeros(128, dtype=f32)
        w2 = jnp.asarray(rng.standard_normal((128, 10)) * 0.088, dtype=f32)
        b2 = jnp.zeros(10, dtype=f32)
        xs = jnp.asarray(rng.standard_normal((256, 64)), dtype=f32)
        ys = jnp.asarray(rng.standard_normal((256, 10)), dtype=f32)
        pe = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, None, None, None, 0, 0)))
        results["per_example"] = measure(
            lambda: jax.block_until_ready(pe(w1, b1, w2, b2, xs, ys)), warmup, meas
        )

    report("jax", jax.__version__, os.cpu_count(), results)


if __name__ == "__main__":
    main()
