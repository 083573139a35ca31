#!/usr/bin/env bash
# One GPU, the final build (5fc5c8f): tessera info (the restart with OpenBLAS's faster kernel),
# one-shot cpu-mode processes, LAPACKE on both kernels, tessera_tests.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle22.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib22:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
$B/bin22/tessera info | tail -1 | tee $L/info.txt
OPENBLAS_CORETYPE=Prescott $B/bin22/tessera info | tail -2 | tee -a $L/info.txt
for round in 1 2 3; do
  for v in prescott now; do
    d=$(mktemp -d)
    if [ $v = prescott ]; then e=OPENBLAS_CORETYPE=Prescott; else e=X=1; fi
    env $e STARPU_PERF_MODEL_DIR=$d $B/bin22/tessera potrf --n 4000 --mode cpu --json --no-check > $L/cpu_${v}_$round.json
    python3 -c "import json; d=json.load(open('$L/cpu_${v}_$round.json')); print(f\"cpu n=4000 $v round $round: start {d['startup_seconds']:.3f}, call {d['seconds']:.3f}\")"
  done
done
for core in Prescott SkylakeX; do
  OPENBLAS_CORETYPE=$core STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin22/bench_cpu_potrf --sizes 4000,8000 --repetitions 5 2>&1 | tail -2 | sed "s/^/$core /" | tee -a $L/bench_cpu.txt
done
pack
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 300 $B/bin22/tessera_tests --gtest_brief=1 > $L/tests.txt 2>&1; echo "rc $?" >> $L/tests.txt
grep -E "FAILED|PASSED|SKIPPED \]|^rc" $L/tests.txt | tail -n 12
pack
