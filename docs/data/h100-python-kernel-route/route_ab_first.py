# One GPU matrix of a small order: tessera.cholesky_ex (the batched kernels below the plan's
# single_matrix_vendor_min_n, the dense device API from it), the dense device API's entry called
# directly at every order ("dense": cuSOLVER's potrf through tessera::device), and PyTorch's
# cholesky_ex, alternated in one process: the median synchronised call and the median host time.
import statistics, sys, time
import numpy as np
import torch, tessera
from tessera import _arrays

ad = _arrays._native_kind("torch").adapter
PUBLISHED = tessera._POTRF_DENSE_INTO_PUBLISHED
int32 = torch.int32


def dense(a):
    dtype = ad.plain_matrix_dtype(a)
    n = a.shape[0]
    row, col = a.stride()
    f = a.new_empty_strided((n, n), (1, n))
    info = a.new_empty((), dtype=int32)
    assert PUBLISHED[dtype](a.data_ptr(), row, col, 0, f.data_ptr(), n, 1, "", info.data_ptr(), ad.stream(a))
    return f, info


def spd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
    return x @ x.T + n * torch.eye(n, device="cuda", dtype=dtype)


tessera.cholesky_ex(spd(256, torch.float64))  # the adapter and the published runtime
variants = {"tessera": lambda a: tessera.cholesky_ex(a), "dense": dense, "torch": lambda a: torch.linalg.cholesky_ex(a)}
print(torch.cuda.get_device_name(), torch.__version__, "kernel orders: single_matrix_vendor_min_n")
orders = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [16, 32, 48, 64, 80, 96, 128]
for dtype in (torch.float64, torch.float32, torch.complex128, torch.complex64):
    for n in orders:
        a = spd(n, dtype) if not dtype.is_complex else None
        if a is None:
            g = torch.Generator(device="cuda").manual_seed(n)
            x = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
            a = x @ x.conj().T + n * torch.eye(n, device="cuda", dtype=dtype)
        L0 = torch.linalg.cholesky(a)
        for name, f in variants.items():
            r = f(a)
            torch.cuda.synchronize()
            assert r is not None and int(r[1]) == 0 and torch.allclose(r[0], L0, rtol=1e-3, atol=1e-3), name
        sync = {k: [] for k in variants}
        host = {k: [] for k in variants}
        names = list(variants)
        for rnd in range(6):
            order = names[rnd % 3:] + names[:rnd % 3]
            for name in order:
                f = variants[name]
                for _ in range(20):
                    f(a)
                torch.cuda.synchronize()
                for _ in range(100):
                    t0 = time.perf_counter(); f(a); t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
                    host[name].append(t1 - t0); sync[name].append(t2 - t0)
        med = {k: statistics.median(v) * 1e6 for k, v in sync.items()}
        hmed = {k: statistics.median(v) * 1e6 for k, v in host.items()}
        route = "kernel" if tessera._takes_batched_kernels(n, 1, np.dtype(str(dtype)[6:])) else "dense"
        print(f"{str(dtype)[6:]:10} n={n:4} ({route:6})  sync us: tessera {med['tessera']:6.1f} dense {med['dense']:6.1f} torch {med['torch']:6.1f}"
              f" | torch/tessera {med['torch']/med['tessera']:.2f} torch/dense {med['torch']/med['dense']:.2f}"
              f" | host us: tessera {hmed['tessera']:5.1f} dense {hmed['dense']:5.1f} torch {hmed['torch']:5.1f}")
        sys.stdout.flush()
