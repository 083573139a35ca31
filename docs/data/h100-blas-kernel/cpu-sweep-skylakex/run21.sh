#!/usr/bin/env bash
# H100 host, cpu mode with OpenBLAS's SkylakeX kernel (the command sets it): one-shot processes at
# n = 4000 and 8000 on empty perf-model directories for each policy and tile size.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle19.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib19:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
one() {  # label, args...
  local label=$1; shift
  local d; d=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$d $B/bin19/tessera potrf --mode cpu --json --no-check "$@" > $L/one_${label}.json
  python3 -c "import json; d=json.load(open('$L/one_${label}.json')); print(f\"$label: start {d['startup_seconds']:.3f}, call {d['seconds']:.3f}, sum {d['startup_seconds']+d['seconds']:.3f}\")"
}
for round in 1 2; do
  for n in 4000 8000; do
    for p in dmdas eager prio lws heteroprio; do one n${n}_${p}_$round --n $n --policy $p; done
    for nb in 192 320 384 512 640; do one n${n}_dmdas_nb${nb}_$round --n $n --nb $nb; done
  done
  pack
done
echo "-- LAPACKE and warm"; STARPU_PERF_MODEL_DIR=$(mktemp -d) OPENBLAS_CORETYPE=SkylakeX timeout 100 $B/bin19/bench_cpu_potrf --sizes 4000,8000 --repetitions 5 2>&1 | tail -2
pack
