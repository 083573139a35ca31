#!/usr/bin/env bash
# lookahead policy, final build: every tessera_tests test but the hybrid ones (which it refuses) under lookahead,
# with each test's time; T-res and gpu end to end under dmdas and lookahead, two rounds, one fresh process each on
# an empty perf-model directory.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle44.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib44:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
TESSERA_POLICY=lookahead STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 200 $B/bin44/tessera_tests \
  --gtest_filter='-*hybrid*:AutomaticMode.HybridTakesGpuTilesWhereTheGpusDominate' > $L/tests_lookahead.txt 2>&1
echo "tests rc $?"; grep -E "FAILED  \]" $L/tests_lookahead.txt | sed 's/, where.*//' | sort -u | head; tail -3 $L/tests_lookahead.txt
grep -E "OK \] .*\(([0-9]{4,}) ms\)" $L/tests_lookahead.txt | head
pack
for round in 1 2; do for pol in dmdas lookahead; do
  env TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin44/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers resident --repetitions 3 --json $L/tres_${pol}_$round.json > $L/tres_${pol}_$round.txt 2>&1; echo "$pol round $round rc=$?"; grep -E "^ +[0-9]+ " $L/tres_${pol}_$round.txt | cut -c1-110
  pack
done; done
