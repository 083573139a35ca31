#!/bin/bash
# One GPU call: the final build's device-API and attach tests (programs on the cp312 wheel's
# libraries, forwarders first), the package's process tests, the runtime-switching test repeated,
# then the package's whole test suite.
set -u
start=$(date +%s); budget=${BUDGET:-560}
B=$PWD/.bundleG; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp && tar xJf $B/x.tar.xz -C /tmp || exit 1
S=/tmp/site; X=/tmp/x; F=$S/tessera/_cuda_forwarders
C=""; for d in /usr/local/cuda/lib64 /usr/local/cuda-13.0/targets/x86_64-linux/lib; do [ -d $d ] && C=$C:$d; done
LLP=$F:$S/tessera_cholesky.libs$C
export STARPU_SILENT=1 STARPU_HOSTNAME=device STARPU_PERF_MODEL_DIR=/tmp/pm PYTHONFAULTHANDLER=1; mkdir -p /tmp/pm
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
python3 --version > $L/env.txt; echo "LD_LIBRARY_PATH for programs: $LLP" >> $L/env.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 15 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
P() { LD_LIBRARY_PATH=$LLP T "$@"; }
P 150 $X/tessera_cuda_device_tests --gtest_brief=1 > $L/device_tests.txt 2>&1
P 60 $X/tessera_attach_test --gtest_brief=1 > $L/attach.txt 2>&1
P 60 $X/tessera info > $L/info.txt 2>&1
export PYTHONPATH=$S
T 90 python3 -m pytest -q -p no:cacheprovider python/tests/test_processes.py > $L/pytest_processes.txt 2>&1
for i in 1 2 3 4 5; do T 40 python3 -m pytest -q -p no:cacheprovider python/tests/test_processes.py -k "switching or wheel_loads" 2>&1 | tail -n 30; done > $L/pytest_switching.txt 2>&1
T 330 python3 -m pytest -q -p no:cacheprovider python/tests > $L/pytest_all.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; tail -n 3 device_tests.txt attach.txt; tail -n 6 pytest_processes.txt; grep -E "passed|failed|rc=|Fatal|Segmentation" pytest_switching.txt; tail -n 8 pytest_all.txt
