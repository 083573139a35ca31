#!/usr/bin/env python3
"""Plots of docs/scaling.md from the JSON lines of bench/simgrid/run.sh (SVG in docs/img/)."""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

data = sys.argv[1]
img = sys.argv[2]
rows = [json.loads(l) for f in ("single.jsonl", "multi.jsonl") for l in open(f"{data}/{f}") if l.strip()]

# One node against the real H100 (docs/gpu-performance.md, main table, nb 2048, TFLOP/s).
real_resident = {16384: 28.14, 30000: 42.04}
real_host = {16384: 19.30, 30000: 36.60}
fig, ax = plt.subplots(figsize=(6, 4))
for node, style in (("h100x1", "-"), ("h100x4", "--")):
    for host, marker in ((False, "o"), (True, "s")):
        pts = sorted((r["n"], r["gflops"] / 1e3) for r in rows
                     if r.get("node") == node and r["ranks"] == 1 and r["from_host"] == host and "nodes" not in r)
        if pts:
            ax.plot(*zip(*pts), style, marker=marker,
                    label=f"simulated {node}, {'from host array' if host else 'tiles in host memory'}")
ax.plot(list(real_resident), list(real_resident.values()), "k^", label="real H100, tiles resident")
ax.plot(list(real_host), list(real_host.values()), "kv", label="real H100, end to end")
ax.set_xlabel("n (nb = 2048)")
ax.set_ylabel("TFLOP/s (n^3/3)")
ax.set_title("One node: simulated against measured")
ax.legend(fontsize=7)
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(f"{img}/scaling-one-node.svg")

fig, ax = plt.subplots(figsize=(6, 4))
multi = [r for r in rows if "nodes" in r]
for n in sorted({r["n"] for r in multi}):
    for cost in sorted({r["malloc_cost"] for r in multi}):
        pts = sorted((r["nodes"], r["gflops"] / 1e3) for r in multi if r["n"] == n and r["malloc_cost"] == cost)
        one = [r["gflops"] / 1e3 for r in rows if r.get("node") == "h100x4" and r["n"] == n and not r["from_host"]
               and "nodes" not in r]
        if one:
            pts = [(1, one[0])] + pts
        if pts:
            ax.plot(*zip(*pts), marker="o", label=f"n = {n}, pinned-allocation cost {'on' if cost else 'off'}")
nodes = sorted({r["nodes"] for r in multi} | {1})
ax.plot(nodes, [4 * 50 * k for k in nodes], "k:", label="4 x 50 TFLOP/s (GEMM peak) per node")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("nodes of 4 H100 (1: one node, no MPI)")
ax.set_ylabel("TFLOP/s (n^3/3)")
ax.set_title("Strong scaling, simulated (fat tree, 25 GB/s links)")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, which="both")
fig.tight_layout()
fig.savefig(f"{img}/scaling-strong.svg")
