#!/usr/bin/env bash
# Does a fresh process's CUDA start depend on the memory it touched before? The CLI's start at
# three orders, interleaved, and a probe of cuInit / context / cublasCreate after touching X GB.
set -u
. docs/data/h100-recursive/common.sh  # unpacks the bundles; $L: final library, $O: before the panel change
tar xJf .bundle/b72.tar.xz -C $B
for program in $B/bin70/tessera $B/bin72/start_probe; do
  LD_LIBRARY_PATH=$L ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | xargs cat > /dev/null
done
for r in 1 2 3; do
  for gb in 0 0.5 3.2 7.2; do
    for mode in 0 2; do LD_LIBRARY_PATH=$L timeout 30 $B/bin72/start_probe $gb $mode >> $log/probe.txt 2>&1; done
  done
done
for r in 1 2; do
  for n in 8192 20000 30000 4096; do
    LD_LIBRARY_PATH=$L STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 60 $B/bin70/tessera potrf --n $n --json --no-check >> $log/cli.txt 2>&1
  done
done
