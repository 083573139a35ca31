#!/usr/bin/env bash
# dpotrf_ from an atexit handler under LD_PRELOAD=libtessera_lapack.so, every call sent through
# Tessera: after the runtime was stopped at exit the call goes to the system LAPACK (and factors);
# as the process's first call it goes through Tessera.
#   run_at_exit_test.sh AT_EXIT_PROGRAM LIBTESSERA_LAPACK after-first-use|only-at-exit
set -uo pipefail
program=$1 library=$2 when=$3 n=301
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 -- "$program" "$when"
[ "$status" -eq 0 ] || fail "at_exit_program exited with $status"
grep -q "^in an atexit handler: dpotrf_ info 0, .*: ok" "$log" || fail "the atexit handler's call did not factor"
line="^tessera-lapack: DPOTRF uplo=L n=$n"
if [ "$when" = after-first-use ]; then
  [ "$(grep -c "$line: tessera cpu, info=0," "$log")" -eq 1 ] || fail "main's call did not go through Tessera"
  grep -q "$line: system LAPACK, info=0," "$log" || fail "the call at exit did not go to the system LAPACK"
else
  grep -q "$line: tessera cpu, info=0," "$log" || fail "the first call, at exit, did not go through Tessera"
fi
grep -q "Tessera cannot run" "$log" && fail "a call at exit is not a failure of Tessera"
echo "at-exit test ($when) passed"
