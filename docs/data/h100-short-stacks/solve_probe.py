"""cho_solve of short stacks: the batched kernels against the dense device API, and PyTorch."""
import statistics, time
import numpy as np
import torch
import tessera

def median_time(fn, reps=20):
    fn(); torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        torch.cuda.synchronize(); t = time.perf_counter(); fn(); torch.cuda.synchronize(); out.append(time.perf_counter() - t)
    return statistics.median(out)

rule = tessera._short_stack
print(f"{'batch':>5} {'n':>5} {'k':>3} | {'batched us':>11} {'dense us':>9} {'torch us':>9} | dense/torch batched/torch (time ratios, < 1: faster)")
for batch, n, k in [(1, 256, 1), (1, 512, 1), (1, 1000, 1), (1, 1000, 16), (4, 512, 1), (16, 512, 1), (16, 1000, 1)]:
    g = torch.randn(batch, n, n, dtype=torch.float64, device="cuda")
    a = g @ g.transpose(-1, -2) / n + torch.eye(n, dtype=torch.float64, device="cuda")
    b = torch.randn(batch, n, k, dtype=torch.float64, device="cuda")
    c = torch.linalg.cholesky(a)
    times = {}
    for name, forced in [("batched", lambda n_, b_: False), ("dense", lambda n_, b_: True)]:
        tessera._short_stack = forced
        x = tessera.cho_solve(c, b)
        assert torch.allclose(a @ x, b, atol=1e-8), name
        times[name] = median_time(lambda: tessera.cho_solve(c, b))
    tessera._short_stack = rule
    times["torch"] = median_time(lambda: torch.cholesky_solve(b, c))
    print(f"{batch:>5} {n:>5} {k:>3} | {times['batched']*1e6:>11.1f} {times['dense']*1e6:>9.1f} {times['torch']*1e6:>9.1f} | "
          f"{times['dense']/times['torch']:.2f} {times['batched']/times['torch']:.2f}")
