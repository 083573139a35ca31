#!/usr/bin/env bash
# Plots bench_batched_kernels' JSON (--json FILE, run with energy readings): GFLOP/s (n^3/3 flops per
# matrix) and GFLOP/s per watt (the GPU's energy) against n, one column per precision: Tessera's
# batched factorization of lower and of upper storage against cuSOLVER's potrfBatched.
# Needs gnuplot (Debian: gnuplot-nox) and python3. The output's extension picks SVG or PNG.
#   bench/cuda/plot_batched_kernels.sh RESULTS.json OUT.svg|OUT.png [TITLE]
set -euo pipefail
usage="usage: bench/cuda/plot_batched_kernels.sh RESULTS.json OUT.svg|OUT.png [TITLE]"
json=${1:?$usage}
out=${2:?$usage}
. "$(dirname "${BASH_SOURCE[0]}")/../plot_support.sh"
terminal=$(plot_terminal "$out" 1100 820) || { echo "$usage" >&2; exit 2; }
plot_scratch
# One file per precision: n, GFLOP/s of lower, upper, cuSOLVER, then GFLOP/s per watt of the same
# (NaN where missing). Prints the GPU, the precisions and the orders to mark, a line each.
python3 - "$json" "$data" > "$data/found" <<'PY'
import json, math, sys
report = json.load(open(sys.argv[1]))
rows = report.get("results", [])
if not rows or "tessera_gflops_per_watt" not in rows[0]:
    sys.exit("no results with energy readings in " + sys.argv[1])
def number(value):
    return "%.4g" % value if isinstance(value, (int, float)) and math.isfinite(value) and value > 0 else "NaN"
precisions = [p for p in ("double", "float") if any(r["precision"] == p for r in rows)]
for precision in precisions:
    with open(f"{sys.argv[2]}/{precision}.dat", "w") as f:
        for r in sorted((r for r in rows if r["precision"] == precision), key=lambda r: r["n"]):
            keys = ("tessera_gflops", "upper_gflops", "cusolver_gflops", "tessera_gflops_per_watt",
                    "upper_gflops_per_watt", "cusolver_gflops_per_watt")
            f.write("%d %s\n" % (r["n"], " ".join(number(r.get(k)) for k in keys)))
print(report.get("device", "unknown GPU"))
print(" ".join(precisions))
# Tics at the powers of two among the orders (all of them where there is none): orders between
# them would crowd the log axis.
orders = sorted({r["n"] for r in rows})
print(", ".join(str(n) for n in ([n for n in orders if n & (n - 1) == 0] or orders)))
PY
{ read -r gpu; read -r precisions; read -r sizes; } < "$data/found"
title=${3:-Batched Cholesky on the $gpu: Tessera against cuSOLVER}
columns=$(wc -w <<< "$precisions")
gnuplot <<GP
set terminal $terminal
set output "$out"
set multiplot layout 2,$columns title "$title"
$(plot_axes "$sizes")
name(i) = i == 1 ? "Tessera, lower" : i == 2 ? "Tessera, upper" : "cuSOLVER (lower)"
do for [p in "$precisions"] {
  set title p
  set ylabel "GFLOP/s (n^3/3 flops per matrix)"
  plot for [i = 1:3] "$data/".p.".dat" u 1:(column(1 + i)) w lp ls i t name(i)
}
do for [p in "$precisions"] {
  set title p." (the GPU's energy)"
  set ylabel "GFLOP/s per watt"
  plot for [i = 1:3] "$data/".p.".dat" u 1:(column(4 + i)) w lp ls i t name(i)
}
unset multiplot
GP
echo "wrote $out"
