#!/usr/bin/env bash
# Recursive vendor schedules against cuSOLVER's potrf; the final library's tests on the GPU.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library, $O: before the panel change
LD_LIBRARY_PATH=$L timeout 170 $B/bin70/bench_schedule_bound --sizes 8192,16384,30000,40000 --nb 2048 \
  --precisions d,s --repetitions 3 --recursive-leaves 1024,2048 --split-leaf 2048 > $log/schedule.txt 2>&1; echo "rc $?" >> $log/schedule.txt
LD_LIBRARY_PATH=$L STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 250 $B/bin70/tessera_tests > $log/tests.txt 2>&1; echo "rc $?" >> $log/tests.txt
LD_LIBRARY_PATH=$L timeout 100 $B/bin70/tessera_cuda_kernel_tests > $log/kernel-tests.txt 2>&1; echo "rc $?" >> $log/kernel-tests.txt
