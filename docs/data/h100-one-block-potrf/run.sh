#!/bin/bash
# The one-block kernel's tests and bench, then the package's GPU bench and tests from the unpacked wheel.
cd "$(dirname "$0")"
L=$OUT/logs; mkdir -p $L
tar xf site.tar.xz && tar xf bb.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
LD_LIBRARY_PATH=$PWD/gsite/tessera_cholesky.libs:$PWD/bb:/usr/local/cuda/lib64 timeout 150 bb/one_block_tests > $L/one_block_tests.txt 2>&1; echo "rc=$?" >> $L/one_block_tests.txt
for r in 1 2; do LD_LIBRARY_PATH=$PWD/bb:/usr/local/cuda/lib64 timeout 90 bb/bench_one_block_potrf > $L/bench_one_block_potrf_$r.txt 2>&1; echo "rc=$?" >> $L/bench_one_block_potrf_$r.txt; done
export PYTHONPATH=$PWD/gsite LD_LIBRARY_PATH=$PWD/gsite/tessera_cholesky.libs:/usr/local/cuda/lib64
export STARPU_PERF_MODEL_DIR=$PWD/pm; mkdir -p pm
cd ..
python3 -c "import torch, cupy; print(torch.__version__, cupy.__version__)" >> $L/gpu.txt 2>&1
timeout 150 python3 bench/python/bench_cholesky.py --suites dense --precisions d,s \
  --dense 10,32,40,48,56,64,72,80,96,128,160,192,256,512 --reps 20 --energy-seconds 0 \
  --json $L/dense.json > $L/dense.txt 2>&1; echo "rc=$?" >> $L/dense.txt
timeout 200 python3 -m pytest -q -x python/tests/test_device.py \
  -k "one_matrix or plain_torch or factor_matches or layout or not_positive or waited" > $L/pytest_device.txt 2>&1
echo "rc=$?" >> $L/pytest_device.txt
cd $OUT && tar czf logs.tgz logs
