# Host time of each layer of tessera.cholesky_ex on one CUDA matrix: the whole call, the native
# call alone (outputs preallocated), the raw cuSOLVER potrf through CuPy, and torch.
import time, statistics, sys
import torch, tessera
from tessera import _runtime
import cupy
from cupy_backends.cuda.libs import cusolver
from cupy.cuda import device as cpdev
def host(f, reps=400):
    for _ in range(20): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    return statistics.median(ts) * 1e6
def wall(f, reps=400):
    for _ in range(20): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t = time.perf_counter(); f(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6
print("n | host: tessera native_only cusolver_raw torch empty2 | wall: tessera native_only cusolver_raw torch")
for n in (64, 100, 200, 256):
    g = torch.randn(n, n, dtype=torch.float64, device="cuda"); A = g @ g.T + n * torch.eye(n, dtype=torch.float64, device="cuda")
    L = torch.empty_like(A); info = torch.empty((), dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    cm = _runtime.runtime_call(None, None); c = cm.__enter__()
    native = lambda: c.potrf_device_into_f8(A.data_ptr(), 1, n, L.data_ptr(), n, c.mode, info.data_ptr(), stream)
    h = cusolver.create(); cusolver.setStream(h, stream)
    C = cupy.asarray(A); lw = cusolver.dpotrf_bufferSize(h, 0, n, C.data.ptr, n)
    W = cupy.empty(lw, dtype=cupy.float64); dinfo = cupy.empty((), dtype=cupy.int32)
    raw = lambda: cusolver.dpotrf(h, 0, n, C.data.ptr, n, W.data.ptr, lw, dinfo.data.ptr)
    fs = lambda: tessera.cholesky_ex(A); ft = lambda: torch.linalg.cholesky_ex(A)
    e2 = lambda: (A.new_empty((n, n)), A.new_empty((), dtype=torch.int32))
    print(f"{n:4d} | {host(fs):7.1f} {host(native):7.1f} {host(raw):7.1f} {host(ft):7.1f} {host(e2):6.1f} | {wall(fs):7.1f} {wall(native):7.1f} {wall(raw):7.1f} {wall(ft):7.1f}", flush=True)
    cm.__exit__(None, None, None)
