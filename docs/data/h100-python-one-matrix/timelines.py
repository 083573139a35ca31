"""Per call of the profiled traces (trace_*.json.gz): the time from the end of the previous
synchronisation to the first CUDA launch and to the start of cuSOLVER's factorization kernel, in
microseconds (medians over the 20 calls), then one call's events."""
import gzip, json, statistics, sys

for name in sys.argv[1:]:
    events = [e for e in json.load(gzip.open(name))["traceEvents"] if e.get("ph") == "X"]
    events.sort(key=lambda e: e["ts"])
    syncs = [e for e in events if e["name"] == "cudaDeviceSynchronize"]
    first_launch, factor_start, calls = [], [], []
    for before, after in zip(syncs, syncs[1:]):
        start, end = before["ts"] + before["dur"], after["ts"] + after["dur"]
        call = [e for e in events if start <= e["ts"] < end]
        if not any(e["name"] == "cudaLaunchKernel" for e in call):
            continue  # the profiler's own synchronisations
        calls.append((start, call))
        first_launch.append(min(e["ts"] for e in call if e["name"] == "cudaLaunchKernel") - start)
        factor_start.append(min(e["ts"] for e in call if "getrf" in e["name"] or "potrf" in e["name"]) - start)
    print(f"== {name}: first launch {statistics.median(first_launch):.1f} us, factorization kernel starts "
          f"{statistics.median(factor_start):.1f} us after the previous synchronisation")
    start, call = calls[len(calls) // 2]
    for e in call:
        print(f"   {e['ts'] - start:8.1f} {e['dur']:7.1f}  {e['name'][:90]}")
