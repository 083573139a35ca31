import time, numpy as np, scipy, scipy.linalg, tessera, sys
def best(f, reps=30):
    ts=[]
    for _ in range(reps):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return min(ts), np.median(ts)
for dt in (np.float64, np.float32):
  for (b,n) in ((10000,8),(10000,4),(10000,16),(1000,32),(100000,2)):
    g=np.random.default_rng(0).standard_normal((b,n,n)).astype(dt)
    a=(g@g.swapaxes(-1,-2)+n*np.eye(n,dtype=dt)).astype(dt)
    tessera.cholesky(a, lower=False)
    ts=best(lambda: scipy.linalg.cholesky(a, lower=False, check_finite=False))
    tt=best(lambda: tessera.cholesky(a, lower=False))
    tn=best(lambda: np.linalg.cholesky(a))
    tl=best(lambda: tessera.cholesky(a))
    print(f"{np.dtype(dt).name} {b}x{n}: scipy upper {ts[1]*1e3:.3f} tessera upper {tt[1]*1e3:.3f} ratio {ts[1]/tt[1]:.2f} | numpy {tn[1]*1e3:.3f} tessera lower {tl[1]*1e3:.3f} ratio {tn[1]/tl[1]:.2f}")
print(scipy.__version__, np.__version__)
