"""tessera.cholesky of one host matrix, C-ordered (its lower triangle is the column-major upper
one: the calling thread swaps it into the lower triangle and back around LAPACK's lower potrf)
against the same matrix Fortran-ordered (the lower triangle as it is), median microseconds."""
import statistics
import time

import numpy as np
import tessera


def median_us(f, reps=100):
    f()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


rng = np.random.default_rng(1)
for dtype in (np.complex128, np.complex64, np.float64):
    for n in (127, 128, 191, 192, 255, 256, 257, 383, 384):
        x = rng.standard_normal((n, n))
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal((n, n))
        a = (x @ x.conj().T + n * np.eye(n)).astype(dtype)
        f = np.asfortranarray(a)
        c_us, f_us = median_us(lambda: tessera.cholesky(a)), median_us(lambda: tessera.cholesky(f))
        print(np.dtype(dtype).name, n, "C %.0f F %.0f  C-F %.0f us" % (c_us, f_us, c_us - f_us), flush=True)
