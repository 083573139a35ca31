#!/bin/bash
# One GPU call: the batched kernels of the final build against cuSOLVER's batched potrf with the
# GPU's energy (double and float, both triangles), then the complex batched kernels.
set -u
start=$(date +%s); budget=${BUDGET:-420}
B=$PWD/.bundleI; L=$OUT/logs; mkdir -p $L
tar xJf $B/xa.tar.xz -C /tmp || exit 1
X=/tmp/xa
C=""; for d in /usr/local/cuda/lib64 /usr/local/cuda-13.0/targets/x86_64-linux/lib; do [ -d $d ] && C=$C:$d; done
export LD_LIBRARY_PATH=${C#:}
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 15 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 150 $X/bench_batched_kernels --sizes 8,16,32,64,128,256,512 --reps 10 --energy-seconds 0.5 --json $L/bench_batched_kernels.json > $L/bench_batched_kernels.txt 2>&1
T 70 $X/bench_batched_complex --sizes 8,16,32,64,128,256,512 --json $L/bench_batched_complex.json > $L/bench_batched_complex.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; grep -E "rc=|^device" bench_batched_kernels.txt bench_batched_complex.txt; awk '/^Energy/{f=1} f' bench_batched_kernels.txt | head -30; tail -n 30 bench_batched_complex.txt
