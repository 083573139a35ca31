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
timeout 150 python3 bench/python/bench_cholesky.py --suites dense --precisions z,c,d,s \
  --dense 32,48,64,80,96,128,160,192,256 --reps 20 --energy-seconds 0 \
  --json $L/dense.json > $L/dense.txt 2>&1; echo "rc=$?" >> $L/dense.txt
timeout 150 python3 bench/python/bench_cholesky.py --suites batched --precisions z,c,d,s \
  --batched 8x48,100x64,32x96,132x128,264x96,300x160,100x192,1000x64 --reps 20 --energy-seconds 0 \
  --json $L/stacks.json > $L/stacks.txt 2>&1; echo "rc=$?" >> $L/stacks.txt
timeout 230 python3 -m pytest -q -x python/tests/test_device.py \
  -k "stack or complex or one_matrix or plain_torch or routes or layout or not_positive" > $L/pytest_device.txt 2>&1
echo "rc=$?" >> $L/pytest_device.txt
tail -3 $L/pytest_device.txt
