#!/bin/bash
# One device call: the caller's-stream path against the runtime's one task, then the tests.
set -u
R=$PWD
B=$R/.bundle
(cd "$B" && tar xf deps.tar.xz && tar xf bundle51.tar.xz) || exit 1
export LD_LIBRARY_PATH=$B/lib51:$B/lib:/usr/local/cuda/lib64 STARPU_SILENT=1 STARPU_HOSTNAME=device
L=$OUT/logs; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$L/machine.txt"; nproc >> "$L/machine.txt"
python3 --version >> "$L/machine.txt"
step() { echo "== $1 at $SECONDS s" | tee -a "$L/steps.txt"; }
fresh() { export STARPU_PERF_MODEL_DIR=$(mktemp -d); }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$B"/tessera-*.whl > "$L/pip.txt" 2>&1
export PYTHONPATH=/tmp/site
for round in 1 2; do
  step "latency device round $round"; fresh
  timeout 120 "$B/bin51/bench_call_latency" --sizes 1024,4096,8192 --repetitions 40 --restore device > "$L/latency_device_$round.txt" 2>&1
  step "python dense new round $round"; fresh
  timeout 150 python3 bench/python/bench_cholesky.py --suites dense --dense 1024,2048,4096,8192 --reps 30 --json "$L/dense_new_$round.json" > "$L/dense_new_$round.txt" 2>&1
  step "python dense one-task round $round"; fresh
  TESSERA_TASK_GRAIN=whole-matrix timeout 150 python3 bench/python/bench_cholesky.py --suites dense --dense 1024,2048,4096,8192 --reps 30 --json "$L/dense_task_$round.json" > "$L/dense_task_$round.txt" 2>&1
done
step "latency host"; fresh
timeout 120 "$B/bin51/bench_call_latency" --sizes 1024,4096,8192 --repetitions 40 --restore host > "$L/latency_host.txt" 2>&1
step "python tests"; fresh
timeout 200 python3 -m pytest -q python/tests > "$L/python_tests.txt" 2>&1; echo "rc $?" >> "$L/python_tests.txt"
step "tessera_tests"; fresh
timeout 400 "$B/bin51/tessera_tests" > "$L/tests.txt" 2>&1; echo "rc $?" >> "$L/tests.txt"
step done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
tail -5 "$L/tests.txt"; tail -3 "$L/python_tests.txt"; cat "$L"/latency_device_1.txt; grep -A12 "dense" "$L/dense_new_1.txt" | head -30
