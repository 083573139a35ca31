# The GPU kernels and host calls of tessera.cholesky_ex and torch.linalg.cholesky_ex on one matrix.
import json, os, sys, time
import torch, tessera
from torch.profiler import profile, ProfilerActivity
out = sys.argv[1]
summary = []
for dtype in (torch.float64, torch.float32):
    for n in (64, 128, 256, 512):
        g = torch.Generator(device="cuda").manual_seed(n)
        x = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
        a = x @ x.T + n * torch.eye(n, device="cuda", dtype=dtype)
        for name, f in (("tessera", lambda: tessera.cholesky_ex(a)), ("torch", lambda: torch.linalg.cholesky_ex(a))):
            for _ in range(30):
                f()
            torch.cuda.synchronize()
            times = []
            for _ in range(200):
                t0 = time.perf_counter(); f(); torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
            times.sort()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(20):
                    f()
                    torch.cuda.synchronize()
            tag = f"{name} {str(dtype)[6:]} n={n}"
            print(f"==== {tag}: sync call median {times[100]*1e6:.1f} us, p10 {times[20]*1e6:.1f} us")
            print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=14, max_name_column_width=70))
            if n in (128, 512) and dtype == torch.float64:
                prof.export_chrome_trace(os.path.join(out, f"trace_{name}_{n}.json"))
