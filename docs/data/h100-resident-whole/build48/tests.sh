#!/usr/bin/env bash
# Tiles on the GPU factored as one task up to n = 10240, StarPU's background write-back off: tests and benchmarks.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle48.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib48:$B/lib:/usr/local/cuda/lib64
L=$OUT/logs; mkdir -p $L
pack() { :; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
timeout 60 $B/bin48/tessera_cuda_kernel_tests --gtest_filter='MatrixUtils*' > $L/kernel_tests.txt 2>&1; echo "kernel tests rc $?"; tail -3 $L/kernel_tests.txt
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 400 $B/bin48/tessera_tests > $L/tests.txt 2>&1
echo "tests rc $?"; grep -E "FAILED  \]" $L/tests.txt | head; tail -3 $L/tests.txt; grep -E "ModerateOrderOnTheGpu|WholeMatrix" $L/tests.txt | grep -E "OK|FAIL" | head -20
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 100 $B/bin48/tessera_gpu_memory_test > $L/gpu_memory_tests.txt 2>&1
echo "gpu memory tests rc $?"; grep -E "FAILED  \]" $L/gpu_memory_tests.txt | head; tail -3 $L/gpu_memory_tests.txt
