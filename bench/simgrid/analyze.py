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

# Real H100 (docs/gpu-performance.md and the calibration runs): TFLOP/s with n^3/3, tiles resident
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
    """Bytes each rank sent (StarPU-MPI's STARPU_COMM_STATS), {rank: bytes}."""
    sent = {}
    if os.path.exists(log):
        for line in open(log, errors="replace"):
            m = re.match(r"\[starpu_comm_stats\]\[(\d+)\] TOTAL:\s+([0-9.e+]+) B", line)
            if m:
                sent[int(m.group(1))] = float(m.group(2))
    return sent


def main():
    data = sys.argv[1]
    models = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../build-simgrid/models-h100")
    single, node4 = load(data, "single.jsonl"), load(data, "node4.jsonl")
    rows = load(data, "multi.jsonl") + load(data, "weak.jsonl")

    print("## one GPU (TFLOP/s): sim h100x1 | h100x1-k4 | h100x1-c2 | real H100")
    for what, real in (("resident", REAL_H100), ("host", REAL_H100_HOST), ("tiles", {})):
        for n, nb in sorted({(r["n"], r["nb"]) for r in single}):
            sel = lambda node: [r for r in single if r["node"] == node and r["n"] == n and r["nb"] == nb and
                                (r["resident"] if what == "resident" else r["from_host"] if what == "host" else
                                 not (r["resident"] or r["from_host"]))]
            vals = [f"{tflops(sel(node)[0]):.1f}" if sel(node) else "" for node in ("h100x1", "h100x1-k4", "h100x1-c2")]
            r = real.get((n, nb))
            print(f"| {what} | {n} | {nb} | " + " | ".join(vals) + f" | {'' if r is None else f'{r[0]}-{r[1]}' if r[0] != r[1] else r[0]} |")

    t = model_times(models)
    print("\n## model times of h100x4's simulated device (us, nb 2048):", {k: round(v) for k, v in t.items()})
    print("\n## nodes x GPUs | grid | n | malloc | sim s | TFLOP/s | per GPU | CP bound s | work bound s | busy (work / time) | "
          "sent per rank GB (max) | net s per rank | tiles per GPU | GiB per GPU | sim wall s")
    for r in node4:
        cp, work = bounds(r["n"], 1, t)
        nt = r["n"] // TILE
        tiles = nt * (nt + 1) / 2 / 4
        busy = work / r["seconds"]
        print(f"| 1 x 4 | - | {r['n']} | - | {r['seconds']:.3f} | {tflops(r):.1f} | {tflops(r) / 4:.1f} | {cp:.3f} | "
              f"{work:.3f} | {busy:.0%} | 0 | 0 | {tiles:.0f} | {tiles * 32 / 1024:.1f} | {r['sim_wall_s']} |")
    for r in sorted(rows, key=lambda r: (r["n"], r["nodes"], r["malloc_cost"])):
        cp, work = bounds(r["n"], r["nodes"], t, malloc=bool(r["malloc_cost"]))
        log = os.path.join(data, "logs", f"mpi-{r['nodes']}-{r['n']}-{r['malloc_cost']}.log")
        sent = comm_stats(log)
        busy = work / r["seconds"]
        most = max(sent.values()) if sent else float("nan")
        nt = r["n"] // TILE
        tiles = nt * (nt + 1) / 2 / (4 * r["nodes"])
        print(f"| {r['nodes']} x 4 | {r['grid']} | {r['n']} | {r['malloc_cost']} | {r['seconds']:.3f} | {tflops(r):.1f} | "
              f"{tflops(r) / (4 * r['nodes']):.1f} | {cp:.3f} | {work:.3f} | {busy:.0%} | {most / 1e9:.2f} | "
              f"{most / NET:.3f} | {tiles:.0f} | {tiles * 32 / 1024:.2f} | {r['sim_wall_s']} |")


if __name__ == "__main__":
    main()
