#!/bin/bash
# One GPU call: complex dense factorization (zpotrf/cpotrf) and the inverse from the factor (potri)
# with the log-determinant, against cuSOLVER; warm process, each step on an empty perf-model directory.
set -u
start=$(date +%s); budget=${BUDGET:-540}
B=$PWD/.bundleJ; L=$OUT/logs; mkdir -p $L
tar xJf $B/xe.tar.xz -C /tmp || exit 1
X=/tmp/xe
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv > $L/gpu.txt
nproc >> $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 200 $X/bench_gpu_complex --sizes 16384,30000 --precisions z --uplos L --repetitions 3 > $L/complex_z.txt 2>&1
T 200 $X/bench_gpu_potri --sizes 8192,16384,30000 --precisions d --logdet-sizes 4096,8192,16384 --logdet-repetitions 9 --repetitions 3 --modes gpu,hybrid > $L/potri.txt 2>&1
T 150 $X/bench_gpu_complex --sizes 8192,16384 --precisions z,c --uplos L,U --repetitions 3 > $L/complex_zc.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; for f in complex_z.txt potri.txt complex_zc.txt; do echo "#### $f"; cat $f | cut -c1-400; done
