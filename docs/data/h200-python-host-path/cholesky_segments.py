# Where the time of tessera.cholesky (one 128 matrix, waiting) goes: the package's own steps, timed.
import time, sys, torch, numpy as np, tessera
from tessera import _arrays, _runtime, _jax
from tessera._runtime import runtime_call
dev = torch.device("cuda")
g = torch.Generator(device="cpu").manual_seed(1)
a = torch.randn(128, 128, dtype=torch.float64, generator=g); a = (a @ a.T + 128 * torch.eye(128, dtype=torch.float64)).to(dev)
ad = _arrays._native_kind("torch").adapter
f8 = np.dtype(np.float64)
def steps():
    t = [time.perf_counter_ns()]
    lower = tessera._triangle(None, None); tessera._torch_needs_grad(a); _jax.is_traced(a)
    where, arrays, native = _arrays.classify(a); _runtime.check_gpu_usable()
    n, batch = _arrays.square_shape(native.shape); tessera._takes_batched_kernels(n, batch, ad.dtype(native))
    t.append(time.perf_counter_ns())
    dtype = ad.dtype(a)
    guard = ad.device_guard(a); guard.__enter__()
    source, row, col, _ = ad.strided(a, dtype, (), n, 1)
    t.append(time.perf_counter_ns())
    f = ad.empty(a, (n, n), dtype)
    t.append(time.perf_counter_ns())
    factor = ad.swap_last(f)
    t.append(time.perf_counter_ns())
    rc = runtime_call(None, None); call = rc.__enter__()
    fn = getattr(call, "potrf_device_into_and_wait_f8"); mode = call.mode; pa, pf, s = ad.pointer(source), ad.pointer(f), ad.stream(a)
    t.append(time.perf_counter_ns())
    info = fn(pa, row, col, pf, n, mode, s)
    t.append(time.perf_counter_ns())
    rc.__exit__(None, None, None); guard.__exit__(None, None, None)
    hi = np.int32(info or 0); hi.any()
    t.append(time.perf_counter_ns())
    return t
names = ["checks+classify", "guard+strided", "empty", "swap_last", "runtime_call+args", "native (waits)", "exit+info"]
for _ in range(50): steps()
torch.cuda.synchronize()
rows = []
for _ in range(400):
    torch.cuda.synchronize()
    t = steps()
    rows.append([(t[i + 1] - t[i]) / 1e3 for i in range(len(t) - 1)] + [(t[-1] - t[0]) / 1e3])
rows = np.array(rows)
print("segments of the cholesky path, one 128 float64 tensor, median us over 400 isolated calls:")
for i, name in enumerate(names + ["total"]):
    print(f"  {name:22s} {np.median(rows[:, i]):8.2f}")
def iso(f, reps=400):
    for _ in range(20): f()
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize(); t0 = time.perf_counter_ns(); f(); ts.append(time.perf_counter_ns() - t0)
    return np.median(ts) / 1e3
pf_ = torch.empty_like(a)
def nat(row, col):
    def f():
        with runtime_call(None, None) as call:
            call.potrf_device_into_and_wait_f8(a.data_ptr(), row, col, pf_.data_ptr(), 128, "", ad.stream(a))
    return f
print(f"native wait alone, strides (128, 1): {iso(nat(128, 1)):8.2f}")
print(f"native wait alone, strides (1, 128): {iso(nat(1, 128)):8.2f}")
print(f"tessera.cholesky:                     {iso(lambda: tessera.cholesky(a)):8.2f}")
print(f"torch.linalg.cholesky:                {iso(lambda: torch.linalg.cholesky(a)):8.2f}")
def ex_then_sync():
    with runtime_call(None, None) as call:
        call.potrf_device_into_f8(a.data_ptr(), 128, 1, pf_.data_ptr(), 128, "", info_.data_ptr(), ad.stream(a))
    torch.cuda.current_stream().synchronize()
info_ = a.new_empty((), dtype=torch.int32)
print(f"native async + stream sync:           {iso(ex_then_sync):8.2f}")
