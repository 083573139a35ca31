#!/usr/bin/env bash
# Runs the GPU checks of a build on a machine with a GPU: the test suites (gpu and hybrid modes
# included), the command-line tool in gpu mode, batched mode, the LAPACK interposer, and the GPU
# and CPU benchmarks.
#   scripts/run-gpu-suite.sh BIN_DIR LOG_DIR [bench sizes, default 4096,8192,16384,30000,40000]
# BIN_DIR holds the binaries (tessera, tessera_tests, tessera_attach_test,
# tessera_cuda_kernel_tests, tessera_cuda_device_tests, bench_gpu_potrf, bench_cpu_potrf, bench_lapack_potrf,
# libtessera_lapack.so and libtessera_lapack_backend.so, which it loads from its own directory); logs and JSON go to LOG_DIR. StarPU's perf models persist in
# $STARPU_PERF_MODEL_DIR when set. SKIP_CPU_BENCH=1 leaves the CPU benchmark out.
set -uo pipefail
bin=$1
logs=$2
sizes=${3:-4096,8192,16384,30000,40000}
mkdir -p "$logs"
export STARPU_SILENT=1
status=0
step() { echo "== $*"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader
"$bin/tessera" info | tee "$logs/info.txt"

step "test suites"
"$bin/tessera_tests" --gtest_brief=1 >"$logs/tests.txt" 2>&1 || status=1
grep -E "FAILED|tests ran|PASSED|SKIPPED \]" "$logs/tests.txt" | tail -n 12
"$bin/tessera_attach_test" --gtest_brief=1 >"$logs/attach.txt" 2>&1 || status=1
tail -n 2 "$logs/attach.txt"
[ -x "$bin/tessera_cuda_kernel_tests" ] && "$bin/tessera_cuda_kernel_tests" --gtest_brief=1 >"$logs/kernel_tests.txt" 2>&1 || status=1
grep -E "FAILED|tests ran|PASSED" "$logs/kernel_tests.txt" | tail -n 6
[ -x "$bin/tessera_cuda_device_tests" ] && "$bin/tessera_cuda_device_tests" --gtest_brief=1 >"$logs/device_tests.txt" 2>&1 || status=1
grep -E "FAILED|tests ran|PASSED" "$logs/device_tests.txt" | tail -n 6

step "command-line tool, gpu mode"
"$bin/tessera" potrf --n 30000 --mode gpu --json | tee "$logs/cli.json" || status=1

step "batched mode through the runtime"
for n in 8 32 64 128 512; do
  count=10000; [ "$n" -ge 256 ] && count=1000
  "$bin/tessera" batched --n "$n" --count "$count" --mode gpu --json || status=1
done 2>&1 | tee "$logs/batched.txt"

step "GPU benchmark"
"$bin/bench_gpu_potrf" --sizes "$sizes" --json "$logs/bench_gpu.json" 2>&1 | tee "$logs/bench_gpu.txt" || status=1

step "GPU kernels: vendor only against the perf models' choice (custom and vendor), tiles on the GPU"
"$bin/bench_gpu_potrf" --sizes 8192,30000 --modes none --gpu-kernels vendor,any --json "$logs/bench_kernels.json" 2>&1 \
  | tee "$logs/bench_kernels.txt" || status=1

step "LAPACK interposer: system LAPACK, then Tessera in gpu mode"
"$bin/bench_lapack_potrf" --sizes 2000,4000,8000 --reps 3 2>&1 | tee "$logs/lapack_system.txt"
LD_PRELOAD="$bin/libtessera_lapack.so" TESSERA_MODE=gpu TESSERA_LAPACK_MIN_N=0 TESSERA_LAPACK_VERBOSE=1 \
  "$bin/bench_lapack_potrf" --sizes 2000,4000,8000 --reps 3 2>&1 | tail -n 8 | tee "$logs/lapack_tessera.txt"

if [ "${SKIP_CPU_BENCH:-0}" != 1 ]; then
  step "CPU benchmark"
  "$bin/bench_cpu_potrf" --sizes 4000,8000,12000 --json "$logs/bench_cpu.json" 2>&1 | tee "$logs/bench_cpu.txt" || status=1
fi
exit $status
