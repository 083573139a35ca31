#!/usr/bin/env bash
# One shot, before and after the runtime starts ahead of the input: the previous CLI with the peer
# making its matrix first, and the new CLI with the peer making it after its CUDA context; rounds
# alternate, each row fresh processes on an empty perf-model directory.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library, $O: before the panel change
tar xJf .bundle/b73.tar.xz -C $B
mkdir -p $B/before/bin $B/after/bin
ln -sf $B/bin70/tessera $B/before/tessera; ln -sf $B/bin73/cusolver_oneshot $B/before/bin/cusolver_oneshot
ln -sf $B/bin73/tessera $B/after/tessera; ln -sf $B/bin73/cusolver_oneshot $B/after/bin/cusolver_oneshot
for r in 1 2 3; do
  echo "round $r before" >> $log/oneshot.txt
  LD_LIBRARY_PATH=$L ONESHOT_PEER_FLAGS=--matrix-first timeout 150 bash bench/oneshot.sh $B/before 8192 20000 30000 >> $log/oneshot.txt 2>&1
  echo "round $r after" >> $log/oneshot.txt
  LD_LIBRARY_PATH=$L timeout 150 bash bench/oneshot.sh $B/after 8192 20000 30000 >> $log/oneshot.txt 2>&1
done
