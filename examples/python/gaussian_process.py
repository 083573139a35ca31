#!/usr/bin/env python3
"""Exact Gaussian-process regression with Tessera's Cholesky factorization, checked against scikit-learn.

N noisy samples of a smooth function of two variables (fixed seed), kernel
k(x, z) = s^2 exp(-|x - z|^2 / (2 l^2)) plus the noise variance on the diagonal, fixed
hyperparameters, float64. With --device cuda (the default) the arrays are torch tensors on the GPU:

    K = k(X, X) + noise I           built on the device
    L = tessera.cholesky(K)
    alpha = tessera.cho_solve(L, y)
    log marginal likelihood = -y^T alpha / 2 - sum(log diag L) - N/2 log(2 pi)
    posterior mean at the test points = k(X_test, X) alpha

--device cpu does the same with numpy arrays (Tessera's task runtime on the host). The reference is
scikit-learn's GaussianProcessRegressor with the same fixed kernel (optimizer=None) on the CPU; with
--device cuda, GPyTorch's exact GP (Cholesky-based settings) also runs on the GPU when it is
installed, for the time comparison. Prints the log marginal likelihoods, the relative differences
|lml - lml_ref| / |lml_ref| and max|mean - mean_ref| / max|mean_ref|, and the times; exits 1 when a
difference to scikit-learn exceeds 1e-8.

    python3 examples/python/gaussian_process.py                       # N = 20000 on the GPU
    python3 examples/python/gaussian_process.py --n 5000 --device cpu
    python3 examples/python/gaussian_process.py --no-gpytorch
"""
import argparse
import math
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

import tessera

TOLERANCE = 1e-8


@dataclass(frozen=True)
class Hyperparameters:
    signal_variance: float = 1.0
    lengthscale: float = 1.0
    noise_variance: float = 0.01


# ---- the data and the kernel, for numpy arrays and torch tensors alike -----------------------------


def make_data(n, n_test, seed, noise_variance):
    """Training inputs X (n x 2) in [0, 10]^2, noisy targets y, and test inputs (n_test x 2)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 10.0, size=(n, 2))
    X_test = rng.uniform(0.0, 10.0, size=(n_test, 2))
    y = np.sin(X[:, 0]) + 0.5 * np.cos(1.5 * X[:, 1]) + math.sqrt(noise_variance) * rng.standard_normal(n)
    return X, y, X_test


def rbf(X, Z, hyper, xp):
    """s^2 exp(-|x - z|^2 / (2 l^2)) for each row x of X and z of Z, computed as scikit-learn does:
    squared differences of the points divided by l, summed over the coordinates."""
    Xs, Zs = X / hyper.lengthscale, Z / hyper.lengthscale
    squared = (Xs[:, 0, None] - Zs[None, :, 0]) ** 2
    for k in range(1, X.shape[1]):
        squared += (Xs[:, k, None] - Zs[None, :, k]) ** 2
    return hyper.signal_variance * xp.exp(-0.5 * squared)


class NumpyArrays:
    """Host arrays: Tessera's task runtime factors them."""

    xp = np
    name = "cpu (numpy arrays)"

    def asarray(self, x):
        return np.asarray(x)

    def to_numpy(self, x):
        return x

    def synchronize(self):
        """Host calls return with their result."""

    def add_to_diagonal(self, K, value):
        K[np.diag_indices_from(K)] += value


class CudaArrays:
    """torch tensors on the current CUDA device: they stay there through Tessera's calls."""

    def __init__(self):
        import torch

        self.xp = torch
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.name = f"cuda ({torch.cuda.get_device_name(self.device)})"

    def asarray(self, x):
        return self.xp.as_tensor(x, device=self.device)

    def to_numpy(self, x):
        return x.cpu().numpy()

    def synchronize(self):
        self.xp.cuda.synchronize(self.device)

    def add_to_diagonal(self, K, value):
        K.diagonal().add_(value)


def cuda_available():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def timed(call, arrays):
    """(call's result, seconds from a synchronised device to the synchronisation after the call)."""
    arrays.synchronize()
    start = time.perf_counter()
    result = call()
    arrays.synchronize()
    return result, time.perf_counter() - start


# ---- Tessera ------------------------------------------------------------------------------------------


def log_marginal_likelihood(y, alpha, L, xp):
    n = y.shape[0]
    return -0.5 * float(y @ alpha) - float(xp.log(xp.diagonal(L)).sum()) - 0.5 * n * math.log(2 * math.pi)


def factor_and_solve(K, y):
    L = tessera.cholesky(K)
    return L, tessera.cho_solve(L, y)


def tessera_gp(X, y, X_test, hyper, arrays):
    """Log marginal likelihood, posterior mean (numpy) and times of the GP through Tessera."""
    xp = arrays.xp
    X, y, X_test = arrays.asarray(X), arrays.asarray(y), arrays.asarray(X_test)

    def kernel_matrix():
        K = rbf(X, X, hyper, xp)
        arrays.add_to_diagonal(K, hyper.noise_variance)
        return K

    K, kernel_s = timed(kernel_matrix, arrays)
    first_s = timed(lambda: factor_and_solve(K, y), arrays)[1]  # the first call also pays for starting Tessera
    (L, alpha), solve_s = timed(lambda: factor_and_solve(K, y), arrays)
    lml = log_marginal_likelihood(y, alpha, L, xp)
    mean, mean_s = timed(lambda: rbf(X_test, X, hyper, xp) @ alpha, arrays)
    times = {"kernel matrix": kernel_s, "factor + solve, first call": first_s, "factor + solve": solve_s,
             "posterior mean": mean_s}
    return lml, arrays.to_numpy(mean), times


# ---- the references -------------------------------------------------------------------------------------


def sklearn_gp(X, y, X_test, hyper):
    """scikit-learn's GP with the kernel fixed: its log marginal likelihood, posterior mean, times."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    kernel = ConstantKernel(hyper.signal_variance, "fixed") * RBF(hyper.lengthscale, "fixed")
    gp = GaussianProcessRegressor(kernel, alpha=hyper.noise_variance, optimizer=None, normalize_y=False)
    start = time.perf_counter()
    gp.fit(X, y)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    mean = gp.predict(X_test)
    predict_s = time.perf_counter() - start
    # fit factors K twice: once for log_marginal_likelihood_value_, once for the predictor.
    times = {"fit (kernel, 2 factorizations, solve)": fit_s, "predict (posterior mean)": predict_s}
    return gp.log_marginal_likelihood_value_, mean, times


def gpytorch_gp(X, y, X_test, hyper, arrays):
    """GPyTorch's exact GP with Cholesky-based computations; two runs, the second timed apart."""
    import gpytorch
    import torch

    x, t, x_test = arrays.asarray(X), arrays.asarray(y), arrays.asarray(X_test)

    class ExactGP(gpytorch.models.ExactGP):
        def __init__(self, likelihood):
            super().__init__(x, t, likelihood)
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, inputs):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(inputs), self.covar_module(inputs))

    def run():
        likelihood = gpytorch.likelihoods.GaussianLikelihood().to(arrays.device, torch.float64)
        model = ExactGP(likelihood).to(arrays.device, torch.float64)
        model.covar_module.base_kernel.lengthscale = hyper.lengthscale
        model.covar_module.outputscale = hyper.signal_variance
        likelihood.noise = hyper.noise_variance
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
        with torch.no_grad(), gpytorch.settings.fast_computations(False, False, False), \
                gpytorch.settings.max_cholesky_size(len(X)), gpytorch.settings.fast_pred_var(False), \
                gpytorch.settings.skip_posterior_variances(True):
            model.train()
            lml, lml_s = timed(lambda: float(mll(model(x), t)) * len(X), arrays)  # mll divides by N
            model.eval()
            mean, mean_s = timed(lambda: model(x_test).mean, arrays)
        return lml, arrays.to_numpy(mean), lml_s, mean_s

    first = run()
    lml, mean, lml_s, mean_s = run()
    times = {"log marginal likelihood, first call": first[2], "log marginal likelihood": lml_s,
             "posterior mean (its own factorization)": mean_s}
    return lml, mean, times


# ---- report --------------------------------------------------------------------------------------------


def relative_differences(lml, mean, lml_ref, mean_ref):
    return abs(lml - lml_ref) / abs(lml_ref), float(np.abs(mean - mean_ref).max() / np.abs(mean_ref).max())


def report(name, lml, times, differences=None):
    print(f"{name}: log marginal likelihood {lml:.12e}")
    if differences is not None:
        print(f"    relative difference to scikit-learn: log marginal likelihood {differences[0]:.2e}, "
              f"posterior mean {differences[1]:.2e}")
    for what, seconds in times.items():
        print(f"    {what}: {seconds:.3f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000, help="training points")
    parser.add_argument("--n-test", type=int, default=1000, help="test points")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cuda: torch tensors on the GPU; cpu: numpy arrays")
    parser.add_argument("--no-gpytorch", action="store_true", help="leave GPyTorch out")
    parser.add_argument("--seed", type=int, default=20000)
    args = parser.parse_args()
    if args.device == "cuda" and not cuda_available():
        parser.error("no CUDA device through torch here: use --device cpu")

    hyper = Hyperparameters()
    arrays = CudaArrays() if args.device == "cuda" else NumpyArrays()
    X, y, X_test = make_data(args.n, args.n_test, args.seed, hyper.noise_variance)
    print(f"exact GP regression: N = {args.n} points in 2-D, {args.n_test} test points, float64, {hyper}")
    print(f"tessera {tessera.__version__} on {arrays.name}; scikit-learn on {os.cpu_count()} CPUs")

    lml, mean, times = tessera_gp(X, y, X_test, hyper, arrays)
    lml_ref, mean_ref, times_ref = sklearn_gp(X, y, X_test, hyper)
    differences = relative_differences(lml, mean, lml_ref, mean_ref)
    report("Tessera", lml, times, differences)
    report("scikit-learn", lml_ref, times_ref)
    if not args.no_gpytorch and isinstance(arrays, CudaArrays):
        try:
            lml_g, mean_g, times_g = gpytorch_gp(X, y, X_test, hyper, arrays)
        except ImportError as error:
            print(f"GPyTorch: left out ({error})")
        else:
            report("GPyTorch (not checked: it forms squared distances by expansion)", lml_g, times_g,
                   relative_differences(lml_g, mean_g, lml_ref, mean_ref))

    if max(differences) > TOLERANCE:
        print(f"FAILED: a relative difference to scikit-learn exceeds {TOLERANCE:g}")
        return 1
    print(f"OK: Tessera agrees with scikit-learn within {TOLERANCE:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
