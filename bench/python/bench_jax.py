#!/usr/bin/env python3
"""Times tessera's functions inside jitted JAX programs against JAX's own, on the same arrays, in
one run: tessera.cholesky through the package's XLA FFI target (where the arrays lie; it checks
the infos, on a GPU with one synchronisation per call), tessera.cholesky_ex (no check, as
jax.numpy.linalg.cholesky, which gives NaNs), tessera.cholesky through host callbacks
(jax.pure_callback on numpy copies: the package's route where it has no FFI target, forced here),
and jax.numpy.linalg.cholesky; then cho_solve with one right-hand side against
jax.scipy.linalg.cho_solve. Each cell: the jitted function called once (compiled),
then back-to-back calls for at least --min-seconds (and 5), the best of 3 such runs, in
microseconds per call, timed to block_until_ready. Every factor is checked against JAX's.

    python3 bench/python/bench_jax.py                          # the default device (a GPU if JAX sees one)
    python3 bench/python/bench_jax.py --device cpu --cases 8x1000,100x1,1000x1
"""
import argparse
import time

import numpy as np


def per_call_us(function, args, min_seconds):
    function(*args).block_until_ready()
    best = float("inf")
    for _ in range(3):
        calls, start = 0, time.perf_counter()
        while calls < 5 or time.perf_counter() - start < min_seconds:
            result = function(*args)
            calls += 1
        result.block_until_ready()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cpu or gpu (default: JAX's default device)")
    parser.add_argument("--cases", default="8x10000,32x10000,128x1000,512x100,1000x1,4096x1",
                        help="NxBATCH,... (BATCH 1: one matrix)")
    parser.add_argument("--dtype", default="float64", choices=["float32", "float64", "complex64", "complex128"])
    parser.add_argument("--min-seconds", type=float, default=0.3)
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    import tessera
    from tessera import _jax

    device = jax.devices(args.device)[0] if args.device else jax.devices()[0]
    dtype = np.dtype(args.dtype)
    print(f"JAX {jax.__version__} on {device.device_kind} ({device.platform}); {dtype}; FFI target:",
          "yes" if _jax.ffi_ready() else "no")
    print(f"{'n':>6} {'batch':>6} | {'ffi us':>9} {'ex us':>9} {'callback us':>12} {'jax us':>9} | "
          f"{'callback/ffi':>12} {'jax/ffi':>8} {'jax/ex':>7} | {'solve ffi us':>12} {'jax us':>9} {'jax/ffi':>8}")
    rng = np.random.default_rng(0)
    for case in args.cases.split(","):
        n, batch = (int(v) for v in case.split("x"))
        g = rng.standard_normal((batch, n, n))
        if dtype.kind == "c":
            g = g + 1j * rng.standard_normal((batch, n, n))
        a = (g @ np.conj(np.swapaxes(g, -1, -2)) / n + np.eye(n)).astype(dtype)
        if batch == 1:
            a = a[0]
        x = jax.device_put(a, device)
        b = jax.device_put(np.ones(a.shape[:-1] + (1,), dtype), device)
        ffi = jax.jit(lambda m: tessera.cholesky(m))
        own = jax.jit(jnp.linalg.cholesky)
        reference = np.asarray(own(x))
        scale = np.abs(reference).max()
        assert np.abs(np.asarray(ffi(x)) - reference).max() <= 1e-3 * scale, "tessera's factor differs from JAX's"
        unchecked = jax.jit(lambda m: tessera.cholesky_ex(m)[0])
        t_ffi, t_own = per_call_us(ffi, (x,), args.min_seconds), per_call_us(own, (x,), args.min_seconds)
        t_ex = per_call_us(unchecked, (x,), args.min_seconds)
        registered, _jax._registered = _jax._registered, False  # host callbacks, as without the FFI target
        try:
            t_callback = per_call_us(jax.jit(lambda m: tessera.cholesky(m)), (x,), args.min_seconds)
        finally:
            _jax._registered = registered
        solve = jax.jit(lambda c, y: tessera.cho_solve(c, y, lower=True))
        own_solve = jax.jit(lambda c, y: jax.scipy.linalg.cho_solve((c, True), y))
        factor = own(x)
        t_solve, t_own_solve = (per_call_us(f, (factor, b), args.min_seconds) for f in (solve, own_solve))
        print(f"{n:>6} {batch:>6} | {t_ffi:>9.0f} {t_ex:>9.0f} {t_callback:>12.0f} {t_own:>9.0f} | "
              f"{t_callback / t_ffi:>12.2f} {t_own / t_ffi:>8.2f} {t_own / t_ex:>7.2f} | {t_solve:>12.0f} "
              f"{t_own_solve:>9.0f} {t_own_solve / t_solve:>8.2f}")


if __name__ == "__main__":
    main()
