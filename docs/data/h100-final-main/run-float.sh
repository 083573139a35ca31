#!/usr/bin/env bash
# The main table of the final build in float, one process on an empty perf-model directory.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library
LD_LIBRARY_PATH=$L STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 200 $B/bin70/bench_gpu_potrf --sizes 4096,8192,16384,30000,40000 \
  --precisions s --uplos L --repetitions 3 --json $log/float.json > $log/float.txt 2>&1; echo "rc $?" >> $log/float.txt
