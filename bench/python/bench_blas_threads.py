#!/usr/bin/env python3
"""Times one OpenBLAS's potrf (or potri) on one matrix by BLAS thread count and order, in one
run: the measurement behind the plan's calling_thread_threaded_blas_from_n (the order from which
the calling thread factors, solves and inverts with the program's BLAS threads rather than one).

Each cell: a Fortran-ordered SPD (Hermitian positive definite for --precisions z, c) matrix
(--routine potrf) or its Cholesky factor (potri) copied into a work array and factored or inverted
(xPOTRF or xPOTRI, triangle --uplo), repeated for at least --min-seconds (and 7 calls), the median
in microseconds; the thread
count is set with openblas_set_num_threads before the cell. The library is the OpenBLAS that
Tessera's wheel bundles where the package is installed (its own copy, as the package loads it),
or --library PATH. OpenBLAS picks its CPU kernel when it is loaded: set OPENBLAS_CORETYPE (as the
package does, tessera._blas_kernel) to time the kernel the package runs.

    OPENBLAS_CORETYPE=SkylakeX python3 bench/python/bench_blas_threads.py
    python3 bench/python/bench_blas_threads.py --library /usr/lib/x86_64-linux-gnu/libopenblas.so.0 --sizes 64,200,500
"""
import argparse
import ctypes
import glob
import os
import statistics
import time

import numpy as np


def bundled_openblas():
    """The OpenBLAS in the installed wheel's library folder, or None."""
    import importlib.util

    spec = importlib.util.find_spec("tessera")
    if spec is None or not spec.submodule_search_locations:
        return None
    site = os.path.dirname(list(spec.submodule_search_locations)[0])
    found = sorted(glob.glob(os.path.join(site, "*.libs", "libopenblas*.so*")))
    return found[0] if found else None


def median_us(call, min_seconds):
    call()
    times = []
    end = time.perf_counter() + min_seconds
    while time.perf_counter() < end or len(times) < 7:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="the OpenBLAS shared library (default: the wheel's)")
    parser.add_argument("--sizes", default="64,100,128,160,200,256,320,384,448,512,640,768,1024")
    parser.add_argument("--threads", help="comma-separated thread counts (default 1, 2, 4, ... up to the CPUs)")
    parser.add_argument("--precisions", default="d,s", help="comma-separated: d, s, z, c")
    parser.add_argument("--uplo", choices=("L", "U"), default="L")
    parser.add_argument("--routine", choices=("potrf", "potri"), default="potrf")
    parser.add_argument("--min-seconds", type=float, default=0.25)
    args = parser.parse_args()

    path = args.library or bundled_openblas()
    if path is None:
        parser.error("no OpenBLAS given and no installed Tessera wheel found: pass --library")
    blas = ctypes.CDLL(path)
    blas.openblas_get_corename.restype = ctypes.c_char_p
    cpus = os.cpu_count()
    threads = ([int(t) for t in args.threads.split(",")] if args.threads
               else [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= cpus])
    print(f"OpenBLAS {os.path.basename(path)}, kernel {blas.openblas_get_corename().decode()}, {cpus} CPUs")
    print(f"{args.routine} of one matrix (uplo {args.uplo}, Fortran order), median microseconds by BLAS threads")
    for precision in args.precisions.split(","):
        dtype = {"d": np.float64, "s": np.float32, "z": np.complex128, "c": np.complex64}[precision]
        potrf = getattr(blas, precision + "potrf_")
        routine = getattr(blas, precision + args.routine + "_")
        print(f"{precision}     n | " + " ".join(f"{t:>4d} thr" for t in threads) + " | fastest")
        for n in (int(x) for x in args.sizes.split(",")):
            rng = np.random.default_rng(n)
            x = rng.standard_normal((n, n))
            if np.dtype(dtype).kind == "c":
                x = x + 1j * rng.standard_normal((n, n))
            a = np.asfortranarray((x @ x.conj().T + n * np.eye(n)).astype(dtype))
            uplo, order, info = ctypes.c_char(args.uplo.encode()), ctypes.c_int(n), ctypes.c_int(0)
            if args.routine == "potri":  # the input is the factor
                potrf(ctypes.byref(uplo), ctypes.byref(order), a.ctypes.data_as(ctypes.c_void_p), ctypes.byref(order),
                      ctypes.byref(info))
            work = a.copy(order="F")

            def factor():
                work[...] = a
                routine(ctypes.byref(uplo), ctypes.byref(order), work.ctypes.data_as(ctypes.c_void_p),
                        ctypes.byref(order), ctypes.byref(info))

            times = []
            for t in threads:
                blas.openblas_set_num_threads(t)
                times.append(median_us(factor, args.min_seconds))
            if info.value != 0:
                raise SystemExit(f"{args.routine} failed at n = {n}: info {info.value}")
            fastest = threads[times.index(min(times))]
            print(f"{precision} {n:5d} | " + " ".join(f"{v:8.1f}" for v in times) + f" | {fastest:4d} thr", flush=True)


if __name__ == "__main__":
    main()
