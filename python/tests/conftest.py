import numpy as np
import pytest


def spd(n, batch=(), dtype=np.float64, seed=0):
    """Well-conditioned SPD matrices of order n, a stack of shape batch + (n, n)."""
    rng = np.random.default_rng(seed + 1000 * n)
    g = rng.standard_normal(batch + (n, n))
    a = g @ np.swapaxes(g, -1, -2) / max(n, 1) + np.eye(n)
    return a.astype(dtype)


def not_spd_at(a, column):
    """a copy of SPD matrix a whose leading minor of order `column` (1-based) is not positive definite."""
    b = a.copy()
    k = column - 1
    b[..., k, k] = -abs(b[..., k, k]) - 1
    return b


def hpd(n, dtype=np.complex128, batch=(), seed=0):
    """A random Hermitian positive definite matrix (or stack): g g^H / n + I."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n))
    return (g @ np.conjugate(np.swapaxes(g, -1, -2)) / n + np.eye(n)).astype(dtype)


def tolerance(dtype, n):
    return (200 if np.finfo(dtype).bits == 32 else 50) * max(n, 1) * np.finfo(dtype).eps


def backward_error(a, factor, lower):
    """||a - L L^H|| / ||a|| per matrix (the factor's triangle `lower`; L^T for real ones)."""
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(factor) else np.float64
    a = np.asarray(a, dtype=wide)
    f = np.asarray(factor, dtype=wide)
    f_h = np.conjugate(np.swapaxes(f, -1, -2))
    product = f @ f_h if lower else f_h @ f
    norm = np.maximum(np.linalg.norm(a, axis=(-2, -1)), 1e-300)
    return np.max(np.linalg.norm(a - product, axis=(-2, -1)) / norm)


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 64, so that small matrices span several tiles (the tile size is read at each call)."""
    monkeypatch.setenv("TESSERA_NB", "64")
    return 64
