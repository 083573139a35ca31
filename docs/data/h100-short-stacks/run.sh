#!/bin/bash
# Short stacks of larger matrices: the factorization through the dense device API one by one
# (this package) against the batched kernels, the solves both ways; the Python tests.
set -u
B=$PWD/.bundle
(cd "$B" && tar xf deps.tar.xz && tar xf bundle52.tar.xz) || exit 1
L=$OUT/logs; mkdir -p "$L"
export LD_LIBRARY_PATH=$B/lib52:$B/lib:/usr/local/cuda/lib64 STARPU_SILENT=1 STARPU_HOSTNAME=device
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$B"/tessera-*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site STARPU_PERF_MODEL_DIR=$(mktemp -d)
timeout 200 python3 bench/python/bench_cholesky.py --suites batched --precisions d,s --batched 1x64,1x128,1x256,1x512,1x768,1x1000,4x512,4x1000,16x512,16x1000,64x512,64x1000,256x256,256x512 --reps 20 > "$L/batched_short.txt" 2>&1
timeout 100 python3 .device51/solve_probe.py > "$L/solve_probe.txt" 2>&1
export STARPU_PERF_MODEL_DIR=$(mktemp -d)
timeout 150 python3 -m pytest -q python/tests > "$L/python_tests.txt" 2>&1; echo "rc $?" >> "$L/python_tests.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs
grep -E "^ +[0-9]+ +[0-9]+ \|" "$L/batched_short.txt"; cat "$L/solve_probe.txt"; tail -3 "$L/python_tests.txt"
