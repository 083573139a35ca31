#!/usr/bin/env bash
# When Tessera cannot run (here: TESSERA_MODE names no mode), libtessera_lapack says so once on
# stderr and the calls go to the system LAPACK, with right results.
#   run_fallback_test.sh PRELOAD_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2 n=300
log=$(mktemp)
trap 'rm -f "$log"' EXIT

LD_PRELOAD=$library TESSERA_LAPACK_MIN_N=0 TESSERA_LAPACK_VERBOSE=1 TESSERA_MODE=no-such-mode \
  STARPU_SILENT=1 timeout 120 "$program" "$n" >"$log" 2>&1
status=$?
cat "$log"

fail() { echo "FAILED: $*"; exit 1; }
[ "$status" -eq 0 ] || fail "preload_program exited with $status"
[ "$(grep -c "Tessera cannot run (unknown mode 'no-such-mode'" "$log")" -eq 1 ] || fail "expected the reason once"
for call in "DPOTRF uplo=L n=$n" "DPOSV uplo=U n=$n nrhs=1" "SPOTRF uplo=L n=$n"; do
  grep -q "^tessera-lapack: $call: system LAPACK, info=0," "$log" || fail "$call did not go to the system LAPACK"
done
echo "fallback test passed"
