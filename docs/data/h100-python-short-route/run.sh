#!/bin/bash
# One GPU call: the final wheel with this tree's Python package files (the short route for one plain
# torch matrix): the GPU-array tests that cover it, then the speed against PyTorch.
set -u
start=$(date +%s); budget=${BUDGET:-200}
B=$PWD/.bundleQ; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp || exit 1
cp python/src/tessera/__init__.py python/src/tessera/_arrays.py /tmp/site/tessera/ || exit 1
export PYTHONPATH=/tmp/site STARPU_SILENT=1 PYTHONFAULTHANDLER=1
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 15 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
(cd python/tests && T 110 python3 -m pytest -q -p no:cacheprovider test_device.py -k "plain_torch or one_matrix or factor_matches or layout or not_positive or waited") > $L/pytest_device.txt 2>&1
T 40 python3 $B/lean_ab.py > $L/lean_ab.txt 2>&1
T 60 python3 bench/python/bench_cholesky.py --suites dense --precisions d,s --dense 64,96,128,192,256,512,1024 --reps 30 --energy-seconds 0 > $L/dense.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
tail -n 4 $L/pytest_device.txt; grep -E "^float|rc=" $L/lean_ab.txt; grep -E "^ +[0-9]+ \||rc=" $L/dense.txt
