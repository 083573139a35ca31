#!/usr/bin/env bash
# cuBLAS's FP64 emulation on the H100: DGEMM, and the vendor schedules with emulated cuBLAS calls.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library, $O: before the panel change
tar xJf .bundle/b71.tar.xz -C $B
LD_LIBRARY_PATH=$L timeout 200 $B/bin71/bench_schedule_bound --sizes 8192,16384,30000,40000 --nb 2048 \
  --precisions d --repetitions 3 --recursive-leaves 2048 --split-leaf 2048 --emulate-fp64 > $log/emulation.txt 2>&1; echo "rc $?" >> $log/emulation.txt
