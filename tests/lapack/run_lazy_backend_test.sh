#!/usr/bin/env bash
# libtessera_lapack loads Tessera (its backend, StarPU, the CUDA libraries) on the first call that
# goes through Tessera, not before: with every call below TESSERA_LAPACK_MIN_N the process never
# loads it, and the verbose lines still come (the drop-in reads its options itself). The dynamic
# loader's own log (LD_DEBUG=files) tells which libraries the process loaded.
#   run_lazy_backend_test.sh PRELOAD_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2 n=300
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 TESSERA_LAPACK_MIN_N=2000 LD_DEBUG=files -- "$program" "$n"
[ "$status" -eq 0 ] || fail "preload_program exited with $status"
for call in "DPOTRF uplo=L n=$n" "DPOSV uplo=U n=$n nrhs=1" "SPOTRF uplo=L n=$n"; do
  grep -q "^tessera-lapack: $call: system LAPACK, info=0," "$log" || fail "$call did not go to the system LAPACK"
done
grep -q "^tessera-lapack: TESSERA_LAPACK_MIN_N=2000; smaller calls go to " "$log" || fail "no startup line"
grep -q "file=[^ ]*libtessera_lapack.so" "$log" || fail "the dynamic loader's log lacks the preloaded library"
for loaded in libtessera_lapack_backend libtessera.so libstarpu; do
  grep -q "file=[^ ]*$loaded" "$log" && fail "$loaded was loaded although no call went through Tessera"
done

# A threshold that is not an integer: said once, the defaults used, and still nothing loaded.
run_preloaded "$library" 120 TESSERA_LAPACK_MIN_N=abc LD_DEBUG=files -- "$program" "$n"
[ "$status" -eq 0 ] || fail "preload_program exited with $status"
[ "$(grep -c "^tessera-lapack: TESSERA_LAPACK_MIN_N='abc' is not an integer >= 0; using the defaults (TESSERA_LAPACK_MIN_N=2000, not verbose)$" "$log")" -eq 1 ] ||
  fail "the bad threshold was not said once"
grep -q "file=[^ ]*libtessera_lapack_backend" "$log" && fail "the backend was loaded for calls below the default threshold"
grep -q "^FAILED" "$log" && fail "a result was wrong"

# The first call at the threshold loads it.
run_preloaded "$library" 120 TESSERA_LAPACK_MIN_N=$n LD_DEBUG=files -- "$program" "$n"
[ "$status" -eq 0 ] || fail "preload_program exited with $status"
grep -q "^tessera-lapack: DPOTRF uplo=L n=$n: tessera cpu, info=0," "$log" || fail "DPOTRF did not go through Tessera"
grep -q "file=[^ ]*libtessera_lapack_backend" "$log" || fail "the backend was not loaded for a call through Tessera"
grep -q "^FAILED" "$log" && fail "a result was wrong"
echo "lazy backend test passed"
