#!/usr/bin/env bash
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && cd "$root"; tar xJf .device47/lib.tar.xz -C .device47
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$root/.device47/lib:$B/lib:/usr/local/cuda/lib64
for round in 1 2; do echo "== grains, clean buffers off, round $round"
  STARPU_MINIMUM_CLEAN_BUFFERS=0 STARPU_TARGET_CLEAN_BUFFERS=0 STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 150 $root/.device47/bench_gpu_potrf --sizes 4096,8192,10240,12288 --precisions d,s --uplos L --modes resident --peers resident --repetitions 3 --grains tiles,whole-matrix 2>&1 | grep "grain\|precision" | cut -c1-120
done
for clean in default 0; do echo "== out of core, 4 GiB, clean $clean"
  if [ $clean = 0 ]; then export STARPU_MINIMUM_CLEAN_BUFFERS=0 STARPU_TARGET_CLEAN_BUFFERS=0; else unset STARPU_MINIMUM_CLEAN_BUFFERS STARPU_TARGET_CLEAN_BUFFERS; fi
  TESSERA_HOST_TILES=pinned STARPU_LIMIT_CUDA_MEM=4096 STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $root/.device47/bench_out_of_core --sizes 30000 --nb 2048 --mode gpu --panel-percents 30,0 --no-check 2>&1 | tail -4
done
