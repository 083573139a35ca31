#!/usr/bin/env bash
# H100 host: the CPU's vector extensions, the OpenBLAS kernel chosen, and LAPACKE / Tessera cpu mode with each kernel forced.
set -u
root=$PWD
cd .bundle && tar xJf bundle16.tar.xz lib bin/tessera && tar xJf bundle18.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64
grep -o -w 'avx512f\|avx512dq\|avx512vl\|avx2\|fma\|avx' /proc/cpuinfo | sort | uniq -c
grep -m1 "model name\|cpu MHz" /proc/cpuinfo; grep -m1 "cpu MHz" /proc/cpuinfo; grep -m1 -w "model" /proc/cpuinfo; grep -m1 "cpu family" /proc/cpuinfo
$B/bin18/corename
for core in "" Haswell SkylakeX SapphireRapids Cooperlake; do
  echo "== OPENBLAS_CORETYPE=$core"
  env ${core:+OPENBLAS_CORETYPE=$core} $B/bin18/corename | head -1
  env ${core:+OPENBLAS_CORETYPE=$core} STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin18/bench_cpu_potrf --sizes 4000,8000 --repetitions 3 2>&1 | tail -2
  d=$(mktemp -d); env ${core:+OPENBLAS_CORETYPE=$core} STARPU_PERF_MODEL_DIR=$d $B/bin/tessera potrf --n 4000 --mode cpu --json --no-check | python3 -c "import json,sys; d=json.load(sys.stdin); print('one shot: start', round(d['startup_seconds'],3), 'factor', round(d['seconds'],3))"
done
