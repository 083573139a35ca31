#!/bin/bash
# One GPU call: the refinement's steps against cuBLAS (the triangular solves' products in FP32 and
# TF32), the refined solve with TF32 solves for a tensor-core factor (new) against the build before
# it (old), alternated in separate processes, then the library's refined-solve tests on the GPU.
set -u
start=$(date +%s); budget=${BUDGET:-420}
B=$PWD/.bundleR; L=$OUT/logs; mkdir -p $L
tar xJf $B/xr.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xr/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xr/lib/libblas.so.3
X=/tmp/xr
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 40 $X/rk_tests > $L/kernel_tests.txt 2>&1
T 60 $X/bench_refinement_steps --sizes 16384,30000,40000 --nrhs 1,8,16 --reps 7 > $L/steps.txt 2>&1
for r in 1 2; do
  for b in old new; do
    P=$X/bench_gpu_refined_solve; [ $b = old ] && P=$X/old_bench_gpu_refined_solve
    T 70 $P --sizes 16384,30000,40000 --conds 1e2 --nrhs 1,16 --repetitions 3 > $L/refined_${b}_$r.txt 2>&1
  done
done
T 90 $X/tessera_tests --gtest_filter='DeviceRefinedSolve*:Device.*:Plan.*' > $L/tests.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; grep -E "PASSED|FAILED|rc=|Failure" kernel_tests.txt | head; grep -A8 Failure kernel_tests.txt | head -30; cat steps.txt
for f in refined_old_1 refined_new_1 refined_old_2 refined_new_2; do echo "#### $f"; grep -E "rc=|^ +[0-9]+ +1e2" $f.txt | cut -c1-250; done
grep -E "FAILED|^\[  PASSED|^\[==========|rc=" tests.txt | head -30; grep -B2 -A10 "Failure" tests.txt | head -60
