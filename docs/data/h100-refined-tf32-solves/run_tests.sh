#!/bin/bash
# One GPU call: every refined-solve test of the library (host and GPU memory, real and complex,
# batched) on the final build.
set -u
L=$OUT/logs; mkdir -p $L
tar xJf $PWD/.bundleR/xr.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xr/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xr/lib/libblas.so.3
X=/tmp/xr
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64 STARPU_PERF_MODEL_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > $L/gpu.txt
timeout 200 $X/tessera_tests --gtest_filter='*Refined*:Gmres*' > $L/refined_tests.txt 2>&1; echo "rc=$?" >> $L/refined_tests.txt
cat $L/gpu.txt; grep -E "FAILED|^\[  PASSED|^\[==========|rc=|SKIPPED \]" $L/refined_tests.txt | head -30; grep -B2 -A12 "Failure" $L/refined_tests.txt | head -60
