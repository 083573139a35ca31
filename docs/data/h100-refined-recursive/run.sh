#!/bin/bash
# One GPU call: the recursive tensor-core factorization's kernel tests, the library's tests of the
# refined solve, the device API and the plan, the refined solve against cuSOLVER's FP64 solve with
# each tensor-core arithmetic through the tile DAG beside the plan's path (--tile-dag), and the
# recursion with BF16 operands alone; warm processes, each on an empty perf-model directory.
set -u
start=$(date +%s); budget=${BUDGET:-240}
B=$PWD/.bundleT; L=$OUT/logs; mkdir -p $L
tar xJf $B/xt.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xt/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xt/lib/libblas.so.3
X=/tmp/xt
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 30 $X/tcp_tests > $L/kernel_tests.txt 2>&1
T 80 $X/tessera_tests --gtest_filter='DeviceRefinedSolve*:Plan.*:Device.*' > $L/tests.txt 2>&1
T 100 $X/bench_gpu_refined_solve --sizes 16384,30000,40000 --conds 1e2 --nrhs 1,16 --repetitions 3 --tile-dag > $L/refined.txt 2>&1
T 60 $X/bench_gpu_refined_solve --sizes 30000 --conds 1e6 --nrhs 1,16 --repetitions 3 --tile-dag > $L/refined_1e6.txt 2>&1
T 30 $X/bench_tensor_core_potrf --sizes 30000,40000 --leaves 1024/512/2048/i --operands bf16 --reps 3 > $L/leaves.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; grep -E "PASSED|FAILED|rc=|Failure" kernel_tests.txt | head; grep -A8 Failure kernel_tests.txt | head -30; cat leaves.txt; cut -c1-520 refined.txt; cut -c1-520 refined_1e6.txt; grep -E "FAILED|^\[  PASSED|^\[==========|rc=" tests.txt | head -30; grep -B2 -A10 "Failure" tests.txt | head -60
