. .device80/common.sh
tar xJf .bundle/b82.tar.xz -C $B
L82=$B/lib82:$B/lib:/usr/local/cuda/lib64
lscpu | grep -E "^CPU\(s\)|Model name" > $log/machine.txt
# Tests of the final build
LD_LIBRARY_PATH=$L82 STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 280 $B/bin82/tessera_tests > $log/tests.txt 2>&1; echo "rc $?" >> $log/tests.txt
LD_LIBRARY_PATH=$L82 timeout 100 $B/bin82/tessera_cuda_kernel_tests > $log/kernel-tests.txt 2>&1; echo "rc $?" >> $log/kernel-tests.txt
LD_LIBRARY_PATH=$L82 STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin82/tessera_process_tests --gtest_filter='Requests.*:IdleWorkers.*' > $log/process-tests.txt 2>&1; echo "rc $?" >> $log/process-tests.txt
for c in a_core_left_for_the_caller_with_gpus ncpu_capped_at_cpus blas_kernel_reported; do
  (cd $(mktemp -d) && STARPU_SILENT=1 LD_LIBRARY_PATH=$L82 timeout 120 bash $OLDPWD/tests/cli/cli_test.sh $B/bin82/tessera $c none) >> $log/cli-tests.txt 2>&1; echo "rc $? $c" >> $log/cli-tests.txt
done
# cpu one shot: before (b63babc: 16 workers, polled wait) and final (15 workers, woken wait), default workers
export OPENBLAS_CORETYPE=SkylakeX
for r in 1 2 3; do for v in 80 82; do
  LL=$L; [ $v = 82 ] && LL=$L82
  for n in 4000 8000; do
    PM=$(mktemp -d)
    STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$LL timeout 60 $B/bin$v/tessera potrf --n $n --mode cpu --json --no-check > $log/cpu$n-$v-$r.json 2>&1
  done
done; done
# warm: LAPACKE (16 threads) against the final build's default workers
for r in 1 2; do
  STARPU_PERF_MODEL_DIR=$(mktemp -d) LD_LIBRARY_PATH=$L82 timeout 120 $B/bin82/bench_cpu_potrf --sizes 4000,8000 --repetitions 5 >> $log/bench-cpu.txt 2>&1
done
unset OPENBLAS_CORETYPE
python3 - $log > $log/cpu-summary.txt <<'PY'
import json,sys,glob
log=sys.argv[1]
for n in (4000,8000):
  for v in ('80','82'):
    rows=[]
    for f in sorted(glob.glob(f'{log}/cpu{n}-{v}-*.json')):
      try:
        d=json.loads(open(f).read().strip().splitlines()[-1]); rows.append('%.3f+%.4f=%.4f (%d workers)'%(d['startup_seconds'],d['seconds'],d['startup_seconds']+d['seconds'],d['workers']['cpu']))
      except Exception: rows.append('ERR')
    print(n, 'b63babc' if v=='80' else 'final  ', ' | '.join(rows))
PY
# GPU one shot, final build
mkdir -p $B/final/bin
ln -sf $B/bin82/tessera $B/final/tessera; ln -sf $B/bin82/cusolver_oneshot $B/final/bin/cusolver_oneshot
for r in 1 2; do
  echo "round $r" >> $log/oneshot.txt
  LD_LIBRARY_PATH=$L82 timeout 150 bash bench/oneshot.sh $B/final 8192 20000 30000 >> $log/oneshot.txt 2>&1
done
