#!/usr/bin/env bash
# Final build: tiles already on the GPU factored as one task up to n = 10240; StarPU's background
# write-back off unless RuntimeOptions::background_write_back (TESSERA_BACKGROUND_WRITE_BACK=1).
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle49.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib49:$B/lib:/usr/local/cuda/lib64
L=$OUT/logs; mkdir -p $L
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
timeout 60 $B/bin49/tessera_cuda_kernel_tests --gtest_filter='MatrixUtils*' > $L/kernel_tests.txt 2>&1; echo "kernel tests rc $?"; tail -1 $L/kernel_tests.txt
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin49/bench_gpu_potrf --sizes 4096,8192,10240,12288,16384 --precisions d,s --uplos L --modes resident --peers resident --repetitions 3 --grains tiles --json $L/tres.json > $L/tres.txt 2>&1
echo "T-res rc $?"; grep -E "^ +[0-9]+ |precision" $L/tres.txt | cut -c1-120
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 120 $B/bin49/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident,gpu --peers cusolver --repetitions 3 --json $L/e2e.json > $L/e2e.txt 2>&1
echo "end to end rc $?"; grep -E "^ +[0-9]+ " $L/e2e.txt | cut -c1-160
for round in 1 2; do for wb in 1 0; do
  TESSERA_BACKGROUND_WRITE_BACK=$wb TESSERA_HOST_TILES=pinned STARPU_LIMIT_CUDA_MEM=2048 STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout 100 $B/bin49/bench_out_of_core --sizes 30000 --nb 2048 --mode gpu --panel-percents 30 > $L/ooc_${round}_wb$wb.txt 2>&1
  echo "out of core 2 GiB round $round TESSERA_BACKGROUND_WRITE_BACK=$wb rc $? $(tail -1 $L/ooc_${round}_wb$wb.txt)"
done; done
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 400 $B/bin49/tessera_tests > $L/tests.txt 2>&1
echo "tests rc $?"; grep -E "FAILED  \]" $L/tests.txt | head; tail -3 $L/tests.txt; grep -E "ModerateOrderOnTheGpu" $L/tests.txt | grep -E "OK|FAIL"
STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 100 $B/bin49/tessera_gpu_memory_test > $L/gpu_memory_tests.txt 2>&1
echo "gpu memory tests rc $?"; tail -1 $L/gpu_memory_tests.txt
