"""One GPU matrix: tessera.cholesky_ex against torch.linalg.cholesky_ex, per call wall time
(synchronised around each call, alternated), host time of the call alone, and the kernels each runs."""
import sys, time, statistics
import torch, tessera
from torch.profiler import profile, ProfilerActivity

def spd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    real = torch.float64 if dtype in (torch.float64, torch.complex128) else torch.float32
    X = torch.randn(n, n, dtype=real, device="cuda", generator=g)
    if dtype.is_complex:
        X = torch.complex(X, torch.randn(n, n, dtype=real, device="cuda", generator=g))
    return (X @ X.mH / n + torch.eye(n, device="cuda", dtype=dtype)).contiguous()

calls = {"tessera": lambda A: tessera.cholesky_ex(A)[0], "torch": lambda A: torch.linalg.cholesky_ex(A)[0]}
for spec in sys.argv[1:]:
    t, n = spec[0], int(spec[1:])
    dtype = {"z": torch.complex128, "c": torch.complex64, "d": torch.float64, "s": torch.float32}[t]
    A = spd(n, dtype)
    for f in calls.values():
        for _ in range(5): f(A)
    wall = {k: [] for k in calls}; host = {k: [] for k in calls}
    for r in range(60):
        for k, f in calls.items():
            torch.cuda.synchronize(); t0 = time.perf_counter(); f(A); t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
            wall[k].append((t2 - t0) * 1e6); host[k].append((t1 - t0) * 1e6)
    line = f"{spec:6s}"
    for k in calls:
        line += f"  {k} wall med {statistics.median(wall[k]):7.1f} min {min(wall[k]):7.1f} host med {statistics.median(host[k]):6.1f}"
    print(line + f"  ratio torch/tessera {statistics.median(wall['torch'])/statistics.median(wall['tessera']):.3f}", flush=True)
    for k, f in calls.items():
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10): f(A)
            torch.cuda.synchronize()
        rows = [(e.key, e.count, getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0)) / e.count) for e in prof.key_averages() if getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0)) > 0]
        print(f"    {k}: " + "; ".join(f"{name[:60]} x{c//10 if c>=10 else c} {us:.1f}us" for name, c, us in rows), flush=True)
