. .device80/common.sh
export OPENBLAS_CORETYPE=SkylakeX
for r in 1 2; do for c in 16 15; do
  PM=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$L timeout 60 $B/bin80/cpucall $c 4000 9 $log/warm-trace-$c-$r.json >> $log/warm.txt 2>&1
  STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$L timeout 60 $B/bin80/cpucall $c 8000 5 >> $log/warm.txt 2>&1
done; done
for r in 1 2 3 4; do for c in 16 15; do
  PM=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$L timeout 60 $B/bin80/tessera potrf --n 4000 --mode cpu --ncpu $c --json --no-check --trace $log/one-trace-$c-$r.json > $log/one-$c-$r.json 2>&1
done; done
