#!/usr/bin/env bash
# A Fortran LAPACK program under LD_PRELOAD=libtessera_lapack.so, every call through Tessera: the
# results must be right and each call's verbose line must show the Tessera path.
#   run_fortran_test.sh FORTRAN_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2 n=400
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 TESSERA_NB=64 -- "$program"
[ "$status" -eq 0 ] || fail "the Fortran program exited with $status"
for call in "DPOTRF uplo=U n=$n" "DPOTRS uplo=U n=$n nrhs=3" "DPOSV uplo=L n=$n nrhs=3"; do
  grep -q "^tessera-lapack: $call: tessera cpu, info=0," "$log" || fail "$call did not go through Tessera"
done
echo "Fortran caller test passed"
