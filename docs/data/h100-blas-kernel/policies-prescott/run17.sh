#!/usr/bin/env bash
# H100 host, cpu mode (16 CPU workers): one-shot CLI processes at n = 4000 on empty perf-model
# directories for each scheduling policy and tile size; LAPACKE and the warm process alongside.
set -u
root=$PWD
cd .bundle && tar xJf bundle16.tar.xz lib bin/tessera && tar xJf bundle17.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name --format=csv,noheader; nproc; lscpu | grep -E "Model name|Thread|Core|Socket|NUMA node\(s\)"; } > $L/machine.txt 2>&1; cat $L/machine.txt
one() {  # label, args...
  local label=$1; shift
  local d; d=$(mktemp -d)
  local w; w=$( { /usr/bin/time -f "%e" env STARPU_PERF_MODEL_DIR=$d $B/bin/tessera potrf --n 4000 --mode cpu --json --no-check "$@" > $L/one_${label}.json; } 2>&1 | tail -1)
  python3 -c "import json; d=json.load(open('$L/one_${label}.json')); print(f\"$label: process ${w} s, start {d['startup_seconds']:.3f}, factor {d['seconds']:.3f}, nb {d['nb']}\")"
}
echo "== LAPACKE and warm Tessera (dmdas)"
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin17/bench_cpu_potrf --sizes 4000 --repetitions 3 2>&1 | tail -4
for round in 1 2 3; do
  echo "== round $round"
  for p in dmdas dmda eager prio lws ws locality-ws heteroprio modular-heft-prio; do one ${p}_$round --policy $p; done
  for nb in 192 320 384 512; do one dmdas_nb${nb}_$round --nb $nb; one eager_nb${nb}_$round --policy eager --nb $nb; done
  pack
done
echo "== warm, eager and lws"
for p in eager lws; do TESSERA_POLICY=$p STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin17/bench_cpu_potrf --sizes 4000 --repetitions 3 2>&1 | tail -2; done
pack
