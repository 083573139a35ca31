#!/usr/bin/env bash
# Tiles on the GPU factored as one task up to n = 10240, StarPU's background write-back off: tests and benchmarks.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle48.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib48:$B/lib:/usr/local/cuda/lib64
L=$OUT/logs; mkdir -p $L
pack() { :; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
for round in 1 2; do
  STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin48/bench_gpu_potrf --sizes 4096,8192,10240,12288,16384 --precisions d,s --uplos L --modes resident --peers resident --repetitions 3 --grains tiles --json $L/tres_$round.json > $L/tres_$round.txt 2>&1
  echo "T-res round $round rc $?"; grep -E "^ +[0-9]+ |grain|precision" $L/tres_$round.txt | cut -c1-120
done
for clean in 5 0; do
  STARPU_MINIMUM_CLEAN_BUFFERS=$clean STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin48/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers cusolver --repetitions 3 --json $L/e2e_clean$clean.json > $L/e2e_clean$clean.txt 2>&1
  echo "end to end, STARPU_MINIMUM_CLEAN_BUFFERS=$clean rc $?"; grep -E "^ +[0-9]+ " $L/e2e_clean$clean.txt | cut -c1-160
done
for clean in 5 0; do
  TESSERA_HOST_TILES=pinned STARPU_LIMIT_CUDA_MEM=2048 STARPU_MINIMUM_CLEAN_BUFFERS=$clean STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin48/bench_out_of_core --sizes 30000 --nb 2048 --mode gpu --panel-percents 30 > $L/ooc_clean$clean.txt 2>&1
  echo "out of core 2 GiB, STARPU_MINIMUM_CLEAN_BUFFERS=$clean rc $?"; tail -3 $L/ooc_clean$clean.txt
done
