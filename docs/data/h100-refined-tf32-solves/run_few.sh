#!/bin/bash
# One GPU call: the refined solve with 2, 4 and 8 right-hand sides, the build before the TF32
# solves (old) and the final build (new) alternated in separate processes, then the final build at
# condition number 1e6 (every tensor-core factorization fails and the solve falls back).
set -u
start=$(date +%s); budget=${BUDGET:-300}
B=$PWD/.bundleR; L=$OUT/logs; mkdir -p $L
tar xJf $B/xr.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xr/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xr/lib/libblas.so.3
X=/tmp/xr
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
for r in 1 2; do
  for b in old new; do
    P=$X/bench_gpu_refined_solve; [ $b = old ] && P=$X/old_bench_gpu_refined_solve
    T 60 $P --sizes 16384,30000 --conds 1e2 --nrhs 2,4,8 --repetitions 3 > $L/refined_few_${b}_$r.txt 2>&1
  done
done
T 60 $X/bench_gpu_refined_solve --sizes 30000 --conds 1e6 --nrhs 1,16 --repetitions 3 > $L/refined_1e6.txt 2>&1
cd $L; cat gpu.txt
for f in refined_few_old_1 refined_few_new_1 refined_few_old_2 refined_few_new_2 refined_1e6; do echo "#### $f"; grep -E "rc=|^ +[0-9]+ +1e" $f.txt | cut -c1-250; done
