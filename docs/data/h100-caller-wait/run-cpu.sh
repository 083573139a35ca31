. .device80/common.sh
export OPENBLAS_CORETYPE=SkylakeX
lscpu > $log/lscpu.txt
LD_LIBRARY_PATH=$L timeout 60 $B/bin80/cpuk 16 > $log/cpuk.txt 2>&1
for pol in dmdas lws prio; do
  PM=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$PM TESSERA_POLICY=$pol LD_LIBRARY_PATH=$L timeout 90 $B/bin80/bench_cpu_potrf --sizes 4000,8000 --repetitions 5 > $log/warm-$pol.txt 2>&1
done
for nb in 192 224 320; do
  PM=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$PM TESSERA_NB=$nb LD_LIBRARY_PATH=$L timeout 90 $B/bin80/bench_cpu_potrf --sizes 4000 --repetitions 5 > $log/warm-nb$nb.txt 2>&1
done
for r in 1 2 3; do
  PM=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$L timeout 60 $B/bin80/tessera potrf --n 4000 --mode cpu --json --no-check --trace $log/trace-one-$r.json > $log/one-$r.json 2> $log/one-$r.err
done
PM=$(mktemp -d)
STARPU_PERF_MODEL_DIR=$PM TESSERA_TRACE=$log/trace-warm.json LD_LIBRARY_PATH=$L timeout 90 $B/bin80/bench_cpu_potrf --sizes 4000 --repetitions 3 > $log/warm-traced.txt 2>&1
