#!/usr/bin/env bash
# Builds Tessera's libFuzzer targets (fuzz/) with Clang, AddressSanitizer and UBSan in a build
# directory of their own, and runs each for a bounded time on its seed corpus (fuzz/corpus/<target>,
# only read). See docs/reliability.md.
#   scripts/fuzz.sh [target ...]          targets: matrix_market c_api environment (default: all three)
# Environment: FUZZ_SECONDS (60 of one core per target), FUZZ_BUILD_DIR (build-fuzz).
# New inputs go to $FUZZ_BUILD_DIR/corpus/<target>; a crash, leak, timeout or violated invariant
# leaves its input in $FUZZ_BUILD_DIR/crashes/<target>/ and makes the script fail.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TESSERA_FUZZ_DEPS=1 ./scripts/install-deps.sh
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(matrix_market c_api environment)

# shellcheck source=scripts/cmake_generator.sh
. scripts/cmake_generator.sh
# -O1 and line tables only (-g1), as scripts/sanitize.sh builds.
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" $(cmake_generator_option "$build_dir") -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTESSERA_CUDA=OFF \
  -DTESSERA_SANITIZE=ON -DTESSERA_FUZZ=ON -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF \
  -DTESSERA_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >"$build_dir/build.log" 2>&1 \
  || { tail -n 40 "$build_dir/build.log"; exit 1; }

export STARPU_SILENT=1
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-14/bin/llvm-symbolizer}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0}
# hwloc's PCI plugin (Debian's libhwloc-plugins, which Open MPI brings in) leaks from inside a
# module hwloc unloads again, so the leak has no frame a suppression could name. These runs use
# no GPU and need no PCI discovery: the plugin stays unloaded.
export HWLOC_PLUGINS_BLACKLIST=${HWLOC_PLUGINS_BLACKLIST:-hwloc_pci}
# The targets run side by side, each for as long as gives it FUZZ_SECONDS of one core: on fewer
# cores than targets, they share them for proportionally longer.
cores=$(nproc)
running=$(( ${#targets[@]} < cores ? ${#targets[@]} : cores ))
wall=$(( (seconds * ${#targets[@]} + running - 1) / running ))
fuzz_one() {
  local target=$1
  local corpus=$build_dir/corpus/$target crashes=$build_dir/crashes/$target
  mkdir -p "$corpus" "$crashes"
  # -timeout: an input running 20 s is a hang; -rss_limit_mb: StarPU and AddressSanitizer's
  # shadow memory need more than libFuzzer's default 2 GiB.
  "$build_dir/fuzz/fuzz_$target" "$corpus" "fuzz/corpus/$target" -max_total_time="$wall" -timeout=20 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/" >"$build_dir/fuzz_$target.log" 2>&1
}
echo "== ${targets[*]/#/fuzz_}: side by side, ${wall} s on ${cores} cores (${seconds} s of a core each)"
pids=()
for target in "${targets[@]}"; do
  fuzz_one "$target" &
  pids+=($!)
done
status=0
for k in "${!targets[@]}"; do
  target=${targets[$k]}
  crashes=$build_dir/crashes/$target
  echo "== fuzz_$target"
  if ! wait "${pids[$k]}"; then
    status=1
    echo "fuzz_$target FAILED; input(s) in $crashes:"
    ls "$crashes"
    grep -E 'ERROR|invariant violated|SUMMARY|runtime error' "$build_dir/fuzz_$target.log" | head -n 20 || true
  fi
  grep -E '^#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb' \
    "$build_dir/fuzz_$target.log" || true
done
exit $status
