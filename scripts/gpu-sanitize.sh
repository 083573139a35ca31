#!/usr/bin/env bash
# Runs the GPU tests under NVIDIA's compute-sanitizer: memcheck (out-of-bounds and misaligned
# device accesses, leaks of device memory), racecheck (shared-memory hazards) and synccheck
# (misused barriers and warp synchronization), then prints each tool's summary per binary.
#   scripts/gpu-sanitize.sh BIN_DIR LOG_DIR
# BIN_DIR: a build directory of a CUDA build (tests in BIN_DIR/tests/...), or a directory holding
# the binaries themselves (as for scripts/run-gpu-suite.sh). Logs go to LOG_DIR.
# Binaries: tessera_cuda_kernel_tests (Tessera's kernels without StarPU; their quick sizes),
# tessera_cuda_device_tests (the device-resident batched API; memcheck only: it adds global-memory
# addressing to the same kernels) and tessera_tests filtered to the gpu and hybrid cases. racecheck and synccheck slow kernels down
# by two orders of magnitude, so they run a lighter filter. Environment, to change what runs:
#   GPU_SANITIZE_TOOLS     (memcheck racecheck synccheck)
#   GPU_SANITIZE_FILTER    gtest filter of tessera_tests under memcheck
#   GPU_SANITIZE_LIGHT_FILTER  the same under racecheck and synccheck
# Exit status 1 when a tool reported an error or a test failed under it.
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BIN_DIR LOG_DIR" >&2
  exit 2
fi
bin=$1
logs=$2
mkdir -p "$logs"
sanitizer=$(command -v compute-sanitizer || true)
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -n "$sanitizer" ] || { [ -x "$candidate" ] && sanitizer=$candidate; }
done
[ -n "$sanitizer" ] || { echo "compute-sanitizer not found (CUDA toolkit's bin directory on PATH?)" >&2; exit 2; }

tools=(${GPU_SANITIZE_TOOLS:-memcheck racecheck synccheck})
full_filter=${GPU_SANITIZE_FILTER:-'*gpu*:*Gpu*:*hybrid*'}
light_filter=${GPU_SANITIZE_LIGHT_FILTER:-'AllModes/Factorization.SolvesHaveSmallResiduals/*gpu*:Errors.NotPositiveDefiniteOnGpu:AllModes/BatchedModes.*gpu'}

# StarPU quiet, few CPU workers (the GPU is what is checked); the kernel tests' small sizes.
export STARPU_SILENT=1 STARPU_NCPU=${STARPU_NCPU:-2} TESSERA_TILE_TEST_QUICK=1 TESSERA_BATCHED_TEST_QUICK=1

find_binary() {
  local name=$1 dir
  for dir in "$bin" "$bin/tests" "$bin/tests/cuda"; do
    [ -x "$dir/$name" ] && { echo "$dir/$name"; return 0; }
  done
  return 1
}

status=0
summary=()
run() {  # run TOOL NAME BINARY [ARGS...]
  local tool=$1 name=$2 binary=$3
  shift 3
  local log=$logs/$tool-$name.log out=$logs/$tool-$name.out extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  echo "== $tool: $name $*"
  local start=$SECONDS
  "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 200 --log-file "$log" \
    "$binary" "$@" >"$out" 2>&1
  local rc=$?
  local line
  line=$(grep -hE '(ERROR|RACECHECK) SUMMARY' "$log" | tail -n 1)
  local tests
  tests=$(grep -hE '^\[  (PASSED|FAILED|SKIPPED) +\]' "$out" | tr '\n' ' ')
  summary+=("$(printf '%-9s %-26s rc=%-3s %4ss  %s  %s' "$tool" "$name" "$rc" $((SECONDS - start)) "${line:-no summary (see $log)}" "$tests")")
  [ $rc -eq 0 ] || status=1
}

kernels=$(find_binary tessera_cuda_kernel_tests) || echo "tessera_cuda_kernel_tests not found under $bin (a CUDA build?)"
device=$(find_binary tessera_cuda_device_tests) || echo "tessera_cuda_device_tests not found under $bin (a CUDA build?)"
library=$(find_binary tessera_tests) || { echo "tessera_tests not found under $bin" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tee "$logs/gpu.txt"
"$sanitizer" --version | tail -n 1

for tool in "${tools[@]}"; do
  [ -n "$kernels" ] && run "$tool" kernel_tests "$kernels" --gtest_brief=1
  [ -n "$device" ] && [ "$tool" = memcheck ] && run "$tool" device_tests "$device" --gtest_brief=1
  if [ "$tool" = memcheck ]; then
    run "$tool" tessera_tests "$library" --gtest_brief=1 --gtest_filter="$full_filter"
  else
    run "$tool" tessera_tests "$library" --gtest_brief=1 --gtest_filter="$light_filter"
  fi
done

echo
echo "== compute-sanitizer summary (logs in $logs)"
printf '%s\n' "${summary[@]}"
exit $status
