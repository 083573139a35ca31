#!/usr/bin/env bash
# Runs the GPU checks of a build on a machine with a GPU: the test suites (gpu and hybrid modes
# included), the command-line tool in gpu mode, and the GPU and CPU benchmarks.
#   scripts/run-gpu-suite.sh BIN_DIR LOG_DIR [bench sizes, default 4096,8192,16384,30000,40000]
# BIN_DIR holds the binaries (tessera, tessera_tests, tessera_attach_test, bench_gpu_potrf,
# bench_cpu_potrf); logs and JSON go to LOG_DIR. StarPU's perf models persist in
# $STARPU_PERF_MODEL_DIR when set.
set -uo pipefail
bin=$1
logs=$2
sizes=${3:-4096,8192,16384,30000,40000}
mkdir -p "$logs"
export STARPU_SILENT=1
status=0
step() { echo "== $*"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$bin/tessera" info | tee "$logs/info.txt"

step "test suite"
"$bin/tessera_tests" --gtest_brief=1 >"$logs/tests.txt" 2>&1 || status=1
tail -n 5 "$logs/tests.txt"
"$bin/tessera_attach_test" --gtest_brief=1 >"$logs/attach.txt" 2>&1 || status=1
tail -n 2 "$logs/attach.txt"

step "command-line tool, gpu mode"
"$bin/tessera" potrf --n 16384 --mode gpu --json | tee "$logs/cli.json" || status=1

step "GPU benchmark"
"$bin/bench_gpu_potrf" --sizes "$sizes" --json "$logs/bench_gpu.json" 2>&1 | tee "$logs/bench_gpu.txt" || status=1

step "CPU benchmark"
"$bin/bench_cpu_potrf" --sizes 4000,8000,12000 --json "$logs/bench_cpu.json" 2>&1 | tee "$logs/bench_cpu.txt" || status=1
exit $status
