#!/usr/bin/env python3
"""Rewrites the scoreboard at the top of docs/performance.md.

Reads the saved outputs of `benches/compare/run.sh`, one file per TWIN mode
(`docs/bench/torch.txt`, `jax.txt`, `fusion.txt`, `nn.txt`, `nn_jax.txt`, as
`scripts/bench-all.sh` writes them), and the hand-kept rows of
`docs/bench/recorded.md` (GradBench and GPU figures that cannot be re-run
here), and replaces the text between `<!-- scoreboard:begin -->` and
`<!-- scoreboard:end -->` in docs/performance.md with one table.

Each output file starts with the header line bench-all.sh writes:

    # nabla-bench twin=torch rounds=2 date=2026-12-06 commit=ae35a66 machine=AMD EPYC, 2 cores

followed by run.sh's stdout verbatim:

    machine: AMD EPYC, 2 cores; nabla threads 2, torch 2.15.0 threads 2; 2 rounds
    workload        nabla ms   twin ms  ratio  range          target  result
    gemm             10.1850   10.8560   0.94  0.94-0.95       <=1.25  PASS

Usage: scripts/scoreboard.py [--bench-dir DIR] [--doc FILE] [--check]
(--check prints the block instead of writing it).
"""

import argparse
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- scoreboard:begin -->"
END = "<!-- scoreboard:end -->"

# TWIN modes in the order bench-all.sh runs them, with the workloads run.sh
# times in each (the same lists as run.sh's `case`).
MODES = {
    "torch": ["gemm", "eltwise_add", "eltwise_tanh", "mlp_step"],
    "jax": ["seed_hessian", "rosen_hessian", "per_example", "mlp_fn"],
    "fusion": ["rosen_grad", "rosen_fwd", "rosen_jvp", "rosen_grad_unfused",
               "rosen_jvp_unfused", "eltwise_loss", "eltwise_loss_unfused"],
    "nn": ["gpt_step", "gpt_step_fn", "conv2d"],
    "nn_jax": ["gpt_step", "gpt_step_fn"],
}

# What each row measures (BENCHMARKS.md) and what it is compared against.
WHAT = {
    "gemm": "`gemm`: f32 matmul 1024³",
    "eltwise_add": "`eltwise` add, 1M f32",
    "eltwise_tanh": "`eltwise` tanh, 1M f32",
    "mlp_step": "`mlp_step` (tape, SGD), batch 256",
    "seed_hessian": "`seed_hessian`, (2, 3) f32, per call",
    "rosen_hessian": "`rosen_hessian`, n = 100, f64",
    "per_example": "`per_example` gradients, batch 256",
    "mlp_fn": "`mlp_fn`: functional `mlp_step`",
    "rosen_grad": "`rosenbrock` gradient, 1e6 f64",
    "rosen_fwd": "`rosenbrock` forward, 1e6 f64",
    "rosen_jvp": "`rosenbrock` JVP, 1e6 f64",
    "rosen_grad_unfused": "`rosenbrock` gradient, unfused (A/B)",
    "rosen_jvp_unfused": "`rosenbrock` JVP, unfused (A/B)",
    "eltwise_loss": "`eltwise_loss` gradient, 2 × 4M f32",
    "eltwise_loss_unfused": "`eltwise_loss` gradient, unfused (A/B)",
    "gpt_step": "`gpt_step` (tape, AdamW)",
    "gpt_step_fn": "`gpt_step_fn` (functional, AdamW)",
    "conv2d": "`conv2d` forward + backward",
}
# The anchor of each row after "PyTorch 2.15.0 " / "JAX 0.10.2 ".
ANCHOR = {
    "gemm": "`torch.matmul`",
    "eltwise_add": "`a + b`",
    "eltwise_tanh": "`torch.tanh`",
    "mlp_step": "eager, `backward()`",
    "seed_hessian": "`jit(jacfwd(jacrev(vmap)))`",
    "rosen_hessian": "`jit(hessian)`",
    "per_example": "`jit(vmap(grad))`",
    "mlp_fn": "`jit(value_and_grad)`",
    "rosen_grad": "`jit(grad)`",
    "rosen_fwd": "`jit`",
    "rosen_jvp": "`jit(jvp)`",
    "rosen_grad_unfused": "`jit(grad)`",
    "rosen_jvp_unfused": "`jit(jvp)`",
    "eltwise_loss": "`jit(grad)`",
    "eltwise_loss_unfused": "`jit(grad)`",
    "conv2d": "eager, `backward()`",
}
# gpt_step and gpt_step_fn have one twin per mode.
ANCHOR_BY_MODE = {"nn": "eager, `torch.optim.AdamW`", "nn_jax": "pure-JAX `jit`"}
FRAMEWORK = {"torch": "PyTorch", "jax": "JAX"}

HEADER = re.compile(
    r"^# nabla-bench twin=(?P<twin>\S+) rounds=(?P<rounds>\d+) date=(?P<date>\S+) "
    r"commit=(?P<commit>\S+) machine=(?P<machine>.+)$")
MACHINE = re.compile(
    r"^machine: (?P<model>.+), (?P<cores>\d+) cores; nabla threads (?P<nthreads>\d+), "
    r"(?P<fw>\S+) (?P<version>\S+) threads (?P<tthreads>\d+); (?P<rounds>\d+) rounds$")
ROW = re.compile(
    r"^(?P<w>\w+)\s+(?P<ours>[0-9.]+)\s+(?P<twin>[0-9.]+)\s+(?P<ratio>[0-9.]+)\s+"
    r"(?P<lo>[0-9.]+)-(?P<hi>[0-9.]+)\s*<=(?P<target>\S+)\s+(?P<result>PASS|FAIL)$")


def parse(path):
    """One run.sh output with its header: the header's fields, the machine
    line's, and {workload: row}."""
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f]
    if not lines or not HEADER.match(lines[0]):
        raise ValueError(f"{path}: first line is not a `# nabla-bench` header")
    info = HEADER.match(lines[0]).groupdict()
    rows = {}
    for line in lines[1:]:
        m = MACHINE.match(line)
        if m:
            info.update(m.groupdict())
            continue
        m = ROW.match(line)
        if m:
            rows[m["w"]] = m.groupdict()
    if "fw" not in info:
        raise ValueError(f"{path}: no `machine:` line from run.sh")
    return info, rows


def sig3(x):
    """x with three significant figures, trailing zeros kept."""
    if x == 0:
        return "0"
    return f"{x:.{max(0, 2 - math.floor(math.log10(abs(x))))}f}"


def fmt_ms(ms):
    """A time in ms with three significant figures; µs below 0.1 ms."""
    return f"{sig3(ms * 1e3)} µs" if ms < 0.1 else f"{sig3(ms)} ms"


def fmt_target(t):
    if t.endswith("ms"):
        return f"≤ {fmt_ms(float(t[:-2]))}"
    if float(t) >= 1e6:
        return "none"
    return f"≤ {float(t):g}"


def anchor_of(mode, w):
    return ANCHOR_BY_MODE[mode] if w.startswith("gpt_step") else ANCHOR[w]


def table(bench_dir):
    out = [
        "| workload | ours | anchor | anchor's time | ratio (per-round range) "
        "| target | date | commit | machine |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    missing = []
    for mode, workloads in MODES.items():
        path = os.path.join(bench_dir, f"{mode}.txt")
        info, rows = (None, {})
        if os.path.exists(path):
            info, rows = parse(path)
        else:
            missing.append(mode)
        for w in workloads:
            what = WHAT[w]
            if info is None or w not in rows:
                why = f"not run (no `docs/bench/{mode}.txt`)" if info is None \
                    else f"not in `docs/bench/{mode}.txt`"
                fw = "PyTorch" if mode in ("torch", "nn") else "JAX"
                out.append(f"| {what} | — | {fw} {anchor_of(mode, w)} | — | {why} | | | | |")
                continue
            r = rows[w]
            ours, twin = float(r["ours"]), float(r["twin"])
            fw = FRAMEWORK.get(info["fw"], info["fw"])
            anchor = f"{fw} {info['version']} {anchor_of(mode, w)}"
            target = fmt_target(r["target"])
            if target != "none":
                target += ": met" if r["result"] == "PASS" else ": **not met**"
            machine = (f"{info['model']}, {info['cores']} cores "
                       f"({info['nthreads']} threads each side)")
            out.append(
                f"| {what} | {fmt_ms(ours)} | {anchor} | {fmt_ms(twin)} | "
                f"**{float(r['ratio']):.2f}** ({r['lo']}–{r['hi']}) | {target} | "
                f"{info['date']} | `{info['commit']}` | {machine} |")
    return out, missing


def block(bench_dir):
    rows, missing = table(bench_dir)
    lines = [
        BEGIN,
        "<!-- Generated by scripts/scoreboard.py from docs/bench/*.txt; "
        "do not edit by hand: run scripts/bench-all.sh (or scoreboard.py "
        "after editing docs/bench/recorded.md). -->",
        "",
        "**Measured here** (`scripts/bench-all.sh`: `benches/compare/run.sh` for "
        "each `TWIN` mode, outputs in `docs/bench/`). Ours and the anchor run "
        "in the same session, alternating; each time is the best per-round "
        "median, the ratio is ours / anchor (below 1: we are faster), and the "
        "range of the per-round ratios beside it is the noise gauge. "
        "Unfused rows are the A/B of compile-time fusion (fusion switched "
        "off), against the same JAX twin.",
        "",
    ]
    lines += rows
    if missing:
        lines += ["", "Modes with no saved output: " + ", ".join(f"`{m}`" for m in missing) + "."]
    recorded = os.path.join(bench_dir, "recorded.md")
    if os.path.exists(recorded):
        with open(recorded) as f:
            text = f.read().strip("\n")
        lines += ["", "**Recorded, not re-run** (copied by hand from the sections "
                  "named in each row; `docs/bench/recorded.md`, included verbatim):",
                  "", text]
    lines.append(END)
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-dir", default=os.path.join(ROOT, "docs", "bench"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--check", action="store_true", help="print the block, write nothing")
    args = ap.parse_args()
    new = block(args.bench_dir)
    if args.check:
        sys.stdout.write(new)
        return
    with open(args.doc) as f:
        doc = f.read()
    start, end = doc.find(BEGIN), doc.find(END)
    if start < 0 or end < start:
        sys.exit(f"{args.doc}: no {BEGIN} ... {END} block")
    rest = doc[end + len(END):]
    doc = doc[:start] + new + (rest[1:] if rest.startswith("\n") else rest)
    with open(args.doc, "w") as f:
        f.write(doc)
    print(f"scoreboard written to {os.path.relpath(args.doc, ROOT)}")


if __name__ == "__main__":
    main()
