"""cho_solve on real GPU stacks: the batched solve kernels (K) against the vendor's batched solves
(V), forced through the package's route query, and torch.cholesky_solve, by right-hand sides."""
import sys
import torch
import tessera
sys.path.insert(0, "bench/python")
from bench_gpu_paths import hermitian_positive_definite, synchronised

HEADER = "dtype     n  batch  nrhs   torch       K       V  torch/K  torch/V  K/V(time)"
SUFFIXES = {torch.float64: "_f8", torch.float32: "_f4", torch.complex128: "_c16", torch.complex64: "_c8"}


def compare(dtype, n, batch, right_hand_sides):
    """One row per count of right-hand sides: us per synchronised call of each route and PyTorch's."""
    name = "solve_takes_batched_kernels" + SUFFIXES[dtype]
    core = tessera._core
    plan = getattr(core, name)
    a = hermitian_positive_definite(n, batch, dtype, n + batch)
    c = torch.linalg.cholesky(a)
    for k in right_hand_sides:
        b = torch.randn((batch, n, k), dtype=dtype, device="cuda")
        t = synchronised(lambda: torch.cholesky_solve(b, c))
        times = {}
        try:
            for forced in (True, False):
                setattr(core, name, lambda *_, f=forced: f)
                times[forced] = synchronised(lambda: tessera.cho_solve((c, True), b))
                x = tessera.cho_solve((c, True), b)
                err = ((a @ x - b).abs().max() / b.abs().max()).item()
                assert err < (1e-8 if dtype in (torch.float64, torch.complex128) else 1e-2), err
        finally:
            setattr(core, name, plan)
        print(f"{str(dtype)[6:]:8s} {n:4d} {batch:6d} {k:5d} {t:7.1f} {times[True]:7.1f} {times[False]:7.1f}"
              f"   {t / times[True]:6.2f}   {t / times[False]:6.2f}   {times[True] / times[False]:6.2f}",
              flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), f"torch {torch.__version__}")
    print(HEADER)
    for dtype in (torch.float64, torch.float32):
        for n, batches in ((16, (512, 4096)), (64, (8, 512, 4096)), (128, (8, 512)), (256, (512,)), (512, (512,))):
            for batch in batches:
                compare(dtype, n, batch, [k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256)
                                          if k <= max(n, 16) and batch * n * k <= 1 << 26])
