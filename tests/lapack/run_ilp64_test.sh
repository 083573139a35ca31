#!/usr/bin/env bash
# ilp64_program under LD_PRELOAD=libtessera_lapack.so, every call through Tessera (it checks its
# own results); the verbose lines must show the 64-bit-integer symbols going through Tessera and
# the size beyond INT_MAX going to the next LAPACK.
#   run_ilp64_test.sh ILP64_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2 n=157
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 TESSERA_NB=64 -- "$program"
[ "$status" -eq 0 ] || fail "ilp64_program exited with $status"
for call in "DPOTRF uplo=L n=$n (dpotrf_64_)" "DPOTRS uplo=U n=$n nrhs=2 (dpotrs_64_)" \
            "DPOSV uplo=L n=$n nrhs=2 (scipy_dposv_64_)" "SPOSV uplo=U n=$n nrhs=2 (sposv_64_)" \
            "SPOTRF uplo=L n=$n (scipy_spotrf_64_)" "SPOTRS uplo=U n=$n nrhs=2 (scipy_spotrs_64_)"; do
  grep -qF "tessera-lapack: $call: tessera cpu, info=0," "$log" || fail "$call did not go through Tessera"
done
grep -qF "tessera-lapack: DPOTRF uplo=L n=1 (dpotrf_64_): system LAPACK, info=0," "$log" \
  || fail "the call with LDA beyond INT_MAX did not go to the next LAPACK"
grep -qF "tessera-lapack: DPOTRF uplo=L n=1 (scipy_dpotrf_64_): illegal value of argument 4" "$log" \
  || fail "the call with LDA beyond INT_MAX and no next LAPACK was not refused"
echo "ILP64 test passed"
