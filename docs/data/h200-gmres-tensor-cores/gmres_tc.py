# Host-array refined solves with tensor-core factors: LAPACK's steps against GMRES-IR, by condition.
import time, numpy as np, tessera
def with_condition(n, condition, seed):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = (q * np.geomspace(1, 1 / condition, n)) @ q.T
    return (a + a.T) / 2
def berr(a, x, b):
    return float((np.abs(a @ x - b).max(0) / (np.abs(a).sum(1).max() * np.abs(x).max(0) + np.abs(b).max(0))).max())
print("n cores cond | lapack: iter s berr | gmres: iter s berr | fp64 posv s berr")
for n in (2048, 4096):
    for cond in (1e2, 1e4, 1e6, 1e8, 1e10):
        a = with_condition(n, cond, 5); b = np.random.default_rng(6).standard_normal((n, 1))
        t = time.perf_counter(); x64 = tessera.posv(a, b); t64 = time.perf_counter() - t
        for cores in ("fp16", "bf16", "tf32"):
            row = []
            for steps in ("lapack", "gmres"):
                tessera.posv_refined(a, b, tensor_cores=cores, refinement=steps)  # warm
                t = time.perf_counter(); x, it = tessera.posv_refined(a, b, tensor_cores=cores, refinement=steps)
                row.append(f"{it:4d} {time.perf_counter() - t:7.3f} {berr(a, x, b):.1e}")
            print(f"{n} {cores} {cond:.0e} | {row[0]} | {row[1]} | {t64:7.3f} {berr(a, x64, b):.1e}", flush=True)
