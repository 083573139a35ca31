# tessera.cholesky_inverse(c) and tessera.inv(a) against numpy.linalg.inv(a) on C-ordered float64
# stacks; best of 5 rounds of at least 0.15 s of calls, microseconds per matrix; ratio: numpy's
# time over Tessera's.
import sys, time, numpy as np, tessera
rng = np.random.default_rng(0)
def best_time(f, rounds=5):
    best = 1e9
    for _ in range(rounds):
        k = 0; t0 = time.perf_counter()
        while True:
            f(); k += 1
            elapsed = time.perf_counter() - t0
            if elapsed > 0.15: break
        best = min(best, elapsed / k)
    return best
label = sys.argv[1]
for b, n in [(10000, 8), (1000, 24), (300, 48), (100, 64), (1, 200), (1, 500)]:
    x = rng.standard_normal((b, n, n)); a = x @ x.transpose(0, 2, 1) + n * np.eye(n)
    if b == 1: a = a[0]
    c = np.linalg.cholesky(a)
    peer = best_time(lambda: np.linalg.inv(a))
    inverse = best_time(lambda: tessera.cholesky_inverse(c, lower=True))
    inv = best_time(lambda: tessera.inv(a))
    print(f"{label} {b}x{n}: numpy.linalg.inv {peer*1e6/b:8.2f} us/matrix, cholesky_inverse {inverse*1e6/b:8.2f} "
          f"(ratio {peer/inverse:.2f}), inv {inv*1e6/b:8.2f} (ratio {peer/inv:.2f})", flush=True)
