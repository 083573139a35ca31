import time
t = time.perf_counter()
import tessera
t1 = time.perf_counter()
import numpy as np
a = np.eye(10) * 2
tessera.cholesky(a)
t2 = time.perf_counter()
print("%.1f %.2f" % ((t1 - t) * 1e3, (t2 - t1) * 1e3))
