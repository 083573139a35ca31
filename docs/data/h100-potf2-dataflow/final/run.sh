#!/usr/bin/env bash
# Final build of potf2 variants 2 and 3: every CUDA kernel test, the largest variant-3 tile 20 times more;
# the potf2 sweep; T-res and gpu end to end with the shipped table against the table before variants 2
# and 3 (one fresh process each on an empty perf-model directory, two rounds alternating).
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle33a.tar.xz && tar xJf bundle33b.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib33:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
timeout -k 10 200 $B/bin33/tessera_cuda_kernel_tests --gtest_brief=1 > $L/kernel_tests.txt 2>&1; echo "kernel tests rc $?"; grep -E "FAILED" $L/kernel_tests.txt | head -5; tail -2 $L/kernel_tests.txt
timeout -k 10 100 $B/bin33/tessera_cuda_kernel_tests --gtest_brief=1 --gtest_repeat=20 --gtest_filter='*Potf2DataflowLargestTile*' > $L/stress.txt 2>&1; echo "stress rc $? (124: time limit)"; echo "failed: $(grep -c 'FAILED  \]' $L/stress.txt) passed-lines: $(grep -c 'PASSED' $L/stress.txt)"
pack
timeout 150 $B/bin33/bench_tile_kernels --ops potf2 --nb 32,64,128,256,512,1024,2048 --precision both --reps 7 --tune $L/potf2.json > $L/tile.txt 2>&1; echo "tile rc=$?"
grep -E "^best" $L/tile.txt
pack
for round in 1 2; do for tag in prev new; do
  if [ $tag = prev ]; then T="TESSERA_TUNING_FILE=$B/old_sm_90.json"; else T=""; fi
  env $T STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin33/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers resident --repetitions 3 --json $L/tres_${tag}_$round.json > $L/tres_${tag}_$round.txt 2>&1; echo "$tag round $round rc=$?"; grep -E "^ +[0-9]+ " $L/tres_${tag}_$round.txt | cut -c1-100
  pack
done; done
