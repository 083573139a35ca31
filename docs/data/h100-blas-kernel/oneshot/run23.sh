#!/usr/bin/env bash
# One GPU, final build: bench/oneshot.sh at 20000 and 30000 with the command's OpenBLAS restart
# (nothing set), without it (OPENBLAS_CORETYPE=SkylakeX set), and on Prescott (the kernel OpenBLAS
# chooses alone here); each process also timed whole (/usr/bin/time).
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle22.tar.xz && tar xJf bundle23.tar.xz && cd "$root"
B=$root/.bundle
mkdir -p $B/bin23/bin && cp $B/bin22/tessera $B/bin23/tessera
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib22:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
for round in 1 2; do
  for v in restart preset prescott; do
    case $v in restart) e=X=1;; preset) e=OPENBLAS_CORETYPE=SkylakeX;; prescott) e=OPENBLAS_CORETYPE=Prescott;; esac
    echo "== $v, round $round"
    env $e bash bench/oneshot.sh $B/bin23 20000 30000 2>&1 | tee $L/oneshot_${v}_$round.txt | grep -E "^ +[0-9]+ \|"
    d=$(mktemp -d); w=$( { /usr/bin/time -f "%e" env $e STARPU_PERF_MODEL_DIR=$d $B/bin23/tessera potrf --n 20000 --json --no-check > $L/p_${v}_$round.json; } 2>&1 | tail -1)
    echo "   whole process at 20000: $w s"
  done
  pack
done
