#!/usr/bin/env bash
# Simulated scaling runs of Tessera's tile Cholesky (docs/scaling.md). Needs
# scripts/install-simgrid-deps.sh and a simulation build:
#   cmake -S . -B build-simgrid -DTESSERA_SIMGRID=ON && cmake --build build-simgrid -j2
# Usage: bench/simgrid/run.sh OUT.jsonl [single|multi|local] ...
#   single  one simulated node of 1 H100 (h100x1) and of 4 (h100x4), n = 8192 .. 40960, nb 2048
#   multi   StarPU-MPI over SMPI on NODES (default "4 16") nodes of 4 H100, fat tree, sizes in SIZES
#   local   this machine's CPU models (MODELS_LOCAL, STARPU_HOSTNAME LOCAL_HOST): 1 rank and 2x2
# Environment: BUILD (build-simgrid), MODELS (a model dir made by h100_node.py; made if absent),
# NODE_BW (GB/s per fat-tree link, 25), NODE_LAT (us, 1), MALLOC_COST (StarPU's simulated cost of
# pinned host allocations, 1 = StarPU's default, 0 = off), SIZES, NODES.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$1; shift
build=${BUILD:-$root/build-simgrid}
models=${MODELS:-$root/build-simgrid/models-h100}
smpirun=${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}/starpu-simgrid/bin/starpu_smpirun
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
[ -d "$models/bus" ] || { python3 "$here/h100_node.py" "$models" --host h100x1 --gpus 1 ${H100_FROM:+--from "$H100_FROM"};
                          python3 "$here/h100_node.py" "$models" --host h100x4 --gpus 4 ${H100_FROM:+--from "$H100_FROM"}; }
# No calibration in simulation; one CUDA worker per GPU (the models are idle-GPU times); vendor
# kernels (the models' implementation 0); tiles folded in 32 MiB pieces (one mapping per tile).
export STARPU_CALIBRATE=0 TESSERA_WORKERS_PER_CUDA=1 TESSERA_GPU_KERNELS=vendor STARPU_MALLOC_SIMULATION_FOLD=32
export STARPU_SIMGRID_CUDA_MALLOC_COST=${MALLOC_COST:-1}
filter() { grep '"simulated"' | sed "s/}\$/,\"malloc_cost\":${MALLOC_COST:-1},\"node_bw\":${NODE_BW:-25}}/"; }

for what in "$@"; do
  case $what in
    single)
      export STARPU_PERF_MODEL_DIR=$models
      for host in h100x1 h100x4; do
        for n in ${SIZES:-8192 16384 24576 32768 40960}; do
          for from in "" --host; do
            start=$SECONDS
            STARPU_HOSTNAME=$host "$build/sim/tessera-sim" --n "$n" --nb 2048 --mode gpu $from --json 2>/dev/null \
              | sed "s/\"simulated\":true/\"simulated\":true,\"node\":\"$host\"/" | filter $((SECONDS - start)) >> "$out" || true
          done
        done
      done ;;
    multi)
      export STARPU_PERF_MODEL_DIR=$models STARPU_HOSTNAME=h100x4
      for nodes in ${NODES:-4 16}; do
        p=$(python3 -c "import math;n=$nodes;p=int(math.isqrt(n));print(p)"); q=$((nodes / p))
        python3 "$here/platform.py" cluster --nodes "$nodes" --bw "${NODE_BW:-25}" --lat "${NODE_LAT:-1}" "$tmp/c.xml" "$tmp/hosts"
        for n in ${SIZES:-32768 65536}; do
          start=$SECONDS
          timeout "${TIMEOUT:-900}" "$smpirun" -platform "$tmp/c.xml" -hostfile "$tmp/hosts" -np "$nodes" "$build/sim/libtessera-sim-mpi.so" \
            --n "$n" --nb 2048 --grid "${p}x${q}" --mode gpu --json 2>/dev/null \
            | sed "s/\"simulated\":true/\"simulated\":true,\"node\":\"h100x4\",\"nodes\":$nodes/" | filter $((SECONDS - start)) >> "$out" || true
        done
      done ;;
    local)
      export STARPU_PERF_MODEL_DIR=${MODELS_LOCAL:?a model dir calibrated here} STARPU_HOSTNAME=${LOCAL_HOST:?} STARPU_NCPU=1
      unset TESSERA_GPU_KERNELS
      for n in ${SIZES:-2000 4000}; do
        STARPU_NCPU=2 "$build/sim/tessera-sim" --n "$n" --nb 250 --mode cpu --json 2>/dev/null | filter 0 >> "$out" || true
        STARPU_NCPU=1 "$build/sim/tessera-sim" --n "$n" --nb 250 --mode cpu --json 2>/dev/null | filter 0 >> "$out" || true
        for grid in 1x2 2x2; do
          np=$(( ${grid%x*} * ${grid#*x} ))
          python3 "$here/platform.py" cluster --nodes "$np" --bw "${NODE_BW:-5}" --lat "${NODE_LAT:-1}" "$tmp/c.xml" "$tmp/hosts"
          "$smpirun" -platform "$tmp/c.xml" -hostfile "$tmp/hosts" -np "$np" "$build/sim/libtessera-sim-mpi.so" \
            --n "$n" --nb 250 --grid "$grid" --mode cpu --json 2>/dev/null | filter 0 >> "$out" || true
        done
      done ;;
  esac
done
