#!/usr/bin/env bash
# plugin_host under LD_PRELOAD=libtessera_lapack.so: a plugin loaded with RTLD_LOCAL keeps its own
# LAPACK (reference LAPACK: the verbose startup line must name it, and the small calls go there)
# and its own xerbla_ (plugin_host checks that).
#   run_plugin_test.sh PLUGIN_HOST LAPACK_PLUGIN LIBTESSERA_LAPACK REFERENCE_LIBLAPACK
set -uo pipefail
host=$1 plugin=$2 library=$3 reference=$4
. "$(dirname "${BASH_SOURCE[0]}")/preload_support.sh"

run_preloaded "$library" 120 TESSERA_LAPACK_MIN_N=200 TESSERA_NB=64 -- "$host" "$plugin"
[ "$status" -eq 0 ] || fail "plugin_host exited with $status"
next=$(sed -n 's/^tessera-lapack: TESSERA_LAPACK_MIN_N=200; smaller calls go to //p' "$log")
[ -n "$next" ] || fail "no verbose line naming the next LAPACK"
[ "$(readlink -f "$next")" = "$(readlink -f "$reference")" ] \
  || fail "the next LAPACK is $next, not the plugin's $reference"
grep -q "^tessera-lapack: DPOTRF uplo=L n=57: system LAPACK, info=0," "$log" || fail "n=57 did not go to the plugin's LAPACK"
grep -q "^tessera-lapack: DPOTRF uplo=L n=263: tessera cpu, info=0," "$log" || fail "n=263 did not go through Tessera"
grep -q "^tessera-lapack: DPOSV uplo=U n=61 nrhs=1: system LAPACK, info=0," "$log" || fail "no DPOSV line"
echo "plugin test passed: the next LAPACK is $next"
