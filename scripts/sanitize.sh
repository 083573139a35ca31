#!/usr/bin/env bash
# Builds Tessera with AddressSanitizer and UndefinedBehaviorSanitizer (TESSERA_SANITIZE=ON, GCC)
# in a build directory of its own and runs the test suite under them. See docs/reliability.md.
#   scripts/sanitize.sh [extra ctest arguments]
# CPU only (TESSERA_CUDA=OFF): the CUDA kernels take minutes to compile and CI has no GPU to run
# them; scripts/gpu-sanitize.sh checks them with compute-sanitizer on a GPU machine. StarPU,
# OpenBLAS and hwloc run uninstrumented inside the sanitized process; tests/sanitizers/*.supp
# silence findings inside them only, each with its reason.
# Left out: the scheduler.* and policy.* tests, which repeat the factorization tests under every
# other scheduling policy (one sanitized pass of them is enough); host_tiles.staged and
# host_tiles.pin-on-reuse, which without CUDA factor on the pooled tiles that every process's calls
# after its first use in the plain run; and the 1 x 4 grids of the distributed tests, whose code
# paths the 2 x 2 grids take; the soak and the runtime cycles
# run shorter (TESSERA_SOAK_SECONDS=10, TESSERA_RUNTIME_CYCLES=50 unless set).
# Environment: SANITIZE_BUILD_DIR (build-sanitize).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/install-deps.sh
build_dir=${SANITIZE_BUILD_DIR:-build-sanitize}
suppressions=$PWD/tests/sanitizers

# shellcheck source=scripts/cmake_generator.sh
. scripts/cmake_generator.sh
# -O1 and line tables only (-g1): what the sanitizers need for exact reports with file and line,
# at half the compile time of -O2 -g.
cmake -S . -B "$build_dir" $(cmake_generator_option "$build_dir") -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DTESSERA_CUDA=OFF -DTESSERA_SANITIZE=ON -DTESSERA_BUILD_BENCH=OFF -DTESSERA_DEPS_PREFIX="${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" >"$build_dir/build.log" 2>&1 || { tail -n 40 "$build_dir/build.log"; exit 1; }

# verify_asan_link_order=0: the lapack.* tests preload the sanitized libtessera_lapack into
# uninstrumented programs (a C program, Fortran, Python), which then load the ASan runtime second.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=1:verify_asan_link_order=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$suppressions/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$suppressions/ubsan.supp}
# hwloc's PCI plugin (Debian's libhwloc-plugins, which Open MPI brings in) leaks from inside a
# module hwloc unloads again, so the leak has no frame a suppression could name. These runs use
# no GPU and need no PCI discovery: the plugin stays unloaded.
export HWLOC_PLUGINS_BLACKLIST=${HWLOC_PLUGINS_BLACKLIST:-hwloc_pci}
export TESSERA_SOAK_SECONDS=${TESSERA_SOAK_SECONDS:-10}
export TESSERA_RUNTIME_CYCLES=${TESSERA_RUNTIME_CYCLES:-50}
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" \
  -E '^(scheduler\.|policy\.|host_tiles\.(staged|pin-on-reuse)$|distributed\.(grid|scalapack)_1x4$)' "$@"
