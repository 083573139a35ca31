#!/usr/bin/env python3
"""The routes a GPU array takes through tessera, timed against PyTorch on the same tensors: the
measurements behind the stack thresholds of src/plan/thresholds.hpp.

  one    single matrices (2-D tensors): tessera.cholesky and tessera.cholesky_ex against
         torch.linalg.cholesky and torch.linalg.cholesky_ex (and CuPy's cholesky in double), each
         timed as back-to-back calls in rounds that alternate the libraries; the median round's
         time per call. cholesky waits for the info (a synchronising call), cholesky_ex does not,
         so its time is that of a stream of calls.
  stacks every stack of the grid through the batched kernels alone (K: tessera._takes_batched_kernels
         replaced by one answering yes) and through the library's one call (V: one answering no;
         cuSOLVER's potrf for one matrix, for a stack device::potrf_stack_ex where the plan sends
         it there: cuSOLVER's batched potrf, or for real stacks of larger orders the batched
         kernels in blocks of columns), against torch.linalg.cholesky_ex; the median of 15
         device-synchronised calls after three; the plan's choice in the last column (--orders and
         --counts replace the grid's).
  inverse tessera.cholesky_inverse of lower factors through the batched inverse kernel (K), for
         one matrix the dense inverse (D: tessera::device::potri_ex), and through cho_solve(c, I)
         (S), against torch.cholesky_inverse on the same factors; timed as the stacks are, with the
         largest difference of K's (else D's) inverse from PyTorch's relative to its largest
         entry, and the plan's choice (tessera._inverse_route).
  refined tessera.posv_refined of float64 CUDA tensors (A = G G^T / n + 0.04 I, condition about
         1e2; one right-hand side) by the factor's tensor-core arithmetic, against
         torch.cholesky_solve(b, torch.linalg.cholesky(a)); the median of 5 device-synchronised calls
         after three, the refinement's steps, and each solution's backward error
         ||b - a x||_inf / (||a||_inf ||x||_inf) in units of n eps (--dtypes is not read).

    python3 bench/python/bench_gpu_paths.py --suites one,stacks --dtypes float64,complex128
"""
import argparse
import statistics
import time

import torch

import tessera

ONE_ORDERS = (10, 16, 32, 48, 64, 80, 96, 128, 256, 512, 1000)
STACK_ORDERS = (33, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 768)
STACK_COUNTS = (1, 2, 8, 32, 64, 128, 256)
INVERSE_ORDERS = (4, 8, 16, 32, 48, 64, 96, 128, 168, 192, 256, 384, 512)
INVERSE_COUNTS = (1, 8, 64, 512, 4096)


def hermitian_positive_definite(n, batch, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    b = torch.randn((batch, n, n) if batch else (n, n), device="cuda", dtype=dtype, generator=g)
    return b @ b.mH + n * torch.eye(n, device="cuda", dtype=dtype)


def per_call(f, calls):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def synchronised(f, calls=15):
    for _ in range(3):
        f()
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        f()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def one_matrix(dtype):
    try:
        import cupy
    except ImportError:
        cupy = None
    print(f"one matrix, {dtype}: us per call (torch / tessera)")
    for n in ONE_ORDERS:
        x = hermitian_positive_definite(n, 0, dtype, n)
        cases = {"tessera": lambda: tessera.cholesky(x), "torch": lambda: torch.linalg.cholesky(x),
                 "tessera_ex": lambda: tessera.cholesky_ex(x), "torch_ex": lambda: torch.linalg.cholesky_ex(x)}
        if cupy is not None and dtype == torch.float64:
            xc = cupy.asarray(x)
            cases.update({"tessera_cupy": lambda: tessera.cholesky(xc), "cupy": lambda: cupy.linalg.cholesky(xc)})
        calls = 100 if n <= 256 else 40
        for f in cases.values():
            per_call(f, 20)
        rounds = {k: [] for k in cases}
        for _ in range(5):
            for k, f in cases.items():
                rounds[k].append(per_call(f, calls))
        t = {k: statistics.median(v) for k, v in rounds.items()}
        factor = tessera.cholesky(x)
        error = ((factor @ factor.mH - x).abs().max() / x.abs().max()).item()
        line = (f"  n={n:5d}  cholesky {t['tessera']:7.1f} torch {t['torch']:7.1f} ({t['torch'] / t['tessera']:.2f}x)"
                f"  cholesky_ex {t['tessera_ex']:7.1f} torch {t['torch_ex']:7.1f} ({t['torch_ex'] / t['tessera_ex']:.2f}x)")
        if "cupy" in t:
            line += f"  CuPy's arrays {t['tessera_cupy']:7.1f} cupy {t['cupy']:7.1f} ({t['cupy'] / t['tessera_cupy']:.2f}x)"
        print(line + f"  error {error:.1e}", flush=True)


def stacks(dtype, orders=STACK_ORDERS, counts=STACK_COUNTS):
    plan = tessera._takes_batched_kernels
    type_char = {torch.float32: "f", torch.float64: "d", torch.complex64: "F", torch.complex128: "D"}[dtype]
    print(f"stacks, {dtype}: us per call")
    print("     n  batch   torch       K       V  torch/K  torch/V  plan")
    for n in orders:
        for batch in counts:
            x = hermitian_positive_definite(n, batch, dtype, n * 1000 + batch)
            if batch == 1:
                x = x[0]
            chosen = "K" if plan(n, batch, type_char) else "V"
            torch_time = synchronised(lambda: torch.linalg.cholesky_ex(x))
            try:
                tessera._takes_batched_kernels = lambda *_: True
                kernels = synchronised(lambda: tessera.cholesky_ex(x))
                # V only where the library sends such a stack to cuSOLVER's batched call (else a
                # stack goes one matrix at a time).
                vendor = batch == 1 or not plan(n, batch, type_char)
                tessera._takes_batched_kernels = lambda *_: False
                cusolver = synchronised(lambda: tessera.cholesky_ex(x)) if vendor else float("nan")
            finally:
                tessera._takes_batched_kernels = plan
            print(f"  {n:4d}  {batch:5d} {torch_time:7.1f} {kernels:7.1f} {cusolver:7.1f}   {torch_time / kernels:5.2f}"
                  f"    {torch_time / cusolver:5.2f}   {chosen}", flush=True)


INVERSE_KERNEL_MAX_N = 512


def inverse(dtype, orders, counts):
    plan = tessera._inverse_route
    type_char = {torch.float32: "f", torch.float64: "d", torch.complex64: "F", torch.complex128: "D"}[dtype]
    print(f"inverse from lower factors, {dtype}: us per call")
    print("     n  batch   torch       K       D       S  torch/K  torch/D  torch/S    error  plan")
    for n in orders:
        for batch in counts:
            if batch * n * n > 1 << 27:
                continue
            a = hermitian_positive_definite(n, batch, dtype, n * 1000 + batch)
            factor = torch.linalg.cholesky(a if batch > 1 else a[0])
            chosen = {"kernel": "K", "dense": "D", "solve": "S"}[plan(n, batch, type_char)]
            torch_time = synchronised(lambda: torch.cholesky_inverse(factor))
            expected = torch.cholesky_inverse(factor)
            times = {}
            error = float("nan")
            try:
                for route in ("kernel", "dense", "solve") if batch == 1 else ("kernel", "solve"):
                    if route == "kernel" and batch == 1 and n > INVERSE_KERNEL_MAX_N:
                        continue  # a thread block per matrix: far from the route there, and slow to time
                    tessera._inverse_route = lambda *_, r=route: r
                    times[route] = synchronised(lambda: tessera.cholesky_inverse(factor, lower=True))
                    if route != "solve" and error != error:
                        error = ((tessera.cholesky_inverse(factor, lower=True) - expected).abs().max() /
                                 expected.abs().max()).item()
            finally:
                tessera._inverse_route = plan
            kernel, dense, solve = (times.get(r, float("nan")) for r in ("kernel", "dense", "solve"))
            print(f"  {n:4d}  {batch:5d} {torch_time:7.1f} {kernel:7.1f} {dense:7.1f} {solve:7.1f}   "
                  f"{torch_time / kernel:6.2f}   {torch_time / dense:6.2f}   {torch_time / solve:6.2f}  {error:.1e}"
                  f"  {chosen}", flush=True)


REFINED_ORDERS = (8192, 16384, 30000)
REFINED_ARITHMETICS = ("off", "tf32", "bf16", "fp16")


def backward_error(a, x, b):
    r = (b - a @ x).abs().max()
    return (r / (a.abs().sum(1).max() * x.abs().max()) / (a.shape[0] * torch.finfo(a.dtype).eps)).item()


def refined():
    print("refined solves, float64 CUDA tensors: seconds (median of 5), steps, backward error in n eps")
    print("     n   torch  berr  " + "  ".join(f"{c:>6} it  berr  x/torch" for c in REFINED_ARITHMETICS))
    for n in REFINED_ORDERS:
        g = torch.Generator(device="cuda").manual_seed(n)
        a = torch.randn((n, n), device="cuda", dtype=torch.float64, generator=g)
        a = a @ a.mT / n + 0.04 * torch.eye(n, device="cuda", dtype=torch.float64)
        b = torch.randn((n, 1), device="cuda", dtype=torch.float64, generator=g)
        def torch_solve():
            return torch.cholesky_solve(b, torch.linalg.cholesky(a))
        torch_time = synchronised(torch_solve, calls=5) / 1e6
        row = f"{n:6d} {torch_time:7.4f} {backward_error(a, torch_solve(), b):5.2f}"
        for cores in REFINED_ARITHMETICS:
            seconds = synchronised(lambda: tessera.posv_refined(a, b, tensor_cores=cores), calls=5) / 1e6
            x, steps = tessera.posv_refined(a, b, tensor_cores=cores)
            row += f"  {seconds:6.4f} {steps:2d} {backward_error(a, x, b):5.2f}  {torch_time / seconds:5.2f}x"
        print(row, flush=True)
        del a, b


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="one,stacks")
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--orders", help="the stacks' (and inverses') orders, comma-separated")
    parser.add_argument("--counts", help="the stacks' (and inverses') matrix counts, comma-separated")
    args = parser.parse_args()
    orders = tuple(int(v) for v in args.orders.split(",")) if args.orders else STACK_ORDERS
    counts = tuple(int(v) for v in args.counts.split(",")) if args.counts else STACK_COUNTS
    print(torch.cuda.get_device_name(), f"torch {torch.__version__}")
    if "refined" in args.suites:
        refined()
    for name in args.dtypes.split(","):
        dtype = getattr(torch, name)
        if "one" in args.suites:
            one_matrix(dtype)
        if "stacks" in args.suites:
            stacks(dtype, orders, counts)
        if "inverse" in args.suites:
            inverse(dtype, orders if args.orders else INVERSE_ORDERS, counts if args.counts else INVERSE_COUNTS)


if __name__ == "__main__":
    main()
