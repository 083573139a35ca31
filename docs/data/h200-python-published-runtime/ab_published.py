# In one process, the package's cholesky_ex/cholesky of one GPU matrix with its dense calls made on
# the published runtime (the new entries) and through runtime_call() (as before), alternated in
# rounds, against PyTorch on the same tensors: host-only and synchronised time per call (us).
import sys, time, torch, numpy as np, tessera
label = sys.argv[1]
dev = torch.device("cuda")
def spd(n, dtype):
    g = torch.Generator(device="cpu").manual_seed(n)
    x = torch.randn(n, n, dtype=torch.float64, generator=g)
    return (x @ x.T + n * torch.eye(n, dtype=torch.float64)).to(dtype).to(dev)
def iso(f, reps=200):
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t0 = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return np.median(ts) / 1e3
def sync(f, reps=200):
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns(); f(); torch.cuda.synchronize(); ts.append(time.perf_counter_ns() - t0)
    return np.median(ts) / 1e3
published, calls = dict(tessera._POTRF_DENSE_INTO_PUBLISHED), dict(tessera._PUBLISHED_CALLS)
def use(on):
    tessera._POTRF_DENSE_INTO_PUBLISHED.update(published if on else {k: (lambda *a: False) for k in published})
    tessera._PUBLISHED_CALLS.clear()
    if on: tessera._PUBLISHED_CALLS.update(calls)
print(f"[{label}] {torch.cuda.get_device_name()}: medians over 8 alternated rounds of per-round medians of 200 calls")
for dt, n in ((torch.float64, 96), (torch.float64, 128), (torch.float64, 256), (torch.float32, 128)):
    a = spd(n, dt)
    for fname, f, r in (("cholesky_ex", tessera.cholesky_ex, torch.linalg.cholesky_ex), ("cholesky", tessera.cholesky, torch.linalg.cholesky)):
        res = {"published": [], "runtime_call": [], "torch": []}
        for _ in range(20): f(a); r(a)
        for rnd in range(8):
            for on in ((True, False) if rnd % 2 == 0 else (False, True)):
                use(on)
                key = "published" if on else "runtime_call"
                res[key].append((iso(lambda: f(a)), sync(lambda: f(a))))
            res["torch"].append((iso(lambda: r(a)), sync(lambda: r(a))))
        med = {k: (np.median([v[0] for v in vs]), np.median([v[1] for v in vs])) for k, vs in res.items()}
        print(f"[{label}] {fname:11s} {n:4d} {str(dt)[6:]:8s} host: published {med['published'][0]:6.1f} runtime_call {med['runtime_call'][0]:6.1f} torch {med['torch'][0]:6.1f} | "
              f"synced: published {med['published'][1]:6.1f} runtime_call {med['runtime_call'][1]:6.1f} torch {med['torch'][1]:6.1f} | "
              f"torch/published {med['torch'][1] / med['published'][1]:.2f} torch/runtime_call {med['torch'][1] / med['runtime_call'][1]:.2f}", flush=True)
use(True)
