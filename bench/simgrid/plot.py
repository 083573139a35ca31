#!/usr/bin/env python3
"""Plots of docs/scaling.md from bench/simgrid/run.sh's JSON lines (SVG):

  plot.py DATA_DIR IMG_DIR
"""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analyze import REAL_H100, load, tflops  # noqa: E402

data, img = sys.argv[1], sys.argv[2]
single, node4 = load(data, "single.jsonl"), load(data, "node4.jsonl")
distributed = load(data, "multi.jsonl") + load(data, "weak.jsonl")

# One GPU: simulated (three ways of replaying the 4 workers per GPU) against the H100.
cases = [(8192, 1024), (16384, 1024), (16384, 2048), (30000, 2048)]
fig, ax = plt.subplots(figsize=(7, 4))
width = 0.2
for k, (node, label) in enumerate((("h100x1", "sim: 2 devices, half times"), ("h100x1-k4", "sim: 4 devices, measured times"),
                                    ("h100x1-c2", "sim: 2 devices, measured times"))):
    ys = [next((tflops(r) for r in single if r["node"] == node and r["n"] == n and r["nb"] == nb and r["resident"]), 0)
          for n, nb in cases]
    ax.bar([i + (k - 1.5) * width for i in range(len(cases))], ys, width, label=label)
lo = [REAL_H100[c][0] for c in cases]
hi = [REAL_H100[c][1] for c in cases]
ax.errorbar([i + 1.5 * width for i in range(len(cases))], [(l + h) / 2 for l, h in zip(lo, hi)],
            yerr=[[(h - l) / 2 + 0.4 for l, h in zip(lo, hi)]] * 2, fmt="none", ecolor="k", elinewidth=8,
            label="real H100 (range of runs)")
ax.set_xticks(range(len(cases)))
ax.set_xticklabels([f"n={n}\nnb={nb}" for n, nb in cases])
ax.set_ylabel("TFLOP/s (n^3/3)")
ax.set_title("One H100, tiles resident: simulated against measured")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, axis="y")
fig.tight_layout()
fig.savefig(f"{img}/scaling-one-node.svg")


def series(rows, n, cost):
    pts = sorted((r["nodes"], tflops(r)) for r in rows if r["n"] == n and r["malloc_cost"] == cost)
    one = [tflops(r) for r in node4 if r["n"] == n]
    return ([(1, one[0])] if one else []) + pts


fig, ax = plt.subplots(figsize=(6.5, 4.2))
for n in sorted({r["n"] for r in distributed if r["n"] in (32768, 65536)}):
    for cost, style in ((0, "-"), (1, "--")):
        pts = series([r for r in distributed], n, cost)
        if len(pts) > 1:
            ax.plot(*zip(*pts), style, marker="o",
                    label=f"n = {n}, {'received buffers reused (cost 0)' if cost == 0 else 'pinned allocation per received tile'}")
nodes = sorted({r["nodes"] for r in distributed} | {1})
ax.plot(nodes, [4 * 40 * k for k in nodes], "k:", label="4 GPUs x 40 TFLOP/s per node")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("nodes of 4 H100 (1: one node, no MPI)")
ax.set_ylabel("TFLOP/s (n^3/3)")
ax.set_title("Strong scaling, simulated (fat tree, 25 GB/s links, nb 2048)")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, which="both")
fig.tight_layout()
fig.savefig(f"{img}/scaling-strong.svg")

# Weak scaling: n = 16384 sqrt(nodes), the same tiles per GPU.
fig, ax = plt.subplots(figsize=(6, 4))
for cost, style in ((0, "-"), (1, "--")):
    pts = [(1, tflops(r) / 4) for r in node4 if r["n"] == 16384]
    pts += sorted((r["nodes"], tflops(r) / (4 * r["nodes"])) for r in distributed
                  if r["malloc_cost"] == cost and r["n"] == int(16384 * r["nodes"] ** 0.5))
    if len(pts) > 1:
        ax.plot(*zip(*pts), style, marker="o", label=f"pinned-allocation cost {'off' if cost == 0 else 'on'}")
ax.set_xscale("log", base=2)
ax.set_xlabel("nodes of 4 H100 (n = 16384 sqrt(nodes))")
ax.set_ylabel("TFLOP/s per GPU")
ax.set_title("Weak scaling, simulated")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, which="both")
fig.tight_layout()
fig.savefig(f"{img}/scaling-weak.svg")
