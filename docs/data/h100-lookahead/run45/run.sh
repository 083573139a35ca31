#!/usr/bin/env bash
# Final build (68af0be): the policy, trace and factorization tests under lookahead, critical-path-heft and
# owner-computes (the policies whose code the last commits touched).
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle45.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib45:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for pol in lookahead critical-path-heft owner-computes; do
  TESSERA_POLICY=$pol STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 5 45 $B/bin45/tessera_tests --gtest_brief=1 \
    --gtest_filter='Policies.*:Trace.*:AllModes/Factorization.*:Errors.NotPositive*' > $L/tests_$pol.txt 2>&1
  echo "$pol rc $?"; grep -E "FAILED  \]" $L/tests_$pol.txt | head -5; tail -2 $L/tests_$pol.txt
done
cp $L/*.txt $OUT/
