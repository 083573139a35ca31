#!/usr/bin/env bash
# Simulated scaling runs of Tessera's tile Cholesky (docs/scaling.md). Needs
# scripts/install-simgrid-deps.sh and a simulation build:
#   cmake -S . -B build-simgrid -DTESSERA_SIMGRID=ON && cmake --build build-simgrid -j2
# Usage: bench/simgrid/run.sh OUTDIR [models|single|multi|weak|local] ...
#   models  the simulated nodes (h100_node.py) from the H100's calibration H100_FROM (host h100):
#           h100x1 and h100x4 (1 and 4 GPUs, each as 2 CUDA devices at half the measured task
#           times), h100x1-k4 (1 GPU as 4 devices at the measured times), h100x1-c2 (2 devices at
#           the measured times)
#   single  one node against the H100's figures: every h100x1* node, n/nb of the real benchmarks,
#           tiles resident on the GPU, in host memory, and from a host array -> OUTDIR/single.jsonl;
#           h100x4 at the strong-scaling sizes -> OUTDIR/node4.jsonl
#   multi   strong scaling, StarPU-MPI over SMPI: NODES (4 16 64) nodes of h100x4 on a fat tree,
#           SIZES (32768 65536), MALLOC_COSTS (0 1) -> OUTDIR/multi.jsonl (or RESULTS), logs in OUTDIR/logs
#   weak    WEAK ("4:32768 16:65536"; nodes:n pairs) the same way -> OUTDIR/weak.jsonl
#   local   this machine's CPU models (MODELS_LOCAL, STARPU_HOSTNAME LOCAL_HOST), one CPU worker
#           per rank: 1 rank, 1x2, 2x2 at LOCAL_N (3000), nb 250 -> OUTDIR/local.jsonl
#   local-real  the same runs for real with TESSERA (a normal build's tessera) and mpirun, REPS (3)
#           times each -> OUTDIR/local-real.jsonl (with the load average)
#   calibrate-local  calibrates MODELS_LOCAL for LOCAL_HOST with the real 1-rank run (4 times)
# Folded memory under SMPI is mapped in blocks of smpi/shared-malloc-blocksize: one 32 MiB block a
# tile keeps the mappings under vm.max_map_count (1 MiB blocks failed from 16 ranks at n = 65536).
# Environment: BUILD (build-simgrid), MODELS (model dir; `models` writes it), H100_FROM
# (bench/simgrid/models, the H100's calibration), NODE_BW (GB/s per fat-tree link, 25),
# NODE_LAT (us, 1), TIMEOUT (s per run, 3600). Every run's JSON line gets the simulation's own
# wall time (sim_wall_s).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$1; shift
mkdir -p "$out/logs"
build=${BUILD:-$root/build-simgrid}
models=${MODELS:-$root/build-simgrid/models-h100}
smpirun=${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}/starpu-simgrid/bin/starpu_smpirun
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# No calibration in simulation; one CUDA worker per simulated device; vendor kernels (the models'
# implementation 0, the faster of the two measured); tiles folded in 32 MiB pieces; one CPU worker
# (in gpu mode on tiles the CPU workers run nothing; fewer simulated threads).
export STARPU_CALIBRATE=0 TESSERA_WORKERS_PER_CUDA=1 TESSERA_GPU_KERNELS=vendor STARPU_MALLOC_SIMULATION_FOLD=32
export STARPU_PERF_MODEL_DIR=$models STARPU_WORKER_STATS=1 STARPU_COMM_STATS=1

# run LOG FIELDS COMMAND...: the command's "simulated" JSON line, with FIELDS and its wall time.
run() {
  local log=$1 fields=$2 start=$SECONDS line; shift 2
  line=$(timeout "${TIMEOUT:-3600}" "$@" --json 2>"$log" | grep '"simulated"' || true)
  sed -i '/ker_lmm\/WARNING/d;/MPI_Init_thread level/d;/^[[:space:]]*$/d' "$log"  # SimGrid's and StarPU's noise
  [ -n "$line" ] || { echo "no result: $* (see $log)" >&2; return 0; }
  echo "${line%\}},$fields,\"sim_wall_s\":$((SECONDS - start))}"
}

distributed() {  # OUTFILE NODES N COST
  local nodes=$2 n=$3 cost=$4 p q
  p=$(python3 -c "import math;n=$nodes;p=math.isqrt(n);print(max(d for d in range(1,p+1) if n%d==0))"); q=$((nodes / p))
  python3 "$here/make_platform.py" cluster --nodes "$nodes" --bw "${NODE_BW:-25}" --lat "${NODE_LAT:-1}" "$tmp/c.xml" "$tmp/hosts"
  STARPU_HOSTNAME=h100x4 STARPU_NCPU=1 STARPU_SIMGRID_CUDA_MALLOC_COST=$cost \
    run "$out/logs/mpi-$nodes-$n-$cost${NODE_BW:+-bw$NODE_BW}.log" "\"node\":\"h100x4\",\"nodes\":$nodes,\"malloc_cost\":$cost,\"node_bw\":${NODE_BW:-25}" \
    "$smpirun" -platform "$tmp/c.xml" -hostfile "$tmp/hosts" -np "$nodes" "$build/sim/libtessera-sim-mpi.so" \
    --cfg=smpi/shared-malloc-blocksize:$((32 << 20)) --n "$n" --nb 2048 --grid "${p}x${q}" --mode gpu >> "$1"
}

for what in "$@"; do
  case $what in
    models)
      from=${H100_FROM:-$root/bench/simgrid/models}
      for spec in "h100x1 1 2 4" "h100x4 4 2 4" "h100x1-k4 1 4 4" "h100x1-c2 1 2 2"; do
        set -- $spec
        python3 "$here/h100_node.py" "$models" --host "$1" --gpus "$2" --streams "$3" --sharing "$4" \
          --from "$from" --from-host h100 > "$out/logs/models-$1.txt"
      done ;;
    single)
      for host in h100x1 h100x1-k4 h100x1-c2; do
        for size in "8192 1024" "16384 1024" "16384 2048" "30000 2048" "32768 2048"; do
          set -- $size
          for from in --resident "" --host; do
            STARPU_HOSTNAME=$host run "$out/logs/single.log" "\"node\":\"$host\"" \
              "$build/sim/tessera-sim" --n "$1" --nb "$2" --mode gpu $from >> "$out/single.jsonl"
          done
        done
      done
      for n in ${SIZES:-16384 32768 65536}; do
        STARPU_HOSTNAME=h100x4 run "$out/logs/node4-$n.log" "\"node\":\"h100x4\"" \
          "$build/sim/tessera-sim" --n "$n" --nb 2048 --mode gpu >> "$out/node4.jsonl"
      done ;;
    multi)
      for n in ${SIZES:-32768 65536}; do
        for nodes in ${NODES:-4 16 64}; do
          for cost in ${MALLOC_COSTS:-0 1}; do distributed "$out/${RESULTS:-multi.jsonl}" "$nodes" "$n" "$cost"; done
        done
      done ;;
    weak)
      for pair in ${WEAK:-4:32768 16:65536}; do
        for cost in ${MALLOC_COSTS:-0 1}; do distributed "$out/weak.jsonl" "${pair%:*}" "${pair#*:}" "$cost"; done
      done ;;
    local)
      export STARPU_PERF_MODEL_DIR=${MODELS_LOCAL:?a model dir calibrated here} STARPU_HOSTNAME=${LOCAL_HOST:?} STARPU_NCPU=1
      unset TESSERA_GPU_KERNELS
      n=${LOCAL_N:-3000}
      run "$out/logs/local-1.log" "\"node\":\"$LOCAL_HOST\"" "$build/sim/tessera-sim" --n "$n" --nb 250 --mode cpu --host >> "$out/local.jsonl"
      # LOCAL_HOST-half: the same machine with every task twice as long, i.e. each rank on half a
      # core, as 4 ranks on this machine's 2 cores are.
      python3 - "$STARPU_PERF_MODEL_DIR" "$LOCAL_HOST" <<'PY'
import glob, os, re, shutil, sys
d, host = sys.argv[1], sys.argv[2]
for f in glob.glob(f"{d}/bus/{host}.*"):
    shutil.copy(f, f.replace(f"/{host}.", f"/{host}-half."))
for f in glob.glob(f"{d}/codelets/45/*.{host}"):
    lines = []
    for line in open(f):
        c = line.split()
        if len(c) == 8 and re.fullmatch(r"[0-9a-f]{8}", c[0]):
            c[3], c[4], c[5], c[6] = (f"{float(c[3]) * 2:e}", f"{float(c[4]) * 2:e}", f"{float(c[5]) * 2:e}",
                                      f"{float(c[6]) * 4:e}")
            line = "\t".join(c) + "\n"
        lines.append(line)
    open(f + "-half", "w").writelines(lines)
PY
      for grid in 1x2 2x2; do
        np=$(( ${grid%x*} * ${grid#*x} ))
        python3 "$here/make_platform.py" cluster --nodes "$np" --bw "${NODE_BW:-25}" --lat "${NODE_LAT:-1}" "$tmp/c.xml" "$tmp/hosts"
        for host in "$LOCAL_HOST" "$LOCAL_HOST-half"; do
          [ "$grid" = 2x2 ] || [ "$host" = "$LOCAL_HOST" ] || continue
          STARPU_HOSTNAME=$host run "$out/logs/local-$grid.log" "\"node\":\"$host\"" "$smpirun" -platform "$tmp/c.xml" \
            -hostfile "$tmp/hosts" -np "$np" "$build/sim/libtessera-sim-mpi.so" --n "$n" --nb 250 --grid "$grid" --mode cpu \
            >> "$out/local.jsonl"
        done
      done ;;
    calibrate-local|local-real)
      export STARPU_PERF_MODEL_DIR=${MODELS_LOCAL:?} STARPU_HOSTNAME=${LOCAL_HOST:?} STARPU_NCPU=1
      tessera=${TESSERA:-$root/build/tessera}
      n=${LOCAL_N:-3000}
      if [ "$what" = calibrate-local ]; then
        for i in 1 2 3 4; do STARPU_CALIBRATE=1 "$tessera" potrf --n "$n" --nb 250 --mode cpu --ncpu 1 --no-check > /dev/null; done
        continue
      fi
      for grid in 1x1 1x2 2x2; do
        np=$(( ${grid%x*} * ${grid#*x} ))
        for i in $(seq "${REPS:-3}"); do
          load=$(cut -d' ' -f1 /proc/loadavg)
          if [ "$np" = 1 ]; then
            line=$("$tessera" potrf --n "$n" --nb 250 --mode cpu --ncpu 1 --no-check --json 2>/dev/null | grep seconds)
          else
            line=$(timeout 600 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" "$tessera" potrf --n "$n" \
                     --nb 250 --grid "$grid" --mode cpu --ncpu 1 --no-check --json 2>/dev/null | grep seconds)
          fi
          echo "${line%\}},\"real\":true,\"grid\":\"$grid\",\"loadavg\":$load}" >> "$out/local-real.jsonl"
        done
      done ;;
    *) echo "unknown step $what" >&2; exit 2 ;;
  esac
done
