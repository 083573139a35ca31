#!/usr/bin/env bash
# The ScaLAPACK entry points on 4 ranks of this machine, on one grid:
#   1. scalapack_program as it is: ScaLAPACK computes; its results are kept;
#   2. the same program with libtessera_lapack preloaded and MPI_THREAD_MULTIPLE (Open MPI's
#      OMPI_MPI_THREAD_LEVEL=3 for a program that calls MPI_Init): Tessera computes the calls it
#      takes (the verbose lines say so), ScaLAPACK the others; INFO and results compared with 1;
#   3. preloaded without MPI_THREAD_MULTIPLE: every call goes to ScaLAPACK, saying why;
#   4. the program linked with libtessera_lapack in front of ScaLAPACK: as 2.
#   run_scalapack_test.sh GRID MPIEXEC PROGRAM PROGRAM_LINKED LIBTESSERA_LAPACK [MPIEXEC FLAGS...]
set -uo pipefail
grid=$1 mpiexec=$2 program=$3 linked=$4 library=$5
shift 5
flags=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAILED: $*"
  exit 1
}
# Every setting reaches the ranks through -x (Open MPI).
run() {
  local name=$1
  shift
  local settings=()
  while [ "$1" != -- ]; do
    settings+=(-x "$1")
    shift
  done
  shift
  timeout 400 "$mpiexec" -n 4 "${flags[@]}" -x STARPU_SILENT=1 -x STARPU_NCPU=1 -x STARPU_WORKERS_NOBIND=1 \
    -x TESSERA_MODE=cpu "${settings[@]}" "$@" >"$dir/$name.log" 2>&1
  status=$?
  grep -v "had an illegal value" "$dir/$name.log" | grep -v "^{" | tail -n 40
  echo "-- $name: exit $status"
}

mkdir -p "$dir/kept"
run scalapack -- "$program" --grid "$grid" --write "$dir/kept"
[ "$status" -eq 0 ] || fail "the program failed with ScaLAPACK alone"

count() { grep -c "$1" "$dir/$2.log"; }

run preloaded LD_PRELOAD="$library" TESSERA_LAPACK_VERBOSE=1 OMPI_MPI_THREAD_LEVEL=3 -- \
  "$program" --grid "$grid" --compare "$dir/kept"
[ "$status" -eq 0 ] || fail "the preloaded program failed or differed from ScaLAPACK"
through=$(count ': tessera cpu, info=' preloaded)
# 108 SPD cases, 12 complex Hermitian ones and 32 others per run, each reported by 4 ranks
# (potrs factors first: 36 more).
[ "$through" -ge $((4 * (108 + 36 + 12 + 32))) ] || fail "only $through calls went through Tessera"
[ "$(count 'P[CZ]POSV .*: tessera cpu, info=0' preloaded)" -eq $((4 * 12)) ] ||
  fail "not every complex call went through Tessera"
grep -q "PDPOTRF .*: ScaLAPACK (an argument ScaLAPACK refuses)" "$dir/preloaded.log" ||
  fail "no argument error went to ScaLAPACK"
grep -q "PDPOTRF .*: ScaLAPACK (not Tessera's layout (argument 4))" "$dir/preloaded.log" ||
  fail "the sub-matrix did not go to ScaLAPACK"
grep -q "PDPOSV .*: ScaLAPACK (not Tessera's layout (argument 11, descriptor entry 6))" "$dir/preloaded.log" ||
  fail "B in blocks of its own did not go to ScaLAPACK"
grep -q "calls through Tessera" "$dir/preloaded.log" || fail "no summary at exit"

run single LD_PRELOAD="$library" TESSERA_LAPACK_VERBOSE=1 -- "$program" --grid "$grid" --compare "$dir/kept"
[ "$status" -eq 0 ] || fail "the preloaded program without MPI_THREAD_MULTIPLE failed or differed"
[ "$(count ': tessera cpu, info=' single)" -eq 0 ] || fail "Tessera ran without MPI_THREAD_MULTIPLE"
grep -q "ScaLAPACK (MPI was initialized without MPI_THREAD_MULTIPLE" "$dir/single.log" ||
  fail "no line says why the calls went to ScaLAPACK"

# The first 24 cases (double precision, lower, n = 1 and 7 and 37): the link order is what is tested.
run linked TESSERA_LAPACK_VERBOSE=1 OMPI_MPI_THREAD_LEVEL=3 -- "$linked" --grid "$grid" --compare "$dir/kept" --limit 24
[ "$status" -eq 0 ] || fail "the program linked with libtessera_lapack first failed or differed"
[ "$(count ': tessera cpu, info=' linked)" -ge $((4 * 24)) ] || fail "the linked program did not reach Tessera"

echo "ScaLAPACK test on a $grid grid passed: $through calls through Tessera per run"
