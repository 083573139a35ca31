#!/usr/bin/env bash
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && cd "$root"; tar xJf .device47/lib.tar.xz -C .device47
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$root/.device47/lib:$B/lib:/usr/local/cuda/lib64
STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_TRACE=$OUT/t.json timeout 120 $root/.device47/bench_gpu_potrf --sizes 8192 --precisions d --uplos L --modes resident --peers resident --repetitions 3 --grains whole-matrix 2>&1 | grep "grain\|WHOLE\|RES\|  8192" | cut -c1-150
