#!/usr/bin/env bash
# lookahead policy: its tests on the GPU; T-res and gpu end to end under dmdas (default), lookahead and
# critical-path-heft, one fresh process each on an empty perf-model directory, two rounds; traces at 8192.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle40.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib40:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_POLICY=lookahead timeout -k 10 150 $B/bin40/tessera_tests --gtest_brief=1 \
  --gtest_filter='Policies.*:Trace.*:AllModes/Factorization.*:Errors.NotPositive*' > $L/tests_lookahead.txt 2>&1
echo "tests rc $?"; grep -E "FAILED|Failure" $L/tests_lookahead.txt | head -8; tail -3 $L/tests_lookahead.txt
pack
for round in 1 2; do for pol in dmdas lookahead critical-path-heft; do
  env TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin40/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers resident --repetitions 3 --json $L/tres_${pol}_$round.json > $L/tres_${pol}_$round.txt 2>&1; echo "$pol round $round rc=$?"; grep -E "^ +[0-9]+ " $L/tres_${pol}_$round.txt | cut -c1-110
  pack
done; done
for pol in dmdas lookahead; do
  env TESSERA_POLICY=$pol TESSERA_TRACE=$L/trace_$pol.json STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 60 $B/bin40/bench_gpu_potrf --sizes 8192 --precisions d --uplos L --modes resident --peers none --repetitions 2 > $L/trace_$pol.txt 2>&1; echo "trace $pol rc=$?"; grep -E "^ +[0-9]+ " $L/trace_$pol.txt | cut -c1-110
  pack
done
for pol in dmdas lookahead; do
  env TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 80 $B/bin40/bench_gpu_potrf --sizes 30000 --precisions d --uplos L --modes resident --peers resident --repetitions 2 > $L/big_$pol.txt 2>&1; echo "big $pol rc=$?"; grep -E "^ +[0-9]+ " $L/big_$pol.txt | cut -c1-110
  pack
done
