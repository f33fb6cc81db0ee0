"""The timing protocol and output shared by the Python twins (torch_twin.py,
jax_compose_twin.py); benches/twin.rs implements the same on the Rust side."""

import json
import os
import time


def measure(f, warmup, meas):
    """Warm up for `warmup` s (at least 3 calls), then time single calls
    until `meas` s have passed and at least 20 were taken (at most 5000).
    `f` must return only once its work is done (JAX: block_until_ready)."""
    start = time.perf_counter()
    n = 0
    while n < 3 or time.perf_counter() - start < warmup:
        f()
        n += 1
    times = []
    start = time.perf_counter()
    while len(times) < 20 or (time.perf_counter() - start < meas and len(times) < 5000):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()

    def q(p):
        return times[round((len(times) - 1) * p)]

    return {
        "median_ms": q(0.5),
        "p10_ms": q(0.1),
        "p90_ms": q(0.9),
        "min_ms": times[0],
        "reps": len(times),
    }


def settings():
    """The run's settings from the environment, as benches/twin.rs reads
    them: warm-up and measured seconds per workload (`TWIN_WARMUP_S`,
    default 1; `TWIN_MEASURE_S`, default 3) and whether a workload is wanted
    (`TWIN_ONLY`, a comma-separated list; default all)."""
    warmup = float(os.environ.get("TWIN_WARMUP_S", "1"))
    meas = float(os.environ.get("TWIN_MEASURE_S", "3"))
    only = [w.strip() for w in os.environ.get("TWIN_ONLY", "").split(",") if w.strip()]

    def wanted(name):
        return not only or name in only

    return warmup, meas, wanted


def report(framework, version, threads, results):
    """Prints the run as the one JSON object run.sh reads."""
    print(
        json.dumps(
            {
                "framework": framework,
                "version": version,
                "threads": threads,
                "results": results,
            }
        )
    )
