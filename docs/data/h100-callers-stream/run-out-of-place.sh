#!/bin/bash
# One device call: the out-of-place dense path from Python against the previous Python package (the
# same library), then the tests.
set -u
R=$PWD
B=$R/.bundle
(cd "$B" && tar xf deps.tar.xz && tar xf bundle51.tar.xz) || exit 1
export LD_LIBRARY_PATH=$B/lib51:$B/lib:/usr/local/cuda/lib64 STARPU_SILENT=1 STARPU_HOSTNAME=device
L=$OUT/logs; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$L/machine.txt"; nproc >> "$L/machine.txt"
step() { echo "== $1 at $SECONDS s" | tee -a "$L/steps.txt"; }
fresh() { export STARPU_PERF_MODEL_DIR=$(mktemp -d); }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site_new "$B"/tessera-*.whl > /dev/null 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site_old "$B"/old/tessera-*.whl > /dev/null 2>&1
for round in 1 2; do
  for which in old new; do
    step "python dense $which round $round"; fresh
    PYTHONPATH=/tmp/site_$which timeout 150 python3 bench/python/bench_cholesky.py --suites dense --dense 1024,2048,4096,8192,16384 --reps 30 --json "$L/dense_${which}_$round.json" > "$L/dense_${which}_$round.txt" 2>&1
  done
done
step "latency device"; fresh
timeout 120 "$B/bin51/bench_call_latency" --sizes 1024,4096,8192 --repetitions 40 --restore device > "$L/latency_device.txt" 2>&1
step "python tests"; fresh
PYTHONPATH=/tmp/site_new timeout 200 python3 -m pytest -q python/tests > "$L/python_tests.txt" 2>&1; echo "rc $?" >> "$L/python_tests.txt"
step "kernel tests"; fresh
timeout 200 "$B/bin51/tessera_cuda_kernel_tests" > "$L/kernel_tests.txt" 2>&1; echo "rc $?" >> "$L/kernel_tests.txt"
step "tessera_tests"; fresh
timeout 330 "$B/bin51/tessera_tests" > "$L/tests.txt" 2>&1; echo "rc $?" >> "$L/tests.txt"
step done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
grep -E "FAILED|Failure|rc [0-9]|PASSED|passed|failed" "$L/tests.txt" "$L/kernel_tests.txt" "$L/python_tests.txt" | head -20
for f in "$L"/dense_*_1.txt; do echo "## $f"; grep -E "^ +(1024|2048|4096|8192|16384) " "$f"; done
cat "$L/latency_device.txt"
