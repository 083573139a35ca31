"""tessera.cholesky_adaptive and the accuracy= of cholesky and logdet: an exponential covariance
whose far tiles are small, both triangles and memory orders, against numpy's factor: the backward
error within the accuracy asked for, reduced tiles reported, the input never written, LAPACK's
info, and the inputs refused."""
import numpy as np
import pytest

import tessera


def covariance(n, scale=0.01):
    """exp(-|i - j| / (scale n)) + 1e-2 on the diagonal: points along a line, far pairs nearly
    uncorrelated."""
    d = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return np.exp(-d / (scale * n)) + 1e-2 * np.eye(n)


def backward_error(a, factor, lower):
    product = factor @ factor.T if lower else factor.T @ factor
    return np.linalg.norm(a - product) / np.linalg.norm(a)


@pytest.mark.parametrize("mode", ["cpu", None])  # None: Tessera's choice (the GPUs where there are)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("accuracy", [1e-5, 1e-9])
def test_backward_error_within_the_accuracy(accuracy, order, lower, mode):
    n = 2500  # tasks in tiles of Tessera's choice: several tiles a side
    a = np.array(covariance(n), order=order)
    a0 = a.copy()
    factor, tiles = tessera.cholesky_adaptive(a, accuracy, lower=lower, mode=mode)
    np.testing.assert_array_equal(a, a0)
    assert set(tiles) == {"fp16", "fp32", "fp64"} and sum(tiles.values()) > 0
    assert tiles["fp16"] + tiles["fp32"] > 0, tiles
    other = np.triu(factor, 1) if lower else np.tril(factor, -1)
    assert not other.any()
    error = backward_error(a, factor, lower)
    assert 0 < error < 4 * accuracy
    if mode == "cpu":  # the same tasks in the same arithmetic: the same factor
        same = tessera.cholesky(a, lower=lower, mode=mode, accuracy=accuracy)
        np.testing.assert_array_equal(same, factor)


def test_logdet_and_the_fp64_factor_beyond_double_precision():
    n = 1500
    a = covariance(n)
    expected = np.linalg.slogdet(a)[1]
    assert abs(tessera.logdet(a, mode="cpu", accuracy=1e-9) - expected) <= 1e-9 * n * abs(expected)
    factor, tiles = tessera.cholesky_adaptive(a, 1e-300, mode="cpu")  # far entries reach 1e-44
    assert tiles["fp16"] == tiles["fp32"] == 0
    assert backward_error(a, factor, True) < 1e-14


def test_not_positive_definite_and_refusals():
    n = 1500
    a = covariance(n)
    a[700, 700] = -1.0
    with pytest.raises(tessera.NotPositiveDefiniteError) as failure:
        tessera.cholesky_adaptive(a, 1e-8, mode="cpu")
    assert failure.value.column == 701
    good = covariance(300)
    with pytest.raises(TypeError):
        tessera.cholesky_adaptive(good.astype(np.float32), 1e-4)
    with pytest.raises(TypeError):
        tessera.cholesky_adaptive(np.stack([good, good]), 1e-4)
    with pytest.raises(ValueError):
        tessera.cholesky_adaptive(good, 2.0, mode="cpu")
