"""One GPU matrix of order 40-112 (route_one.py; route2.py keeps its helpers and times the
vendor route alone, beside PyTorch, and beside the kernels, in that order): the batched kernels (K) against cuSOLVER's potrf (V) for
tessera.cholesky_ex (a stream of calls) and tessera.cholesky (synchronising), by forcing the
package's route; PyTorch on the same tensor. Median over rounds of the time per call."""
import statistics
import sys
import time

import torch

import tessera

real_route = tessera._takes_batched_kernels


def spd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    b = torch.randn((n, n), device="cuda", dtype=dtype, generator=g)
    return b @ b.mT + n * torch.eye(n, device="cuda", dtype=dtype)


def timed(calls, rounds=30, per=25):
    for f in calls.values():
        for _ in range(10):
            f()
    times = {k: [] for k in calls}
    for r in range(rounds):
        for k in (list(calls) if r % 2 == 0 else list(reversed(calls))):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(per):
                calls[k]()
            torch.cuda.synchronize()
            times[k].append((time.perf_counter() - start) / per * 1e6)
    return {k: statistics.median(v) for k, v in times.items()}


def routed(kernels, f):
    def call():
        tessera._takes_batched_kernels = (lambda n, b, d=None: True) if kernels else (lambda n, b, d=None: False)
        try:
            f()
        finally:
            tessera._takes_batched_kernels = real_route
    return call


print("NVIDIA", torch.cuda.get_device_name(), "torch", torch.__version__)
for dtype in (torch.float64,):
    for n in (48, 64, 96, 128):
        a = spd(n, dtype)
        exK = routed(True, lambda: tessera.cholesky_ex(a)); exV = routed(False, lambda: tessera.cholesky_ex(a))
        syK = routed(True, lambda: tessera.cholesky(a)); syV = routed(False, lambda: tessera.cholesky(a))
        ext = lambda: torch.linalg.cholesky_ex(a); syt = lambda: torch.linalg.cholesky(a)
        for name, calls in (("V alone", {"exV": exV}), ("syncV alone", {"syncV": syV}),
                            ("V and torch", {"exV": exV, "ext": ext, "syncV": syV, "synct": syt}),
                            ("K, V and torch", {"exK": exK, "exV": exV, "ext": ext, "syncK": syK, "syncV": syV, "synct": syt}),
                            ("V alone again", {"exV": exV, "syncV": syV})):
            m = timed(calls)
            print(f"  n={n:4d} {name:16s} " + "  ".join(f"{k} {v:6.1f}" for k, v in m.items()), flush=True)
