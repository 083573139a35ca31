import time, numpy as np, scipy.linalg, sys, os
sys.path.insert(0, sys.argv[1])
import tessera
n=int(os.environ.get("N","4000"))
dt=np.float32 if os.environ.get("P","s")=="s" else np.float64
rng=np.random.default_rng(0)
g=rng.standard_normal((n,n)).astype(dt)
a=(g@g.T/n+np.eye(n,dtype=dt)).astype(dt)
def med(f, k=7):
    ts=[]
    for _ in range(k):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return np.median(ts)
tessera.cholesky(a)
t=med(lambda: tessera.cholesky(a)); s=med(lambda: scipy.linalg.cholesky(a, lower=True))
print(os.environ.get("TESSERA_NB","default"), f"tessera {t:.4f} scipy {s:.4f} ratio(rate) {s/t:.3f}")
