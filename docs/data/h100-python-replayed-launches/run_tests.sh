#!/bin/bash
# One device call: the kernel tests of matrix_utils (graph nodes included) and the device API's
# dense and complex tests, from this tree's build.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf .bundle-t/g.tar.xz -C /tmp || exit 1
export LD_PRELOAD=/tmp/libs/libopenblas_shim.so LD_LIBRARY_PATH=/tmp/libs:/usr/local/cuda/lib64 STARPU_SILENT=1 STARPU_PERF_MODEL_DIR=/tmp/pm; mkdir -p /tmp/pm
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $L/gpu.txt
cd /tmp
[ -n "${SKIPK:-}" ] || timeout 150 ./kernel_tests --gtest_filter='MatrixUtils*' > $L/kernel_tests.txt 2>&1; echo "kernel_tests rc=$?" >> $L/kernel_tests.txt
for f in 'DeviceDense.*Gpu' 'ComplexOnDevice.*' '*/DeviceDense.*'; do timeout 200 ./device_tests --gtest_filter="$f" >> $L/device_tests.txt 2>&1; echo "device_tests $f rc=$?" >> $L/device_tests.txt; done
cat $L/gpu.txt; tail -4 $L/kernel_tests.txt; grep -E "^\[  FAILED|^\[  PASSED|^\[  SKIPPED|rc=|Failure|error" $L/device_tests.txt | head -40; grep -E "^\[       OK \]" $L/device_tests.txt | grep -E "Repeated|OutOfPlace|PotrfEx" 
