#!/bin/bash
# One GPU call: where one matrix's cholesky_ex spends its time, Tessera's and PyTorch's (profiler).
set -u
B=$PWD/.bundleM; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp || exit 1
export PYTHONPATH=/tmp/site STARPU_SILENT=1 STARPU_PERF_MODEL_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $L/gpu.txt
timeout ${CAP:-200} python3 $B/prof.py $L > $L/prof.txt 2>&1; echo "rc=$?" >> $L/prof.txt
cd $L && for f in trace_*.json; do [ -f $f ] && gzip -9 $f; done
tar czf $OUT/logs.tgz -C $OUT logs
cat $L/gpu.txt; grep -E "^====|rc=" $L/prof.txt; ls -la $L
