#!/usr/bin/env bash
# Fresh processes, alternated: with the lazy forwarders (as built) and with the real CUDA libraries
# linked (LD_LIBRARY_PATH puts the toolkit's folder before the forwarders' one).
#   measure.sh BUILD_DIR [CUDA_LIBRARY_DIR]
cd "$1" || exit 1
real=${2:-/usr/local/cuda-13.0/lib}
t() { local s=$(date +%s%N); "$@" >/dev/null 2>&1; local e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
for prog in "./tessera potrf --n 300" "./tessera potrf --n 300 --mode cpu" "./examples/example_c_api" "./tessera info"; do
  lazy=(); eager=()
  for r in 1 2 3 4 5 6 7; do
    lazy+=($(t $prog)); eager+=($(LD_LIBRARY_PATH=$real t $prog))
  done
  echo "$prog: forwarders ${lazy[*]} ms | real libraries linked ${eager[*]} ms"
done
