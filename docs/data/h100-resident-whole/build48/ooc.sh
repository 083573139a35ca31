#!/usr/bin/env bash
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle48.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib48:$B/lib:/usr/local/cuda/lib64
L=$OUT/logs; mkdir -p $L
for round in 1 2 3; do for clean in 5 0; do
  TESSERA_HOST_TILES=pinned STARPU_LIMIT_CUDA_MEM=2048 STARPU_MINIMUM_CLEAN_BUFFERS=$clean STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin48/bench_out_of_core --sizes 30000 --nb 2048 --mode gpu --panel-percents 30 --no-check > $L/ooc_${round}_clean$clean.txt 2>&1
  echo "round $round clean $clean rc $? $(tail -1 $L/ooc_${round}_clean$clean.txt)"
done; done
for clean in 5 0; do
  TESSERA_HOST_TILES=pinned STARPU_LIMIT_CUDA_MEM=8192 STARPU_MINIMUM_CLEAN_BUFFERS=$clean STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin48/bench_out_of_core --sizes 40000 --nb 2048 --mode gpu --panel-percents 30 --no-check > $L/ooc40_clean$clean.txt 2>&1
  echo "40000 at 8 GiB clean $clean rc $? $(tail -1 $L/ooc40_clean$clean.txt)"
done
