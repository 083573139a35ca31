# One GPU matrix per call: tessera.cholesky_ex and tessera.cholesky against PyTorch's
# torch.linalg.cholesky_ex and torch.linalg.cholesky on the same tensor, alternated in one process
# (8 rounds of 100 calls each, their order rotated): the median synchronised call (from one
# synchronisation to the next) and the median host time (the call's return), in microseconds.
#   python3 calls_ab.py LABEL [ORDERS]
import statistics, sys, time
import torch, tessera

label = sys.argv[1]
orders = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [48, 64, 80, 96, 128, 192, 256, 512, 1024]


def hpd(n, dtype):
    g = torch.Generator(device="cuda").manual_seed(n)
    x = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
    return x @ x.mH + n * torch.eye(n, device="cuda", dtype=dtype)


variants = {
    "tessera_ex": lambda a: tessera.cholesky_ex(a),
    "torch_ex": lambda a: torch.linalg.cholesky_ex(a),
    "tessera": lambda a: tessera.cholesky(a),
    "torch": lambda a: torch.linalg.cholesky(a),
}
tessera.cholesky_ex(hpd(256, torch.float64))  # the adapter and the published runtime
print(label, torch.cuda.get_device_name(), "torch", torch.__version__, "tessera", tessera.__version__)
for dtype in (torch.float64, torch.float32, torch.complex128, torch.complex64):
    for n in orders:
        a = hpd(n, dtype)
        reference = torch.linalg.cholesky(a)
        for name, f in variants.items():
            r = f(a)
            L = r[0] if isinstance(r, tuple) else r
            torch.cuda.synchronize()
            assert torch.allclose(L, reference, rtol=1e-4, atol=1e-4), name
        sync = {k: [] for k in variants}
        host = {k: [] for k in variants}
        names = list(variants)
        for rnd in range(8):
            for name in names[rnd % 4:] + names[:rnd % 4]:
                f = variants[name]
                for _ in range(10):
                    f(a)
                torch.cuda.synchronize()
                for _ in range(100):
                    t0 = time.perf_counter(); f(a); t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
                    host[name].append(t1 - t0); sync[name].append(t2 - t0)
        s = {k: statistics.median(v) * 1e6 for k, v in sync.items()}
        h = {k: statistics.median(v) * 1e6 for k, v in host.items()}
        print(f"{label} {str(dtype)[6:]:10} n={n:5}  cholesky_ex sync us {s['tessera_ex']:7.1f} torch {s['torch_ex']:7.1f}"
              f" torch/tessera {s['torch_ex'] / s['tessera_ex']:.2f} host us {h['tessera_ex']:5.1f} torch {h['torch_ex']:5.1f}"
              f" | cholesky sync us {s['tessera']:7.1f} torch {s['torch']:7.1f} torch/tessera {s['torch'] / s['tessera']:.2f}",
              flush=True)
