#!/bin/bash
# One device call: bench_call_latency (the final build) against cuSOLVER's potrf on the same matrix
# in GPU memory, orders of the replayed launches, matrix restored from GPU memory between calls.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf .bundle-c/c.tar.xz -C /tmp || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
export LD_PRELOAD=/tmp/x/libs/libopenblas_shim.so LD_LIBRARY_PATH=/tmp/x/libs:/usr/local/cuda/lib64 STARPU_SILENT=1 STARPU_PERF_MODEL_DIR=$(mktemp -d)
timeout 100 /tmp/x/bench_call_latency --sizes 64,128,256,512 --repetitions 200 --restore device > $L/call_latency.txt 2>&1; echo "rc=$?" >> $L/call_latency.txt
cat $L/gpu.txt $L/call_latency.txt
