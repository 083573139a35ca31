#!/usr/bin/env python3
"""Tables of docs/scaling.md from bench/simgrid/run.sh's results, and the bounds they are read
against (critical path, work, network, memory), from the models of the simulated node.

  analyze.py DATA_DIR [MODELS_DIR]     (MODELS_DIR: run.sh's MODELS, build-simgrid/models-h100)
"""
import glob
import json
import math
import os
import re
import sys

# Real H100 (the calibration runs, and the runs of docs/gpu-performance.md as it was when the
# calibration was taken; the repository's history keeps them): TFLOP/s with n^3/3, tiles resident
# on one GPU (bench_gpu_potrf, models calibrated, warm process), range over runs.
REAL_H100 = {(8192, 1024): (11, 15), (16384, 1024): (34, 34), (16384, 2048): (31, 33), (30000, 2048): (36, 41)}
REAL_H100_HOST = {(30000, 2048): (29, 34)}  # end to end from a host array
TILE = 2048
PCIE, NET, MALLOC_MS = 51e9, 25e9, 0.650 * 32  # B/s, B/s, ms of simulated pinned allocation of a 32 MiB tile


def load(data, name):
    path = os.path.join(data, name)
    return [json.loads(line) for line in open(path) if line.strip()] if os.path.exists(path) else []


def tflops(r):
    return r["gflops"] / 1e3


def model_times(models, host="h100x4"):
    """{op: us} of the simulated device cuda0 for full nb 2048 tiles."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from h100_node import FOOTPRINTS
    times = {}
    for op in ("potrf", "trsm", "syrk", "gemm"):
        section = None
        for line in open(os.path.join(models, "codelets", "45", f"tessera_d{op}.{host}")):
            m = re.match(r"# Model for (\S+)", line)
            if m:
                section = m.group(1)
            f = line.split()
            if section == "cuda0_impl0" and len(f) == 8 and f[0] == FOOTPRINTS[TILE][op]:
                times[op] = float(f[3])
    return times


def bounds(n, nodes, t, devices_per_node=8, malloc=False):
    """Lower bounds on the factorization's time (s) with nb 2048 tiles: the critical path
    potrf(k) -> trsm(k+1,k) -> syrk(k+1,k+1) -> potrf(k+1), with, between nodes, two tiles per
    step that cross GPU -> host -> network -> host -> GPU (P, Q > 1); and the work, every task's
    model time over the simulated devices."""
    nt = n // TILE
    cp = nt * t["potrf"] + (nt - 1) * (t["trsm"] + t["syrk"])
    hop = 32 * 2 ** 20 * (2 / PCIE + 1 / NET) * 1e6 + (MALLOC_MS * 1e3 if malloc else 0)
    cp_mpi = cp + (2 * (nt - 1) * hop if nodes > 1 else 0)
    work = (nt * t["potrf"] + nt * (nt - 1) / 2 * (t["trsm"] + t["syrk"]) + nt * (nt - 1) * (nt - 2) / 6 * t["gemm"])
    return cp_mpi * 1e-6, work / (devices_per_node * nodes) * 1e-6


def comm_stats(log):
    """Bytes each rank sent and received (StarPU-MPI's STARPU_COMM_STATS): ({rank: B}, {rank: B})."""
    sent, received = {}, {}
    if os.path.exists(log):
        for line in open(log, errors="replace"):
            m = re.match(r"\[starpu_comm_stats\]\[(\d+):(\d+)\]\s+([0-9.e+]+) B", line)
            if m:
                src, dst, b = int(m.group(1)), int(m.group(2)), float(m.group(3))
                sent[src] = sent.get(src, 0.0) + b
                received[dst] = received.get(dst, 0.0) + b
    return sent, received


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    data = sys.argv[1]
    models = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../build-simgrid/models-h100")
    single, node4 = load(data, "single.jsonl"), load(data, "node4.jsonl")
    rows = load(data, "multi.jsonl") + load(data, "weak.jsonl")
    seen = {}
    for r in rows:  # the last run of each configuration
        seen[(r["nodes"], r["n"], r["malloc_cost"])] = r
    rows = sorted(seen.values(), key=lambda r: (r["n"], r["nodes"], r["malloc_cost"]))

    print("### one GPU\n")
    print("| n | nb | start | sim h100x1 | sim h100x1-k4 | sim h100x1-c2 | real H100 |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for what, real in (("resident", REAL_H100), ("host", REAL_H100_HOST), ("tiles", {})):
        for n, nb in sorted({(r["n"], r["nb"]) for r in single}):
            def sel(node):
                return [r for r in single if r["node"] == node and r["n"] == n and r["nb"] == nb and
                        (r["resident"] if what == "resident" else r["from_host"] if what == "host" else
                         not (r["resident"] or r["from_host"]))]
            vals = [f"{tflops(sel(node)[-1]):.1f}" if sel(node) else "" for node in ("h100x1", "h100x1-k4", "h100x1-c2")]
            r = real.get((n, nb))
            realtext = "" if r is None else f"{r[0]}-{r[1]}" if r[0] != r[1] else f"{r[0]}"
            print(f"| {n} | {nb} | {what} | " + " | ".join(vals) + f" | {realtext} |")

    t = model_times(models)
    one = {r["n"]: r for r in node4}
    print("\n### strong scaling\n")
    print("| n | nodes x GPUs | grid | cost 1: s | TFLOP/s | cost 0: s | TFLOP/s | per GPU | speed-up over 1 node | simulation wall s (cost 0 / 1) |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for n in sorted({r["n"] for r in rows}):
        if n in one:
            r = one[n]
            print(f"| {n} | 1 x 4 | - | {r['seconds']:.3f} | {tflops(r):.1f} | {r['seconds']:.3f} | {tflops(r):.1f} | "
                  f"{tflops(r) / 4:.1f} | 1 | {r['sim_wall_s']} |")
        for nodes in sorted({r["nodes"] for r in rows if r["n"] == n}):
            c = {r["malloc_cost"]: r for r in rows if r["n"] == n and r["nodes"] == nodes}
            on, off = c.get(1), c.get(0)
            cell = lambda r: (f"{r['seconds']:.3f} | {tflops(r):.1f}" if r else "not run | ")
            speed = f"{one[n]['seconds'] / off['seconds']:.2f}" if off and n in one else ""
            grid = (off or on)["grid"]
            per = f"{tflops(off) / (4 * nodes):.2f}" if off else ""
            walls = " / ".join(str(r["sim_wall_s"]) if r else "-" for r in (off, on))
            print(f"| {n} | {nodes} x 4 | {grid} | {cell(on)} | {cell(off)} | {per} | {speed} | {walls} |")

    print("\n### weak scaling (n = 16384 sqrt(nodes))\n")
    print("| nodes x GPUs | n | cost 1: TFLOP/s | per GPU | cost 0: TFLOP/s | per GPU | efficiency per GPU (cost 0) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    base = tflops(one[16384]) / 4 if 16384 in one else None
    if base:
        print(f"| 1 x 4 | 16384 | {4 * base:.1f} | {base:.1f} | {4 * base:.1f} | {base:.1f} | 100% |")
    for nodes in (4, 16, 64, 256):
        n = int(16384 * nodes ** 0.5)
        c = {r["malloc_cost"]: r for r in rows if r["n"] == n and r["nodes"] == nodes}
        if not c:
            print(f"| {nodes} x 4 | {n} | not run | | not run | | |")
            continue
        cells = []
        for cost in (1, 0):
            r = c.get(cost)
            cells.append(f"{tflops(r):.1f} | {tflops(r) / (4 * nodes):.2f}" if r else "not run | ")
        eff = f"{tflops(c[0]) / (4 * nodes) / base:.0%}" if 0 in c and base else ""
        print(f"| {nodes} x 4 | {n} | {cells[0]} | {cells[1]} | {eff} |")

    print("\n### limits\n")
    print("| n | nodes | cost | simulated s | critical path s | work s | GPUs busy (work / time) | "
          "sent by the busiest rank, GB | its NIC time s | tiles received (most) | x 21 ms, s | tiles per GPU | GiB per GPU |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in node4:
        cp, work = bounds(r["n"], 1, t)
        nt = r["n"] // TILE
        tiles = nt * (nt + 1) / 2 / 4
        print(f"| {r['n']} | 1 | - | {r['seconds']:.3f} | {cp:.3f} | {work:.3f} | {work / r['seconds']:.0%} | - | - | - | - | "
              f"{tiles:.0f} | {tiles * 32 / 1024:.1f} |")
    for r in rows:
        cp, work = bounds(r["n"], r["nodes"], t)
        sent, received = comm_stats(os.path.join(data, "logs", f"mpi-{r['nodes']}-{r['n']}-{r['malloc_cost']}.log"))
        most = max(sent.values()) if sent else float("nan")
        most_in = max(received.values()) if received else float("nan")
        nt = r["n"] // TILE
        tiles = nt * (nt + 1) / 2 / (4 * r["nodes"])
        alloc = f"{most_in / 2 ** 25 * MALLOC_MS * 1e-3:.2f}" if r["malloc_cost"] else "-"
        print(f"| {r['n']} | {r['nodes']} | {r['malloc_cost']} | {r['seconds']:.3f} | {cp:.3f} | {work:.3f} | "
              f"{work / r['seconds']:.0%} | {most / 1e9:.2f} | {most / NET:.3f} | {most_in / 2 ** 25:.0f} | {alloc} | "
              f"{tiles:.1f} | {tiles * 32 / 1024:.2f} |")

    net = load(data, "network.jsonl")
    if net:
        print("\n### network\n")
        print("| n | nodes x GPUs | link GB/s | simulated s | TFLOP/s |")
        print("|---:|---:|---:|---:|---:|")
        base = [r for r in rows if r["malloc_cost"] == 0]
        for r in sorted(base + net, key=lambda r: (r["n"], r["nodes"], r["node_bw"])):
            if any(x["n"] == r["n"] and x["nodes"] == r["nodes"] for x in net):
                print(f"| {r['n']} | {r['nodes']} x 4 | {r['node_bw']:g} | {r['seconds']:.3f} | {tflops(r):.1f} |")

    local, real = load(data, "local.jsonl"), load(data, "local-real.jsonl")
    if local or real:
        print("\n### this machine\n")
        print("| run | real s (each run) | load average | simulated s |")
        print("|---|---|---|---:|")
        for grid, label, half in (("1x1", "1 rank, from a host array", False), ("1x2", "2 ranks (1x2)", False),
                                  ("2x2", "4 ranks (2x2)", False), ("2x2", "4 ranks (2x2), simulated on half a core each", True)):
            rr = [r for r in real if r.get("grid") == grid]
            ss = [r for r in local if r["grid"] == grid and r["node"].endswith("-half") == half]
            runs = ", ".join("%.2f" % r["seconds"] for r in rr)
            loads = ", ".join(str(r["loadavg"]) for r in rr)
            if ss:
                print(f"| {label} | {runs} | {loads} | {ss[-1]['seconds']:.3f} |")


if __name__ == "__main__":
    main()
