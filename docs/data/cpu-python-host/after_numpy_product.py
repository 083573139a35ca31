"""Each library's cholesky right after a NumPy product (NumPy's OpenBLAS threads then spin for about
0.1 s on the cores the factorization needs) and in a quiet process (0.2 s after the last call).

    python3 after_numpy_product.py N [REPS]
"""
import sys, time, numpy as np, scipy.linalg, tessera
n = int(sys.argv[1]); reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
rng = np.random.default_rng(1); x = rng.standard_normal((n, n)); base = x @ x.T + n*np.eye(n)
y = rng.standard_normal((n, 64))
fs = {"tessera": tessera.cholesky, "scipy": lambda a: scipy.linalg.cholesky(a, lower=True), "numpy": np.linalg.cholesky}
for name, f in fs.items():
    f(base); time.sleep(0.5)
    ts = []
    for r in range(reps):
        b = base + (y @ y.T) * 1e-3  # a numpy product just before the factorization, as a program makes its matrix
        t0 = time.perf_counter(); f(b); ts.append(time.perf_counter() - t0)
    time.sleep(0.5)
    quiet = []
    for r in range(reps):
        b = base + 0.0; time.sleep(0.2)
        t0 = time.perf_counter(); f(b); quiet.append(time.perf_counter() - t0)
    print(f"n={n} {name:8s} after a numpy product: median {1e3*np.median(ts):7.2f} ms (max {1e3*max(ts):6.1f}); quiet: median {1e3*np.median(quiet):7.2f} ms")
