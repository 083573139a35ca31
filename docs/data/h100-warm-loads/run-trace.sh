#!/usr/bin/env bash
# Where a warm end-to-end call's time goes at n = 30000: a trace of gpu mode's calls (the first
# staged, the later ones on pooled tiles).
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library
LD_LIBRARY_PATH=$L STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_TRACE=$log/trace30000.json timeout 120 $B/bin70/bench_gpu_potrf \
  --sizes 30000 --precisions d --uplos L --modes resident,gpu --peers none --repetitions 2 > $log/trace-bench.txt 2>&1; echo "rc $?" >> $log/trace-bench.txt
ls -la $log
