import time, torch
sizes = [64, 96, 112, 128, 160, 192, 256, 384, 512, 640, 768, 1024, 1536, 2048, 3072, 4096]
print(torch.cuda.get_device_name(), torch.__version__)
for dt in (torch.float64, torch.float32, torch.complex128, torch.complex64):
    for n in sizes:
        g = torch.Generator(device="cuda").manual_seed(n)
        a = torch.randn(n, n, dtype=dt, device="cuda", generator=g)
        a = a @ a.mH / n + 2 * torch.eye(n, dtype=dt, device="cuda")
        L = torch.linalg.cholesky(a)
        for _ in range(3): torch.cholesky_inverse(L)
        torch.cuda.synchronize()
        ts = []
        for _ in range(25):
            t0 = time.perf_counter(); x = torch.cholesky_inverse(L); torch.cuda.synchronize(); ts.append(time.perf_counter() - t0)
        ts.sort()
        print(f"{str(dt):16s} {n:5d} torch {ts[12]*1e6:9.1f} us", flush=True)
