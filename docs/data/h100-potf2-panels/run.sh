#!/usr/bin/env bash
# One H100, the final build of potf2 variant 1 (tessera_tests ran in a second call of the same build): the CUDA kernel tests; the potf2 tuning sweep (every
# candidate, both variants, and cuSOLVER); T-res with custom kernels forced, the previous shipped
# table (potf2 variant 0) against the new one (variant 1 from nb 256), one process each, twice.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle25.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib25:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
timeout -k 10 300 $B/bin25/tessera_cuda_kernel_tests --gtest_brief=1 > $L/tests.txt 2>&1; echo "kernel tests rc $?"; tail -4 $L/tests.txt
pack
timeout 200 $B/bin25/bench_tile_kernels --ops potf2 --nb 64,128,256,512,1024,2048 --precision both --reps 7 --tune $L/potf2.json > $L/tile.txt 2>&1; echo "tile rc=$?"
grep -E "^best|^prec|^ +[sd] potf2" $L/tile.txt
pack
python3 - "$L/potf2.json" $B/bin25/old_sm_90.json $B/bin25/new_sm_90.json <<'PY'
import json, sys
new = json.load(open(sys.argv[1]))["entries"]
old = json.load(open(sys.argv[2]))
keys = {(e["precision"], e["op"], e["nb"]) for e in new}
order = [(e["precision"], e["op"], e["nb"]) for e in old["entries"]]
merged = [e for e in old["entries"] if (e["precision"], e["op"], e["nb"]) not in keys] + new
merged.sort(key=lambda e: order.index((e["precision"], e["op"], e["nb"])) if (e["precision"], e["op"], e["nb"]) in order else 10**6)
json.dump(dict(old, entries=merged), open(sys.argv[3], "w"), indent=2, sort_keys=True)
PY
cp $B/bin25/new_sm_90.json $L/new_sm_90.json
for round in 1 2; do for tag in old new; do
  STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_TUNING_FILE=$B/bin25/${tag}_sm_90.json timeout 100 $B/bin25/bench_gpu_potrf --sizes 8192,16384 --precisions d --uplos L --modes resident --gpu-kernels custom --repetitions 3 --json $L/custom_${tag}_$round.json > $L/custom_${tag}_$round.txt 2>&1; echo "custom $tag round $round rc=$?"; grep -E "^ +[0-9]+ " $L/custom_${tag}_$round.txt
  pack
done; done
