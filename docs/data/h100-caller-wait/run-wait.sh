. .device80/common.sh
tar xJf .bundle/b81.tar.xz -C $B
L81=$B/lib81:$B/lib:/usr/local/cuda/lib64
export OPENBLAS_CORETYPE=SkylakeX
# cpu one shot: before (polling CLI) and after, 16 and 15 workers
for r in 1 2 3; do for c in 16 15; do
  for v in 80 81; do
    PM=$(mktemp -d); LL=$L; [ $v = 81 ] && LL=$L81
    STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$LL timeout 60 $B/bin$v/tessera potrf --n 4000 --mode cpu --ncpu $c --json --no-check > $log/cpu4000-$v-$c-$r.json 2>&1
    STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$LL timeout 60 $B/bin$v/tessera potrf --n 8000 --mode cpu --ncpu $c --json --no-check > $log/cpu8000-$v-$c-$r.json 2>&1
  done
done; done
# 8 cores: warm calls with 8 and 7 workers, LAPACKE with 8 threads
for r in 1 2; do for c in 8 7; do
  PM=$(mktemp -d)
  STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$L81 timeout 60 taskset -c 0-7 $B/bin81/cpucall $c 4000 9 - 8 >> $log/warm8.txt 2>&1
  STARPU_PERF_MODEL_DIR=$PM LD_LIBRARY_PATH=$L81 timeout 60 taskset -c 0-7 $B/bin81/cpucall $c 8000 5 - 8 >> $log/warm8.txt 2>&1
done; done
# GPU one shot (default mode): before / after
unset OPENBLAS_CORETYPE
mkdir -p $B/before/bin $B/after/bin
ln -sf $B/bin80/tessera $B/before/tessera; ln -sf $B/bin81/cusolver_oneshot $B/before/bin/cusolver_oneshot
ln -sf $B/bin81/tessera $B/after/tessera; ln -sf $B/bin81/cusolver_oneshot $B/after/bin/cusolver_oneshot
for r in 1 2 3; do
  echo "round $r before" >> $log/oneshot.txt
  LD_LIBRARY_PATH=$L timeout 150 bash bench/oneshot.sh $B/before 8192 20000 30000 >> $log/oneshot.txt 2>&1
  echo "round $r after" >> $log/oneshot.txt
  LD_LIBRARY_PATH=$L81 timeout 150 bash bench/oneshot.sh $B/after 8192 20000 30000 >> $log/oneshot.txt 2>&1
done
python3 - $log > $log/cpu-summary.txt <<'PY'
import json,sys,glob,os
log=sys.argv[1]
for n in (4000,8000):
  for v in ('80','81'):
    for c in ('16','15'):
      rows=[]
      for f in sorted(glob.glob(f'{log}/cpu{n}-{v}-{c}-*.json')):
        try: d=json.loads(open(f).read().strip().splitlines()[-1]); rows.append('%.3f+%.4f'%(d['startup_seconds'],d['seconds']))
        except Exception as e: rows.append('ERR')
      print(n, 'before' if v=='80' else 'after ', c, ' '.join(rows))
PY
