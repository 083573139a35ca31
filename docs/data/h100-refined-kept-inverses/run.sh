#!/bin/bash
# One GPU call: the refined solve whose tensor-core tile DAG keeps its diagonal tiles' inverses for
# the corrections (new) against the build before (old), alternated in separate processes, at the
# orders the tile DAG factors (its tiles of 2048); then the refined-solve tests.
set -u
start=$(date +%s); budget=${BUDGET:-500}
B=$PWD/.bundleK; L=$OUT/logs; mkdir -p $L
tar xJf $B/xs.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xs/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xs/lib/libblas.so.3
X=/tmp/xs
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 150 $X/tessera_tests --gtest_filter='DeviceRefinedSolve*:Device.*:Plan.*:*Refined*' > $L/tests.txt 2>&1
for r in 1 2; do
  for b in old new; do
    P=$X/bench_gpu_refined_solve; [ $b = old ] && P=$X/old_bench_gpu_refined_solve
    T 60 $P --sizes 16384,24000 --conds 1e2 --nrhs 1,2,4,16 --repetitions 3 > $L/refined_${b}_$r.txt 2>&1
  done
done
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt
grep -E "FAILED|^\[  PASSED|^\[==========|rc=" tests.txt | head -30; grep -B2 -A10 "Failure" tests.txt | head -60
for f in refined_old_1 refined_new_1 refined_old_2 refined_new_2; do echo "#### $f"; grep -E "rc=|^ +[0-9]+ +1e2" $f.txt | cut -c1-250; done
