#!/bin/bash
# One GPU call: the binary wheel (cp312) and the build's programs linked against the wheel's
# libraries, with the lazy CUDA forwarders: forwarding, C++ device tests, CLI, drop-in, the
# package's tests, fresh processes.
set -u
start=$(date +%s); budget=${BUDGET:-570}
B=$PWD/.bundleE; L=$OUT/logs; mkdir -p $L
tar xJf $B/site.tar.xz -C /tmp && tar xJf $B/x.tar.xz -C /tmp || exit 1
S=/tmp/site; X=/tmp/x; F=$S/tessera/_cuda_forwarders
C=""; for d in /usr/local/cuda/lib64 /usr/local/cuda-13.0/targets/x86_64-linux/lib; do [ -d $d ] && C=$C:$d; done
LLP=$F:$S/tessera_cholesky.libs$C
export STARPU_SILENT=1 STARPU_HOSTNAME=device STARPU_PERF_MODEL_DIR=/tmp/pm; mkdir -p /tmp/pm
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv > $L/gpu.txt
echo "LD_LIBRARY_PATH for programs: $LLP" > $L/env.txt; python3 --version >> $L/env.txt
left() { echo $(( budget - ($(date +%s) - start) )); }
T() { local cap=$1; shift; local l=$(left); [ $l -lt 15 ] && { echo "== SKIPPED (time) $*"; return; }; [ $cap -gt $l ] && cap=$l; echo "== $*"; local s=$(date +%s%N); timeout $cap "$@"; local r=$?; echo "rc=$r ($(( ($(date +%s%N)-s)/1000000 )) ms)"; }
P() { LD_LIBRARY_PATH=$LLP T "$@"; }
{
P 60 $X/lazy_cuda_forwarding $F
LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/lddebug LD_LIBRARY_PATH=$LLP timeout 120 $X/tessera potrf --n 4000 --mode gpu > $L/cli_4000.txt 2>&1; echo "ld_debug run rc=$?"
cat /tmp/lddebug.* > $L/ld_debug_gpu.txt; grep "calling init:" $L/ld_debug_gpu.txt | grep -E "cublas|cusolver|cusparse|nvJitLink|cudart" | sed 's/.*calling init: //'
cat $L/cli_4000.txt
P 60 $X/tessera info
} > $L/forwarders.txt 2>&1
P 150 $X/tessera_cuda_device_tests --gtest_brief=1 > $L/device_tests.txt 2>&1
P 60 $X/tessera_attach_test --gtest_brief=1 > $L/attach.txt 2>&1
{
for m in gpu hybrid auto; do P 60 $X/tessera potrf --n 20000 --mode $m; done
for n in 8 32 128 512; do c=10000; [ $n -ge 256 ] && c=1000; P 40 $X/tessera batched --n $n --count $c --mode gpu; done
} > $L/cli.txt 2>&1
{
echo "fresh processes: tessera potrf --n 300 --mode gpu; forwarders first, then the real libraries first"
for i in 1 2 3 4; do for order in forwarders real; do
  if [ $order = real ]; then P2=$S/tessera_cholesky.libs$C:$F; else P2=$LLP; fi
  s=$(date +%s%N); LD_LIBRARY_PATH=$P2 $X/tessera potrf --n 300 --mode gpu > /dev/null 2>&1; r=$?; e=$(date +%s%N)
  echo "$order rc=$r $(( (e-s)/1000000 )) ms"
done; done
} > $L/fresh.txt 2>&1
{
P 60 $X/bench_lapack_potrf --sizes 2000,4000,8000 --reps 3
LD_PRELOAD=$X/libtessera_lapack.so TESSERA_MODE=gpu TESSERA_LAPACK_MIN_N=0 TESSERA_LAPACK_VERBOSE=1 P 60 $X/bench_lapack_potrf --sizes 2000,4000,8000 --reps 3 2>&1 | tail -8
} > $L/lapack.txt 2>&1
export PYTHONPATH=$S
python3 - > $L/python_loaded.txt 2>&1 <<'PY'
import tessera, torch
a = torch.randn(300, 300, dtype=torch.float64, device="cuda"); a = a @ a.T + 300 * torch.eye(300, device="cuda", dtype=torch.float64)
l = tessera.cholesky(a); torch.cuda.synchronize()
print("residual", float((l @ l.T - a).abs().max() / a.abs().max()))
maps = open("/proc/self/maps").read().splitlines()
print("\n".join(sorted(set(m.split()[-1] for m in maps if any(k in m for k in ("cublas", "cusolver", "cusparse", "nvJitLink"))))))
PY
T 300 python3 -m pytest -q -x -p no:cacheprovider python/tests > $L/pytest.txt 2>&1
{ for i in 1 2 3; do python3 -c "
import time; t=time.perf_counter(); import tessera, torch; t1=time.perf_counter()
a=torch.eye(300,dtype=torch.float64,device='cuda')*4; torch.cuda.synchronize(); t2=time.perf_counter()
l=tessera.cholesky(a); torch.cuda.synchronize(); t3=time.perf_counter()
l=tessera.cholesky(a); torch.cuda.synchronize(); t4=time.perf_counter()
print(f'import {1e3*(t1-t):.0f} ms, torch cuda init {1e3*(t2-t1):.0f} ms, first cholesky {1e3*(t3-t2):.1f} ms, second {1e3*(t4-t3):.2f} ms')"; done; } > $L/python_fresh.txt 2>&1
P 120 $X/bench_gpu_potrf --sizes 16384 --json $L/bench_gpu.json > $L/bench_gpu.txt 2>&1
tar czf $OUT/logs.tgz -C $OUT logs
cd $L; head -n 3 gpu.txt; cat forwarders.txt; tail -n 3 device_tests.txt attach.txt; grep -E "^==|rc=|^ +[0-9]" cli.txt | head -30; cat fresh.txt; tail -n 10 lapack.txt; cat python_loaded.txt; tail -n 4 pytest.txt; cat python_fresh.txt; tail -n 15 bench_gpu.txt
