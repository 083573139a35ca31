# Before/after: the package's GPU calls against PyTorch on the same tensors, synchronised and
# host-only time per call (medians of 400), one process per build, H200.
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
def stream(f, reps=400):
    for _ in range(20): f()
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(reps): f()
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0) / reps / 1e3
label = sys.argv[1]
cases = []
for dt in (torch.float64, torch.float32):
    for n in ((48, 64, 80, 96, 128, 192, 256, 512) if dt == torch.float64 else (96, 128, 256)):
        m = spd(n, None, dt)
        tag = "" if dt == torch.float64 else " f32"
        cases += [(f"cholesky {n}{tag}", lambda m=m: tessera.cholesky(m), lambda m=m: torch.linalg.cholesky(m)),
                  (f"cholesky_ex {n}{tag}", lambda m=m: tessera.cholesky_ex(m), lambda m=m: torch.linalg.cholesky_ex(m))]
for n, b in ((300, 2), (256, 8)):
    s = spd(n, b)
    cases += [(f"cholesky_ex {b}x{n}", lambda s=s: tessera.cholesky_ex(s), lambda s=s: torch.linalg.cholesky_ex(s))]
print(f"[{label}] {torch.cuda.get_device_name()} torch {torch.__version__}: us per call, medians of 400")
print(f"[{label}] {'':22s} {'tessera sync':>12s} {'torch sync':>10s} {'ratio':>6s} | {'tessera host':>12s} {'torch host':>10s} | {'tessera stream':>14s} {'torch stream':>12s} {'ratio':>6s}")
for name, t, r in cases:
    st, sr = sync(t), sync(r)
    ht, hr = iso(t), iso(r)
    qt, qr = stream(t), stream(r)
    print(f"[{label}] {name:22s} {st:12.1f} {sr:10.1f} {sr / st:6.2f} | {ht:12.1f} {hr:10.1f} | {qt:14.1f} {qr:12.1f} {qr / qt:6.2f}", flush=True)
