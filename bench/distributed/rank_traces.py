#!/usr/bin/env python3
"""Where each rank's time went, from the per-rank traces of `tessera potrf --grid PxQ --trace FILE.json`.

    bench/distributed/rank_traces.py FILE.rank0.json FILE.rank1.json ...

One line per rank: the span of its schedule (first task start to last task end), the time its GPU
ran at least one task (the union of the CUDA workers' task intervals) as seconds and as a share of
the span, the tiles and bytes it sent to each other rank, what it moved between host memory and
its GPU, and the gaps between the starts of its diagonal factorizations (the critical path: a long
gap is a step that waited, for a tile from another rank or behind other work).
"""
import json
import re
import sys


def union_seconds(intervals):
    total, end = 0.0, None
    start = None
    for s, e in sorted(intervals):
        if end is None or s > end:
            if end is not None:
                total += end - start
            start, end = s, e
        else:
            end = max(end, e)
    if end is not None:
        total += end - start
    return total / 1e6


def summarize(path):
    trace = json.load(open(path))
    tasks = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    if not tasks:
        return f"{path}: no task"
    begin = min(e["ts"] for e in tasks)
    span = (max(e["ts"] + e["dur"] for e in tasks) - begin) / 1e6
    gpu = [(e["ts"], e["ts"] + e["dur"]) for e in tasks if e["args"].get("worker", "").startswith("CUDA")]
    busy = union_seconds(gpu)
    sends, staging = [], []
    for t in trace.get("otherData", {}).get("transfers", []):
        if t["from"].startswith("rank "):
            sends.append(f"{t['count']} tiles ({t['bytes'] / 1e9:.2f} GB) to {t['to']}")
        else:
            staging.append(f"{t['from']} -> {t['to']} {t['bytes'] / 1e9:.2f} GB")
    potrf = sorted((e["ts"] - begin) / 1e3 for e in tasks if e["name"] == "potrf")
    gaps = [b - a for a, b in zip(potrf, potrf[1:])]
    rank = re.search(r"rank(\d+)", path)
    lines = [f"rank {rank.group(1) if rank else '?'}: {len(tasks)} tasks in {span:.3f} s; GPU busy {busy:.3f} s "
             f"({100 * busy / span if span else 0:.0f}%)",
             "  sent: " + ("; ".join(sends) or "nothing"),
             "  host/GPU: " + ("; ".join(staging) or "nothing")]
    if gaps:
        lines.append(f"  diagonal steps here: {len(potrf)}, gaps between them {min(gaps):.0f}-{max(gaps):.0f} ms "
                     f"(median {sorted(gaps)[len(gaps) // 2]:.0f})")
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        print(summarize(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
