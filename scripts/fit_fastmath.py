#!/usr/bin/env python3
"""Derives the constants of nabla-kernels/src/fastmath/trig.rs and log.rs:
the polynomial coefficients (weighted least squares with Lawson
reweighting towards minimax, relative error measured at 20 001 points in
200-bit arithmetic), the Cody–Waite split of π/2, and a lower bound on how
close an f32 comes to a multiple of π/2 (from the continued fraction of
2^e·(2/π) for each exponent e).

The least-squares fits are not bit-for-bit reproducible (numpy versions,
node sets): the printed coefficients agree with the source's to about
2e-8 relative (the highest-order ones least), with the same errors.

Needs numpy and mpmath: python3 -m venv /tmp/v && /tmp/v/bin/pip install
numpy mpmath && /tmp/v/bin/python scripts/fit_fastmath.py
"""
import mpmath
import numpy as np
from mpmath import mpf

mpmath.mp.prec = 400


def lawson(xs, degree, target, weight, iters=200):
    """Coefficients c of sum(c[k] x^(2k)) minimising max |weight·(p − target)|."""
    a = np.array([[x ** (2 * k) for k in range(degree + 1)] for x in xs])
    t = np.array([target(x) for x in xs])
    w = np.array([weight(x) for x in xs])
    lw = np.ones(len(xs)) / len(xs)
    for _ in range(iters):
        s = np.sqrt(lw)
        c, *_ = np.linalg.lstsq(a * (w * s)[:, None], t * w * s, rcond=None)
        lw *= np.abs((a @ c - t) * w)
        lw /= lw.sum()
    return c


def fit_odd(name, f, bound, degree):
    """f(x) ≈ x + x³·P(x²) on [0, bound]: prints P and the relative error."""
    xs = bound * np.cos(np.linspace(0, np.pi / 2, 4000))
    xs = xs[xs > 1e-4]
    c = lawson(xs, degree, lambda x: float((f(mpf(x)) - mpf(x)) / mpf(x) ** 3),
               lambda x: x ** 3 / float(f(mpf(x))))
    worst = 0
    for x in np.linspace(1e-3, bound, 20001):
        z, p = x * x, 0.0
        for ck in reversed(c):
            p = p * z + ck
        v = x + x * z * p
        worst = max(worst, abs((mpf(v) - f(mpf(x))) / f(mpf(x))))
    print(f"{name}: {[repr(float(v)) for v in c]}, relative error {float(worst):.3g}")


def top_bits(v, bits):
    e = int(mpmath.floor(mpmath.log(v, 2)))
    return mpmath.floor(v * mpf(2) ** (bits - 1 - e)) * mpf(2) ** (e - bits + 1)


# sin r = r + r³·P(r²) on |r| ≤ π/2 (with a margin).
fit_odd("SIN", mpmath.sin, np.pi / 2 * 1.0001, 4)
# 2·atanh(s) = 2s + s³·P(s²) on |s| ≤ (√2 − 1)/(√2 + 1).
bound = (np.sqrt(2) - 1) / (np.sqrt(2) + 1) * 1.0001
xs = bound * np.cos(np.linspace(0, np.pi / 2, 4000))
xs = xs[xs > 1e-4]
c = lawson(xs, 3, lambda s: float((2 * mpmath.atanh(mpf(s)) - 2 * mpf(s)) / mpf(s) ** 3),
           lambda s: s ** 3 / (2 * np.arctanh(s)))
print("ATANH:", [repr(float(v)) for v in c])

# π/2 = P1 + P2 + P3 with 25-bit P1 and P2.
h = mpmath.pi / 2
p1 = top_bits(h, 25)
p2 = top_bits(h - p1, 25)
p3 = h - p1 - p2
print("P1, P2, P3:", float(p1).hex(), float(p2).hex(), repr(float(p3)))
print("π/2 − (P1 + P2 + P3):", float(p3 - mpf(float(p3))))

# Closest approach of m·2^e (m < 2^24, an f32 from 0.5 to the largest) to
# a multiple of π/2: the best approximations of 2^e·(2/π) mod 1 with
# denominators below 2^24.
worst = (1, None)
for be in range(126, 255):
    e = be - 150
    alpha = (2 / mpmath.pi * mpf(2) ** e) % 1
    p0, q0, p1_, q1 = 0, 1, 1, 0
    x = alpha
    for _ in range(80):
        a = int(mpmath.floor(x))
        p0, q0, p1_, q1 = p1_, q1, a * p1_ + p0, a * q1 + q0
        if q1 >= 2 ** 24:
            break
        d = abs(q1 * alpha - p1_)
        if q1 > 0 and d < worst[0]:
            worst = (d, q1 * 2.0 ** e)
        if x == a:
            break
        x = 1 / (x - a)
print(f"closest f32 to a multiple of π/2: {worst[1]:.9g}, "
      f"distance 2^{float(mpmath.log(worst[0], 2)):.2f} (units of π/2)")
