#!/usr/bin/env bash
# Installs what Tessera needs, builds it, and factors a random 4000 x 4000 SPD matrix.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/build.sh
STARPU_SILENT=1 ./"${BUILD_DIR:-build}"/tessera potrf --n 4000 --nb 320 --mode hybrid
