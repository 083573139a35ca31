#!/usr/bin/env bash
# A LAPACK program under an address-space limit (ulimit -v) that leaves no room for Tessera's
# libraries: the calls go to the system LAPACK, with right results, and the program ends (it hung
# once Tessera's libraries had taken the room its own LAPACK needed for its buffers).
#   run_address_space_test.sh PRELOAD_PROGRAM LIBTESSERA_LAPACK LIMIT_KIB
# LIMIT_KIB "none" (a build with AddressSanitizer, which needs terabytes of address space) skips.
set -uo pipefail
program=$1 library=$2 limit=$3 n=400
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"
if [ "$limit" = none ]; then
  echo "SKIPPED: this build cannot run under an address-space limit"
  exit 77
fi

(ulimit -v "$limit" && run_preloaded "$library" 60 -- "$program" "$n"; exit "$status")
status=$?
[ "$status" -ne 124 ] || fail "the program hung under ulimit -v $limit"
[ "$status" -eq 0 ] || fail "preload_program exited with $status under ulimit -v $limit"
grep -q "address-space limit" "$log" || fail "the reason was not given"
grep -q "^FAILED" "$log" && fail "a result was wrong"
echo "address-space test passed"
