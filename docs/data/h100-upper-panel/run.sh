#!/usr/bin/env bash
# Upper against lower storage, the library before Tessera's panel solve on upper-stored tiles (old)
# and the final one (new), alternating, each process on an empty perf-model directory.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library, $O: before the panel change
for r in 1 2; do
  for v in old new; do
    lib=$O; [ $v = new ] && lib=$L
    LD_LIBRARY_PATH=$lib STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 70 $B/bin70/bench_gpu_potrf --sizes 8192,16384 \
      --precisions d --uplos L,U --modes device,gpu --peers none --repetitions 3 > $log/ul-$v-$r.txt 2>&1; echo "rc $?" >> $log/ul-$v-$r.txt
  done
done
for v in old new; do
  lib=$O; [ $v = new ] && lib=$L
  LD_LIBRARY_PATH=$lib STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin70/bench_gpu_potrf --sizes 30000 \
    --precisions d --uplos L,U --modes device,gpu --peers none --repetitions 3 > $log/ul30-$v.txt 2>&1; echo "rc $?" >> $log/ul30-$v.txt
done
