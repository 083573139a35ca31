"""scipy.linalg's Cholesky functions with their signatures and defaults, computed by tessera: the
upper triangle unless lower=True, the (c, lower) pair of cho_factor, check_finite. A program that
imports them from here in place of scipy.linalg runs unchanged.

    from tessera.scipy import cho_factor, cho_solve, cholesky
    c, lower = cho_factor(a)          # c holds the factor in its triangle `lower` (upper by default)
    x = cho_solve((c, lower), b)
    U = cholesky(a)                   # a = U^T U, as scipy.linalg.cholesky(a)

Unlike SciPy's, these also take stacks of matrices (..., n, n) and GPU arrays, as tessera's own
functions do; the other triangle of cho_factor's c is zero. overwrite_a and overwrite_b are
accepted and ignored: tessera never writes its inputs.
"""
import numpy as np

from . import _arrays

__all__ = ["cholesky", "cho_factor", "cho_solve"]


def _finite(a, check_finite):
    """a, refused as SciPy refuses it where check_finite and it holds an infinity or a NaN (host
    arrays; GPU arrays are not checked, which would synchronise)."""
    if not check_finite:
        return a
    where, _, native = _arrays.classify(a)
    if where == "host" and native.dtype.kind in "fc" and not np.isfinite(native).all():
        raise ValueError("array must not contain infs or NaNs")
    return a


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cholesky: U with a = U^T U (the default), or L with a = L L^T (lower=True), the
    other triangle zero. Raises tessera.NotPositiveDefiniteError (a numpy.linalg.LinAlgError)."""
    from . import cholesky as factor

    return factor(_finite(a, check_finite), lower=bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cho_factor: (c, lower), c holding the factor in its triangle `lower`."""
    return cholesky(a, lower=lower, check_finite=check_finite), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """scipy.linalg.cho_solve: x with A x = b, given cho_factor's (c, lower) for A."""
    from . import cho_solve as solve

    c, lower = c_and_lower
    return solve(_finite(c, check_finite), _finite(b, check_finite), lower=bool(lower))
