#!/usr/bin/env bash
set -u
root=$PWD
cd .bundle && tar xJf deps20.tar.xz && tar xJf bundle49.tar.xz && cd "$root"
B=$root/.bundle
export STARPU_SILENT=1 STARPU_HOSTNAME=device LD_LIBRARY_PATH=$B/lib49:$B/lib:/usr/local/cuda/lib64
L=/tmp/logs; mkdir -p $L
for round in 1 2; do
STARPU_PERF_MODEL_DIR=$(mktemp -d) TESSERA_TRACE=$L/trace_$round.json timeout 120 $B/bin49/bench_gpu_potrf --sizes 4096,8192 --precisions d --uplos L --modes resident --peers resident --repetitions 3 --grains tiles,whole-matrix --json $L/tres4096_$round.json > $L/tres4096_$round.txt 2>&1
echo "round $round rc $?"; grep -E "^ +[0-9]+ " $L/tres4096_$round.txt | cut -c1-120
python3 -c "
import json,collections
t=json.load(open('$L/trace_$round.json'))
ev=sorted([e for e in t['traceEvents'] if e.get('ph')=='X'],key=lambda e:e['ts'])
groups=[];cur=[ev[0]];end=ev[0]['ts']+ev[0]['dur']
for e in ev[1:]:
  if e['ts']>end+2000: groups.append(cur);cur=[]
  cur.append(e);end=max(end,e['ts']+e['dur'])
groups.append(cur)
print([ (len(g), round((max(e['ts']+e['dur'] for e in g)-g[0]['ts'])/1000,2)) for g in groups])
"
done
tar czf $OUT/logs.tgz -C /tmp logs
