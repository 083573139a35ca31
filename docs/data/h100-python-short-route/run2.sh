#!/bin/bash
set -u
L=$OUT/logs; mkdir -p $L
[ -d /tmp/site/tessera ] || tar xJf .bundleQ/site.tar.xz -C /tmp
cp python/src/tessera/__init__.py python/src/tessera/_arrays.py /tmp/site/tessera/
export PYTHONPATH=/tmp/site STARPU_SILENT=1 STARPU_PERF_MODEL_DIR=$(mktemp -d)
(cd python/tests && timeout 60 python3 -m pytest -q -p no:cacheprovider test_device.py -k plain_torch) > $L/pytest_plain.txt 2>&1; echo "rc=$?" >> $L/pytest_plain.txt
timeout 40 python3 bench/python/bench_cholesky.py --suites dense --precisions d,s --dense 96,128,192,256,512 --reps 30 --energy-seconds 0 > $L/dense2.txt 2>&1
tail -n 3 $L/pytest_plain.txt; grep -E "^ +[0-9]+ \|" $L/dense2.txt
