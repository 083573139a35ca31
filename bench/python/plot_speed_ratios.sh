#!/usr/bin/env bash
# Plots Tessera's speed over its peers' from bench_cholesky.py's JSON files (--json FILE; a CPU
# run and a GPU run may be given together): the rate ratio (Tessera / peer, above 1: Tessera is
# faster) against n, one panel per kind of work found (host: one matrix, stacks; GPU: one matrix,
# stacks), one point style per peer and precision, a line at 0.9.
# Needs gnuplot (Debian: gnuplot-nox) and python3. The output's extension picks SVG or PNG.
#   bench/python/plot_speed_ratios.sh OUT.svg|OUT.png RESULTS.json... [--title TITLE]
set -euo pipefail
usage="usage: bench/python/plot_speed_ratios.sh OUT.svg|OUT.png RESULTS.json... [--title TITLE]"
out=${1:?$usage}
shift
title=""
inputs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --title) title=${2:?$usage}; shift 2 ;;
    *) inputs+=("$1"); shift ;;
  esac
done
[ ${#inputs[@]} -gt 0 ] || { echo "$usage" >&2; exit 2; }
. "$(dirname "${BASH_SOURCE[0]}")/../plot_support.sh"
terminal=$(plot_terminal "$out" 1100 760) || { echo "$usage" >&2; exit 2; }
plot_scratch
# One file per panel, peer and precision: "n ratio" lines. Prints one line per panel:
# index|title|the files' "peer precision" words|the sizes found.
python3 - "$data" "${inputs[@]}" > "$data/panels" <<'PY'
import json, math, sys
out, files = sys.argv[1], sys.argv[2:]
panels = {}  # (order, title) -> {(peer, precision): [(n, ratio)]}
for path in files:
    report = json.load(open(path))
    machine = report["machine"]
    for row in report["rows"]:
        suite, stack = row["suite"], row["batch"] is not None
        if suite == "host":
            where, order = f"{machine.get('cpus', '?')} CPU cores", 0
        else:
            where, order = machine.get("gpu", "GPU"), 2
        key = (order + (1 if stack or suite == "batched" else 0),
               f"{where}: {'stacks (batch x n)' if stack or suite == 'batched' else 'one matrix'}")
        tessera = row["peers"].get("tessera", {}).get("rate")
        for peer, cell in row["peers"].items():
            rate = cell.get("rate")
            if peer == "tessera" or not all(isinstance(x, (int, float)) and math.isfinite(x) and x > 0
                                            for x in (rate, tessera)):
                continue
            panels.setdefault(key, {}).setdefault((peer, row["precision"]), []).append((row["n"], tessera / rate))
if not panels:
    sys.exit("no rows with Tessera and a peer in " + " ".join(files))
for index, (key, series) in enumerate(sorted(panels.items())):
    words, sizes = [], set()
    for (peer, precision), points in sorted(series.items()):
        with open(f"{out}/{index}_{peer}_{precision}.dat", "w") as f:
            for n, ratio in sorted(points):
                f.write(f"{n} {ratio:.4f}\n")
                sizes.add(n)
        words.append(f"{peer}_{precision}")
    tics = []
    for n in sorted(sizes):  # sizes within 1.4x of the last labelled one stay unlabelled
        if not tics or n >= 1.4 * tics[-1]:
            tics.append(n)
    print(f"{index}|{key[1]}|{' '.join(words)}|{', '.join(str(n) for n in tics)}")
PY
count=$(wc -l < "$data/panels")
columns=$((count > 1 ? 2 : 1))
rows=$(((count + 1) / 2))
{
  echo "set terminal $terminal"
  echo "set output \"$out\""
  echo "set multiplot layout $rows,$columns title \"${title:-Tessera's speed over each peer's, same arrays, same run}\""
  while IFS='|' read -r index panel words sizes; do
    plot_axes "$sizes"
    echo "set title \"$panel\""
    echo "set ylabel 'Tessera rate / peer rate'"
    echo "set yrange [0.25:8]"
    echo "set ytics (0.25, 0.5, 0.9, 1, 2, 4, 8)"
    plots="0.9 w l lc rgb '#7f8c8d' dt 2 t '0.9'"
    peers=()  # one colour per peer; one point shape per scalar type (circles, or squares for the second peer)
    for word in $words; do
      peer=${word%_*}
      precision=${word##*_}
      [ ${#peers[@]} -gt 0 ] && [ "${peers[-1]}" = "$peer" ] || peers+=("$peer")
      second=$(( ${#peers[@]} > 1 ? 1 : 0 ))
      colour=$([ $second = 1 ] && echo '#2471a3' || echo '#c0392b')
      case $precision in
        d) name=double; point=$([ $second = 1 ] && echo 5 || echo 7) ;;
        s) name=single; point=$([ $second = 1 ] && echo 4 || echo 6) ;;
        z) name="complex double"; point=$([ $second = 1 ] && echo 13 || echo 9) ;;
        *) name="complex single"; point=$([ $second = 1 ] && echo 12 || echo 8) ;;
      esac
      plots+=", \"$data/${index}_${word}.dat\" u 1:2 w p lc rgb '$colour' lw 1.5 pt $point ps 0.9 t '$peer, $name'"
    done
    echo "plot $plots"
  done < "$data/panels"
  echo "unset multiplot"
} > "$data/plot.gp"
gnuplot "$data/plot.gp"
echo "wrote $out"
