#!/usr/bin/env bash
# potf2 variants 2 and 3: every CUDA kernel test, the potf2 sweep (every candidate and cuSOLVER), then
# T-res with the shipped table against the table the sweep gives, one fresh process each, two rounds.
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle27.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib27:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
pack() { tar czf "$OUT/logs.tgz.tmp" -C /tmp logs && mv "$OUT/logs.tgz.tmp" "$OUT/logs.tgz"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $L/machine.txt; cat $L/machine.txt
timeout -k 10 300 $B/bin27/tessera_cuda_kernel_tests --gtest_brief=1 > $L/kernel_tests.txt 2>&1; echo "kernel tests rc $?"; tail -3 $L/kernel_tests.txt
pack
timeout 200 $B/bin27/bench_tile_kernels --ops potf2 --nb 32,64,128,256,512,1024,2048 --precision both --reps 7 --tune $L/potf2.json > $L/tile.txt 2>&1; echo "tile rc=$?"
grep -E "^best|^ +[sd] potf2" $L/tile.txt
pack
python3 - "$L/potf2.json" $B/bin27/old_sm_90.json $L/new_sm_90.json <<'PY'
import json, sys
new = json.load(open(sys.argv[1]))["entries"]
old = json.load(open(sys.argv[2]))
keys = {(e["precision"], e["op"], e["nb"]) for e in new}
json.dump(dict(old, entries=[e for e in old["entries"] if (e["precision"], e["op"], e["nb"]) not in keys] + new), open(sys.argv[3], "w"), indent=1)
PY
cp $B/bin27/old_sm_90.json $L/old_sm_90.json
for round in 1 2; do for tag in old new; do
  STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_TUNING_FILE=$L/${tag}_sm_90.json timeout 150 $B/bin27/bench_gpu_potrf --sizes 8192,16384 --precisions d,s --uplos L --modes resident --peers resident --repetitions 3 --json $L/tres_${tag}_$round.json > $L/tres_${tag}_$round.txt 2>&1; echo "T-res $tag round $round rc=$?"; grep -E "^ +[0-9]+ |precision\\." $L/tres_${tag}_$round.txt | cut -c1-80
  pack
done; done
