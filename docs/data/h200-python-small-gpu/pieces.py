# Host microseconds of each piece of tessera.cholesky / cholesky_ex on one CUDA matrix (median of 2000).
import time, statistics
import numpy as np, torch, tessera
from tessera import _runtime, _arrays, _jax
import tessera as T
def host(f, reps=2000):
    for _ in range(200): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t)
    torch.cuda.synchronize()
    return statistics.median(ts) / 1e3
for n in (64, 128):
    g = torch.randn(n, n, dtype=torch.float64, device="cuda"); A = g @ g.T + n * torch.eye(n, dtype=torch.float64, device="cuda")
    where, arrays, native = _arrays.classify(A); ad = arrays.adapter
    L = torch.empty_like(A); info = torch.empty((), dtype=torch.int32, device="cuda")
    stream = ad.stream(A)
    rows = {
        "cholesky_ex whole": lambda: tessera.cholesky_ex(A),
        "cholesky whole": lambda: tessera.cholesky(A),
        "torch cholesky_ex": lambda: torch.linalg.cholesky_ex(A),
        "torch cholesky": lambda: torch.linalg.cholesky(A),
        "_torch_needs_grad": lambda: T._torch_needs_grad(A),
        "is_traced": lambda: _jax.is_traced(A),
        "_triangle": lambda: T._triangle(None, None),
        "classify": lambda: _arrays.classify(A),
        "check_gpu_usable": lambda: _runtime.check_gpu_usable(),
        "square_shape": lambda: _arrays.square_shape(A.shape),
        "_takes_batched_kernels": lambda: T._takes_batched_kernels(n, 1, ad.dtype(A)),
        "ad.dtype": lambda: ad.dtype(A),
        "ad.strided": lambda: ad.strided(A, ad.dtype(A), (), n, 1),
        "device_guard": lambda: ad.device_guard(A),
        "ad.empty": lambda: ad.empty(A, (n, n), ad.dtype(A)),
        "uninitialized_info": lambda: ad.uninitialized_info(A, ()),
        "swap_last": lambda: ad.swap_last(L),
        "ad.stream": lambda: ad.stream(A),
        "pointer x3": lambda: (ad.pointer(A), ad.pointer(L), ad.pointer(info)),
        "info.item (synced)": lambda: info.item(),
        "to_host": lambda: ad.to_host(info),
    }
    cm = _runtime.runtime_call(None, None); c = cm.__enter__()
    def rc():
        with _runtime.runtime_call(None, None) as x:
            pass
    rows["runtime_call enter+exit"] = rc
    if n > 64:
        rows["native potrf_device_into"] = lambda: c.potrf_device_into_f8(A.data_ptr(), 1, n, L.data_ptr(), n, c.mode, info.data_ptr(), stream)
    else:
        rows["native potrf_batched_device_into"] = lambda: T._POTRF_INTO[np.dtype(np.float64)](A.data_ptr(), n, 1, n*n, L.data_ptr(), n, 1, False, info.data_ptr(), stream)
    for name, f in rows.items():
        print(f"n={n:4d} {name:34s} {host(f):8.2f} us", flush=True)
    cm.__exit__(None, None, None)
