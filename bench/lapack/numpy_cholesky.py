#!/usr/bin/env python3
"""Times numpy.linalg.cholesky (LAPACK's dpotrf_) with the system LAPACK and through Tessera.

Runs the same timing twice in child processes: once as numpy is, once with
LD_PRELOAD=libtessera_lapack.so (TESSERA_MODE, TESSERA_NB... are passed on, so
TESSERA_MODE=gpu times the GPU). Prints both times and their ratio. Needs only numpy.

    python3 bench/lapack/numpy_cholesky.py --library build/src/lapack/libtessera_lapack.so [--n 8000] [--reps 3]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def child(n, reps):
    """Factors one SPD matrix reps + 1 times; prints the times as one JSON line."""
    import numpy as np

    rng = np.random.default_rng(8000)
    R = rng.uniform(-1.0, 1.0, size=(n, n))
    A = (R + R.T) / 2 + n * np.eye(n)  # diagonally dominant, so SPD; built in O(n^2)
    seconds = []
    for _ in range(reps + 1):
        start = time.perf_counter()
        L = np.linalg.cholesky(A)
        seconds.append(time.perf_counter() - start)
    # ||A x - L (L^T x)|| / (||A|| ||x||) for a random x: an O(n^2) check of the last factor.
    x = rng.standard_normal(n)
    residual = np.linalg.norm(A @ x - L @ (L.T @ x)) / (np.linalg.norm(A, 1) * np.linalg.norm(x))
    print(json.dumps({"numpy": np.__version__, "first": seconds[0], "runs": seconds[1:], "residual": residual}))


def run_child(n, reps, extra_env):
    env = dict(os.environ)
    env.update(extra_env)
    result = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--n", str(n), "--reps", str(reps)],
                            env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"child failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]), result.stderr


def describe(label, timing):
    runs = sorted(timing["runs"])
    best, median = runs[0], runs[len(runs) // 2]
    print(f"{label}: first call {timing['first']:.3f} s, best {best:.3f} s, median {median:.3f} s, "
          f"residual {timing['residual']:.1e}")
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="libtessera_lapack.so to preload")
    parser.add_argument("--n", type=int, default=8000)
    parser.add_argument("--reps", type=int, default=3, help="timed runs after a first, untimed-for-best one")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.n, args.reps)
    if not args.library or not os.path.isfile(args.library):
        sys.exit("--library must name the built libtessera_lapack.so")
    library = os.path.abspath(args.library)
    mode = os.environ.get("TESSERA_MODE", "hybrid")

    system, _ = run_child(args.n, args.reps, {})
    tessera, log = run_child(args.n, args.reps, {"LD_PRELOAD": library, "TESSERA_LAPACK_VERBOSE": "1"})

    paths = [line for line in log.splitlines() if line.startswith("tessera-lapack: DPOTRF")]
    print(f"numpy {system['numpy']}, numpy.linalg.cholesky, n={args.n}, {args.reps} timed runs after a first one")
    system_best = describe("system LAPACK          ", system)
    tessera_best = describe(f"Tessera (TESSERA_MODE={mode})", tessera)
    print(f"ratio system / Tessera (best times): {system_best / tessera_best:.2f}")
    if paths:
        print("path of the last call: " + paths[-1])
    if not paths or "tessera-lapack: DPOTRF" in paths[-1] and ": tessera " not in paths[-1]:
        print("warning: the calls did not go through Tessera; its messages:\n" + log, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
