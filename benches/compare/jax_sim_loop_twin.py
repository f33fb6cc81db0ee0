"""JAX twin of the sim_loop workload (benches/sim_loop/mod.rs): the gradient
of the final energy of a 10 000-step damped oscillator (explicit Euler,
dt = 1e-3) with respect to (k, c, x0) at (2.0, 0.1, 1.0), f64, as
jax.jit(jax.grad) over lax.fori_loop; also the jitted simulation alone.
Prints the gradient and medians in microseconds. Run right after
`cargo bench --bench macro -- sim_loop` in the same session (never in CI)."""
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)

STEPS = 10_000
DT = 1e-3


def median_us(f, *args, reps=500):
    jax.block_until_ready(f(*args))
    for _ in range(20):
        jax.block_until_ready(f(*args))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e6)


def sim(k, c, x0):
    def step(_, s):
        x, v = s
        a = -k * x - c * v
        return (x + DT * v, v + DT * a)

    x, v = lax.fori_loop(0, STEPS, step, (x0, 0.0 * x0))
    return 0.5 * v * v + 0.5 * k * x * x


args = tuple(jnp.float64(a) for a in (2.0, 0.1, 1.0))
fwd = jax.jit(sim)
grad = jax.jit(jax.grad(sim, argnums=(0, 1, 2)))
print("grad", [float(g) for g in grad(*args)])
print(f"sim_loop_simulation_us {median_us(fwd, *args):.2f}")
print(f"sim_loop_grad_us {median_us(grad, *args):.2f}")
