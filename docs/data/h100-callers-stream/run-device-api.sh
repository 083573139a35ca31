#!/bin/bash
# One device call: the final build's Python tests, and the device API against cuSOLVER in both
# precisions.
set -u
B=$PWD/.bundle
(cd "$B" && tar xf deps.tar.xz && tar xf bundle52.tar.xz) || exit 1
L=$OUT/logs; mkdir -p "$L"
export LD_LIBRARY_PATH=$B/lib52:$B/lib:/usr/local/cuda/lib64 STARPU_SILENT=1 STARPU_HOSTNAME=device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$L/machine.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$B"/tessera-*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site
export STARPU_PERF_MODEL_DIR=$(mktemp -d)
timeout 120 python3 -m pytest -q python/tests > "$L/python_tests.txt" 2>&1; echo "rc $?" >> "$L/python_tests.txt"
for round in 1 2; do
  export STARPU_PERF_MODEL_DIR=$(mktemp -d)
  timeout 150 "$B/bin52/bench_gpu_potrf" --sizes 4096,8192,16384 --precisions d,s --uplos L,U --modes device --peers resident --repetitions 5 > "$L/device_api_$round.txt" 2>&1
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
tail -2 "$L/python_tests.txt"; cat "$L/device_api_1.txt"; grep -E "^ +[0-9]+  [LU] " "$L/device_api_2.txt"
