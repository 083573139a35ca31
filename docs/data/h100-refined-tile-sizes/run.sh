#!/bin/bash
# One device call: the FP16 refined solve in GPU memory with the tile DAG's tile size forced
# (--nb, 0: the plan's) at n = 16384 and 24000, one right-hand side, and one traced solve at each
# tile size at 16384. Each process on an empty perf-model directory; warm-process figures.
set -u
start=$(date +%s); budget=${BUDGET:-540}
L=$OUT/logs; mkdir -p $L
tar xJf .bundle-r/bench.tar.xz -C /tmp || exit 1
export STARPU_SILENT=1 LD_LIBRARY_PATH=/tmp/bench/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
R() { local name=$1; shift; local l=$(left); [ $l -lt 30 ] && { echo "SKIPPED $name (time)"; return; }
  STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $((l - 10)) /tmp/bench/bench_gpu_refined_solve "$@" > $L/$name.txt 2>&1
  echo "$name rc=$? ($(( $(date +%s) - start )) s)"; }
for round in 1 2; do
  for nb in 0 1024 1536 2048 3072; do
    R nb${nb}_round$round --sizes 16384,24000 --conds 1e2 --nrhs 1 --arithmetics fp16 --repetitions 5 --nb $nb
  done
done
for nb in 1024 2048; do R trace_nb$nb --sizes 16384 --conds 1e2 --nrhs 1 --arithmetics fp16 --repetitions 3 --nb $nb --trace; done
tar czf $OUT/logs.tgz -C $OUT logs
cat $L/gpu.txt; for f in $L/nb*.txt; do echo "== $(basename $f)"; grep -E "^ +(16384|24000)" $f; done
