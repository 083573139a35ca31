#!/usr/bin/env bash
# Plots bench_gpu_refined_solve's output (its table as printed; real matrices, the first condition
# number found): each solve's speed against cuSOLVER's dpotrf + dpotrs in the same run (its time
# over the solve's) against n, one panel per right-hand-side count: Tessera's double-precision
# device::posv and the refined solves by the factor's arithmetic (FP32, TF32, BF16, FP16). Needs
# gnuplot (Debian: gnuplot-nox) and python3; the output's extension picks SVG or PNG.
#   bench/plot_refined_solve.sh BENCH_OUTPUT.txt OUT.svg|OUT.png [TITLE]
set -euo pipefail
usage="usage: bench/plot_refined_solve.sh BENCH_OUTPUT.txt OUT.svg|OUT.png [TITLE]"
results=${1:?$usage}
out=${2:?$usage}
title=${3:-Refined solves in GPU memory against cuSOLVER dpotrf + dpotrs}
. "$(dirname "${BASH_SOURCE[0]}")/plot_support.sh"
terminal=$(plot_terminal "$out" 1100 460) || { echo "$usage" >&2; exit 2; }
plot_scratch
# One file per panel and solve ("n speed-up" lines); prints per panel "nrhs|solve|solve|..." and
# last "sizes|n n ...".
python3 - "$results" "$data" > "$data/series" <<'PY'
import sys
solves = ["Tessera FP64 posv", "refined: FP32 factor", "TF32 updates", "BF16 updates", "FP16 updates"]
series, condition = {}, None  # (nrhs, solve) -> [(n, speed-up)]
for line in open(sys.argv[1]):
    cells = [c.split() for c in line.split("|")]
    if len(cells) < 7 or len(cells[0]) != 3 or not cells[0][0].isdigit():
        continue
    (n, cond, nrhs), reference = cells[0], float(cells[1][0])
    condition = condition or cond
    if cond != condition:
        continue
    for solve, cell in zip(solves, cells[2:7]):
        series.setdefault((int(nrhs), solve), []).append((int(n), reference / float(cell[0])))
if not series:
    sys.exit("no table rows in " + sys.argv[1])
for nrhs in sorted({k for k, _ in series}):
    for index, solve in enumerate(solves):
        with open(f"{sys.argv[2]}/rhs{nrhs}_{index}.dat", "w") as f:
            for n, ratio in sorted(series[(nrhs, solve)]):
                f.write(f"{n} {ratio:.3f}\n")
    print(f"{nrhs}|" + "|".join(solves))
sizes = sorted({n for points in series.values() for n, _ in points})
print("sizes|" + " ".join(str(n) for n in sizes))
print(f"range|{sizes[0] / 1.2:.0f}:{sizes[-1] * 1.2:.0f}")
PY
tics=$(grep '^sizes|' "$data/series" | cut -d'|' -f2 | sed 's/\([0-9]*\)/"\1" \1/g; s/ "/, "/g')
xrange=$(grep '^range|' "$data/series" | cut -d'|' -f2)
plot_panel() {  # nrhs
  local line labels i=0 commands=()
  line=$(grep "^$1|" "$data/series")
  IFS='|' read -r -a labels <<<"${line#*|}"
  for label in "${labels[@]}"; do
    local style="w lp lw 2 pt $((5 + 2 * i))"
    [ "$i" -eq 0 ] && style="w lp lw 2 dt 2 pt 4 lc rgb \"#555555\""
    commands+=("\"$data/rhs$1_$i.dat\" u 1:2 $style t \"$label\"")
    i=$((i + 1))
  done
  if [ "$1" = 1 ]; then echo 'set title "one right-hand side"'; else echo "set title \"$1 right-hand sides\""; fi
  (IFS=','; echo "plot ${commands[*]}, 1 w l lc rgb \"#999999\" notitle")
}
panels=$(grep -v '^sizes|\|^range|' "$data/series" | cut -d'|' -f1)
gnuplot <<GP
set terminal $terminal
set output "$out"
set multiplot layout 1,$(echo "$panels" | wc -l) title "$title"
set key top left font ",10"
set grid
set xlabel "n"
set ylabel "cuSOLVER's time / the solve's"
set logscale x 2
set xtics ($tics)
set xrange [$xrange]
set yrange [0:*]
$(for p in $panels; do plot_panel "$p"; done)
unset multiplot
GP
echo "wrote $out"
