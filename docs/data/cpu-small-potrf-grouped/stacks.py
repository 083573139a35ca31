# Stacks of small SPD matrices: scipy.linalg.cholesky against tessera.scipy.cholesky on the same
# C-ordered arrays; best of 5 rounds of at least 0.2 s of calls, microseconds per matrix.
import sys, time, numpy as np, scipy.linalg as sl, tessera.scipy as ts
rng = np.random.default_rng(0)
def best_time(f, rounds=5):
    best = 1e9
    for _ in range(rounds):
        k = 0; t0 = time.perf_counter()
        while True:
            f(); k += 1
            elapsed = time.perf_counter() - t0
            if elapsed > 0.2: break
        best = min(best, elapsed / k)
    return best
label = sys.argv[1]
dtype = np.dtype(sys.argv[2]) if len(sys.argv) > 2 else np.float64
for b, n in [(10000, 8), (10000, 16), (1000, 17), (1000, 20), (1000, 24), (1000, 28), (1000, 32), (300, 40), (300, 48),
             (100, 64), (1, 200), (1, 500)]:
    x = rng.standard_normal((b, n, n)); a = (x @ x.transpose(0, 2, 1) + n * np.eye(n)).astype(dtype)
    if b == 1: a = a[0]
    for lower in (True, False):
        s = best_time(lambda: sl.cholesky(a, lower=lower, check_finite=False))
        m = best_time(lambda: ts.cholesky(a, lower=lower))
        print(f"{label} {dtype.name} {b}x{n} lower={lower}: scipy {s*1e6/b:6.2f} us/matrix tessera {m*1e6/b:6.2f} "
              f"ratio {s/m:.2f}", flush=True)
