import time, torch, tessera
from torch.profiler import profile, ProfilerActivity

def spd(n, dtype=torch.float64):
    g = torch.Generator(device="cuda").manual_seed(n)
    b = torch.randn((n, n), device="cuda", dtype=dtype, generator=g)
    return b @ b.mT + n * torch.eye(n, device="cuda", dtype=dtype)

def per_call(f, calls=200):
    torch.cuda.synchronize(); s = time.perf_counter()
    for _ in range(calls): f()
    torch.cuda.synchronize(); return (time.perf_counter() - s) / calls * 1e6

def prof(label, f):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(20): f()
        torch.cuda.synchronize()
    print(f"--- {label}")
    print(p.key_averages().table(sort_by="self_cuda_time_total", row_limit=12, max_name_column_width=70))
    print(p.key_averages().table(sort_by="cpu_time_total", row_limit=14, max_name_column_width=70))

def main():
    n = 96
    a = spd(n)
    ex = lambda: tessera.cholesky_ex(a)
    sy = lambda: tessera.cholesky(a)
    for _ in range(50): ex(); sy()
    print("before torch: ex", [round(per_call(ex), 1) for _ in range(3)], "sync", [round(per_call(sy), 1) for _ in range(3)])
    prof("ex before torch", ex)
    for _ in range(300): torch.linalg.cholesky(a); torch.linalg.cholesky_ex(a)
    print("after torch: ex", [round(per_call(ex), 1) for _ in range(3)], "sync", [round(per_call(sy), 1) for _ in range(3)])
    prof("ex after torch", ex)
    torch.cuda.empty_cache()
    print("after empty_cache: ex", [round(per_call(ex), 1) for _ in range(3)], "sync", [round(per_call(sy), 1) for _ in range(3)])


if __name__ == "__main__":
    main()
