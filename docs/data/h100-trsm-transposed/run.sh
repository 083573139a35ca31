#!/usr/bin/env bash
# Tessera's trsm kernel on transposed (upper-stored) panel tiles: the upper-storage tests on the
# GPU, then upper against lower, the previous library (lib62) and this one (lib65).
set -u
B=/tmp/b; mkdir -p $B
tar xJf .bundle/deps.tar.xz -C $B; tar xJf .bundle/b62.tar.xz -C $B; tar xJf .bundle/b65.tar.xz -C $B
export STARPU_SILENT=1 STARPU_HOSTNAME=device
log=$OUT/log; mkdir -p $log
trap 'tar czf $OUT/logs.tgz -C $OUT log' EXIT
O=$B/lib62:$B/lib:/usr/local/cuda/lib64
N=$B/lib65:$B/lib:/usr/local/cuda/lib64
for v in old new; do
  lib=$O; [ $v = new ] && lib=$N
  LD_LIBRARY_PATH=$lib STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 50 $B/bin65/bench_gpu_potrf --sizes 8192,30000 \
    --precisions d --uplos L,U --modes device,gpu --peers resident --repetitions 3 > $log/bench-$v.txt 2>&1; echo "rc $?" >> $log/bench-$v.txt
done
LD_LIBRARY_PATH=$N STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 110 $B/bin65/tessera_tests \
  --gtest_filter='*/U_*:Staged.*:Modes/InfoSweep.*:Forced/GpuKernelChoice.*:TransposedForms.*:TileMatrixApi.*:DeviceDense.*' > $log/tests.txt 2>&1
echo "rc $?" >> $log/tests.txt
