#!/usr/bin/env bash
# Installs what Tessera needs, builds it with its tests, and runs the whole suite with CTest.
# Tests that need a GPU skip with the reason where none is present.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/build.sh "$@"
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)"
