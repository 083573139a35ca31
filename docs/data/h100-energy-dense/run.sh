#!/bin/bash
# One GPU call: the GPU's energy per dense double factorization at n = 16384 (every mode) and
# 40000 (gpu and hybrid modes) against cuSOLVER, fresh machine: each program on an empty
# perf-model directory.
set -u
start=$(date +%s); budget=${BUDGET:-540}
B=$PWD/.bundleS; L=$OUT/logs; mkdir -p $L
tar xJf $B/xp.tar.xz -C /tmp || exit 1
X=/tmp/xp
C=""; for d in /usr/local/cuda/lib64 /usr/local/cuda-13.0/targets/x86_64-linux/lib; do [ -d $d ] && C=$C:$d; done
export LD_LIBRARY_PATH=$X/lib:${C#:} STARPU_SILENT=1
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv > $L/gpu.txt
nproc >> $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 15 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 200 $X/bench_gpu_potrf --sizes 16384 --precisions d --uplos L --repetitions 3 --energy-seconds 1 --json $L/bench_gpu_potrf_16384.json > $L/bench_gpu_potrf_16384.txt 2>&1
T 330 $X/bench_gpu_potrf --sizes 40000 --precisions d --uplos L --modes gpu,hybrid --repetitions 2 --energy-seconds 1 --json $L/bench_gpu_potrf_40000.json > $L/bench_gpu_potrf_40000.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; for f in bench_gpu_potrf_16384.txt bench_gpu_potrf_40000.txt; do echo "#### $f"; grep -vE "^\s*$" $f | cut -c1-400 | tail -n 25; done
