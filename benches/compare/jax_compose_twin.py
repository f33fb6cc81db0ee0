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
