#!/bin/bash
# One GPU call: the final build's cp312 wheel with this tree's Python files (the thresholds and the
# short route): the device tests of the routes and of a forked child, one small matrix by each
# route against PyTorch, and the dense suite in two processes.
set -u
start=$(date +%s); budget=${BUDGET:-540}
B=$PWD/.bundleU; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp || exit 1
cp python/src/tessera/*.py /tmp/site/tessera/
export PYTHONPATH=/tmp/site STARPU_SILENT=1 PYTHONFAULTHANDLER=1
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" >> $L/gpu.txt 2>&1
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
(cd python/tests && T 150 python3 -m pytest -q -p no:cacheprovider test_device.py -k "fork or plain_torch or one_matrix or not_positive or waited or layout") > $L/pytest_device.txt 2>&1
T 90 python3 $B/route_ab.py > $L/route_ab.txt 2>&1
D=10,16,32,48,64,80,96,128,192,256,512,1024
for p in 1 2; do
  T 80 python3 bench/python/bench_cholesky.py --suites dense --precisions d,s --dense $D --reps 30 --energy-seconds 0 --json $L/dense_$p.json > $L/dense_$p.txt 2>&1
done

tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; tail -n 6 pytest_device.txt; cat route_ab.txt; for f in dense_1.txt dense_2.txt; do echo "#### $f"; grep -vE "^\s*$" $f | cut -c1-220 | tail -n 40; done
