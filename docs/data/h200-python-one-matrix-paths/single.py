import time, sys, torch, tessera
dev = torch.device("cuda")
def spd(n, dtype):
    g = torch.Generator(device="cpu").manual_seed(n)
    a = torch.randn(n, n, dtype=torch.float64, generator=g)
    return (a @ a.T + n * torch.eye(n, dtype=torch.float64)).to(dtype).to(dev)
def timed(f, reps=300):
    for _ in range(30): f()
    torch.cuda.synchronize()
    best = 1e9
    for r in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f(); torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t) / reps * 1e6)
    return best
default = tessera._takes_batched_kernels
def vendor(n, b, d=None): return False
print(torch.cuda.get_device_name(), torch.__version__)
for dtype in (torch.float64, torch.float32):
    print(dtype, "one matrix, us per synchronised call: tessera (plan) | tessera kernels | tessera vendor | torch ; cholesky then cholesky_ex")
    for n in (33, 40, 48, 56, 64, 72, 80, 96, 112, 128):
        a = spd(n, dtype)
        row = []
        for fn, tf in ((tessera.cholesky, torch.linalg.cholesky), (tessera.cholesky_ex, torch.linalg.cholesky_ex)):
            tessera._takes_batched_kernels = default
            plan = timed(lambda: fn(a))
            tessera._takes_batched_kernels = lambda n, b, d=None: True
            kern = timed(lambda: fn(a))
            tessera._takes_batched_kernels = vendor
            vend = timed(lambda: fn(a))
            tessera._takes_batched_kernels = default
            ref = timed(lambda: tf(a))
            row.append(f"{plan:7.1f} {kern:7.1f} {vend:7.1f} {ref:7.1f}")
        print(f"{n:4d}  " + "  |  ".join(row), flush=True)
