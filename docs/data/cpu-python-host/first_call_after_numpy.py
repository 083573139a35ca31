"""A fresh process's first factorization, as a script makes it: the matrix from a NumPy product,
then `import tessera` (or scipy.linalg) and one call. Prints the import's and the call's time.

    python3 first_call_after_numpy.py N tessera|scipy|numpy
"""
import sys
import time

import numpy as np

n, library = int(sys.argv[1]), sys.argv[2]
x = np.random.default_rng(1).standard_normal((n, n))
a = x @ x.T + n * np.eye(n)
start = time.perf_counter()
if library == "tessera":
    import tessera

    cholesky = tessera.cholesky
elif library == "scipy":
    import scipy.linalg

    def cholesky(m):
        return scipy.linalg.cholesky(m, lower=True)
else:
    cholesky = np.linalg.cholesky
imported = time.perf_counter()
cholesky(a)
done = time.perf_counter()
print(f"n={n} {library:8s} import {1e3 * (imported - start):6.1f} ms, first call {1e3 * (done - imported):6.1f} ms")
