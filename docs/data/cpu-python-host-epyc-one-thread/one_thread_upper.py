import time, numpy as np, tessera, sys
rng=np.random.default_rng(1)
for dt in (np.float64, np.float32, np.complex128, np.complex64):
  for n in (448, 640, 1000):
    g=rng.standard_normal((n,n))
    if np.dtype(dt).kind=='c': g=g+1j*rng.standard_normal((n,n))
    a=(g@g.conj().T/n+np.eye(n)).astype(dt)
    ts=[]
    tessera.cholesky(a)
    for i in range(15):
        t0=time.perf_counter(); tessera.cholesky(a); ts.append(time.perf_counter()-t0)
    print(np.dtype(dt).name, n, "%.2f ms"%(np.median(ts)*1e3), flush=True)
