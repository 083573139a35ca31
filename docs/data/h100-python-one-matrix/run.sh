#!/bin/bash
# One GPU call: the package of the final build against PyTorch and CuPy on one GPU matrix of order
# 10 to 16384 and on short and long stacks; two processes, each on an empty perf-model directory.
set -u
start=$(date +%s); budget=${BUDGET:-400}
B=$PWD/.bundleK; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp || exit 1
export PYTHONPATH=/tmp/site STARPU_SILENT=1 PYTHONFAULTHANDLER=1
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" >> $L/gpu.txt 2>&1
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
D=10,16,32,64,96,128,192,256,512,1024,2048,4096,8192,16384
S=2x256,8x128,16x512,4x1000,100x64,1000x32,10000x128
for p in 1 2; do
  T 150 python3 bench/python/bench_cholesky.py --suites dense --precisions d,s --dense $D --reps 30 --energy-seconds 0 --json $L/dense_$p.json > $L/dense_$p.txt 2>&1
done
T 120 python3 bench/python/bench_cholesky.py --suites batched --precisions d,s --batched $S --reps 20 --energy-seconds 0 --json $L/stacks.json > $L/stacks.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; for f in dense_1.txt dense_2.txt stacks.txt; do echo "#### $f"; grep -vE "^\s*$" $f | cut -c1-220 | tail -n 45; done
