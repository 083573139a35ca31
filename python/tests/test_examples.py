"""The statistics examples of adaptive precision (examples/python), small enough for the CPU: the
Matérn maximum-likelihood estimates within the standard errors their accuracy allows of FP64's,
and the kernel ridge predictions and test error as FP64's, with reduced tiles taking part."""
import importlib
import math
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "python"


@pytest.fixture(scope="module")
def examples():
    if not EXAMPLES.is_dir():
        pytest.skip(f"{EXAMPLES} is not here (tests run outside the source tree)")
    pytest.importorskip("scipy")
    sys.path.insert(0, str(EXAMPLES))
    try:
        yield importlib.import_module("matern_likelihood"), importlib.import_module("kernel_ridge")
    finally:
        sys.path.remove(str(EXAMPLES))


def test_locations_follow_a_morton_curve(examples):
    likelihood, _ = examples
    points = likelihood.locations(16, seed=1)
    assert points.shape == (16, 2) and ((points > 0) & (points < 1)).all()
    # A 4 x 4 grid: the first four points fill the lower-left quarter.
    assert (points[:4] < 0.5).all() and not (points[4:] < 0.5).all(axis=1).any()


def test_matern_estimates_match_fp64(examples):
    likelihood, _ = examples
    reference, standard_error, comparisons = likelihood.run(1500, [1e-4, 1e-9], mode="cpu")
    assert 0 < standard_error < 1
    assert abs(math.log(reference.range / likelihood.TRUE_RANGE)) < 4 * standard_error
    for c in comparisons:
        assert c.estimate.tiles["fp16"] + c.estimate.tiles["fp32"] > 0, (c.accuracy, c.estimate.tiles)
        assert likelihood.within_the_errors(c, reference)
        errors = c.errors(reference)
        assert max(errors) < 1e2 * c.accuracy * abs(reference.log_likelihood), errors
        apart = likelihood.standard_errors_apart(c.estimate, reference, standard_error)
        assert apart <= 2 * math.sqrt(2 * sum(errors)) + 1e-5  # the profile is locally quadratic
        assert apart < 1e-2  # cpu mode's reduced products are all FP32: far within the bound
        assert c.loss(reference) > -1e-9 * abs(reference.log_likelihood)  # FP64's maximum is its maximum


def test_kernel_ridge_predictions_match_fp64(examples):
    _, ridge = examples
    runs = ridge.run(1500, [1e-4, 1e-9], mode="cpu", n_test=300)
    reference = runs[0][1]
    assert runs[0][2] < 0.1  # below the noise: it learns the function
    for accuracy, predictions, rmse, tiles, _ in runs[1:]:
        assert tiles["fp16"] + tiles["fp32"] > 0, (accuracy, tiles)
        # cpu mode's reduced products are all FP32, far more accurate than the rule's FP16.
        assert ridge.relative_difference(predictions, reference) < 10 * accuracy
        assert abs(rmse - runs[0][2]) < 1e-3 * runs[0][2]
    assert np.isfinite(reference).all()
