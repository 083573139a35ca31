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

TESSERA_NCUDA=0 LD_DEBUG=files timeout 120 "$cli" potrf --n 300 --mode cpu > "$log" 2>&1
status=$?
[ "$status" -eq 0 ] || fail "tessera potrf exited with $status"
for name in libcublas.so libcusolver.so libcusparse.so; do
  grep -q "calling init: $forwarders/$name" "$log" || fail "the process did not load the forwarder of $name"
done
for name in libcublasLt.so libcublas.so libcusolver.so libcusparse.so libnvJitLink.so; do
  grep -E "calling init: [^ ]*/$name" "$log" | grep -v -q "calling init: $forwarders/" &&
    fail "the real $name was loaded by a process that ran on the CPU only"
done
echo "cpu process test passed: the forwarders loaded, none of the libraries they stand for"
