"""One GPU matrix, synchronising calls: tessera.cholesky (the info read back by the native call)
against the previous route (cholesky_ex, then the info tensor's item()) and torch.linalg.cholesky,
interleaved in one process; median over rounds of the time per call."""
import statistics
import time

import torch

import tessera


def spd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    b = torch.randn((n, n), device="cuda", dtype=dtype, generator=g)
    return b @ b.mT + n * torch.eye(n, device="cuda", dtype=dtype)


def main():
    print("NVIDIA", torch.cuda.get_device_name(), "torch", torch.__version__)
    for dtype in (torch.float64, torch.float32):
        print(f"{dtype}: us per synchronising call, median of 40 rounds of 25 calls each")
        for n in (96, 128, 192, 256, 384, 512):
            a = spd(n, dtype)

            def previous():
                _, info = tessera.cholesky_ex(a)
                if info.item():
                    raise RuntimeError

            calls = {"cholesky": lambda: tessera.cholesky(a), "ex+item": previous,
                     "torch": lambda: torch.linalg.cholesky(a)}
            for f in calls.values():
                for _ in range(20):
                    f()
            times = {k: [] for k in calls}
            for r in range(40):
                order = list(calls) if r % 2 == 0 else list(reversed(calls))
                for k in order:
                    torch.cuda.synchronize()
                    start = time.perf_counter()
                    for _ in range(25):
                        calls[k]()
                    torch.cuda.synchronize()
                    times[k].append((time.perf_counter() - start) / 25 * 1e6)
            m = {k: statistics.median(v) for k, v in times.items()}
            print(f"  n={n:4d}  cholesky {m['cholesky']:7.1f}  ex+item {m['ex+item']:7.1f}  torch {m['torch']:7.1f}"
                  f"  torch/cholesky {m['torch'] / m['cholesky']:.2f}  torch/ex+item {m['torch'] / m['ex+item']:.2f}")


main()
