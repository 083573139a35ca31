#!/usr/bin/env bash
# The one-shot table: each row is two fresh processes on a fresh machine's state (an empty
# StarPU perf-model directory, so StarPU calibrates the bus as on a new host):
#   `tessera potrf --n N --json --no-check` in its default mode: runtime start-up + factorization
#   of the caller's (pageable) array, the matrix generation before it not counted;
#   `cusolver_oneshot N`: CUDA context, allocations, copies in and out, potrf (the matrix made
#   after the context, as `tessera potrf` makes it after its runtime's start; the environment's
#   ONESHOT_PEER_FLAGS=--matrix-first makes it before).
#   bench/oneshot.sh BUILD_DIR [N ...]      (default sizes 8192 20000 30000; precision d)
# Prints the table and the ratio cuSOLVER time / Tessera time (> 1: Tessera is faster).
set -euo pipefail
build=${1:?usage: bench/oneshot.sh BUILD_DIR [N ...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8192 20000 30000)
tessera=$build/tessera
[ -x "$tessera" ] || tessera=$build/bin/tessera
peer=$build/bench/cusolver_oneshot
[ -x "$peer" ] || peer=$build/bin/cusolver_oneshot
# Both programs start with their shared libraries in the page cache: otherwise the first process
# of the run reads them from disk (cuBLAS and cuSOLVER are hundreds of MB) and the other does not.
for program in "$tessera" "$peer"; do
  ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | xargs cat > /dev/null
done
printf '%6s | %9s %9s %9s %6s | %9s %9s %9s | %7s\n' n T-start T-factor T-total T-mode cus-total cus-ctx cus-potrf cus/T
for n in "${sizes[@]}"; do
  models=$(mktemp -d)
  t=$(STARPU_PERF_MODEL_DIR=$models "$tessera" potrf --n "$n" --json --no-check)
  c=$("$peer" "$n" ${ONESHOT_PEER_FLAGS:-})
  rm -rf "$models"
  python3 - "$t" "$c" <<'PY'
import json, sys
t, c = json.loads(sys.argv[1]), json.loads(sys.argv[2])
total = t["startup_seconds"] + t["seconds"]
print("%6d | %9.3f %9.3f %9.3f %6s | %9.3f %9.3f %9.3f | %7.2f" % (t["n"], t["startup_seconds"], t["seconds"], total,
      t["mode"], c["seconds"], c["context_seconds"], c["potrf_seconds"], c["seconds"] / total))
PY
done
echo "(seconds; T-start: starting Tessera's runtime; cus-total: CUDA context + allocation + copies + potrf; cus-ctx: its CUDA context)"
