#!/usr/bin/env bash
# Every tessera_tests test under lookahead, each test's start and end printed.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle43.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib43:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
TESSERA_POLICY=lookahead STARPU_PERF_MODEL_DIR=$(mktemp -d) timeout -k 10 420 $B/bin43/tessera_tests > $L/tests_lookahead_full.txt 2>&1 &
t=$!
while kill -0 $t 2>/dev/null; do sleep 20; pack; done
wait $t; echo "rc $?"
grep -E "^\[ RUN" $L/tests_lookahead_full.txt | tail -2; grep -E "FAILED  \]" $L/tests_lookahead_full.txt | sed 's/, where.*//' | sort -u | head -30; tail -4 $L/tests_lookahead_full.txt
grep -E "OK \] .*\(([0-9]{5,}) ms\)" $L/tests_lookahead_full.txt | head
pack
