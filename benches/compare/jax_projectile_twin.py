"""JAX twin of the projectile workload (benches/projectile/mod.rs, same
constants as examples/projectile.rs): the gradient of the squared miss
distance after 1 000 semi-implicit Euler steps with quadratic drag, with
respect to (speed, angle) at (20.0, 0.6), f64, as jax.jit(jax.grad) over
lax.fori_loop; also the jitted forward. Prints the gradient and medians in
microseconds. Run right after `cargo bench --bench macro -- projectile` in
the same session (never in CI)."""
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)

G, DRAG, STEPS, T = 9.81, 0.02, 1000, 2.5
DT = T / STEPS
TARGET = (40.0, 5.0)


def median_us(f, *args, reps=1000):
    for _ in range(20):
        jax.block_until_ready(f(*args))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e6)


def miss(speed, angle):
    def step(_, s):
        x, y, vx, vy = s
        v = jnp.sqrt(vx * vx + vy * vy)
        vx = vx - DT * DRAG * v * vx
        vy = vy - DT * (G + DRAG * v * vy)
        return (x + DT * vx, y + DT * vy, vx, vy)

    s0 = (0.0 * speed, 0.0 * speed, speed * jnp.cos(angle), speed * jnp.sin(angle))
    x, y, _, _ = lax.fori_loop(0, STEPS, step, s0)
    return (x - TARGET[0]) ** 2 + (y - TARGET[1]) ** 2


args = (jnp.float64(20.0), jnp.float64(0.6))
fwd = jax.jit(miss)
grad = jax.jit(jax.grad(miss, argnums=(0, 1)))
print("miss", float(fwd(*args)), "grad", [float(g) for g in grad(*args)])
print(f"projectile_forward_us {median_us(fwd, *args):.2f}")
print(f"projectile_grad_us {median_us(grad, *args):.2f}")
