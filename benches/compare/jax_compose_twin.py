"""JAX twins of benches/compose.rs: seed_hessian (jit(jacfwd(jacrev(vmap(foo))))
on a (2, 3) f32 input, per-call latency) and rosen_hessian (jit(hessian) of
Rosenbrock, n = 100, f64). Prints medians in microseconds.
Run after `cargo bench --bench compose` in the same session (never in CI)."""
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def median_us(f, *args, reps=2000):
    out = f(*args)
    jax.block_until_ready(out)
    for _ in range(50):
        jax.block_until_ready(f(*args))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e6)


def foo(x):
    return jnp.sum(jnp.sin(x))


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 3)), dtype=jnp.float32)
seed = jax.jit(jax.jacfwd(jax.jacrev(jax.vmap(foo))))
print(f"seed_hessian_us {median_us(seed, x):.2f}")
xr = jnp.asarray(np.random.default_rng(1).standard_normal(100), dtype=jnp.float64)
rh = jax.jit(jax.hessian(rosen))
print(f"rosen_hessian_n100_us {median_us(rh, xr, reps=500):.2f}")


def example_loss(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


rng = np.random.default_rng(2)
f32 = jnp.float32
w1 = jnp.asarray(rng.standard_normal((64, 128)) * 0.125, dtype=f32)
b1 = jnp.zeros(128, dtype=f32)
w2 = jnp.asarray(rng.standard_normal((128, 10)) * 0.088, dtype=f32)
b2 = jnp.zeros(10, dtype=f32)
xs = jnp.asarray(rng.standard_normal((256, 64)), dtype=f32)
ys = jnp.asarray(rng.standard_normal((256, 10)), dtype=f32)
pe = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, None, None, None, 0, 0)))
print(f"per_example_grads_b256_us {median_us(pe, w1, b1, w2, b2, xs, ys, reps=300):.2f}")
