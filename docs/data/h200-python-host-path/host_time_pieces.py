import time, statistics, torch, numpy as np, tessera
from tessera import _arrays, _runtime
dev = torch.device("cuda")
def spd(n, batch=None):
    g = torch.Generator(device="cpu").manual_seed(n)
    shape = (n, n) if batch is None else (batch, n, n)
    a = torch.randn(*shape, dtype=torch.float64, generator=g)
    return (a @ a.mT + n * torch.eye(n, dtype=torch.float64)).to(dev)
def iso(f, reps=400):
    """median host time of one call, the GPU idle before it (us)"""
    for _ in range(20): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t)
    torch.cuda.synchronize()
    ts.sort()
    return ts[len(ts) // 2] / 1e3, ts[len(ts) // 10] / 1e3
def sync(f, reps=400):
    for _ in range(20): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter_ns(); f(); torch.cuda.synchronize(); ts.append(time.perf_counter_ns() - t)
    ts.sort()
    return ts[len(ts) // 2] / 1e3
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
a128, a64 = spd(128), spd(64)
c32 = torch.linalg.cholesky(spd(32)); c32s = torch.linalg.cholesky(spd(32, 4096))
ad = _arrays._native_kind("torch").adapter
f8 = np.dtype(np.float64)
f = ad.empty(a128, (128, 128), f8); info = ad.uninitialized_info(a128, ())
s = ad.stream(a128)
pa, pf, pi = a128.data_ptr(), f.data_ptr(), info.data_ptr()
def native_ex():
    with _runtime.runtime_call(None, None) as call:
        call.potrf_device_into_f8(pa, 1, 128, pf, 128, "", pi, s)
def native_wait():
    with _runtime.runtime_call(None, None) as call:
        return call.potrf_device_into_and_wait_f8(pa, 1, 128, pf, 128, "", s)
x32 = ad.empty(c32, (32, 32), f8); i32 = ad.uninitialized_info(c32, ())
potri = tessera._POTRI_INTO[f8]
xs = ad.empty(c32s, (4096, 32, 32), f8); iss = ad.uninitialized_info(c32s, (4096,))
import cupy
from cupy_backends.cuda.libs import cusolver as cs
from cupy.cuda import device as cdev
h = cdev.get_cusolver_handle()
ca = cupy.asarray(a128.cpu().numpy()); cw = cupy.empty(1 << 20, dtype=cupy.float64); ci = cupy.empty(1, dtype=cupy.int32)
cs.setStream(h, s)
lw = cs.dpotrf_bufferSize(h, 0, 128, ca.data.ptr, 128)
def raw_cusolver(): cs.dpotrf(h, 0, 128, ca.data.ptr, 128, cw.data.ptr, lw, ci.data.ptr)
from cupy_backends.cuda.api import runtime as crt
rows = [
 ("tessera.cholesky_ex 128", lambda: tessera.cholesky_ex(a128)),
 ("torch.linalg.cholesky_ex 128", lambda: torch.linalg.cholesky_ex(a128)),
 ("native potrf_device_into_f8 128 (+runtime_call)", native_ex),
 ("native potrf_device_into_and_wait_f8 128 [waits]", native_wait),
 ("tessera.cholesky 128 [waits]", lambda: tessera.cholesky(a128)),
 ("torch.linalg.cholesky 128 [waits]", lambda: torch.linalg.cholesky(a128)),
 ("raw cusolverDnDpotrf 128 (cupy binding)", raw_cusolver),
 ("cudaPointerGetAttributes (cupy)", lambda: crt.pointerGetAttributes(pa)),
 ("tessera.cholesky_ex 64", lambda: tessera.cholesky_ex(a64)),
 ("torch.linalg.cholesky_ex 64", lambda: torch.linalg.cholesky_ex(a64)),
 ("tessera.cholesky_inverse 1x32", lambda: tessera.cholesky_inverse(c32, lower=True)),
 ("torch.cholesky_inverse 1x32", lambda: torch.cholesky_inverse(c32)),
 ("native potri 1x32", lambda: potri(c32.data_ptr(), 32, 1, 0, x32.data_ptr(), 32, 1, False, i32.data_ptr(), s)),
 ("tessera.cholesky_inverse 4096x32", lambda: tessera.cholesky_inverse(c32s, lower=True)),
 ("native potri 4096x32", lambda: potri(c32s.data_ptr(), 32, 1, 1024, xs.data_ptr(), 32, 4096, False, iss.data_ptr(), s)),
 ("a.new_empty((128,128))", lambda: a128.new_empty((128, 128))),
 ("a.new_empty(()) int32", lambda: a128.new_empty((), dtype=torch.int32)),
 ("torch.empty_like(a)", lambda: torch.empty_like(a128)),
 ("buf.as_strided", lambda: f.as_strided((128, 128), (1, 128))),
 ("f.mT", lambda: f.mT),
]
print(f"{'':50s} {'iso median':>10s} {'iso p10':>8s} {'synced':>8s}")
for name, fn in rows:
    m, p = iso(fn)
    sy = sync(fn)
    print(f"{name:50s} {m:10.2f} {p:8.2f} {sy:8.2f}", flush=True)
