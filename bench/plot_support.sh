# Sourced by the plotting scripts (gnuplot: Debian's gnuplot-nox).
#   plot_terminal OUT WIDTH HEIGHT   the gnuplot terminal for OUT's extension (.svg or .png, a PNG
#                                    at 1.27 times the size); returns 2 on another extension
#   plot_axes SIZES                  gnuplot lines: grid, n on a log-2 axis with SIZES as its tics,
#                                    a log-10 y axis, three line styles (red, orange dashed, blue)
#   plot_scratch                     sets `data` to a fresh folder for the plot's data files,
#                                    removed when the script exits
plot_terminal() {
  case "$1" in
    *.svg) echo "svg size $2,$3 dynamic font \"sans,12\"" ;;
    *.png) echo "pngcairo size $(($2 * 127 / 100)),$(($3 * 127 / 100)) font \"sans,11\"" ;;
    *) return 2 ;;
  esac
}

plot_axes() {
  cat <<GP
set key top left font ",10"
set grid
set xlabel "n"
set logscale x 2
set logscale y 10
set xtics ($1)
set offsets graph 0.04, graph 0.04, 0, 0
set style line 1 lc rgb "#c0392b" lw 2 pt 7
set style line 2 lc rgb "#e67e22" lw 2 pt 6 dt 2
set style line 3 lc rgb "#2471a3" lw 2 pt 5
GP
}

plot_scratch() {
  data=$(mktemp -d)
  trap 'rm -rf "$data"' EXIT
}
