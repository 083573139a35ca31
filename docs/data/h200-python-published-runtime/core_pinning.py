# The calling thread pinned to each core in turn, in one process with the runtime started: PyTorch's
# and Tessera's host time per call of cholesky_ex (order 128, double), and where the runtime's
# threads are bound; the busiest threads during the measurement.
import os, sys, time, glob, torch, numpy as np, tessera
label = sys.argv[1]
dev = torch.device("cuda")
g = torch.Generator(device="cpu").manual_seed(1)
x = torch.randn(128, 128, dtype=torch.float64, generator=g)
a = (x @ x.T + 128 * torch.eye(128, dtype=torch.float64)).to(dev)
def host(f, reps=200):
    for _ in range(20): f()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t0 = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return np.median(ts) / 1e3
def threads():
    out = {}
    for t in glob.glob("/proc/self/task/*"):
        tid = int(t.rsplit("/", 1)[1])
        try:
            f = open(t + "/stat").read().rsplit(")", 1)[1].split()
            out[tid] = (open(t + "/comm").read().strip(), int(f[11]) + int(f[12]), sorted(os.sched_getaffinity(tid)))
        except OSError:
            pass
    return out
everything = os.sched_getaffinity(0)
tessera.cholesky_ex(a)
th0 = threads()
bound = sorted((v[0], v[2][0]) for v in th0.values() if len(v[2]) == 1)
print(f"[{label}] threads bound to one core: {bound}", flush=True)
main = os.getpid()
rows = []
for rep in range(2):
    for core in sorted(everything):
        os.sched_setaffinity(0, {core})
        rows.append((core, host(lambda: torch.linalg.cholesky_ex(a)), host(lambda: tessera.cholesky_ex(a))))
os.sched_setaffinity(0, everything)
free = (host(lambda: torch.linalg.cholesky_ex(a)), host(lambda: tessera.cholesky_ex(a)))
th1 = threads()
busy = sorted(((th1[t][1] - th0[t][1], th1[t][0], th1[t][2][:3]) for t in th1 if t in th0), reverse=True)[:4]
for core in sorted(everything):
    r = [row for row in rows if row[0] == core]
    print(f"[{label}] core {core:2d}: torch {r[0][1]:5.1f} {r[1][1]:5.1f}  tessera {r[0][2]:5.1f} {r[1][2]:5.1f}", flush=True)
print(f"[{label}] unpinned: torch {free[0]:.1f} tessera {free[1]:.1f}; busiest threads (ticks): {busy}", flush=True)
