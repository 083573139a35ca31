#!/usr/bin/env bash
# The main table of the final build in double: 4096-30000 both triangles in one process on an
# empty perf-model directory, 40000 in a second.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library
LD_LIBRARY_PATH=$L STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 330 $B/bin70/bench_gpu_potrf --sizes 4096,8192,16384,30000 \
  --precisions d --uplos L,U --repetitions 3 --json $log/double.json > $log/double.txt 2>&1; echo "rc $?" >> $log/double.txt
LD_LIBRARY_PATH=$L STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 170 $B/bin70/bench_gpu_potrf --sizes 40000 \
  --precisions d --uplos L --repetitions 3 --json $log/double_40000.json > $log/double_40000.txt 2>&1; echo "rc $?" >> $log/double_40000.txt
