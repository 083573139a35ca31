# One GPU matrix of a small order through each route the plan may give it, with the replayed
# launches: the batched kernels' native entry ("kernel") and the dense device API's ("dense":
# cuSOLVER's potrf through tessera::device, one replayed graph from an order's second call), each
# called as the short route calls it, against torch.linalg.cholesky_ex, alternated in one process
# (8 rounds of 100 calls, their order rotated): the median synchronised call, in microseconds.
#   python3 routes_ab.py [ORDERS]
import statistics, sys, time
import torch, tessera
from tessera import _arrays

ad = _arrays._native_kind("torch").adapter
PUBLISHED = tessera._POTRF_DENSE_INTO_PUBLISHED
KERNEL = tessera._POTRF_INTO
orders = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 160]


def kernel(a):
    dtype = ad.plain_matrix_dtype(a)
    n = a.shape[0]
    row, col = a.stride()
    fortran = n > 32
    f = a.new_empty_strided((n, n), (1, n)) if fortran else a.new_empty((n, n))
    if not fortran:
        row, col = col, row
    info = a.new_empty((), dtype=torch.int32)
    KERNEL[dtype](a.data_ptr(), row, col, 0, f.data_ptr(), n, 1, not fortran, info.data_ptr(), ad.stream(a))
    return f, info


def dense(a):
    dtype = ad.plain_matrix_dtype(a)
    n = a.shape[0]
    row, col = a.stride()
    f = a.new_empty_strided((n, n), (1, n))
    info = a.new_empty((), dtype=torch.int32)
    assert PUBLISHED[dtype](a.data_ptr(), row, col, 0, f.data_ptr(), n, 1, "", info.data_ptr(), ad.stream(a))
    return f, info


def hpd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
    return x @ x.mH + n * torch.eye(n, device="cuda", dtype=dtype)


tessera.cholesky_ex(hpd(256, torch.float64))  # the adapter and the published runtime
variants = {"kernel": kernel, "dense": dense, "torch": lambda a: torch.linalg.cholesky_ex(a)}
print(torch.cuda.get_device_name(), "torch", torch.__version__)
for dtype in (torch.float64, torch.float32, torch.complex128, torch.complex64):
    for n in orders:
        a = hpd(n, dtype)
        reference = torch.linalg.cholesky(a)
        for name, f in variants.items():
            L, info = f(a)
            torch.cuda.synchronize()
            assert int(info) == 0 and torch.allclose(L, reference, rtol=1e-4, atol=1e-4), name
        sync = {k: [] for k in variants}
        names = list(variants)
        for rnd in range(8):
            for name in names[rnd % 3:] + names[:rnd % 3]:
                f = variants[name]
                for _ in range(10):
                    f(a)
                torch.cuda.synchronize()
                for _ in range(100):
                    t0 = time.perf_counter(); f(a); torch.cuda.synchronize(); t1 = time.perf_counter()
                    sync[name].append(t1 - t0)
        s = {k: statistics.median(v) * 1e6 for k, v in sync.items()}
        route = "kernel" if tessera._takes_batched_kernels(n, 1, str(dtype)[6:]) else "dense"
        print(f"{str(dtype)[6:]:10} n={n:4} (plan: {route:6}) sync us: kernel {s['kernel']:6.1f} dense {s['dense']:6.1f}"
              f" torch {s['torch']:6.1f} | torch/kernel {s['torch'] / s['kernel']:.2f} torch/dense {s['torch'] / s['dense']:.2f}",
              flush=True)
