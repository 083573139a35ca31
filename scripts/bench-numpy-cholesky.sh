#!/usr/bin/env bash
# Times numpy.linalg.cholesky with the system LAPACK and through Tessera (LD_PRELOAD of
# libtessera_lapack.so) and prints both times and the ratio. Needs python3-numpy and a build.
#   scripts/bench-numpy-cholesky.sh [--n 8000] [--reps 3]
# Environment: BUILD_DIR (default build), TESSERA_MODE (cpu, gpu, hybrid), other TESSERA_* options.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
library=$build/src/lapack/libtessera_lapack.so
[ -f "$library" ] || { echo "no $library: build Tessera first (scripts/build.sh)" >&2; exit 1; }
# Debian's numpy belongs to Debian's python3, which may not be the first python3 on PATH.
for python in /usr/bin/python3 python3; do
  if command -v "$python" >/dev/null && "$python" -c 'import numpy' 2>/dev/null; then
    exec "$python" "$root/bench/lapack/numpy_cholesky.py" --library "$library" "$@"
  fi
done
echo "no python3 with numpy found (apt-get install python3-numpy)" >&2
exit 1
