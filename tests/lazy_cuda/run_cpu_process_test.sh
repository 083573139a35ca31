#!/usr/bin/env bash
# A process that runs on the CPU only never maps cuBLAS, cuBLASLt, cuSOLVER or cuSPARSE: the
# library and StarPU reach them through the lazy forwarders (src/lazy_cuda), which load the real
# ones at a first call that never comes. The dynamic loader's own log (LD_DEBUG=files: a "calling
# init" line for each library mapped, by its path) tells which files the process loaded.
#   run_cpu_process_test.sh TESSERA_CLI FORWARDERS_FOLDER
set -uo pipefail
cli=$1 forwarders=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail() { echo "FAILED: $*"; grep "calling init:" "$log" | head -60; exit 1; }

# check WHAT VARIABLE=VALUE...: runs tessera potrf (in $mode where set) with those variables, and
# checks what it loaded.
check() {
  local what=$1; shift
  env "$@" LD_DEBUG=files timeout 120 "$cli" potrf --n 300 ${mode:+--mode $mode} > "$log" 2>&1
  local status=$?
  [ "$status" -eq 0 ] || fail "$what: tessera potrf exited with $status"
  for name in libcublas.so libcusolver.so libcusparse.so; do
    grep -q "calling init: $forwarders/$name" "$log" || fail "$what: the process did not load the forwarder of $name"
  done
  for name in libcublasLt.so libcublas.so libcusolver.so libcusparse.so libnvJitLink.so; do
    grep -E "calling init: [^ ]*/$name" "$log" | grep -v -q "calling init: $forwarders/" &&
      fail "$what: the real $name was loaded by a process that ran on the CPU only"
  done
}

mode=cpu check "cpu mode without CUDA workers" TESSERA_NCUDA=0
# Without a GPU, the default (auto) mode runs on the CPU too, and does not probe CUDA's libraries.
if ! compgen -G "/dev/nvidia[0-9]*" > /dev/null; then
  mode= check "auto mode on a machine without a GPU" TESSERA_VERBOSE=0
fi
echo "cpu process test passed: the forwarders loaded, none of the libraries they stand for"
