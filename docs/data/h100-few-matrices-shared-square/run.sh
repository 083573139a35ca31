#!/bin/bash
# Whole-matrix kernel: speed against the panel kernel and cuSOLVER, its tests, racecheck.
set -u
mkdir -p /tmp/w && tar xJf .bundle-w/w.tar.xz -C /tmp/w || exit 1
export LD_LIBRARY_PATH=/tmp/w/lib:/usr/local/cuda/lib64
T() { local cap=$1; shift; echo "== $*"; local s=$(date +%s%N); timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt 2>&1
T 80 /tmp/w/bench_batched_few --sizes 33,48,64,96,128,160 --batches 1,8 --types d,s,z,c --widths 8,16,32 --reps 100 > $OUT/few.txt 2>&1
T 45 /tmp/w/tessera_cuda_kernel_tests --gtest_filter='*WholeMatrix*' > $OUT/tests_whole.txt 2>&1
T 40 /usr/local/cuda/bin/compute-sanitizer --tool racecheck /tmp/w/bench_batched_few --whole-only --sizes 40 --batches 1 --types d,c --widths 8,16 --calls 1 --reps 1 > $OUT/racecheck.txt 2>&1
cat $OUT/gpu.txt; cut -c1-330 $OUT/few.txt | grep -E "batch=   1|rc="; grep -E "^\[  (PASSED|FAILED) |^rc=|tests ran" $OUT/tests_whole.txt; grep -E "Failure" -A4 $OUT/tests_whole.txt | head -12; tail -n 3 $OUT/racecheck.txt
