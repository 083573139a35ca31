#!/bin/bash
# One GPU call: tessera.cholesky_inverse of GPU stacks against torch.cholesky_inverse (the cp312
# wheel of this build, two processes), then the batched inverse kernel alone, the previous
# commit's and this one's (compiled here), alternated in separate processes.
set -u
B=$PWD/.bundle-w; L=$OUT/logs; mkdir -p $L /tmp/pb
tar xJf $B/site.tar.xz -C /tmp || exit 1
K=codelets/kernels/cuda
NV="/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo -Icodelets/kernels -Iinclude -I$B/gen -I$K"
( $NV -c $B/batched_potri_before.cu -o /tmp/pb/before.o & $NV -c $K/batched_potri.cu -o /tmp/pb/after.o &
  $NV -c $K/tile_config.cu -o /tmp/pb/tc.o & $NV -c $K/check.cpp -o /tmp/pb/check.o &
  $NV -c $B/potri_probe.cu -o /tmp/pb/main.o & gcc -c $B/stub.c -o /tmp/pb/stub.o; wait ) > $L/compile.txt 2>&1
export PYTHONPATH=/tmp/site STARPU_SILENT=1 PYTHONFAULTHANDLER=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
python3 -c "import torch; print('torch', torch.__version__)" >> $L/gpu.txt 2>&1
for p in 1 2; do
  STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 python3 bench/python/bench_gpu_paths.py --suites inverse \
    --dtypes float64,complex128,float32,complex64 --orders 4,8,16,32,48,64,96,128 --counts 1,8,64,512,4096 > $L/inverse_$p.txt 2>&1
  echo "rc=$?" >> $L/inverse_$p.txt
done
for v in before after; do /usr/local/cuda/bin/nvcc -arch=sm_90 /tmp/pb/main.o /tmp/pb/$v.o /tmp/pb/tc.o /tmp/pb/check.o /tmp/pb/stub.o -o /tmp/pb/probe_$v >> $L/compile.txt 2>&1; done
for round in 1 2; do for v in before after; do
  echo "== probe_$v round $round" >> $L/kernel.txt
  /tmp/pb/probe_$v d,s 33,40,48,56,64,80,96,128,200 512,4096 15 >> $L/kernel.txt 2>&1
done; done
tar czf $OUT/logs.tgz -C $OUT logs
cat $L/gpu.txt; tail -3 $L/compile.txt; grep -E "^ +(48|64) +4096|rc=" $L/inverse_*.txt; grep -c us $L/kernel.txt
