# Sourced by the run_*_test.sh scripts: runs a program under LD_PRELOAD=libtessera_lapack.so with
# the drop-in's verbose lines on, keeps its output in $log (and prints it), sets $status; fail()
# ends the test with a reason.
#   run_preloaded LIBTESSERA_LAPACK SECONDS [NAME=VALUE ...] -- PROGRAM [ARGS ...]
# Defaults, which NAME=VALUE settings override: every call through Tessera
# (TESSERA_LAPACK_MIN_N=0), cpu mode, StarPU silent.
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fail() {
  echo "FAILED: $*"
  exit 1
}

run_preloaded() {
  local library=$1 seconds=$2
  shift 2
  local settings=()
  while [ "$1" != -- ]; do
    settings+=("$1")
    shift
  done
  shift
  env LD_PRELOAD="$library" TESSERA_LAPACK_VERBOSE=1 TESSERA_LAPACK_MIN_N=0 TESSERA_MODE=cpu STARPU_SILENT=1 \
    "${settings[@]}" timeout "$seconds" "$@" >"$log" 2>&1
  status=$?
  cat "$log"
}
