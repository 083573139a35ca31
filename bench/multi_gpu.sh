#!/usr/bin/env bash
# Tessera on G GPUs of this node and on one, against cusolverMgPotrf on G GPUs and cuSOLVER on one
# (the matrix on the GPU), double, lower, in one run (docs/multi-gpu.md):
#   bench/multi_gpu.sh BINDIR OUTDIR [SIZES] [G]
# BINDIR holds bench_gpu_potrf and cusolver_mg_potrf. OUTDIR receives each program's output and
# summary.txt, the table with ratios. Each figure: the median of REPETITIONS (default 1) runs after
# a warm-up, one process per GPU count; Tessera's processes share the perf-model directory
# (STARPU_PERF_MODEL_DIR as given). Also on G GPUs at the first size: the tasks placed by the
# scheduler (dmdas) instead of on their tiles' owners (TESSERA_GPU_PLACEMENT=policy); and a traced
# process on G GPUs at the first size (OUTDIR/gpus_trace.json): each GPU's busy time in its last
# factorization (end to end) and the bytes moved between memory nodes over its requests, GPU to GPU
# included (tracing slows a run, so its times are not in the table). STEP_TIMEOUT (seconds) bounds
# each program. MODES (default resident,gpu) picks Tessera's figures; ONE_GPU_PEERS=none (default
# resident) leaves cuSOLVER on one GPU out; EXTRAS=0 leaves out the dmdas-placed and the traced
# processes; BACKWARD_ERROR_MAX_N bounds the orders whose end-to-end factor is checked (the check
# needs two more copies of the matrix in host memory); CUSOLVER_MG=0 leaves cusolverMg out.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BINDIR OUTDIR [SIZES] [GPUS]" >&2; exit 2; }
bin=$1 out=$2 sizes=${3:-40000,60000,90000} gpus=${4:-2} reps=${REPETITIONS:-1} limit=${STEP_TIMEOUT:-0}
modes=${MODES:-resident,gpu} one_gpu_peers=${ONE_GPU_PEERS:-resident} check_max_n=${BACKWARD_ERROR_MAX_N:-2147483647}
mkdir -p "$out"
tessera() {  # tessera GPUS OUTNAME SIZES [bench_gpu_potrf options]
  local g=$1 name=$2 n=$3; shift 3
  TESSERA_NCUDA=$g timeout -k 20 "$limit" "$bin/bench_gpu_potrf" --sizes "$n" --precisions d --uplos L --modes "$modes" \
    --repetitions "$reps" --backward-error-max-n "$check_max_n" --json "$out/$name.json" "$@" | tee "$out/$name.txt"
}
tessera "$gpus" gpus "$sizes" --peers none
tessera 1 one_gpu "$sizes" --peers "$one_gpu_peers"
if [ "${EXTRAS:-1}" != 0 ]; then
  TESSERA_GPU_PLACEMENT=policy tessera "$gpus" gpus_by_policy "${sizes%%,*}" --peers none
  TESSERA_TRACE="$out/gpus_trace.json" tessera "$gpus" gpus_traced "${sizes%%,*}" --peers none
fi
if [ "${CUSOLVER_MG:-1}" != 0 ]; then
  timeout -k 20 "$limit" "$bin/cusolver_mg_potrf" --sizes "$sizes" --gpus "$gpus" --repetitions "$reps" | tee "$out/cusolver_mg.jsonl"
fi
python3 - "$out" "$gpus" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out, g = sys.argv[1], int(sys.argv[2])
nan = float("nan")
def rows(name):
    path = f"{out}/{name}"
    if not os.path.exists(path) or os.path.getsize(path) == 0: return {}
    data = [json.loads(l) for l in open(path)] if name.endswith(".jsonl") else json.load(open(path))
    return {r["n"]: r for r in data if "resident_s" in r or "tessera_gpu_s" in r}
mg, one, many, free = rows("cusolver_mg.jsonl"), rows("one_gpu.json"), rows("gpus.json"), rows("gpus_by_policy.json")
def tf(n, r, k):
    s = r.get(n, {}).get(k)
    return n ** 3 / 3 / s / 1e12 if s and s == s else nan
ratio = lambda a, b: a / b if b == b and b else nan
print(f"TFLOP/s (n^3/3 flops). T1, T{g}: Tessera gpu mode on 1 and {g} GPUs, tiles resident (res: each on its owner "
      f"GPU) and end to end from the caller's array (e2e); pol: {g} GPUs with the tasks placed by dmdas; cusMg: "
      f"cusolverMgPotrf on {g} GPUs (e2e: from pageable memory); cus: cuSOLVER on one GPU, matrix on the GPU")
print(f"{'n':>6} | {'cus':>6} | {'cusMg res':>9} {'e2e':>6} | {'T1 res':>6} {'e2e':>6} | {'T%d res' % g:>6} {'e2e':>6} | "
      f"{'pol res':>7} {'e2e':>6} | {'res %d/1' % g:>8} {'e2e %d/1' % g:>8} | {'res/cusMg':>9} {'e2e/cusMg':>9}")
for n in sorted(set(one) | set(many)):
    c = tf(n, one, "cusolver_resident_s")
    mr, me = tf(n, mg, "resident_s"), tf(n, mg, "end_to_end_s")
    r1, e1 = tf(n, one, "tessera_resident_s"), tf(n, one, "tessera_gpu_s")
    rg, eg = tf(n, many, "tessera_resident_s"), tf(n, many, "tessera_gpu_s")
    pr, pe = tf(n, free, "tessera_resident_s"), tf(n, free, "tessera_gpu_s")
    print(f"{n:>6} | {c:>6.2f} | {mr:>9.2f} {me:>6.2f} | {r1:>6.2f} {e1:>6.2f} | {rg:>6.2f} {eg:>6.2f} | {pr:>7.2f} {pe:>6.2f} | "
          f"{ratio(rg, r1):>8.2f} {ratio(eg, e1):>8.2f} | {ratio(rg, mr):>9.2f} {ratio(eg, me):>9.2f}")
# A process's first end-to-end call (the warm-up above): on one GPU it may be staged in GPU memory.
for n in sorted(set(one) | set(many)):
    f1, fg = tf(n, one, "tessera_gpu_first_s"), tf(n, many, "tessera_gpu_first_s")
    if f1 == f1 or fg == fg:
        print(f"{n:>6}: first end-to-end call of a process: T1 {f1:.2f}, T{g} {fg:.2f} TFLOP/s ({g}/1: {ratio(fg, f1):.2f})")
trace = f"{out}/gpus_trace.json"
if os.path.exists(trace):
    doc = json.load(open(trace))
    tasks = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X"), key=lambda e: e["ts"])
    # The trace holds every request of the process: keep the last factorization's tasks, from the
    # last potrf of tile (0, 0) on.
    first = [k for k, e in enumerate(tasks) if e["name"] == "potrf" and e["args"]["i"] == 0 and e["args"]["j"] == 0]
    tasks = tasks[first[-1]:] if first else []
    if tasks:
        span = max(e["ts"] + e["dur"] for e in tasks) - min(e["ts"] for e in tasks)
        busy = {}
        for e in tasks:
            worker = e["args"]["worker"]
            where = worker.split(".")[0] if worker.startswith("CUDA") else "CPUs"
            busy[where] = busy.get(where, 0.0) + e["dur"]
        print(f"last traced factorization on {g} GPUs at the first size (end to end, tasks only): {span / 1e3:.1f} ms; "
              "busy workers on average: " +
              ", ".join(f"{w} {b / span:.2f}" for w, b in sorted(busy.items())))
    for t in doc.get("otherData", {}).get("transfers", []):  # summed over the process's traced requests
        print(f"  moved over all traced requests, {t['from']} -> {t['to']}: {t['bytes'] / 1e9:.2f} GB in {t['count']}")
PY
