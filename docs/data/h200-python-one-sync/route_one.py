"""One GPU matrix of order 40-112: the batched kernels (K) against cuSOLVER's potrf (V) for
tessera.cholesky_ex (a stream of calls) and tessera.cholesky (synchronising), by forcing the
package's route; PyTorch on the same tensor. Median over rounds of the time per call."""
import statistics
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


def main():
    print("NVIDIA", torch.cuda.get_device_name(), "torch", torch.__version__)
    for dtype in (torch.float64, torch.float32):
        print(f"{dtype}: us per call; ex = cholesky_ex (stream), sync = cholesky; K kernels, V cuSOLVER; plan's route")
        for n in (40, 48, 56, 64, 72, 80, 88, 96, 112):
            a = spd(n, dtype)
            m = timed({"exK": routed(True, lambda: tessera.cholesky_ex(a)), "exV": routed(False, lambda: tessera.cholesky_ex(a)),
                       "ex_torch": lambda: torch.linalg.cholesky_ex(a),
                       "syncK": routed(True, lambda: tessera.cholesky(a)), "syncV": routed(False, lambda: tessera.cholesky(a)),
                       "sync_torch": lambda: torch.linalg.cholesky(a)})
            plan = "K" if real_route(n, 1, {torch.float64: "float64", torch.float32: "float32"}[dtype]) else "V"
            print(f"  n={n:4d} ex K {m['exK']:6.1f} V {m['exV']:6.1f} torch {m['ex_torch']:6.1f} | "
                  f"sync K {m['syncK']:6.1f} V {m['syncV']:6.1f} torch {m['sync_torch']:6.1f} | plan {plan}", flush=True)


if __name__ == "__main__":
    main()
