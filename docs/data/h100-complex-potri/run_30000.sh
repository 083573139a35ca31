#!/bin/bash
# One GPU call: complex double Cholesky at n = 30000 against cuSOLVER (warm process, empty perf-model
# directory).
set -u
start=$(date +%s); budget=${BUDGET:-300}
B=$PWD/.bundleL; L=$OUT/logs; mkdir -p $L
tar xJf $B/xe.tar.xz -C /tmp || exit 1
X=/tmp/xe
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $((budget - 15)) $X/bench_gpu_complex --sizes 30000 --precisions z --uplos L --repetitions 2 > $L/complex_z_30000.txt 2>&1
echo "rc=$? ($(( ($(date +%s%N)-s)/1000000 )) ms)" >> $L/complex_z_30000.txt
tar czf $OUT/logs.tgz -C $OUT logs
cat $L/gpu.txt $L/complex_z_30000.txt
