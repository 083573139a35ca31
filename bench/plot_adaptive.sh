#!/usr/bin/env bash
# Plots bench_adaptive's JSON (--json FILE): FP64-equivalent TFLOP/s (n^3 / 3 flops) against n,
# two panels: the tiles already in GPU memory (Tessera's FP64 and adaptive runs, cuSOLVER's dpotrf
# on the matrix in GPU memory) and the host array end to end (Tessera's runs, cuSOLVER with
# pageable copies). One line per accuracy found. Needs gnuplot (Debian: gnuplot-nox) and python3;
# the output's extension picks SVG or PNG.
#   bench/plot_adaptive.sh RESULTS.json OUT.svg|OUT.png [TITLE]
set -euo pipefail
usage="usage: bench/plot_adaptive.sh RESULTS.json OUT.svg|OUT.png [TITLE]"
json=${1:?$usage}
out=${2:?$usage}
title=${3:-Adaptive-precision Cholesky against FP64}
. "$(dirname "${BASH_SOURCE[0]}")/plot_support.sh"
terminal=$(plot_terminal "$out" 1100 460) || { echo "$usage" >&2; exit 2; }
plot_scratch
# One file per panel and run ("n TFLOP/s" lines); prints per panel "panel|run|run|..." and last
# "sizes|n n ...".
python3 - "$json" "$data" > "$data/series" <<'PY'
import json, sys
rows, out = json.load(open(sys.argv[1])), sys.argv[2]
series = {}  # (panel, run label) -> [(n, TFLOP/s)]
for r in rows:
    run, n, s = r["run"], r["n"], r["seconds"]
    if not (isinstance(s, (int, float)) and s > 0):
        continue
    where, _, what = run.partition(" ")
    if where == "cusolver":
        panel, label = ("resident", "cuSOLVER, matrix on GPU") if what == "resident" else ("host", "cuSOLVER + pageable copies")
    else:
        panel, label = where, "Tessera FP64" if what == "fp64" else "Tessera, accuracy " + f"{float(what):.0e}".replace("e-0", "e-")
    series.setdefault((panel, label), []).append((n, n ** 3 / 3 / s * 1e-12))
if not series:
    sys.exit("no timed runs in " + sys.argv[1])
for panel in ("resident", "host"):
    labels = sorted((l for p, l in series if p == panel), key=lambda l: (l.startswith("cuSOLVER"), l != "Tessera FP64", l))
    for index, label in enumerate(labels):
        with open(f"{out}/{panel}{index}.dat", "w") as f:
            for n, rate in sorted(series[(panel, label)]):
                f.write(f"{n} {rate:.3f}\n")
    print(panel + "|" + "|".join(labels))
print("sizes|" + " ".join(str(n) for n in sorted({n for points in series.values() for n, _ in points})))
PY
tics=$(grep '^sizes|' "$data/series" | cut -d'|' -f2 | sed 's/\([0-9]*\)/"\1" \1/g; s/ "/, "/g')
plot_panel() {  # panel title
  local line labels i=0 commands=()
  line=$(grep "^$1|" "$data/series" || true)
  [ -n "$line" ] || return 0
  IFS='|' read -r -a labels <<<"${line#*|}"
  for label in "${labels[@]}"; do
    local style="w lp lw 2 pt $((5 + 2 * i))"
    case "$label" in cuSOLVER*) style="w lp lw 2 dt 2 pt 4 lc rgb \"#555555\"" ;; esac
    commands+=("\"$data/$1$i.dat\" u 1:2 $style t \"$label\"")
    i=$((i + 1))
  done
  echo "set title \"$2\""
  (IFS=','; echo "plot ${commands[*]}")
}
gnuplot <<GP
set terminal $terminal
set output "$out"
set multiplot layout 1,2 title "$title"
set key top left font ",10"
set grid
set xlabel "n"
set ylabel "TFLOP/s (FP64-equivalent, n^3/3 flops)"
set logscale x 2
set xtics ($tics)
set offsets graph 0.04, graph 0.04, 0, 0
set yrange [0:*]
$(plot_panel resident "tiles on the GPU")
$(plot_panel host "host array, end to end")
unset multiplot
GP
echo "wrote $out"
