#!/bin/bash
# One GPU call: the refinement's steps (the one-pass residual of 2 to 4 columns against the blocked
# products and dsymm; the narrowing and the block inverses), the recursive tensor-core
# factorization of a diagonal tile against cuSOLVER's spotrf, the refined solve of the build
# before (old) and after (new) alternated in separate processes, one traced factorization, and
# the tests.
set -u
start=$(date +%s); budget=${BUDGET:-540}
B=$PWD/.bundleS; L=$OUT/logs; mkdir -p $L
tar xJf $B/xs.tar.xz -C /tmp || exit 1
ln -sf libopenblas.so.0 /tmp/xs/lib/liblapack.so.3; ln -sf libopenblas.so.0 /tmp/xs/lib/libblas.so.3
X=/tmp/xs
export STARPU_SILENT=1 LD_LIBRARY_PATH=$X/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 20 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
T 60 $X/rk_tests > $L/kernel_tests.txt 2>&1
T 60 $X/bench_tensor_core_potrf --sizes 2048,4096 --leaves 512/512/1024/i,256/256/512/i,1024/512/2048/i,512/512/1024,256/256/1024/i --operands fp16,tf32 --reps 7 > $L/diagonal_leaves.txt 2>&1
T 90 $X/bench_refinement_steps --sizes 2048,16384,30000 --nrhs 1,2,3,4,8 --reps 7 > $L/steps.txt 2>&1
for r in 1 2; do
  for b in old new; do
    P=$X/bench_gpu_refined_solve; [ $b = old ] && P=$X/old_bench_gpu_refined_solve
    T 70 $P --sizes 16384,30000 --conds 1e2 --nrhs 1,2,4 --repetitions 3 > $L/refined_${b}_$r.txt 2>&1
  done
done
T 40 $X/old_bench_gpu_refined_solve --sizes 16384 --conds 1e2 --nrhs 1 --repetitions 3 --trace > $L/trace_old.txt 2>&1
T 40 $X/bench_gpu_refined_solve --sizes 16384 --conds 1e2 --nrhs 1 --repetitions 3 --trace > $L/trace_new.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; cat gpu.txt; grep -E "PASSED|FAILED|rc=|Failure" kernel_tests.txt | head; grep -A8 Failure kernel_tests.txt | head -30
cat diagonal_leaves.txt steps.txt
for f in refined_old_1 refined_new_1 refined_old_2 refined_new_2; do echo "#### $f"; grep -E "rc=|^ +[0-9]+ +1e2" $f.txt | cut -c1-250; done
grep -E "span|tasks|traced|rc=" trace_old.txt trace_new.txt | head -40
