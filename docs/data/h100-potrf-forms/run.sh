#!/bin/bash
# What the device call ran, from the repository root, with potrf_ab built beside this script and
# BUNDLE/site.tar.xz the unpacked wheel's site folder (gsite/), logs under $OUT.
set -u
here=docs/data/h100-potrf-forms
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt 2>&1
LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout 200 $here/potrf_ab 60 > $OUT/potrf_ab.txt 2>&1
(cd BUNDLE && tar xf site.tar.xz)
export STARPU_SILENT=1 PYTHONPATH=$PWD/BUNDLE/gsite LD_LIBRARY_PATH=$PWD/BUNDLE/gsite/tessera_cholesky.libs:/usr/local/cuda/lib64
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 200 python3 $here/profile_one.py \
  z128 z200 z256 z300 c200 c256 d200 d256 d500 d1000 s256 s1000 > $OUT/profile.txt 2>&1
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 150 python3 bench/python/bench_cholesky.py --suites dense --precisions z,c,d \
  --dense 128,160,200,256,300,384,512,1000 --reps 20 --energy-seconds 0 --json $OUT/dense_zcd.json > $OUT/dense_zcd.txt 2>&1
