import time, torch, tessera
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
def spd(n):
    g = torch.Generator(device="cpu").manual_seed(1)
    a = torch.randn(n, n, dtype=torch.float64, generator=g)
    return (a @ a.T + n * torch.eye(n, dtype=torch.float64)).to(dev)
def vendor(a):
    default = tessera._takes_batched_kernels
    tessera._takes_batched_kernels = lambda n, b, d=None: False
    try:
        return tessera.cholesky(a)
    finally:
        tessera._takes_batched_kernels = default
a128 = spd(128); a64 = spd(64); c32 = torch.linalg.cholesky(spd(32))
cases = [("cholesky n=128", lambda: tessera.cholesky(a128), lambda: torch.linalg.cholesky(a128)),
         ("cholesky_ex n=128", lambda: tessera.cholesky_ex(a128), lambda: torch.linalg.cholesky_ex(a128)),
         ("cholesky n=64", lambda: tessera.cholesky(a64), lambda: torch.linalg.cholesky(a64)),
         ("cholesky n=64 vendor", lambda: vendor(a64), lambda: torch.linalg.cholesky(a64)),
         ("cholesky_inverse 1x32", lambda: tessera.cholesky_inverse(c32, lower=True), lambda: torch.cholesky_inverse(c32))]
for name, t, r in cases:
    for who, f in (("tessera", t), ("torch", r)):
        for _ in range(50): f()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(50):
                f()
                torch.cuda.synchronize()
        print(f"===== {name} {who} (50 calls)")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=45))
        # timeline of the last call: CPU-side runtime API events in order with start offsets
        evs = sorted([e for e in prof.events()], key=lambda e: e.time_range.start)
        starts = [e for e in evs if e.name == "cudaDeviceSynchronize"]
        if len(starts) >= 3:
            lo, hi = starts[-3].time_range.end, starts[-2].time_range.end
            print("last call, events (start us from the previous sync's end, duration us):")
            for e in evs:
                if lo <= e.time_range.start < hi:
                    print(f"  {e.time_range.start - lo:8.1f} {e.time_range.end - e.time_range.start:7.1f}  {e.device_type.name[:4]} {e.name[:70]}")
