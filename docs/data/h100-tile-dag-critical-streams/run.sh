#!/bin/bash
# One GPU call: the tile DAG's critical-path streams. The refined solve (its FP16 factorization
# through the tile DAG below n = 30000, and Tessera's FP64 posv beside it) with the current rule
# (every panel task and the next panel's updates on the urgent stream: base), with urgent streams
# off (TESSERA_URGENT_STREAMS=0: off), and with only the chain to the next diagonal tile on it
# (narrow), alternated in separate processes; then one traced factorization of each.
set -u
start=$(date +%s); budget=${BUDGET:-420}
B=$PWD/.bundleN; L=$OUT/logs; mkdir -p $L
tar xJf $B/xs.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xs/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xs/lib/libblas.so.3
X=/tmp/xs
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
for r in 1 2; do
  T 50 $X/bench_gpu_refined_solve --sizes 16384,24000 --conds 1e2 --nrhs 1 --repetitions 3 > $L/base_$r.txt 2>&1
  T 50 env TESSERA_URGENT_STREAMS=0 $X/bench_gpu_refined_solve --sizes 16384,24000 --conds 1e2 --nrhs 1 --repetitions 3 > $L/off_$r.txt 2>&1
  T 50 $X/narrow_bench_gpu_refined_solve --sizes 16384,24000 --conds 1e2 --nrhs 1 --repetitions 3 > $L/narrow_$r.txt 2>&1
done
T 40 $X/bench_gpu_refined_solve --sizes 16384 --conds 1e2 --nrhs 1 --repetitions 3 --trace > $L/trace_base.txt 2>&1
T 40 env TESSERA_URGENT_STREAMS=0 $X/bench_gpu_refined_solve --sizes 16384 --conds 1e2 --nrhs 1 --repetitions 3 --trace > $L/trace_off.txt 2>&1
T 40 $X/narrow_bench_gpu_refined_solve --sizes 16384 --conds 1e2 --nrhs 1 --repetitions 3 --trace > $L/trace_narrow.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt
for f in base_1 off_1 narrow_1 base_2 off_2 narrow_2; do echo "#### $f"; grep -E "rc=|^ +[0-9]+ +1e2" $f.txt | cut -c1-250; done
grep -E "span|traced|rc=" trace_base.txt trace_off.txt trace_narrow.txt | head -40
