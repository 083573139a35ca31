#!/usr/bin/env bash
# Plots bench_gpu_potrf's JSON (--json FILE): TFLOP/s against n, one panel per precision, lower
# triangle: cuSOLVER resident / pinned / pageable, Tessera tiles resident and end to end in gpu,
# hybrid and auto modes. Needs gnuplot (Debian: gnuplot-nox) and python3.
#   bench/plot_gpu_potrf.sh RESULTS.json OUT.svg [TITLE]
set -euo pipefail
json=${1:?usage: bench/plot_gpu_potrf.sh RESULTS.json OUT.svg [TITLE]}
out=${2:?usage: bench/plot_gpu_potrf.sh RESULTS.json OUT.svg [TITLE]}
title=${3:-Tessera dpotrf/spotrf against cuSOLVER}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
python3 - "$json" "$data" <<'PY'
import json, math, sys
rows = [r for r in json.load(open(sys.argv[1])) if r.get("uplo") == "L" and "cusolver_resident_s" in r]
columns = ["cusolver_resident_s", "cusolver_pinned_s", "cusolver_pageable_s", "tessera_resident_s",
           "tessera_gpu_s", "tessera_hybrid_s", "tessera_auto_s"]
for precision in "ds":
    with open(f"{sys.argv[2]}/{precision}.dat", "w") as f:
        for r in sorted((r for r in rows if r["precision"] == precision), key=lambda r: r["n"]):
            n = r["n"]
            values = []
            for c in columns:
                s = r.get(c)
                values.append("NaN" if s is None or not isinstance(s, (int, float)) or math.isnan(s) or s <= 0
                              else "%.3f" % (n ** 3 / 3 / s * 1e-12))
            f.write("%d %s\n" % (n, " ".join(values)))
PY
gnuplot <<GP
set terminal svg size 1100,460 dynamic font "sans,12"
set output "$out"
set multiplot layout 1,2 title "$title"
set key top left font ",10"
set grid
set xlabel "n"
set ylabel "TFLOP/s (n^3/3 flops)"
set logscale x 2
set xtics ("4096" 4096, "8192" 8192, "16384" 16384, "30000" 30000, "40000" 40000)
do for [p in "d s"] {
  set title (p eq "d" ? "double" : "single")
  plot "$data/".p.".dat" u 1:2 w lp lw 2 dt 2 pt 4 t "cuSOLVER, matrix on GPU", \
       "" u 1:3 w lp lw 2 dt 2 pt 6 t "cuSOLVER + pinned copies", \
       "" u 1:4 w lp lw 2 dt 2 pt 8 t "cuSOLVER + pageable copies", \
       "" u 1:5 w lp lw 2 pt 5 t "Tessera gpu, tiles on GPU", \
       "" u 1:6 w lp lw 2 pt 7 t "Tessera gpu, end to end", \
       "" u 1:7 w lp lw 2 pt 9 t "Tessera hybrid, end to end", \
       "" u 1:8 w lp lw 2 pt 11 t "Tessera auto, end to end"
}
unset multiplot
GP
echo "wrote $out"
