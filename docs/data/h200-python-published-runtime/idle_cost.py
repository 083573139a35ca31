# What an idle Tessera runtime costs the process around it: CPU time while idle, per thread, and
# PyTorch's and Tessera's host time per call before and after the runtime starts (H200 host).
import os, sys, time, resource, torch, numpy as np, tessera
label = sys.argv[1]
dev = torch.device("cuda")
g = torch.Generator(device="cpu").manual_seed(1)
x = torch.randn(128, 128, dtype=torch.float64, generator=g)
a = (x @ x.T + 128 * torch.eye(128, dtype=torch.float64)).to(dev)
def host(f, reps=300):
    for _ in range(20): f()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t0 = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return np.median(ts) / 1e3
def threads():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            f = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
            name = open(f"/proc/self/task/{tid}/comm").read().strip()
            out[tid] = (name, int(f[11]) + int(f[12]), int(f[36]))  # utime+stime ticks, last cpu
        except OSError:
            pass
    return out
def idle_share(seconds=1.0):
    t0, r0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    th0 = threads()
    time.sleep(seconds)
    th1 = threads()
    r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.time()
    busy = sorted(((th1[t][1] - th0[t][1], th1[t][0], th1[t][2]) for t in th1 if t in th0), reverse=True)[:3]
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / (t1 - t0), busy
torch_before = host(lambda: torch.linalg.cholesky_ex(a))
share0, _ = idle_share()
tessera.cholesky_ex(a)
time.sleep(0.3)
share1, busy = idle_share()
torch_after = host(lambda: torch.linalg.cholesky_ex(a))
tess = host(lambda: tessera.cholesky_ex(a))
main_cpu = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[36])
print(f"[{label}] idle CPU share before the runtime {share0:.2f}, with it {share1:.2f} (busiest threads, ticks in 1 s: {busy}); "
      f"torch host us before {torch_before:.1f} after {torch_after:.1f}; tessera host {tess:.1f}; main thread last on cpu {main_cpu}", flush=True)
