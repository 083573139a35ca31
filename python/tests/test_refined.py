"""tessera.posv_refined (LAPACK's DSPOSV and ZCPOSV) on the same input as numpy's solve and SciPy's
LAPACK potrf (SciPy wraps no xSPOSV): the solution, ITER's meaning (converged, or which fallback),
a and b never written, LAPACK's info."""
import numpy as np
import pytest

import tessera

lapack = pytest.importorskip("scipy.linalg.lapack")


def hermitian(n, dtype, seed):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        g = g + 1j * rng.standard_normal((n, n))
    return (g @ g.conj().T / n + np.eye(n)).astype(dtype)


def potrf_info(a, lower):
    """LAPACK's info of a's Cholesky factorization (SciPy's LAPACK)."""
    routine, = lapack.get_lapack_funcs(("potrf",), (a,))
    return routine(a, lower=int(lower))[1]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, k", [(1, 1), (17, 1), (97, 3), (450, 2)])
def test_converges_as_lapack_and_writes_nothing(n, k, lower, dtype):
    a = hermitian(n, dtype, n)
    b = np.random.default_rng(k).standard_normal((n, k)).astype(dtype)
    a0, b0 = a.copy(), b.copy()
    x, iterations = tessera.posv_refined(a, b, lower=lower)
    assert x.dtype == dtype and x.shape == b.shape
    assert 0 <= iterations <= 5
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    expected = np.linalg.solve(a, b)
    assert np.abs(x - expected).max() <= 1e-12 * np.abs(expected).max()
    # The residual at double precision's level.
    assert np.abs(a @ x - b).max() <= 64 * n * np.finfo(np.float64).eps * (np.abs(a).sum(1).max() * np.abs(x).max())


def with_condition(n, condition, dtype, seed):
    """Q diag(1 .. 1/condition) Q^H, Q unitary from a QR factorization: 2-norm condition `condition`."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        g = g + 1j * rng.standard_normal((n, n))
    q, _ = np.linalg.qr(g)
    a = (q * np.geomspace(1, 1 / condition, n)) @ q.conj().T
    return ((a + a.conj().T) / 2).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gmres_converges_where_lapacks_steps_crawl_or_fall_back(dtype):
    # Condition 1e8: classical refinement from the FP32 factor contracts slowly (double: 16 steps)
    # or not at all (complex: -31, the double-precision factorization) with Debian's OpenBLAS
    # here; from about 2e8 the FP32 factorization itself fails (with another BLAS kernel, which
    # rounds otherwise, already here in complex). GMRES-IR is at least never slower.
    a = with_condition(300, 1e8, dtype, 8)
    b = np.random.default_rng(9).standard_normal((300, 2)).astype(dtype)
    a0 = a.copy()
    _, lapack_iterations = tessera.posv_refined(a, b)
    x, iterations = tessera.posv_refined(a, b, refinement="gmres")
    if iterations == -3:  # that BLAS's FP32 factorization failed: both solves are FP64's
        assert lapack_iterations == -3
    else:
        assert 1 <= iterations <= 30
        assert lapack_iterations == -31 or lapack_iterations >= iterations
    np.testing.assert_array_equal(a, a0)  # the caller's a is never written
    # The residual at double precision's level (LAPACK's dposv test: below 30 n eps ||A|| ||x||).
    scale = np.abs(a).sum(1).max() * np.abs(x).max(0) + np.abs(b).max(0)
    assert (np.abs(a @ x - b).max(0) / scale).max() <= 30 * 300 * np.finfo(np.float64).eps
    with pytest.raises(ValueError, match="refinement"):
        tessera.posv_refined(a, b, refinement="cg")


def test_vector_right_hand_side_and_single_precision_input():
    a = hermitian(30, np.float32, 3)
    b = np.ones(30, dtype=np.float32)
    x, iterations = tessera.posv_refined(a, b)
    assert x.shape == (30,) and x.dtype == np.float64 and iterations >= 0
    assert np.allclose(a.astype(np.float64) @ x, b, rtol=0, atol=1e-12)


def test_singular_in_single_precision_factors_in_double():
    a = np.array([[1.0, 1 - 1e-9], [1 - 1e-9, 1.0]])
    b = np.array([1.0, -1.0])
    x, iterations = tessera.posv_refined(a, b)
    assert iterations == -3  # 1 - 1e-9 rounds to 1 in single precision: a singular matrix
    assert potrf_info(a.astype(np.float32), True) == 2 and potrf_info(a, True) == 0
    assert np.allclose(a @ x, b, rtol=0, atol=1e-6)


def test_values_beyond_single_precision_fall_back():
    a = hermitian(20, np.float64, 4) * 1e40
    b = np.ones((20, 1))
    x, iterations = tessera.posv_refined(a, b)
    assert iterations == -2
    assert np.allclose(a @ x, b, rtol=0, atol=1e-12)


def test_not_positive_definite_raises_with_lapacks_info():
    a = hermitian(25, np.float64, 5)
    a[10, 10] = -1
    with pytest.raises(tessera.NotPositiveDefiniteError) as raised:
        tessera.posv_refined(a, np.ones(25))
    assert raised.value.column == potrf_info(a, True) == 11


def test_shapes_are_checked():
    with pytest.raises(ValueError):
        tessera.posv_refined(np.eye(3), np.ones(4))
    with pytest.raises(ValueError):
        tessera.posv_refined(np.ones((2, 3, 3)), np.ones(4))
    with pytest.raises(ValueError):  # leading dimensions that do not broadcast
        tessera.posv_refined(np.ones((2, 3, 3)), np.ones((3, 3, 1)))
    x, iterations = tessera.posv_refined(np.zeros((0, 0)), np.zeros(0))
    assert x.shape == (0,) and iterations == 0


def test_tensor_cores_are_an_option_of_the_single_precision_factor():
    a = hermitian(60, np.float64, 8)
    b = np.ones(60)
    # On CPU workers a tensor-core factorization computes in FP32: the same solve.
    for cores in ("tf32", "bf16", "FP16"):
        x, iterations = tessera.posv_refined(a, b, tensor_cores=cores, mode="cpu")
        assert iterations >= 0 and np.allclose(a @ x, b, rtol=0, atol=1e-12)
    with pytest.raises(ValueError):
        tessera.posv_refined(a, b, tensor_cores="fp8")
    with pytest.raises(ValueError):  # complex matrices have no tensor-core factorization
        tessera.posv_refined(a.astype(np.complex128), b.astype(np.complex128), tensor_cores="tf32", mode="cpu")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
def test_stacks_solve_each_matrix_as_one(dtype, lower):
    n = 19
    a = np.stack([hermitian(n, dtype, seed) for seed in range(6)]).reshape(2, 3, n, n)
    b = np.random.default_rng(4).standard_normal((2, 3, n, 2)).astype(dtype)
    a0, b0 = a.copy(), b.copy()
    x, iterations = tessera.posv_refined(a, b, lower=lower)
    assert x.shape == b.shape and x.dtype == dtype
    assert iterations.shape == (2, 3) and iterations.dtype == np.int32
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    for i in range(2):
        for j in range(3):
            one, one_iterations = tessera.posv_refined(a[i, j], b[i, j], lower=lower)
            np.testing.assert_array_equal(x[i, j], one)
            assert iterations[i, j] == one_iterations >= 0
    expected = np.linalg.solve(a, b)
    assert np.abs(x - expected).max() <= 1e-12 * np.abs(expected).max()
    # Matrices that lie column by column (each Fortran-ordered): the same solutions, a unchanged.
    by_columns = np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)
    x_columns, iterations_columns = tessera.posv_refined(by_columns, b, lower=lower)
    np.testing.assert_array_equal(x_columns, x)
    np.testing.assert_array_equal(iterations_columns, iterations)
    np.testing.assert_array_equal(by_columns, a0)


def test_stacks_broadcast_as_cho_solve_and_report_each_failure():
    n = 12
    a = np.stack([hermitian(n, np.float64, seed) for seed in range(4)])
    # One matrix, many right-hand side blocks; many matrices, one vector.
    b = np.random.default_rng(5).standard_normal((4, n, 3))
    x, iterations = tessera.posv_refined(a[0], b)
    assert x.shape == (4, n, 3) and iterations.shape == (4,)
    np.testing.assert_allclose(x, np.linalg.solve(a[0], b), rtol=1e-12, atol=1e-12)
    x, iterations = tessera.posv_refined(a, np.ones(n))
    assert x.shape == (4, n) and (iterations >= 0).all()
    np.testing.assert_allclose(x, np.linalg.solve(a, np.ones((4, n, 1)))[..., 0], rtol=1e-12, atol=1e-12)
    # A value beyond single precision's range in one matrix's right-hand side: that matrix alone
    # falls back (ITER -2).
    b = np.ones((4, n, 1))
    b[2] *= 1e40
    x, iterations = tessera.posv_refined(a, b)
    assert list(iterations[[0, 1, 3]] >= 0) == [True] * 3 and iterations[2] == -2
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12)
    bad = a.copy()
    bad[1, 4, 4] = -1
    bad[3, 0, 0] = -1
    with pytest.raises(tessera.NotPositiveDefiniteError) as raised:
        tessera.posv_refined(bad, np.ones(n))
    np.testing.assert_array_equal(raised.value.column, [0, potrf_info(bad[1], True), 0, 1])
    x, iterations = tessera.posv_refined(np.zeros((0, 3, 3)), np.zeros((0, 3)))
    assert x.shape == (0, 3) and iterations.shape == (0,)
