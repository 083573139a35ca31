#!/usr/bin/env bash
# lookahead policy, final build: every tessera_tests test under the default policy and under lookahead; T-res
# and gpu end to end under dmdas and lookahead with 4 and 6 workers per GPU (one fresh process each on an empty
# perf-model directory, two rounds); 30000 resident under both.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle42.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib42:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
for pol in default lookahead; do
  if [ $pol = default ]; then P=""; else P="TESSERA_POLICY=$pol"; fi
  env $P STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 240 $B/bin42/tessera_tests --gtest_brief=1 > $L/tests_$pol.txt 2>&1
  echo "tests $pol rc $?"; grep -E "FAILED|Failure" $L/tests_$pol.txt | head -8; tail -3 $L/tests_$pol.txt
  pack
done
for round in 1 2; do for cfg in dmdas:4 lookahead:4 lookahead:6 dmdas:6; do
  pol=${cfg%:*}; w=${cfg#*:}
  env TESSERA_POLICY=$pol TESSERA_WORKERS_PER_CUDA=$w STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin42/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers resident --repetitions 3 --json $L/tres_${pol}_w${w}_$round.json > $L/tres_${pol}_w${w}_$round.txt 2>&1; echo "$pol workers $w round $round rc=$?"; grep -E "^ +[0-9]+ " $L/tres_${pol}_w${w}_$round.txt | cut -c1-110
  pack
done; done
for pol in dmdas lookahead; do
  env TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 80 $B/bin42/bench_gpu_potrf --sizes 30000 --precisions d --uplos L --modes resident --peers resident --repetitions 2 > $L/big_$pol.txt 2>&1; echo "big $pol rc=$?"; grep -E "^ +[0-9]+ " $L/big_$pol.txt | cut -c1-110
  pack
done
