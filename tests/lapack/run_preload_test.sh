#!/usr/bin/env bash
# Runs preload_program under LD_PRELOAD=libtessera_lapack.so with every call sent through Tessera
# (cpu mode, small tiles so that each factorization runs many tile kernels) and checks, from the
# verbose lines, that the calls went through Tessera and that the tile kernels' own dpotrf_ calls
# came back to the interposer and were passed on to a LAPACK (no recursion, no deadlock: the
# timeout would end a hang); a child made by fork() uses the system LAPACK.
#   run_preload_test.sh PRELOAD_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2 n=600
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 240 TESSERA_NB=64 -- "$program" "$n"
[ "$status" -eq 0 ] || fail "preload_program exited with $status"
grep -q "^dpotrf_ resolves to .*libtessera_lapack" "$log" || fail "LD_PRELOAD did not put libtessera_lapack first"
grep -q "^tessera-lapack: DPOTRF uplo=L n=$n: tessera cpu, info=0," "$log" || fail "no DPOTRF line through Tessera"
grep -q "^tessera-lapack: DPOSV uplo=U n=$n nrhs=1: tessera cpu, info=0," "$log" || fail "no DPOSV line through Tessera"
grep -q "^tessera-lapack: SPOTRF uplo=L n=$n: tessera cpu, info=0," "$log" || fail "no SPOTRF line through Tessera"
grep -q "^tessera-lapack: DPOTRF uplo=L n=$n: system LAPACK, info=0," "$log" \
  || fail "the child's DPOTRF after fork() did not go to the system LAPACK"
summary=$(grep "^tessera-lapack: .* nested calls passed on unchecked" "$log") || fail "no summary line at exit"
nested=$(sed -E 's/.*LAPACK, ([0-9]+) nested calls.*/\1/' <<<"$summary")
# 3 factorizations of 10 x 10 tiles: 10 diagonal-tile factorizations each.
[ "$nested" -ge 30 ] || fail "expected at least 30 nested calls from the tile kernels, got $nested"
echo "preload test passed: $nested nested calls were passed on"
