"""One GPU matrix in a jitted JAX program: tessera.cholesky_ex ("ex", no check of the info),
tessera.cholesky ("chol", which reads the info back) and jax.numpy.linalg.cholesky on the same
device array, as a stream of back-to-back calls waited for once ("stream") and as calls each
waited for ("sync"); median of 15 rounds, microseconds per call.

    python3 jax_dense_one.py 96,128,256,500,1000
"""
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
import tessera  # noqa: E402
from tessera import _jax  # noqa: E402


def per_call(f, args, wait_each, per, rounds=15):
    f(*args).block_until_ready()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(per):
            r = f(*args)
            if wait_each:
                r.block_until_ready()
        r.block_until_ready()
        times.append((time.perf_counter() - start) / per * 1e6)
    return statistics.median(times)


def main():
    sizes = [int(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "96,128,200,256,500,1000,2000").split(",")]
    print(jax.__version__, jax.devices()[0].device_kind, "ffi", _jax.ffi_ready(), flush=True)
    rng = np.random.default_rng(0)
    calls = {"ex": jax.jit(lambda x: tessera.cholesky_ex(x)[0]), "chol": jax.jit(tessera.cholesky),
             "jax": jax.jit(jnp.linalg.cholesky)}
    for dtype in ("float64", "float32"):
        print(f"{dtype}: jitted calls, us (stream = back-to-back then one wait; sync = each call waited for)")
        for n in sizes:
            g = rng.standard_normal((n, n))
            a = jnp.asarray(g @ g.T + n * np.eye(n), dtype=dtype)
            r = {k: per_call(f, (a,), False, 50) for k, f in calls.items()}
            s = {k: per_call(f, (a,), True, 20) for k, f in calls.items()}
            print(f"  n={n:5d} stream ex {r['ex']:7.1f} chol {r['chol']:7.1f} jax {r['jax']:7.1f} "
                  f"jax/ex {r['jax'] / r['ex']:.2f} | sync ex {s['ex']:7.1f} chol {s['chol']:7.1f} "
                  f"jax {s['jax']:7.1f} jax/ex {s['jax'] / s['ex']:.2f}", flush=True)


if __name__ == "__main__":
    main()
