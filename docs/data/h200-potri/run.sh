#!/usr/bin/env bash
# potri and the log-determinant on one GPU: the C++ inverse and log-determinant tests in every mode, the Python host inverse tests, and the
# benchmark against cuSOLVER (warm process, empty perf-model directory).
set -uo pipefail
D=/tmp/s; rm -rf $D; mkdir -p $D && tar -C $D -xJf .device/s.tar.xz
export STARPU_SILENT=1 CUDA_VISIBLE_DEVICES=0 LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/lib64
step() { echo "== $* ($(date +%s))"; }
step machine; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | tee $OUT/machine.txt
step inverse tests
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 200 $D/bin/tessera_tests --gtest_filter='*Inverse*:LogDeterminant*:AllModes/Factorization.Double*:Device*' \
  >$OUT/inverse_tests.txt 2>&1; echo "rc=$?"; grep -E "FAILED|PASSED|SKIPPED|tests ran|Failure" $OUT/inverse_tests.txt | head -20
step python all tests
PYTHONPATH=$D/py STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 240 python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_host.py python/tests/test_device.py >$OUT/python_all_tests.txt 2>&1
echo "rc=$?"; tail -n 4 $OUT/python_all_tests.txt
step bench potri
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 330 $D/bin/bench_gpu_potri --sizes 4096,8192,16384,30000 --precisions d,s --logdet-sizes 4096,8192,16384 --logdet-repetitions 9 \
  --repetitions 3 --modes gpu,hybrid > $OUT/bench_potri.txt 2>&1
echo "rc=$?"; cat $OUT/bench_potri.txt
step done
