#!/bin/bash
# One device call: tiles on the GPU as one task, the gather and scatter as one launch per 64 tiles
# (lib52) against a launch per tile (lib51), alternating; then the Python dense suite and tests.
set -u
R=$PWD
B=$R/.bundle
(cd "$B" && tar xf deps.tar.xz && tar xf bundle52.tar.xz && tar xf lib51.tar.xz) || exit 1
L=$OUT/logs; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$L/machine.txt"; nproc >> "$L/machine.txt"
export STARPU_SILENT=1 STARPU_HOSTNAME=device
step() { echo "== $1 at $SECONDS s" | tee -a "$L/steps.txt"; }
fresh() { export STARPU_PERF_MODEL_DIR=$(mktemp -d); }
with() { LD_LIBRARY_PATH=$B/$1:$B/lib:/usr/local/cuda/lib64 "${@:2}"; }
for round in 1 2 3; do
  for lib in lib51 lib52; do
    step "T-res $lib round $round"; fresh
    with $lib timeout 100 "$B/bin52/bench_gpu_potrf" --sizes 4096,8192,10240 --precisions d,s --modes resident --peers resident --repetitions 3 > "$L/tres_${lib}_$round.txt" 2>&1
  done
done
export LD_LIBRARY_PATH=$B/lib52:$B/lib:/usr/local/cuda/lib64
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$B"/tessera-*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site
step "python tests"; fresh
timeout 120 python3 -m pytest -q python/tests > "$L/python_tests.txt" 2>&1; echo "rc $?" >> "$L/python_tests.txt"
step "python dense"; fresh
timeout 200 python3 bench/python/bench_cholesky.py --suites dense --dense 1024,2048,4096,8192,16384,20000,30000 --reps 10 --json "$L/dense_final.json" > "$L/dense_final.txt" 2>&1
step done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
tail -2 "$L/python_tests.txt"
cat "$L/tres_lib52_1.txt" | tail -25
grep -E "^ +(1024|2048|4096|8192|16384|20000|30000) " "$L/dense_final.txt"
