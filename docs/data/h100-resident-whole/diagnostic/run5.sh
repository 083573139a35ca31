#!/usr/bin/env bash
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && cd "$root"; tar xJf .device47/lib.tar.xz -C .device47
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$root/.device47/lib:$B/lib:/usr/local/cuda/lib64
for round in 1 2; do for clean in default 0; do for pol in dmdas lookahead; do echo "== round $round clean $clean $pol"
  if [ $clean = 0 ]; then export STARPU_MINIMUM_CLEAN_BUFFERS=0 STARPU_TARGET_CLEAN_BUFFERS=0; else unset STARPU_MINIMUM_CLEAN_BUFFERS STARPU_TARGET_CLEAN_BUFFERS; fi
  TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $root/.device47/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers resident --repetitions 3 --grains whole-matrix 2>&1 | grep "grain\|^ *[0-9]* *L " | cut -c1-150
done; done; done
