#!/usr/bin/env bash
# Plots the batched rows of bench_cholesky.py's JSON (--json FILE): GFLOP/s (n^3/3 flops per matrix)
# against n, one panel per precision, tessera.cholesky_ex / torch.linalg.cholesky_ex /
# cupy.linalg.cholesky on the same device stacks, one line per library and batch count.
# Needs gnuplot (Debian: gnuplot-nox) and python3. The output's extension picks SVG or PNG.
#   bench/python/plot_cholesky.sh RESULTS.json OUT.svg|OUT.png [TITLE]
set -euo pipefail
usage="usage: bench/python/plot_cholesky.sh RESULTS.json OUT.svg|OUT.png [TITLE]"
json=${1:?$usage}
out=${2:?$usage}
. "$(dirname "${BASH_SOURCE[0]}")/../plot_support.sh"
terminal=$(plot_terminal "$out" 1100 460) || { echo "$usage" >&2; exit 2; }
plot_scratch
# One file per precision: n, then for each batch count (largest first) tessera torch cupy GFLOP/s
# (NaN where a library had no result). Prints the GPU, the precisions, the batch counts and the
# sizes found, a line each.
python3 - "$json" "$data" > "$data/found" <<'PY'
import json, math, sys
report = json.load(open(sys.argv[1]))
rows = [r for r in report["rows"] if r["suite"] == "batched"]
if not rows:
    sys.exit("no batched rows in " + sys.argv[1])
peers = ["tessera", "torch", "cupy"]
precisions = [p for p in "ds" if any(r["precision"] == p for r in rows)]
batches = sorted({r["batch"] for r in rows}, reverse=True)
for precision in precisions:
    rates = {}
    for r in rows:
        if r["precision"] == precision:
            for peer in peers:
                rate = r["peers"].get(peer, {}).get("rate")
                if isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0:
                    rates[(r["n"], r["batch"], peer)] = rate
    with open(f"{sys.argv[2]}/{precision}.dat", "w") as f:
        for n in sorted({r["n"] for r in rows if r["precision"] == precision}):
            values = ["%.3f" % rates[(n, b, p)] if (n, b, p) in rates else "NaN" for b in batches for p in peers]
            f.write("%d %s\n" % (n, " ".join(values)))
print(report["machine"].get("gpu", "unknown GPU"))
print(" ".join(precisions))
print(" ".join(str(b) for b in batches))
print(", ".join(str(n) for n in sorted({r["n"] for r in rows})))
PY
{ read -r gpu; read -r precisions; read -r batches; read -r sizes; } < "$data/found"
title=${3:-Batched Cholesky on the GPU ($gpu): Tessera against PyTorch and CuPy}
panels=$(wc -w <<< "$precisions")
gnuplot <<GP
set terminal $terminal
set output "$out"
set multiplot layout 1,$panels title "$title"
$(plot_axes "$sizes")
set ylabel "GFLOP/s (n^3/3 flops per matrix)"
set style line 2 lc rgb "#2471a3" lw 2 pt 5
set style line 3 lc rgb "#229954" lw 2 pt 9
peers = "Tessera PyTorch CuPy"
batches = "$batches"
do for [p in "$precisions"] {
  set title (p eq "d" ? "double" : "single")
  plot for [b = 1:words(batches)] for [i = 1:3] "$data/".p.".dat" u 1:(column(1 + 3 * (b - 1) + i)) \
       w lp ls i dt b t sprintf("%s, batch %s", word(peers, i), word(batches, b))
}
unset multiplot
GP
echo "wrote $out"
