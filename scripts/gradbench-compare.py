#!/usr/bin/env python3
"""Per-evaluation timing ratios from GradBench run logs (`gradbench run -o LOG`).

Usage: scripts/gradbench-compare.py OURS.jsonl OTHER.jsonl [OTHER2.jsonl ...]

For every evaluate message (function and description, e.g. `gradient n=1000`)
answered successfully in each log, prints the mean of the tool's own
`evaluate` timings (GradBench's convention: the computation only) and the
ratio of ours to each other tool's, then the geometric mean of each ratio
over the evaluations all logs share. Lines are streamed, so logs with large
inputs are read without holding them.
"""
import json
import math
import sys


def timings(path):
    """{(function, description): (tool, mean seconds)} from one log."""
    pending, tool, out = {}, "?", {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "message" in rec:
                m = rec["message"]
                if m.get("kind") == "evaluate":
                    pending[m["id"]] = (m["function"], m.get("description", ""))
            elif "response" in rec:
                r = rec["response"]
                if "tool" in r:
                    tool = r["tool"]
                key = pending.pop(r.get("id"), None)
                ts = [t["nanoseconds"] for t in r.get("timings", []) if t["name"] == "evaluate"]
                if key and r.get("success") and ts:
                    out[key] = sum(ts) / len(ts) / 1e9
    return tool, out


def main():
    logs = [timings(p) for p in sys.argv[1:]]
    ours_name, ours = logs[0]
    others = logs[1:]
    head = f"{'evaluation':<40}{ours_name + ' s':>12}"
    for name, _ in others:
        head += f"{name + ' s':>12}{'ratio':>10}"
    print(head)
    ratios = [[] for _ in others]
    for key, t in ours.items():
        row = f"{' '.join(key)[:39]:<40}{t:>12.3e}"
        for k, (_, other) in enumerate(others):
            if key in other:
                ratios[k].append(t / other[key])
                row += f"{other[key]:>12.3e}{t / other[key]:>10.3g}"
            else:
                row += f"{'-':>12}{'-':>10}"
        print(row)
    for (name, _), r in zip(others, ratios):
        if r:
            g = math.exp(sum(math.log(x) for x in r) / len(r))
            print(f"geometric mean of {ours_name} / {name} over {len(r)} evaluations: {g:.2f}")


if __name__ == "__main__":
    main()
