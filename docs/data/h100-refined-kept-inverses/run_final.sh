#!/bin/bash
# One GPU call: the final build's refined solve at the README's orders (one and 16 right-hand
# sides), twice in separate processes, and at condition number 1e6.
set -u
start=$(date +%s); budget=${BUDGET:-420}
B=$PWD/.bundleK; L=$OUT/logs; mkdir -p $L
tar xJf $B/xs.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xs/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xs/lib/libblas.so.3
X=/tmp/xs
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
for r in 1 2; do
  T 90 $X/bench_gpu_refined_solve --sizes 16384,30000,40000 --conds 1e2 --nrhs 1,16 --repetitions 3 > $L/final_$r.txt 2>&1
done
T 60 $X/bench_gpu_refined_solve --sizes 30000 --conds 1e6 --nrhs 1 --repetitions 3 > $L/final_1e6.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt
for f in final_1 final_2 final_1e6; do echo "#### $f"; grep -E "rc=|^ +[0-9]+ +1e" $f.txt | cut -c1-250; done
