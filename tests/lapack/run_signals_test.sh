#!/usr/bin/env bash
# A program's signal handlers are its own: a call through libtessera_lapack starts StarPU, which
# would install handlers for SIGINT, SIGSEGV and SIGTRAP unless STARPU_CATCH_SIGNALS asks it to.
#   run_signals_test.sh SIGNALS_PROGRAM LIBTESSERA_LAPACK
set -uo pipefail
program=$1 library=$2
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 -- "$program" 300
[ "$status" -eq 0 ] || fail "the program's handlers did not survive a call through Tessera (exit $status)"
grep -q "^tessera-lapack: DPOTRF uplo=L n=300: tessera" "$log" || fail "the call did not go through Tessera"

# Asked for, StarPU's handlers are installed: the program sees them (so the check above can fail).
run_preloaded "$library" 120 STARPU_CATCH_SIGNALS=1 -- "$program" 300
grep -q "^SIGINT: replaced" "$log" || fail "STARPU_CATCH_SIGNALS=1 did not install StarPU's handlers"
echo "signals test passed"
