#!/usr/bin/env bash
# Installs the dependencies (scripts/install-deps.sh) and builds Tessera into build/ (or $BUILD_DIR).
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/install-deps.sh
# shellcheck source=scripts/cmake_generator.sh
. scripts/cmake_generator.sh
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" $(cmake_generator_option "$build_dir") -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DTESSERA_DEPS_PREFIX="${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}" "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
