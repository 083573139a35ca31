# One GPU matrix's cholesky_ex: the package's call against a lean call of the same native entry
# (the steps the package takes for a 2-D torch tensor, without its generic layers) and PyTorch's,
# alternated in one process; then the host cost of each step alone.
import statistics, sys, time
import numpy as np
import torch, tessera
from tessera import _arrays

ad = _arrays._native_kind("torch").adapter
DTYPES = ad.dtypes
PUBLISHED = tessera._POTRF_DENSE_INTO_PUBLISHED
TAKES = tessera._STACK_TAKES_BATCHED_KERNELS
raw_stream = ad.raw_stream
int32 = torch.int32


def lean(a, lower=True):
    dtype = DTYPES.get(a.dtype)
    if dtype is None or a.dim() != 2 or not a.is_cuda or a.is_conj() or a.is_neg():
        return None
    n = a.shape[0]
    if a.shape[1] != n or TAKES[dtype](n, 1):
        return None
    row, col = a.stride()
    if not lower:
        row, col = col, row
    f = a.new_empty_strided((n, n), (1, n)) if lower else a.new_empty((n, n))
    info = a.new_empty((), dtype=int32)
    if PUBLISHED[dtype](a.data_ptr(), row, col, 0, f.data_ptr(), n, 1, "", info.data_ptr(), raw_stream(a.get_device())):
        return f, info
    return None


def spd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
    return x @ x.T + n * torch.eye(n, device="cuda", dtype=dtype)


variants = {"tessera": lambda a: tessera.cholesky_ex(a), "lean": lean, "torch": lambda a: torch.linalg.cholesky_ex(a)}
print(torch.cuda.get_device_name(), torch.__version__)
for dtype in (torch.float64, torch.float32):
    for n in (96, 128, 192, 256, 512):
        a = spd(n, dtype)
        L0 = torch.linalg.cholesky(a)
        for name, f in variants.items():
            r = f(a)
            torch.cuda.synchronize()
            assert r is not None and int(r[1]) == 0 and torch.allclose(r[0], L0, rtol=1e-4, atol=1e-4), name
        sync = {k: [] for k in variants}
        host = {k: [] for k in variants}
        names = list(variants)
        for rnd in range(8):
            order = names[rnd % 3:] + names[:rnd % 3]
            for name in order:
                f = variants[name]
                for _ in range(20):
                    f(a)
                torch.cuda.synchronize()
                for _ in range(150):
                    t0 = time.perf_counter(); f(a); t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
                    host[name].append(t1 - t0); sync[name].append(t2 - t0)
        med = {k: statistics.median(v) * 1e6 for k, v in sync.items()}
        hmed = {k: statistics.median(v) * 1e6 for k, v in host.items()}
        print(f"{str(dtype)[6:]:8} n={n:4}  sync us: tessera {med['tessera']:6.1f} lean {med['lean']:6.1f} torch {med['torch']:6.1f}"
              f" | torch/tessera {med['torch']/med['tessera']:.2f} torch/lean {med['torch']/med['lean']:.2f}"
              f" | host us: tessera {hmed['tessera']:5.1f} lean {hmed['lean']:5.1f} torch {hmed['torch']:5.1f}")
        sys.stdout.flush()

# The host cost of each step alone (no synchronisation), n = 128, double.
a = spd(128, torch.float64)
f = a.new_empty_strided((128, 128), (1, 128))
info = a.new_empty((), dtype=int32)
dt = np.dtype(np.float64)
steps = {
    "is_conj+is_neg+is_cuda+dim": lambda: (a.is_conj(), a.is_neg(), a.is_cuda, a.dim()),
    "dtype lookup": lambda: DTYPES.get(a.dtype),
    "stride()": lambda: a.stride(),
    "plan (stack_takes_batched_kernels)": lambda: TAKES[dt](128, 1),
    "new_empty_strided": lambda: a.new_empty_strided((128, 128), (1, 128)),
    "new_empty int32": lambda: a.new_empty((), dtype=int32),
    "data_ptr": lambda: a.data_ptr(),
    "raw stream": lambda: raw_stream(a.get_device()),
    "classify": lambda: _arrays.classify(a),
}
for name, step in steps.items():
    for _ in range(1000):
        step()
    t0 = time.perf_counter()
    for _ in range(20000):
        step()
    print(f"step {name:36} {(time.perf_counter() - t0) / 20000 * 1e6:6.2f} us")
