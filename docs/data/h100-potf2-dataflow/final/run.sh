#!/usr/bin/env bash
# Final build of potf2 variants 2 and 3 with the new shipped table: every test on the GPU, potf2 alone
# against cuSOLVER (default configurations), and T-res / gpu end to end with the shipped table against
# the previous table (fresh perf models per process, two rounds alternating).
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle28.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib28:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
[ -x $B/bin28/tessera_cuda_kernel_tests ] && { timeout -k 10 200 $B/bin28/tessera_cuda_kernel_tests --gtest_brief=1 > $L/kernel_tests.txt 2>&1; echo "kernel tests rc $?"; tail -2 $L/kernel_tests.txt; }
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 400 $B/bin28/tessera_tests --gtest_brief=1 > $L/tessera_tests.txt 2>&1; echo "tessera_tests rc $?"; grep -E "FAILED|PASSED|SKIPPED" $L/tessera_tests.txt | tail -8
pack
true
pack
for round in 1 2; do for tag in prev new; do
  if [ $tag = prev ]; then T="TESSERA_TUNING_FILE=$B/old_sm_90.json"; else T=""; fi
  env $T STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 150 $B/bin28/bench_gpu_potrf --sizes 8192,16384 --precisions d,s --uplos L --modes resident,gpu --peers resident --repetitions 3 --json $L/tres_${tag}_$round.json > $L/tres_${tag}_$round.txt 2>&1; echo "$tag round $round rc=$?"; grep -E "^ +[0-9]+ |precision\\." $L/tres_${tag}_$round.txt | cut -c1-100
  pack
done; done
