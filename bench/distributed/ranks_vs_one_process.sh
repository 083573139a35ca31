#!/usr/bin/env bash
# GPU ranks against one process on the same GPUs, in one run (docs/distributed.md):
#   bench/distributed/ranks_vs_one_process.sh TESSERA OUTDIR [SIZES] [GRIDS]
# TESSERA is the CLI. On this node's G GPUs (nvidia-smi -L), for each n of SIZES (default
# 40000,60000,90000): one process on one GPU, one process on the G GPUs, and P x Q ranks for each
# grid of GRIDS (default 1xG), rank r on GPU r mod G; every row `tessera potrf --grid --mode gpu
# --no-check`, end to end from host memory, the matrix filled again before each repetition.
# Each configuration runs twice: on empty perf-model directories with REPETITIONS (default 3)
# factorizations (the first: a fresh machine; the median of the others: warm), then once more on
# the models that run left (a fresh process). The ranks' last warm factorization is traced
# (OUTDIR/<grid>_<n>.rankR.json; bench/distributed/rank_traces.py reads them). OUTDIR receives
# every row (rows.jsonl) and summary.txt, the table with ratios, the bytes moved between ranks
# and the time those bytes take at STAGING_GBPS (default: not given; the "MPI pinned" column of
# bench_tile_transfers on the same host). MPIRUN (default "mpirun --bind-to none") starts
# the processes; STEP_TIMEOUT (default 600) bounds each; MODE (default gpu) is the mode of every run.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 TESSERA OUTDIR [SIZES] [GRIDS]" >&2; exit 2; }
tessera=$(realpath "$1") out=$(realpath -m "$2") sizes=${3:-40000,60000,90000}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || { echo "$0: no GPU" >&2; exit 2; }
grids=${4:-1x$gpus} reps=${REPETITIONS:-3} limit=${STEP_TIMEOUT:-600}
read -r -a mpirun <<<"${MPIRUN:-mpirun --bind-to none}"
mkdir -p "$out/models"
# One GPU and one perf-model directory per rank (ranks of one node must not share model files).
cat >"$out/one_gpu_per_rank.sh" <<'EOF'
#!/usr/bin/env bash
rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
[ -n "${RANK_GPUS:-}" ] && export CUDA_VISIBLE_DEVICES=$((rank % RANK_GPUS))
export STARPU_PERF_MODEL_DIR=$MODELS/rank$rank
exec "$@"
EOF
chmod +x "$out/one_gpu_per_rank.sh"

run() {  # run LABEL STATE NP GRID N REPS GPUS_PER_RANK [tessera options]: rows tagged with label and state
  local label=$1 state=$2 np=$3 grid=$4 n=$5 r=$6 per_rank=$7; shift 7
  local environment=(MODELS="$out/models/$label-$n")
  [ "$np" -gt 1 ] && environment+=(RANK_GPUS="$gpus")
  [ "$np" = 1 ] && [ "$per_rank" = 1 ] && environment+=(CUDA_VISIBLE_DEVICES=0)
  env "${environment[@]}" timeout -k 20 "$limit" "${mpirun[@]}" -np "$np" \
    "$out/one_gpu_per_rank.sh" "$tessera" potrf --n "$n" --grid "$grid" --mode "${MODE:-gpu}" --no-check --json \
    --repetitions "$r" "$@" 2>>"$out/errors.txt" |
    python3 -c '
import json, sys
label, state = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    row = json.loads(line)
    row["label"], row["state"] = label, state
    print(json.dumps(row))' "$label" "$state" >>"$out/rows.jsonl"
}

: >"$out/rows.jsonl"
for n in ${sizes//,/ }; do
  configurations=("one_gpu 1 1x1 1")
  [ "$gpus" -gt 1 ] && configurations+=("all_gpus 1 1x1 $gpus")
  for grid in ${grids//,/ }; do configurations+=("$grid $((${grid%x*} * ${grid#*x})) $grid 1"); done
  for configuration in "${configurations[@]}"; do
    read -r label np grid per_rank <<<"$configuration"
    rm -rf "$out/models/$label-$n"
    trace=()
    [ "$np" -gt 1 ] && trace=(--trace "$out/${label}_$n.json")
    run "$label" cold "$np" "$grid" "$n" "$reps" "$per_rank" "${trace[@]}"
    run "$label" fresh_process "$np" "$grid" "$n" 1 "$per_rank"
  done
done

python3 - "$out" "$gpus" "${STAGING_GBPS:-}" <<'PY' | tee "$out/summary.txt"
import json, statistics, sys
out, gpus, staging = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [json.loads(l) for l in open(f"{out}/rows.jsonl")]
def pick(label, n, state):
    rs = [r for r in rows if r["label"] == label and r["n"] == n and r["state"] == state]
    if state == "warm":
        rs = [r for r in rows if r["label"] == label and r["n"] == n and r["state"] == "cold" and r["repetition"] > 1]
        return statistics.median(r["seconds"] for r in rs) if rs else None, rs
    rs = [r for r in rs if r["repetition"] == 1]
    return (rs[0]["seconds"] if rs else None), rs
fmt = lambda s: f"{s:8.3f}" if s else f"{'-':>8}"
ratio = lambda a, b: f"{a / b:7.2f}x" if a and b else f"{'-':>8}"
labels = sorted({r["label"] for r in rows if r["label"] not in ("one_gpu", "all_gpus")})
mode = rows[0]["mode"] if rows else "gpu"
print(f"seconds of tessera potrf --mode {mode}, end to end; one process on 1 and on {gpus} GPUs against ranks with one "
      f"GPU each; warm: median of repetitions 2.. in the same processes; fresh machine: first call on empty perf "
      f"models; fresh process: first call on the models of the run before. Speed ratios: time of the one process "
      f"over time of the ranks (above 1: the ranks are faster).")
for state in ("warm", "fresh_machine", "fresh_process"):
    key = "cold" if state == "fresh_machine" else state
    print(f"\n{state}")
    print(f"{'n':>7} {'1 GPU':>8} {f'{gpus} GPUs':>8} | " + " | ".join(
        f"{l:>7} {'vs 1p':>8} {'vs 1 GPU':>8}" for l in labels))
    for n in sorted({r["n"] for r in rows}):
        one, _ = pick("one_gpu", n, key)
        many, _ = pick("all_gpus", n, key)
        cells = []
        for l in labels:
            s, _ = pick(l, n, key)
            cells.append(f"{fmt(s)[1:]} {ratio(many, s)} {ratio(one, s)}")
        print(f"{n:>7} {fmt(one)} {fmt(many)} | " + " | ".join(cells))
print("\nbytes between ranks (one factorization), and the time they take at the staging bandwidth")
for l in labels:
    for n in sorted({r["n"] for r in rows}):
        _, rs = pick(l, n, "cold")
        if not rs: continue
        total, largest = rs[0]["bytes_between_ranks"], rs[0]["largest_rank_bytes_sent"]
        warm, _ = pick(l, n, "warm")
        bound = f", {largest / (float(staging) * 1e9):.3f} s for the rank sending most at {staging} GB/s" if staging else ""
        print(f"{l:>7} n={n}: {total / 1e9:.3f} GB in all, {largest / 1e9:.3f} GB from the rank sending most{bound}"
              f" (warm factorization {warm:.3f} s)" if warm else "")
PY
for traces in $(ls "$out"/*_*.rank0.json 2>/dev/null); do
  echo; echo "${traces##*/}" | sed 's/\.rank0\.json$//; s/_/ at n = /; s/^/ranks /'
  python3 "$(dirname "$0")/rank_traces.py" "${traces%.rank0.json}".rank*.json
done | tee -a "$out/summary.txt"
