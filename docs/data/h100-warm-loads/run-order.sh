#!/usr/bin/env bash
# The order of a warm call's loads: anti-diagonal (A, the final library), column by column (B),
# the first two columns first then anti-diagonal (C); gpu mode end to end, processes alternating.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library
tar xJf .bundle/b74.tar.xz -C $B
for r in 1 2; do
  for v in A B C; do
    lib=$L; [ $v = B ] && lib=$B/libB:$B/lib:/usr/local/cuda/lib64; [ $v = C ] && lib=$B/libC:$B/lib:/usr/local/cuda/lib64
    LD_LIBRARY_PATH=$lib STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 60 $B/bin70/bench_gpu_potrf --sizes 16384,30000 \
      --precisions d --uplos L --modes gpu --peers resident --repetitions 5 > $log/order-$v-$r.txt 2>&1; echo "rc $?" >> $log/order-$v-$r.txt
  done
done
