#!/usr/bin/env bash
# When Tessera cannot run (here: TESSERA_MODE names no mode), libtessera_lapack says so once on
# stderr and the calls go to the system LAPACK, with right results.
#   run_fallback_test.sh PRELOAD_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2 n=300
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 TESSERA_MODE=no-such-mode -- "$program" "$n"
[ "$status" -eq 0 ] || fail "preload_program exited with $status"
[ "$(grep -c "Tessera cannot run (unknown mode 'no-such-mode'" "$log")" -eq 1 ] || fail "expected the reason once"
for call in "DPOTRF uplo=L n=$n" "DPOSV uplo=U n=$n nrhs=1" "SPOTRF uplo=L n=$n"; do
  grep -q "^tessera-lapack: $call: system LAPACK, info=0," "$log" || fail "$call did not go to the system LAPACK"
done
echo "fallback test passed"
