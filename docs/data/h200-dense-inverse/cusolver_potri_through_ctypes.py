"""One matrix's inverse from its lower factor: torch.cholesky_inverse, tessera.cholesky_inverse
(batched kernel, batch 1) and cuSOLVER's potri called through ctypes (in place on a clone; the
upper triangle not mirrored), synchronised calls (median of rounds) and potri's GPU time alone."""
import ctypes, glob, statistics, sys, time
import torch
import tessera

paths = sorted(glob.glob("/usr/local/cuda*/targets/x86_64-linux/lib/libcusolver.so*")) + \
        sorted(glob.glob("/opt/torch/.venv/lib/python3*/site-packages/nvidia/**/libcusolver.so*", recursive=True))
print("cusolver:", paths[:3])
cs = ctypes.CDLL(paths[0])
handle = ctypes.c_void_p()
assert cs.cusolverDnCreate(ctypes.byref(handle)) == 0
stream = torch.cuda.current_stream().cuda_stream
assert cs.cusolverDnSetStream(handle, ctypes.c_void_p(stream)) == 0
names = {torch.float64: "D", torch.float32: "S", torch.complex128: "Z", torch.complex64: "C"}


def spd(n, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    b = torch.randn((n, n), device="cuda", dtype=dtype, generator=g)
    return b @ b.mH + n * torch.eye(n, device="cuda", dtype=dtype)


def synchronised(f, calls=200, rounds=5):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    med = []
    for _ in range(rounds):
        ts = []
        for _ in range(calls // rounds):
            t = time.perf_counter()
            f()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t)
        med.append(statistics.median(ts))
    return statistics.median(med) * 1e6


print(f"{'type':>5} {'n':>4} {'torch':>8} {'tessera':>8} {'potri+clone':>11} {'potri GPU':>9}  torch/tes torch/potri err")
for dtype in (torch.float64, torch.complex128, torch.float32, torch.complex64):
    t = names[dtype]
    bufsize = getattr(cs, f"cusolverDn{t}potri_bufferSize")
    potri = getattr(cs, f"cusolverDn{t}potri")
    for n in (16, 32, 48, 64, 96, 128, 160, 176, 256):
        L = torch.linalg.cholesky(spd(n, dtype, n))
        lwork = ctypes.c_int()
        x = L.mT.contiguous().mT.clone()  # column-major
        assert bufsize(handle, 0, n, ctypes.c_void_p(x.data_ptr()), n, ctypes.byref(lwork)) == 0
        work = torch.empty(max(lwork.value, 1), device="cuda", dtype=dtype)
        info = torch.zeros(1, device="cuda", dtype=torch.int32)
        Lc = L.mT.contiguous().mT

        def vendor():
            y = Lc.clone(memory_format=torch.preserve_format)
            potri(handle, 0, n, ctypes.c_void_p(y.data_ptr()), n, ctypes.c_void_p(work.data_ptr()), lwork,
                  ctypes.c_void_p(info.data_ptr()))
            return y

        y = vendor()
        ref = torch.cholesky_inverse(L)
        err = ((y.tril() - ref.tril()).abs().max() / ref.abs().max()).item()
        tt = synchronised(lambda: torch.cholesky_inverse(L))
        te = synchronised(lambda: tessera.cholesky_inverse(L, lower=True))
        tv = synchronised(vendor)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(100):
            potri(handle, 0, n, ctypes.c_void_p(x.data_ptr()), n, ctypes.c_void_p(work.data_ptr()), lwork,
                  ctypes.c_void_p(info.data_ptr()))
            potri(handle, 0, n, ctypes.c_void_p(x.data_ptr()), n, ctypes.c_void_p(work.data_ptr()), lwork,
                  ctypes.c_void_p(info.data_ptr()))
        end.record(); torch.cuda.synchronize()
        gpu = start.elapsed_time(end) * 1e3 / 200
        print(f"{t:>5} {n:4d} {tt:8.1f} {te:8.1f} {tv:11.1f} {gpu:9.1f}  {tt/te:8.2f} {tt/tv:8.2f} {err:.1e}", flush=True)
