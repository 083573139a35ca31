#!/bin/bash
# The package's GPU tests of the one-block routes, then its dense and stack benchmarks, from the unpacked wheel.
cd "$(dirname "$0")"
L=$OUT/logs; mkdir -p $L
tar xf site.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $L/gpu.txt 2>&1
export PYTHONPATH=$PWD/gsite LD_LIBRARY_PATH=$PWD/gsite/tessera_cholesky.libs:/usr/local/cuda/lib64
export STARPU_PERF_MODEL_DIR=$PWD/pm; mkdir -p pm
cd ..
python3 -c "import torch, cupy; print(torch.__version__, cupy.__version__)" >> $L/gpu.txt 2>&1
timeout 80 python3 -m pytest -q -x python/tests/test_device.py -p no:cacheprovider \
  -k "thread_block_per_matrix or complex_factor_solve or complex_not_positive or one_matrix_waited or routes" > $L/pytest_device.txt 2>&1
echo "rc=$?" >> $L/pytest_device.txt
timeout 45 python3 bench/python/bench_cholesky.py --suites dense --precisions z,c \
  --dense 48,64,80,96,128,192 --reps 20 --energy-seconds 0 \
  --json $L/dense.json > $L/dense.txt 2>&1; echo "rc=$?" >> $L/dense.txt
timeout 45 python3 bench/python/bench_cholesky.py --suites batched --precisions z,c,d,s \
  --batched 100x64,8x96,132x128,300x160 --reps 20 --energy-seconds 0 \
  --json $L/stacks.json > $L/stacks.txt 2>&1; echo "rc=$?" >> $L/stacks.txt
tail -2 $L/pytest_device.txt
