# Before/after in one process pair: the package's calls against PyTorch, isolated host time and
# synchronised time per call (medians of 400), H200.
import time, sys, torch, numpy as np, tessera
dev = torch.device("cuda")
def spd(n, batch=None, dtype=torch.float64):
    g = torch.Generator(device="cpu").manual_seed(n)
    shape = (n, n) if batch is None else (batch, n, n)
    a = torch.randn(*shape, dtype=torch.float64, generator=g)
    return (a @ a.mT + n * torch.eye(n, dtype=torch.float64)).to(dtype).to(dev)
def iso(f, reps=400):
    for _ in range(20): f()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t0 = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t0)
    torch.cuda.synchronize()
    return np.median(ts) / 1e3
def sync(f, reps=400):
    for _ in range(20): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns(); f(); torch.cuda.synchronize(); ts.append(time.perf_counter_ns() - t0)
    return np.median(ts) / 1e3
label = sys.argv[1]
a128, a64 = spd(128), spd(64)
cases = []
for n, b in ((32, None), (32, 4096), (16, 4096), (48, 4096), (64, 1024), (128, None), (8, 10000)):
    c = torch.linalg.cholesky(spd(n, b))
    cases.append((f"cholesky_inverse {1 if b is None else b}x{n}", lambda c=c: tessera.cholesky_inverse(c, lower=True),
                  lambda c=c: torch.cholesky_inverse(c)))
c32f = torch.linalg.cholesky(spd(32, 4096, torch.float32))
cases.append(("cholesky_inverse 4096x32 f32", lambda: tessera.cholesky_inverse(c32f, lower=True), lambda: torch.cholesky_inverse(c32f)))
for dt in (torch.float64, torch.float32):
    for n in ((33, 48, 64, 80, 96, 128, 192, 256) if dt == torch.float64 else (64, 128)):
        m = spd(n, None, dt)
        tag = "" if dt == torch.float64 else " f32"
        cases += [(f"cholesky {n}{tag}", lambda m=m: tessera.cholesky(m), lambda m=m: torch.linalg.cholesky(m)),
                  (f"cholesky_ex {n}{tag}", lambda m=m: tessera.cholesky_ex(m), lambda m=m: torch.linalg.cholesky_ex(m))]
s16 = spd(16, 1000)
cases += [("cholesky 1000x16", lambda: tessera.cholesky(s16), lambda: torch.linalg.cholesky(s16))]
print(f"[{label}] {torch.cuda.get_device_name()} torch {torch.__version__}: us per call, medians of 400")
print(f"[{label}] {'':30s} {'tessera sync':>12s} {'torch sync':>10s} {'ratio':>6s} | {'tessera host':>12s} {'torch host':>10s}")
for name, t, r in cases:
    st, sr = sync(t), sync(r)
    ht, hr = iso(t), iso(r)
    print(f"[{label}] {name:30s} {st:12.1f} {sr:10.1f} {sr / st:6.2f} | {ht:12.1f} {hr:10.1f}", flush=True)
