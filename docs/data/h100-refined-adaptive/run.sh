#!/bin/bash
# One GPU call: the refined solve (tensor-core factor, FP64-accurate solution) and the adaptive-
# precision factorization against cuSOLVER's FP64; warm processes, each on an empty perf-model
# directory.
set -u
start=$(date +%s); budget=${BUDGET:-400}
B=$PWD/.bundleR; L=$OUT/logs; mkdir -p $L
tar xJf $B/xr.tar.xz -C /tmp || exit 1
X=/tmp/xr
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 200 $X/bench_gpu_refined_solve --sizes 16384,30000,40000 --conds 1e2 --nrhs 1,16 --repetitions 3 > $L/refined.txt 2>&1
T 200 $X/bench_adaptive --n 20000,40000 --accuracy 1e-8,1e-4 --mode gpu --reps 2 --json $L/adaptive.json > $L/adaptive.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; cut -c1-250 refined.txt; cut -c1-250 adaptive.txt | tail -n 40
