import time, sys, cProfile, pstats, io, statistics
import torch, tessera
torch.manual_seed(0)
dev = "cuda"
def spd(n, dtype):
    g = torch.randn(n, n, dtype=dtype, device=dev)
    return g @ g.T + n * torch.eye(n, dtype=dtype, device=dev)
def wall(f, reps=200):
    f(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t = time.perf_counter(); f(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6
def host(f, reps=200):
    f(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t = time.perf_counter(); f(); ts.append(time.perf_counter() - t); torch.cuda.synchronize()
    return statistics.median(ts) * 1e6
print("n dtype | torch wall host | tessera wall host")
for dtype in (torch.float64, torch.float32):
    for n in (32, 64, 100, 128, 160, 200, 256, 300, 500, 1000):
        A = spd(n, dtype)
        ft = lambda: torch.linalg.cholesky_ex(A)
        fs = lambda: tessera.cholesky_ex(A)
        print(f"{n:5d} {str(dtype)[6:]:8s} | {wall(ft):7.1f} {host(ft):7.1f} | {wall(fs):7.1f} {host(fs):7.1f}", flush=True)
for n in (64, 200):
    A = spd(n, torch.float64)
    tessera.cholesky_ex(A); torch.cuda.synchronize()
    pr = cProfile.Profile(); pr.enable()
    for _ in range(2000): tessera.cholesky_ex(A)
    pr.disable(); torch.cuda.synchronize()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30); print(f"== cProfile n={n}"); print(s.getvalue()[:6000])
from torch.profiler import profile, ProfilerActivity
for n in (64, 200):
    A = spd(n, torch.float64)
    for name, f in (("torch", lambda: torch.linalg.cholesky_ex(A)), ("tessera", lambda: tessera.cholesky_ex(A))):
        f(); torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(50):
                f(); torch.cuda.synchronize()
        print(f"== torch.profiler {name} n={n}")
        print(p.key_averages().table(sort_by="cuda_time_total", row_limit=15, max_name_column_width=60))
