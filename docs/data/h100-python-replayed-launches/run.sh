#!/bin/bash
# One device call: the package before (main) and after the replayed launches, each the final
# build's cp312 wheel, unpacked (host BLAS replaced by the reference BLAS/LAPACK to fit the call's
# size: GPU calls only); the device tests of the one-matrix routes with the new one; calls_ab.py in
# four processes alternating before and after; bench_cholesky.py's dense suite, once each.
set -u
start=$(date +%s); budget=${BUDGET:-520}
L=$OUT/logs; mkdir -p $L
tar xJf .bundle-p/sites.tar.xz -C /tmp || exit 1
for site in before after; do  # the reference BLAS and LAPACK under the names the wheel's libraries ask for
  (cd /tmp/$site/tessera_cholesky.libs && cp libblas.so.3 libblas-5b50307c.so.3 && cp liblapack.so.3 liblapack-379e77b4.so.3)
done
export STARPU_SILENT=1 PYTHONFAULTHANDLER=1
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" >> $L/gpu.txt 2>&1
left() { echo $(( budget - ($(date +%s) - start) )); }
W() { local site=$1 cap=$2; shift 2; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $site: $*"; local s=$(date +%s%N); PYTHONPATH=/tmp/$site LD_LIBRARY_PATH=/tmp/$site/tessera_cholesky.libs STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
AB=docs/data/h100-python-replayed-launches/calls_ab.py
O=40,48,56,64,72,80,96,128,192,256,512,1024
for p in 1 2; do
  for site in before after; do W $site 100 python3 $AB $site $O >> $L/calls_ab.txt 2>&1; done
done
W after 60 python3 docs/data/h100-python-replayed-launches/routes_ab.py > $L/routes_ab.txt 2>&1
D=10,32,48,56,64,72,80,96,128,256,512,1024
for site in before after; do
  W $site 100 python3 bench/python/bench_cholesky.py --suites dense --precisions d,s,z,c --dense $D --reps 30 --energy-seconds 0 --json $L/dense_$site.json > $L/dense_$site.txt 2>&1
done
(cd python/tests && W after 150 python3 -m pytest -q -p no:cacheprovider test_device.py -k "plain_torch or one_matrix or factor_matches or layout or not_positive or waited") > $L/pytest_device.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; grep -E "==|rc=" calls_ab.txt; grep -E "cholesky_ex" calls_ab.txt | cut -c1-200 | head -120; tail -n 4 pytest_device.txt
