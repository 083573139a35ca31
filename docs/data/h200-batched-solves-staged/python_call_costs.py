"""Where a small GPU call's host time goes: tessera.cho_solve / cholesky_ex against PyTorch on the same tensors
(python3 python_call_costs.py [solve|one|all], tessera and torch importable, one GPU)."""
import cProfile, io, pstats, statistics, sys, time
import torch
import tessera

def hpd(n, batch, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape = (batch, n, n) if batch else (n, n)
    m = torch.randn(shape, dtype=dtype, device="cuda", generator=g)
    return m @ m.mH + n * torch.eye(n, dtype=dtype, device="cuda")

def synced(f, calls=300):
    for _ in range(20): f()
    t = []
    for _ in range(calls):
        torch.cuda.synchronize(); s = time.perf_counter(); f(); torch.cuda.synchronize()
        t.append(time.perf_counter() - s)
    return statistics.median(t) * 1e6

def stream(f, calls=300):
    for _ in range(20): f()
    best = []
    for _ in range(5):
        torch.cuda.synchronize(); s = time.perf_counter()
        for _ in range(calls): f()
        torch.cuda.synchronize(); best.append((time.perf_counter() - s) / calls)
    return min(best) * 1e6

def profile(f, calls=2000, top=28):
    pr = cProfile.Profile(); pr.enable()
    for _ in range(calls): f()
    torch.cuda.synchronize(); pr.disable()
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(top); print(s.getvalue())


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    if which in ("all", "solve"):
        for dtype, n, batch, k in ((torch.float64, 16, 512, 2), (torch.float64, 64, 8, 2), (torch.float64, 64, 512, 4),
                                   (torch.float32, 16, 512, 2), (torch.float64, 16, 512, 1)):
            a = hpd(n, batch, dtype, n + batch); c = torch.linalg.cholesky(a)
            b = torch.randn((batch, n, k), dtype=dtype, device="cuda")
            cases = {"torch": lambda: torch.cholesky_solve(b, c),
                     "tessera pair": lambda: tessera.cho_solve((c, True), b),
                     "tessera lower=": lambda: tessera.cho_solve(c, b, lower=True),
                     "copy b (mT clone)": lambda: b.mT.contiguous(),
                     "empty+copy_": lambda: torch.empty((batch, k, n), dtype=dtype, device="cuda").copy_(b.mT)}
            print(f"== cho_solve {dtype} n={n} batch={batch} k={k}")
            for name, f in cases.items():
                print(f"  {name:20s} synced {synced(f):8.1f} us   stream {stream(f):8.1f} us", flush=True)
            print(f"-- cProfile tessera.cho_solve((c, True), b), {dtype} {n} {batch} {k}")
            profile(cases["tessera pair"])
    if which in ("all", "one"):
        for dtype, n in ((torch.float64, 96), (torch.float64, 128), (torch.float64, 256), (torch.complex128, 64)):
            x = hpd(n, 0, dtype, n)
            cases = {"torch cholesky_ex": lambda: torch.linalg.cholesky_ex(x),
                     "tessera cholesky_ex": lambda: tessera.cholesky_ex(x),
                     "torch cholesky": lambda: torch.linalg.cholesky(x),
                     "tessera cholesky": lambda: tessera.cholesky(x)}
            print(f"== one matrix {dtype} n={n}")
            for name, f in cases.items():
                print(f"  {name:20s} synced {synced(f):8.1f} us   stream {stream(f):8.1f} us", flush=True)
            print(f"-- cProfile tessera.cholesky_ex, {dtype} {n}")
            profile(cases["tessera cholesky_ex"])
