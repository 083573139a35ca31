#!/bin/bash
# One GPU call: the whole-matrix batched kernels against the streamed ones (both triangles, double
# and float), their tests, then every batched kernel test.
set -u
start=$(date +%s); budget=${BUDGET:-560}
B=$PWD/.bundleH; L=$OUT/logs; mkdir -p $L
tar xJf $B/xb.tar.xz -C /tmp || exit 1
X=/tmp/xb
C=""; for d in /usr/local/cuda/lib64 /usr/local/cuda-13.0/targets/x86_64-linux/lib; do [ -d $d ] && C=$C:$d; done
export LD_LIBRARY_PATH=${C#:}
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 15 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 120 $X/tessera_cuda_kernel_tests --gtest_filter='*WholeMatrix*' > $L/whole_tests.txt 2>&1
T 240 $X/bench_batched_kernels --sizes 33,40,48,64,80,96,128,160,192,224 --reps 10 --json $L/whole.json > $L/whole.txt 2>&1
T 200 $X/tessera_cuda_kernel_tests --gtest_filter='*Batched*' > $L/batched_tests.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; tail -n 4 whole_tests.txt; grep -E "FAILED|Failure" whole_tests.txt | head -20; awk '/Whole-matrix kernels/{f=1} /^Solve/{f=0} f' whole.txt; grep -E "^device|rc=" whole.txt; tail -n 4 batched_tests.txt; grep -E "FAILED" batched_tests.txt | head
