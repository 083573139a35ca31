#!/usr/bin/env bash
# lookahead policy: its tests on the GPU; T-res and gpu end to end under dmdas (default), lookahead and
# critical-path-heft, one fresh process each on an empty perf-model directory, two rounds; traces at 8192.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle41.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib41:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_POLICY=lookahead timeout -k 10 150 $B/bin41/tessera_tests --gtest_brief=1 \
  --gtest_filter='Policies.*:Trace.*:AllModes/Factorization.*:Errors.NotPositive*' > $L/tests_lookahead.txt 2>&1
echo "tests rc $?"; grep -E "FAILED|Failure" $L/tests_lookahead.txt | head -8; tail -3 $L/tests_lookahead.txt
pack
for round in 1 2 3; do for pol in dmdas lookahead; do
  env TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin41/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers resident --repetitions 3 --json $L/tres_${pol}_$round.json > $L/tres_${pol}_$round.txt 2>&1; echo "$pol round $round rc=$?"; grep -E "^ +[0-9]+ " $L/tres_${pol}_$round.txt | cut -c1-110
  pack
done; done
for w in 3 6; do
  env TESSERA_POLICY=lookahead TESSERA_WORKERS_PER_CUDA=$w STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin41/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident --peers resident --repetitions 3 > $L/tres_w$w.txt 2>&1; echo "lookahead workers $w rc=$?"; grep -E "^ +[0-9]+ " $L/tres_w$w.txt | cut -c1-110
  pack
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > $L/clocks.csv 2>&1 &
smi=$!
env TESSERA_POLICY=lookahead TESSERA_TRACE=$L/trace_lookahead.json STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 60 $B/bin41/bench_gpu_potrf --sizes 8192 --precisions d --uplos L --modes resident --peers resident --repetitions 2 > $L/trace_lookahead.txt 2>&1; echo "trace rc=$?"; grep -E "^ +[0-9]+ " $L/trace_lookahead.txt | cut -c1-110
kill $smi
pack
STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_POLICY=lookahead timeout -k 10 200 $B/bin41/tessera_tests --gtest_brief=1 \
  --gtest_filter='Errors.*:Staged.*:Device*:Concurrency.*:CApi.*' > $L/tests2_lookahead.txt 2>&1
echo "tests2 rc $?"; grep -E "FAILED|Failure" $L/tests2_lookahead.txt | head -8; tail -3 $L/tests2_lookahead.txt
pack
for pol in dmdas lookahead; do
  env TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 80 $B/bin41/bench_gpu_potrf --sizes 30000 --precisions d --uplos L --modes resident --peers resident --repetitions 2 > $L/big_$pol.txt 2>&1; echo "big $pol rc=$?"; grep -E "^ +[0-9]+ " $L/big_$pol.txt | cut -c1-110
  pack
done
