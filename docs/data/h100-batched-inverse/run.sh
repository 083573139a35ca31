#!/bin/bash
# One GPU call: the batched inverse from factors (tessera.cholesky_inverse) against PyTorch's
# cholesky_inverse on stacks, the final build's wheel; warm process, empty perf-model directory.
set -u
start=$(date +%s); budget=${BUDGET:-200}
B=$PWD/.bundleN; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp || exit 1
export PYTHONPATH=/tmp/site STARPU_SILENT=1 PYTHONFAULTHANDLER=1 STARPU_PERF_MODEL_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
s=$(date +%s%N)
timeout $((budget - 10)) python3 bench/python/bench_gpu_paths.py --suites inverse --dtypes float64,complex128,float32,complex64 \
  --orders 4,8,16,32,48,64,96,128 --counts 1,8,64,512,4096 > $L/inverse.txt 2>&1
echo "rc=$? ($(( ($(date +%s%N)-s)/1000000 )) ms)" >> $L/inverse.txt
tar czf $OUT/logs.tgz -C $OUT logs
cat $L/gpu.txt; cat $L/inverse.txt
