#!/usr/bin/env bash
# pdpotrf_ on R ranks of this machine, ScaLAPACK against Tessera (libtessera_lapack preloaded), the
# same grid, block size and matrix, one after the other:
# Each prints every repetition (the first includes a Tessera rank's start-up: StarPU, StarPU-MPI)
# and the median.
#   compare.sh BENCH_PDPOTRF LIBTESSERA_LAPACK GRID N NB THREADS_PER_RANK MODE [MPIEXEC FLAGS...]
# THREADS_PER_RANK: OpenBLAS threads of a ScaLAPACK rank, and CPU workers of a Tessera rank
# (StarPU-MPI's own thread comes on top). MODE: Tessera's mode (cpu, gpu, auto).
set -uo pipefail
bench=$1 library=$2 grid=$3 n=$4 nb=$5 threads=$6 mode=$7
shift 7
ranks=$(( ${grid%x*} * ${grid#*x} ))
echo "== ScaLAPACK, $ranks ranks, grid $grid, nb $nb, $threads OpenBLAS thread(s) per rank"
mpirun -np "$ranks" "$@" -x OPENBLAS_NUM_THREADS="$threads" \
  "$bench" --grid "$grid" --n "$n" --nb "$nb" --repetitions 3
echo "== Tessera ($mode mode), $ranks ranks, grid $grid, nb $nb, $threads CPU worker(s) per rank"
mpirun -np "$ranks" "$@" -x LD_PRELOAD="$library" -x OMPI_MPI_THREAD_LEVEL=3 -x OPENBLAS_NUM_THREADS=1 \
  -x STARPU_NCPU="$threads" -x STARPU_SILENT=1 -x TESSERA_MODE="$mode" -x TESSERA_LAPACK_VERBOSE=1 \
  "$bench" --grid "$grid" --n "$n" --nb "$nb" --repetitions 3 > "${TMPDIR:-/tmp}/tessera_pdpotrf.log" 2>&1
grep -E '^(\{|median)' "${TMPDIR:-/tmp}/tessera_pdpotrf.log"
echo "pdpotrf_ calls Tessera computed (all ranks): $(grep -c 'PDPOTRF.*: tessera' "${TMPDIR:-/tmp}/tessera_pdpotrf.log")"
