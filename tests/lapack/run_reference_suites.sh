#!/usr/bin/env bash
# Reference LAPACK's own tests of the Cholesky routines (the SPO, DPO, CPO and ZPO paths of
# TESTING/LIN: xPOTRF, xPOTRS, xPOTRI, xPORFS, xPOCON, xPOSV, xPOSVX, their error exits with LAPACK's
# test XERBLA) with libtessera_lapack preloaded in front of reference LAPACK, every call of the
# routines the drop-in serves going through Tessera (TESSERA_LAPACK_MIN_N=0): once as the plan
# places such small work (on the calling thread), once as tile tasks (TESSERA_NB=8). Each run must
# report every test passed and the drop-in's summary no call to the system LAPACK.
#   run_reference_suites.sh PROGRAM_DIR LIBTESSERA_LAPACK [OUT_DIR]
# PROGRAM_DIR holds xlintst[sdcz] and [sdcz]test.in (scripts/install-deps.sh builds them); exits
# 77 (skipped) where it does not. TESSERA_MODE (default cpu) picks the mode.
set -uo pipefail
programs=$1
dropin=$2
out=${3:-$(mktemp -d)}
for p in s d c z; do
  if [ ! -x "$programs/xlintst$p" ] || [ ! -f "$programs/${p}test.in" ]; then
    echo "SKIPPED: reference LAPACK's test programs are not in $programs (scripts/install-deps.sh builds them)"
    exit 77
  fi
done
mkdir -p "$out"
status=0
for p in s d c z; do
  P=$(echo "$p" | tr '[:lower:]' '[:upper:]')
  input=$out/${p}po.in
  # The parameters of LAPACK's own input file (sizes, right-hand sides, block sizes, threshold,
  # which kinds of tests), then the Cholesky path alone.
  { head -n 16 "$programs/${p}test.in"; echo "${P}PO    9               List types on next line if 0 < NTYPES <  9"; } >"$input"
  for nb in plan 8; do
    log=$out/${p}po.nb-$nb
    env_nb=()
    [ "$nb" = plan ] || env_nb=(TESSERA_NB="$nb")
    env LD_PRELOAD="$dropin" TESSERA_LAPACK_MIN_N=0 TESSERA_LAPACK_VERBOSE=1 TESSERA_MODE="${TESSERA_MODE:-cpu}" \
      "${env_nb[@]}" "$programs/xlintst$p" <"$input" >"$log.out" 2>"$log.err"
    rc=$?
    summary=$(grep 'calls through Tessera' "$log.err" | tail -n 1)
    through=$(echo "$summary" | sed -n 's/^tessera-lapack: \([0-9]*\) calls through Tessera, \([0-9]*\) to the system LAPACK.*/\1/p')
    system=$(echo "$summary" | sed -n 's/^tessera-lapack: \([0-9]*\) calls through Tessera, \([0-9]*\) to the system LAPACK.*/\2/p')
    failed=""
    [ "$rc" -eq 0 ] || failed="exit status $rc"
    for line in "${P}PO routines passed the tests of the error exits" \
                "All tests for ${P}PO routines passed the threshold" \
                "${P}PO drivers passed the tests of the error exits" \
                "All tests for ${P}PO drivers  passed the threshold"; do
      grep -qF "$line" "$log.out" || failed="${failed:+$failed; }missing: $line"
    done
    if [ -z "$through" ] || [ "$through" -eq 0 ] || [ "$system" != 0 ]; then
      failed="${failed:+$failed; }the drop-in's summary: ${summary:-none}"
    fi
    echo "${P}PO, tiles: $nb: $(grep -E 'tests run' "$log.out" | sed 's/^ *//' | paste -sd ';' -); $summary"
    if [ -n "$failed" ]; then
      echo "  FAILED: $failed (output in $log.out, $log.err)"
      grep -E 'fail|FAIL' "$log.out" | head -n 20
      status=1
    fi
  done
done
exit $status
