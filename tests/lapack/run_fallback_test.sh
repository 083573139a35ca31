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


# StarPU cannot keep its calibration where the environment points it (HOME is not a directory):
# said once, the calls go to the system LAPACK, the process goes on (StarPU aborted it).
log_env=(env -u STARPU_PERF_MODEL_DIR -u XDG_CACHE_HOME -u STARPU_HOME HOME=/dev/null)
"${log_env[@]}" LD_PRELOAD="$library" TESSERA_LAPACK_VERBOSE=1 TESSERA_LAPACK_MIN_N=0 TESSERA_MODE=cpu \
  STARPU_SILENT=1 timeout 120 "$program" "$n" >"$log" 2>&1
status=$?
cat "$log"
[ "$status" -eq 0 ] || fail "with HOME=/dev/null, preload_program exited with $status"
[ "$(grep -c "Tessera cannot run (StarPU cannot keep its calibration in /dev/null" "$log")" -eq 1 ] ||
  fail "expected the reason (an unusable calibration directory) once"
grep -q "^tessera-lapack: DPOTRF uplo=L n=$n: system LAPACK, info=0," "$log" || fail "DPOTRF did not go to the system LAPACK"

# libtessera_lapack without its backend beside it: the first call for Tessera says once why
# Tessera cannot run, and every call goes to the system LAPACK, with its verbose line.
alone=$(mktemp -d)
trap 'rm -rf "$alone" "$log"' EXIT
cp "$library" "$alone/"
run_preloaded "$alone/$(basename "$library")" 120 -- "$program" "$n"
[ "$status" -eq 0 ] || fail "without the backend, preload_program exited with $status"
[ "$(grep -c "Tessera cannot run (cannot load .*libtessera_lapack_backend" "$log")" -eq 1 ] ||
  fail "expected the reason (no backend) once"
for call in "DPOTRF uplo=L n=$n" "DPOSV uplo=U n=$n nrhs=1" "SPOTRF uplo=L n=$n"; do
  grep -q "^tessera-lapack: $call: system LAPACK, info=0," "$log" || fail "without the backend, $call: no line"
done
grep -q "^FAILED" "$log" && fail "a result was wrong without the backend"
echo "fallback tests passed"
