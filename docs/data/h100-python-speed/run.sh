#!/bin/bash
# One device call: bench/python/bench_cholesky.py's device suites (stacks and one matrix, the four
# scalar types) from this build's cp312 wheel, unpacked (its host BLAS and LAPACK replaced by
# Debian's reference libraries and a stub of OpenBLAS's thread functions, so that it fits the
# call's size: only GPU calls are measured), against PyTorch and CuPy on the same tensors; an empty
# perf-model directory (fresh machine), figures from the warm process. Before them, the package's
# device tests of the one-block and stack routes, from the same files.
set -u
start=$(date +%s); budget=${BUDGET:-560}
L=$OUT/logs; mkdir -p $L
tar xJf .bundle-py/site.tar.xz -C /tmp || exit 1
export STARPU_SILENT=1 PYTHONFAULTHANDLER=1 PYTHONPATH=/tmp/gsite LD_LIBRARY_PATH=/tmp/gsite/tessera_cholesky.libs
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" >> $L/gpu.txt 2>&1
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 90 python3 -m pytest -q -x python/tests/test_device.py -p no:cacheprovider \
  -k "thread_block_per_matrix or complex_factor_solve or complex_not_positive or one_matrix_waited or routes" > $L/pytest_device.txt 2>&1
echo "rc=$? ($(( $(date +%s) - start )) s)" >> $L/pytest_device.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
B=10000x8,10000x32,1000x64,100x64,8x100,8x128,64x128,512x128,2x300,32x256,64x256,1000x256,4x512,16x512,512x512,16x1000,64x1000
D=10,32,48,56,64,72,80,96,128,200,256,300,500,1000,2000,4096,8192,16384
for p in z,c d,s; do
  l=$(left); [ $l -lt 30 ] && { echo "SKIPPED $p (time)"; continue; }
  STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $((l - 10)) python3 bench/python/bench_cholesky.py --suites batched,dense \
    --precisions $p --batched $B --dense $D --reps 20 --energy-seconds 0 --json $L/gpu_${p/,/}.json > $L/gpu_${p/,/}.txt 2>&1
  echo "$p rc=$? ($(( $(date +%s) - start )) s)"
done
tar czf $OUT/logs.tgz -C $OUT logs
cat $L/gpu.txt; grep -h -A40 "dense, device" $L/gpu_*.txt | cut -c1-120
