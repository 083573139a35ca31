#!/usr/bin/env bash
# Where Tessera starts to pay off for LAPACK callers: times dpotrf_ in a plain LAPACK program
# (bench_lapack_potrf) with the system LAPACK, then with LD_PRELOAD=libtessera_lapack.so and every
# call sent through Tessera, for n = 100..2000, and prints both, their ratio, and the smallest n
# from which Tessera is faster at every larger n measured (the value for TESSERA_LAPACK_MIN_N).
#   scripts/lapack-crossover.sh
# Environment: BUILD_DIR (default build), TESSERA_MODE (default cpu), SIZES (comma list), REPS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bench=$build/bench/lapack/bench_lapack_potrf
library=$build/src/lapack/libtessera_lapack.so
for f in "$bench" "$library"; do [ -e "$f" ] || { echo "no $f: build Tessera first" >&2; exit 1; }; done
sizes=${SIZES:-100,200,300,400,500,600,700,800,1000,1200,1500,2000}
reps=${REPS:-7}
mode=${TESSERA_MODE:-cpu}

system=$(mktemp) tessera=$(mktemp)
trap 'rm -f "$system" "$tessera"' EXIT
"$bench" --sizes "$sizes" --reps "$reps" >"$system"
LD_PRELOAD=$(readlink -f "$library") TESSERA_LAPACK_MIN_N=0 TESSERA_MODE=$mode STARPU_SILENT=1 \
  "$bench" --sizes "$sizes" --reps "$reps" >"$tessera"

echo "dpotrf_ (lower, double), best and median of $reps runs after a warm-up; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
join "$system" "$tessera" | awk -v mode="$mode" '
  BEGIN { printf "%6s  %12s %12s  %12s %12s  %6s %6s\n", "n", "system best", "median", "tessera " mode, "median",
                 "ratio", "median" }
  # join gives: n, system best, median, info, tessera best, median, info
  { n[NR] = $1; ratio[NR] = $3 / $6
    printf "%6d  %10.6f s %10.6f s  %10.6f s %10.6f s  %6.2f %6.2f\n", $1, $2, $3, $5, $6, $2 / $5, ratio[NR] }
  END {
    crossover = "none"
    for (i = NR; i >= 1 && ratio[i] >= 1; --i) crossover = n[i]
    print "ratio = system time / tessera time; by median times Tessera is at least as fast from n = " crossover " on"
  }'
