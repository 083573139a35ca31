#!/usr/bin/env bash
# H100 host: the OpenBLAS kernel the CLI runs now (it starts again with OPENBLAS_CORETYPE where
# OpenBLAS chose a kernel without the CPU's vector units), against the kernel OpenBLAS chooses.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle19.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib19:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; grep -m1 "model name" /proc/cpuinfo; grep -m1 -w model /proc/cpuinfo; } > $L/machine.txt 2>&1; cat $L/machine.txt
$B/bin19/tessera info | tail -3 | tee $L/info.txt
$B/bin19/tessera info --json > $L/info.json
OPENBLAS_CORETYPE=Prescott $B/bin19/tessera info | tail -2
echo "== the command's own start: tessera --version, 10 processes each (s)"
for v in restart preset; do
  t0=$(date +%s.%N)
  for i in $(seq 10); do if [ $v = preset ]; then OPENBLAS_CORETYPE=SkylakeX $B/bin19/tessera --version >/dev/null; else $B/bin19/tessera --version > /dev/null; fi; done
  t1=$(date +%s.%N); echo "$v: $(python3 -c "print(round(($t1-$t0)/10, 4))") s per process"
done
one() {  # label, env-assignment, args...
  local label=$1 e=$2; shift 2
  local d; d=$(mktemp -d)
  local w; w=$( { /usr/bin/time -f "%e" env $e STARPU_PERF_MODEL_DIR=$d $B/bin19/tessera potrf --json --no-check "$@" > $L/one_${label}.json; } 2>&1 | tail -1)
  python3 -c "import json; d=json.load(open('$L/one_${label}.json')); print(f\"$label: process ${w} s, start {d['startup_seconds']:.3f}, call {d['seconds']:.3f}, mode {d['mode']}, nb {d['nb']}\")"
}
echo "== one shot, fresh perf-model directories: cpu mode n=4000 and 8000, default mode n=8192"
for round in 1 2 3; do
  one cpu4000_prescott_$round OPENBLAS_CORETYPE=Prescott --n 4000 --mode cpu
  one cpu4000_now_$round X=1 --n 4000 --mode cpu
  one cpu8000_prescott_$round OPENBLAS_CORETYPE=Prescott --n 8000 --mode cpu
  one cpu8000_now_$round X=1 --n 8000 --mode cpu
  one gpu8192_prescott_$round OPENBLAS_CORETYPE=Prescott --n 8192
  one gpu8192_now_$round X=1 --n 8192
done
pack
echo "== LAPACKE and Tessera cpu mode in one warm process, each kernel (16 threads)"
for core in Prescott SkylakeX Cooperlake; do
  for round in 1 2; do
    echo "-- $core round $round"
    OPENBLAS_CORETYPE=$core STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 150 $B/bin19/bench_cpu_potrf --sizes 4000,8000 --repetitions 5 2>&1 | tail -2 | tee -a $L/bench_cpu_$core.txt
  done
done
pack
