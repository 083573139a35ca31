#!/usr/bin/env python3
"""Maximum-likelihood estimation of a Gaussian process's parameters in FP64 and in adaptive precision.

The geostatistics benchmark: n locations on a jittered grid of the unit square, ordered along a
Morton curve; observations z drawn (fixed seed) from a zero-mean Gaussian process with the Matérn
covariance of smoothness 1/2, C(r) = variance exp(-r / range). The estimate maximises the
log-likelihood

    l(variance, range) = -n/2 log(2 pi) - 1/2 log det C - 1/2 z^T C^-1 z

over both parameters: for a given range, the variance that maximises it is z^T R^-1 z / n (R the
correlation matrix), and the remaining one-dimensional profile in log(range) goes to SciPy's
bounded Brent search. Each evaluation factors R with Tessera, in FP64 (`tessera.cholesky`) or with
adaptive precision (`tessera.cholesky_adaptive(R, accuracy)`), and takes log det R and z^T R^-1 z
from the factor (`tessera.cho_solve`).

Prints per run: the estimates, the maximum log-likelihood, the log-likelihood's relative error at
FP64's estimate, how far the estimates lie from FP64's (relative, and in standard errors of FP64's
range estimate: 1 / sqrt(-l'') in log(range), from the FP64 profile's curvature), the tiles per
arithmetic at the estimate, the evaluations and the time.

The digits the accuracy allows: with the adaptive log-likelihood off by e1 at FP64's estimate and
e2 at its own, FP64's log-likelihood at the adaptive estimate lies at most e1 + e2 below its
maximum (the "loss"), so that on a locally quadratic profile the estimates lie at most
sqrt(2 (e1 + e2)) standard errors apart ("bound SE"). Exits 1 when the loss exceeds e1 + e2.

    python3 examples/python/matern_likelihood.py                          # n = 20000
    python3 examples/python/matern_likelihood.py --n 3000 --accuracy 1e-4,1e-8 --mode cpu
"""
import argparse
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

import tessera

TRUE_VARIANCE = 1.0
TRUE_RANGE = 0.1
RANGE_BOUNDS = (0.01, 1.0)


def morton_code(i, j):
    """Interleaves the bits of integer arrays i and j (16 each)."""
    code = np.zeros_like(i, dtype=np.uint64)
    for bit in range(16):
        code |= ((i >> bit) & 1).astype(np.uint64) << np.uint64(2 * bit)
        code |= ((j >> bit) & 1).astype(np.uint64) << np.uint64(2 * bit + 1)
    return code


def locations(n, seed):
    """n points: cells of a ceil(sqrt(n))^2 grid, each jittered inside its cell, the first n along a
    Morton curve (nearby points get nearby indices, so tiles far from the diagonal hold small
    covariances)."""
    side = math.ceil(math.sqrt(n))
    i, j = (a.ravel() for a in np.meshgrid(np.arange(side), np.arange(side), indexing="ij"))
    rng = np.random.default_rng(seed)
    points = (np.stack([i, j], axis=1) + 0.5 + rng.uniform(-0.4, 0.4, size=(side * side, 2))) / side
    return points[np.argsort(morton_code(i, j), kind="stable")][:n]


ROWS_PER_TASK = 512


def by_row_blocks(n, work):
    """work(rows) for blocks of rows of an n x n matrix, on every core (numpy's element-wise
    functions release the interpreter lock)."""
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(lambda start: work(slice(start, min(start + ROWS_PER_TASK, n))), range(0, n, ROWS_PER_TASK)))


def distances(points):
    """The n x n matrix of Euclidean distances."""
    n = len(points)
    d = np.empty((n, n))

    def rows(r):
        d[r] = np.sqrt(((points[r, None, :] - points[None, :, :]) ** 2).sum(axis=-1))

    by_row_blocks(n, rows)
    return d


def exponential(d, length, out):
    """exp(-d / length) into out."""

    def rows(r):
        np.multiply(d[r], -1.0 / length, out=out[r])
        np.exp(out[r], out=out[r])

    by_row_blocks(len(d), rows)
    return out


def correlation(d, length, out):
    """R = exp(-d / range) into out: the Matérn correlation of smoothness 1/2."""
    return exponential(d, length, out)


@dataclass
class Estimate:
    variance: float
    range: float
    log_likelihood: float
    evaluations: int
    seconds: float
    tiles: dict


class Likelihood:
    """The profile log-likelihood in log(range) for one way of factoring: accuracy None is FP64."""

    def __init__(self, d, z, accuracy, mode):
        self.d, self.z, self.accuracy, self.mode = d, z, accuracy, mode
        self.buffer = np.empty_like(d)
        self.evaluations = 0
        self.tiles = {}

    def factor(self, r):
        if self.accuracy is None:
            return tessera.cholesky(r, lower=True, mode=self.mode), {}
        return tessera.cholesky_adaptive(r, self.accuracy, lower=True, mode=self.mode)

    def at(self, length):
        """(log-likelihood at the best variance for this range, that variance)."""
        self.evaluations += 1
        factor, self.tiles = self.factor(correlation(self.d, length, self.buffer))
        n = len(self.z)
        quadratic = float(self.z @ tessera.cho_solve(factor, self.z, lower=True))
        log_det = 2.0 * float(np.log(np.diagonal(factor)).sum())
        variance = quadratic / n
        # log det C = n log(variance) + log det R, and z^T C^-1 z = n at the best variance.
        return -0.5 * (n * math.log(2 * math.pi) + n * math.log(variance) + log_det + n), variance

    def maximise(self, tolerance):
        start = time.perf_counter()
        result = minimize_scalar(lambda t: -self.at(math.exp(t))[0], bounds=tuple(map(math.log, RANGE_BOUNDS)),
                                 method="bounded", options={"xatol": tolerance})
        length = math.exp(result.x)
        log_likelihood, variance = self.at(length)
        return Estimate(variance, length, log_likelihood, self.evaluations, time.perf_counter() - start, self.tiles)


def observations(d, seed, mode):
    """z = L w: a draw of the process with the true parameters (w standard normal, L its FP64 factor)."""
    covariance = TRUE_VARIANCE * correlation(d, TRUE_RANGE, np.empty_like(d))
    factor = tessera.cholesky(covariance, lower=True, mode=mode)
    w = np.random.default_rng(seed).standard_normal(len(d))
    return factor @ w


def standard_error_of_log_range(likelihood, length):
    """1 / sqrt(-l'') in log(range) at the FP64 estimate, by a central difference of the profile."""
    h = 0.05
    values = [likelihood.at(length * math.exp(s * h))[0] for s in (-1, 0, 1)]
    curvature = (values[0] - 2 * values[1] + values[2]) / h ** 2
    return 1.0 / math.sqrt(-curvature) if curvature < 0 else math.inf


@dataclass
class Comparison:
    """An adaptive run against FP64's: its estimate, and each log-likelihood at both estimates."""
    accuracy: float
    estimate: Estimate
    fp64_at_estimate: float       # l_64 at the adaptive estimate
    adaptive_at_reference: float  # l_adaptive at FP64's estimate

    def errors(self, reference):
        """The log-likelihood's error |l_adaptive - l_64| at FP64's estimate and at this run's."""
        return (abs(self.adaptive_at_reference - reference.log_likelihood),
                abs(self.estimate.log_likelihood - self.fp64_at_estimate))

    def loss(self, reference):
        """l_64 at FP64's estimate less l_64 at this run's: at most the sum of the two errors, since
        this run's estimate maximises l_adaptive."""
        return reference.log_likelihood - self.fp64_at_estimate


def run(n, accuracies, mode=None, seed=2024, tolerance=1e-7):
    """(FP64 estimate, its standard error in log(range), [Comparison per accuracy])."""
    d = distances(locations(n, seed))
    z = observations(d, seed, mode)
    fp64 = Likelihood(d, z, None, mode)
    reference = fp64.maximise(tolerance)
    standard_error = standard_error_of_log_range(fp64, reference.range)
    comparisons = []
    for accuracy in accuracies:
        adaptive = Likelihood(d, z, accuracy, mode)
        estimate = adaptive.maximise(tolerance)
        comparisons.append(Comparison(accuracy, estimate, fp64.at(estimate.range)[0], adaptive.at(reference.range)[0]))
    return reference, standard_error, comparisons


def standard_errors_apart(estimate, reference, standard_error):
    return abs(math.log(estimate.range / reference.range)) / standard_error


def within_the_errors(comparison, reference):
    """Whether FP64's loss at the adaptive estimate stays within the two log-likelihood errors (and
    the optimiser's reach, 1e-9 of |l|): the adaptive estimate is as good as its arithmetic allows."""
    return comparison.loss(reference) <= sum(comparison.errors(reference)) + 1e-9 * abs(reference.log_likelihood)


def report(n, reference, standard_error, comparisons):
    print(f"Matérn (smoothness 1/2) log-likelihood, n = {n}; true variance {TRUE_VARIANCE}, range {TRUE_RANGE}")
    print(f"FP64 estimate: standard error of log(range) {standard_error:.3e}")
    print(f"{'run':>8} {'variance':>13} {'range':>13} {'max loglik':>18} {'loglik err':>10} {'range rel':>9}"
          f" {'range SE':>9} {'bound SE':>9} {'loss':>9} {'fp16':>4} {'fp32':>4} {'fp64':>4} {'evals':>5} {'s':>7}")

    def row(name, e, error, relative, apart, bound, loss):
        tiles = [str(e.tiles.get(k, "-")) for k in ("fp16", "fp32", "fp64")]
        print(f"{name:>8} {e.variance:13.9f} {e.range:13.9f} {e.log_likelihood:18.9f} {error:10.2e} {relative:9.2e}"
              f" {apart:9.2e} {bound:9.2e} {loss:9.2e} {tiles[0]:>4} {tiles[1]:>4} {tiles[2]:>4} {e.evaluations:5d}"
              f" {e.seconds:7.2f}")

    row("fp64", reference, 0.0, 0.0, 0.0, 0.0, 0.0)
    for c in comparisons:
        errors = c.errors(reference)
        row(f"{c.accuracy:g}", c.estimate, errors[0] / abs(reference.log_likelihood),
            abs(c.estimate.range - reference.range) / reference.range,
            standard_errors_apart(c.estimate, reference, standard_error), math.sqrt(2 * sum(errors)), c.loss(reference))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000, help="locations")
    parser.add_argument("--accuracy", default="1e-4,1e-8", help="accuracies of the adaptive runs, comma-separated")
    parser.add_argument("--mode", choices=("cpu", "gpu", "hybrid"), default=None, help="Tessera's mode (default: its choice)")
    args = parser.parse_args()
    accuracies = [float(a) for a in args.accuracy.split(",") if a]
    reference, standard_error, comparisons = run(args.n, accuracies, args.mode)
    report(args.n, reference, standard_error, comparisons)
    beyond = [f"{c.accuracy:g}" for c in comparisons if not within_the_errors(c, reference)]
    if beyond:
        print(f"FAILED: FP64's loss at the estimates of accuracy {', '.join(beyond)} exceeds the log-likelihood's errors")
        return 1
    print("OK: every adaptive estimate as close to FP64's as the log-likelihood's errors allow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
