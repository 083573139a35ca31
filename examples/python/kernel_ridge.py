#!/usr/bin/env python3
"""Kernel ridge regression with the factor in FP64 and in adaptive precision.

n training points of the unit square (a jittered grid in Morton order, as in matern_likelihood.py)
with noisy targets y = f(x) + noise, the Laplacian kernel k(x, x') = exp(-|x - x'| / scale) and the
ridge lam: the weights solve (K + lam I) w = y through a Cholesky factor (`tessera.cholesky`, or
`tessera.cholesky_adaptive(K + lam I, accuracy)`, then `tessera.cho_solve`), and the predictions at
m test points are k(X_test, X) w. Prints per run the test error against the noise-free f, the
predictions' largest difference from FP64's relative to their largest value (a backward error u in
the factor moves the weights by up to the condition number of K + lam I times u; the predictions,
smoother, move less), the tiles per arithmetic and the time; exits 1 when a run's test error
differs from FP64's by more than --max-change (relative): the model learned is the same.

    python3 examples/python/kernel_ridge.py                          # n = 20000
    python3 examples/python/kernel_ridge.py --n 3000 --mode cpu
"""
import argparse
import sys
import time

import numpy as np

import tessera
from matern_likelihood import distances, exponential, locations


def target(points):
    """The noise-free function to learn."""
    return np.sin(6 * points[:, 0]) * np.cos(4 * points[:, 1]) + points[:, 0] ** 2


def laplacian_kernel(d, scale):
    return exponential(d, scale, np.empty_like(d))


def fit_and_predict(gram, y, cross, accuracy, mode):
    """(predictions, tiles per arithmetic, seconds) for one way of factoring the regularised Gram matrix."""
    start = time.perf_counter()
    if accuracy is None:
        factor, tiles = tessera.cholesky(gram, lower=True, mode=mode), {}
    else:
        factor, tiles = tessera.cholesky_adaptive(gram, accuracy, lower=True, mode=mode)
    weights = tessera.cho_solve(factor, y, lower=True)
    return cross @ weights, tiles, time.perf_counter() - start


def run(n, accuracies, mode=None, n_test=2000, scale=0.1, ridge=1e-3, noise=0.1, seed=7):
    """[(accuracy or None for FP64, predictions, test RMSE, tiles, seconds)] and the noise-free test targets."""
    rng = np.random.default_rng(seed)
    points = locations(n, seed)
    y = target(points) + noise * rng.standard_normal(n)
    test = rng.uniform(0.0, 1.0, size=(n_test, 2))
    gram = laplacian_kernel(distances(points), scale)
    gram[np.diag_indices_from(gram)] += ridge
    cross = laplacian_kernel(np.sqrt(((test[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1)), scale)
    truth = target(test)
    runs = []
    for accuracy in [None, *accuracies]:
        predictions, tiles, seconds = fit_and_predict(gram, y, cross, accuracy, mode)
        runs.append((accuracy, predictions, float(np.sqrt(np.mean((predictions - truth) ** 2))), tiles, seconds))
    return runs


def relative_difference(predictions, reference):
    return float(np.abs(predictions - reference).max() / np.abs(reference).max())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000, help="training points")
    parser.add_argument("--accuracy", default="1e-4,1e-8", help="accuracies of the adaptive runs, comma-separated")
    parser.add_argument("--mode", choices=("cpu", "gpu", "hybrid"), default=None, help="Tessera's mode (default: its choice)")
    parser.add_argument("--max-change", type=float, default=1e-3,
                        help="the largest relative change of the test error from FP64's")
    args = parser.parse_args()
    runs = run(args.n, [float(a) for a in args.accuracy.split(",") if a], args.mode)
    reference = runs[0][1]
    print(f"kernel ridge regression, Laplacian kernel, n = {args.n} training points, {len(reference)} test points")
    print(f"{'run':>8} {'test RMSE':>12} {'vs fp64':>10} {'fp16':>5} {'fp32':>5} {'fp64':>5} {'s':>8}")
    failed = False
    for accuracy, predictions, rmse, tiles, seconds in runs:
        difference = relative_difference(predictions, reference)
        counts = [str(tiles.get(k, "-")) for k in ("fp16", "fp32", "fp64")]
        name = "fp64" if accuracy is None else f"{accuracy:g}"
        print(f"{name:>8} {rmse:12.6e} {difference:10.2e} {counts[0]:>5} {counts[1]:>5} {counts[2]:>5} {seconds:8.2f}")
        failed |= abs(rmse - runs[0][2]) > args.max_change * runs[0][2]
    if failed:
        print(f"FAILED: a test error differs from FP64's by more than {args.max_change:g} of it")
        return 1
    print(f"OK: every test error within {args.max_change:g} of FP64's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
