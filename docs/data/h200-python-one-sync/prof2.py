"""Which threads of the process use CPU while one GPU matrix of order 96 is factored through the
vendor route, in phases: at start, after idle time, right after a request that runs tasks."""
import os, time, numpy as np, torch, tessera
from prof_v import per_call, spd

def thread_times():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f: fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/self/task/{tid}/comm") as f: name = f.read().strip()
            out[tid] = (name, int(fields[11]) + int(fields[12]))
        except OSError: pass
    return out

tick = os.sysconf("SC_CLK_TCK")
a = spd(96)
ex = lambda: tessera.cholesky_ex(a); sy = lambda: tessera.cholesky(a)
tex = lambda: torch.linalg.cholesky_ex(a); tsy = lambda: torch.linalg.cholesky(a)
rng = np.random.default_rng(0); g = rng.standard_normal((3000, 3000)); host = g @ g.T / 3000 + np.eye(3000)
for _ in range(50): ex(); sy(); tex(); tsy()

def phase(label):
    before = thread_times(); t0 = time.perf_counter()
    r = [per_call(ex), per_call(sy), per_call(tex), per_call(tsy), per_call(ex), per_call(sy)]
    wall = time.perf_counter() - t0; after = thread_times()
    busy = sorted(((after[t][1] - before.get(t, (None, 0))[1]) / tick, after[t][0], t) for t in after)[::-1][:6]
    print(f"{label:32s} ex {r[0]:6.1f} sync {r[1]:6.1f} | torch ex {r[2]:6.1f} sync {r[3]:6.1f} | ex {r[4]:6.1f} sync {r[5]:6.1f}"
          f" | wall {wall:.2f} s; busiest threads (CPU s): " + ", ".join(f"{n}:{c:.2f}" for c, n, _ in busy), flush=True)

print("threads:", len(os.listdir("/proc/self/task")))
phase("start")
time.sleep(0.1); phase("after 100 ms idle")
tessera.cholesky(host); phase("right after a task request")
time.sleep(0.1); phase("100 ms after it")
tessera.cholesky(host); time.sleep(0.002); phase("2 ms after a task request")
for k in range(3):
    time.sleep(0.1); phase(f"idle again {k}")
