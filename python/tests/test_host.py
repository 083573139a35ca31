"""tessera on numpy arrays: results against numpy and SciPy, every error path, dtypes, orders,
strides, empty and 1 x 1 matrices, stacks with members that are not positive definite."""
import inspect
import math
import threading
import time
import warnings

import numpy as np
import pytest

import tessera
from conftest import backward_error, hpd, not_spd_at, spd, tolerance

scipy_linalg = pytest.importorskip("scipy.linalg")

DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 2, 17, 63, 64, 65, 131, 300])
def test_cholesky_matches_numpy(small_tiles, n, lower, dtype):
    a = spd(n, dtype=dtype)
    factor = tessera.cholesky(a, lower=lower)
    assert factor.dtype == dtype and factor.shape == (n, n)
    reference = np.linalg.cholesky(a.astype(np.float64))
    expected = reference if lower else reference.T
    assert np.allclose(factor, expected, rtol=0, atol=tolerance(dtype, n) * np.abs(expected).max())
    # The other triangle is zero, as in numpy.linalg.cholesky.
    other = np.triu(factor, 1) if lower else np.tril(factor, -1)
    assert not other.any()


@pytest.mark.parametrize("mode", ["cpu", "hybrid", "auto"])
def test_modes(mode):
    a = spd(150)
    assert backward_error(a, tessera.cholesky(a, mode=mode), True) < tolerance(np.float64, 150)


def test_only_the_requested_triangle_is_read():
    a = spd(40)
    poisoned = np.triu(np.full_like(a, np.nan), 1) + np.tril(a)
    assert np.allclose(tessera.cholesky(poisoned), np.linalg.cholesky(a))
    poisoned = np.tril(np.full_like(a, np.nan), -1) + np.triu(a)
    assert np.allclose(tessera.cholesky(poisoned, lower=False), np.linalg.cholesky(a).T)


def test_orders_strides_and_integer_input():
    a = spd(50)
    fortran = np.asfortranarray(a)
    assert np.allclose(tessera.cholesky(fortran), np.linalg.cholesky(a))
    big = np.zeros((100, 100))
    big[::2, ::2] = a
    view = big[::2, ::2]
    assert not view.flags.c_contiguous
    assert np.allclose(tessera.cholesky(view), np.linalg.cholesky(a))
    integers = np.array([[4, 2], [2, 3]])
    factor = tessera.cholesky(integers)
    assert factor.dtype == np.float64
    assert np.allclose(factor, np.linalg.cholesky(integers.astype(float)))
    # Lists work too, and the input is never modified.
    assert np.allclose(tessera.cholesky([[4.0]]), [[2.0]])
    copy = a.copy()
    tessera.cholesky(a)
    assert np.array_equal(a, copy)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
def test_matrices_stored_by_columns_through_the_runtime(small_tiles, lower, dtype):
    """Fortran-ordered matrices large enough to run as tasks (factored as their C-ordered
    transposes): numpy's factor, only the requested triangle read, the info of a failed member."""
    n = 401
    a = spd(n, batch=(3,)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        rng = np.random.default_rng(7)
        skew = rng.standard_normal((3, n, n)) * 0.01
        a = a + 1j * (skew - np.swapaxes(skew, -1, -2))
    a[1] = not_spd_at(a[1], 250)
    other = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    by_columns = np.swapaxes(np.where(other, np.nan, a).copy(), -1, -2).copy().swapaxes(-1, -2)
    assert by_columns.flags.f_contiguous is False and np.swapaxes(by_columns, -1, -2).flags.c_contiguous
    factor, info = tessera.cholesky_ex(by_columns, lower=lower)
    assert np.array_equal(info, [0, 250, 0]) and np.swapaxes(factor, -1, -2).flags.c_contiguous
    for k in (0, 2):
        expected = np.linalg.cholesky(a[k])
        assert np.allclose(factor[k], expected if lower else np.conjugate(expected.T), atol=1e-10)
    single = np.asfortranarray(a[0])
    assert np.allclose(tessera.cholesky(single, lower=lower), factor[0])


@pytest.mark.parametrize("shape", [(0, 0), (3, 0, 0), (0, 4, 4), (2, 0, 5, 5)])
def test_empty(shape):
    factor, info = tessera.cholesky_ex(np.zeros(shape))
    assert factor.shape == shape and info.shape == shape[:-2] and info.dtype == np.int32
    assert tessera.cholesky(np.zeros(shape)).shape == shape


def test_one_by_one():
    assert tessera.cholesky(np.array([[9.0]]))[0, 0] == 3.0
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(np.array([[-1.0]]))
    assert error.value.column == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("column", [1, 64, 65, 97])
def test_not_positive_definite_reports_the_column(small_tiles, column, lower, dtype):
    a = not_spd_at(spd(97, dtype=dtype), column)
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(a, lower=lower)
    assert isinstance(error.value, np.linalg.LinAlgError)
    assert error.value.column == column
    factor, info = tessera.cholesky_ex(a, lower=lower)
    assert int(info) == column and info.shape == ()
    # LAPACK leaves the factor of the leading minor of order column - 1.
    k = column - 1
    lead = np.linalg.cholesky(a[:k, :k].astype(np.float64)) if k else np.zeros((0, 0))
    got = factor[:k, :k] if lower else factor[:k, :k].T
    assert np.allclose(got, lead, atol=tolerance(dtype, 97) * 10)


def test_nan_is_reported():
    a = spd(30)
    a[10, 10] = np.nan
    _, info = tessera.cholesky_ex(a)
    assert int(info) == 11


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 8, 33])
def test_stack_with_failed_members(n, lower, dtype):
    a = spd(n, batch=(3, 5), dtype=dtype)
    a[0, 2] = not_spd_at(a[0, 2], 1)
    a[2, 4] = not_spd_at(a[2, 4], n)
    factor, info = tessera.cholesky_ex(a, lower=lower)
    assert factor.shape == a.shape and info.shape == (3, 5)
    expected = np.zeros((3, 5), np.int32)
    expected[0, 2], expected[2, 4] = 1, n
    assert np.array_equal(info, expected)
    good = info == 0
    assert backward_error(a[good], factor[good], lower) < tolerance(dtype, n)
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(a, lower=lower)
    assert np.array_equal(error.value.column, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 7, 65, 200])
def test_cho_solve_matches_scipy(small_tiles, n, lower, dtype):
    a = spd(n, dtype=dtype)
    c = tessera.cholesky(a, lower=lower)
    rng = np.random.default_rng(n)
    for b in (rng.standard_normal(n).astype(dtype), rng.standard_normal((n, 3)).astype(dtype)):
        x = tessera.cho_solve(c, b, lower=lower)
        assert x.shape == b.shape and x.dtype == dtype
        expected = scipy_linalg.cho_solve((c.astype(np.float64), lower), b.astype(np.float64))
        assert np.allclose(x, expected, rtol=tolerance(dtype, n) * 100, atol=tolerance(dtype, n) * 100)


def test_batched_solve_and_broadcasting():
    a = spd(12, batch=(4,))
    c = tessera.cholesky(a)
    rng = np.random.default_rng(3)
    b = rng.standard_normal((4, 12, 2))
    x = tessera.cho_solve(c, b)
    assert np.allclose(a @ x, b)
    vectors = rng.standard_normal((4, 12))
    assert np.allclose(np.einsum("kij,kj->ki", a, tessera.cho_solve(c, vectors)), vectors)
    # One factor against a stack of right-hand sides.
    many = rng.standard_normal((6, 12, 1))
    x = tessera.cho_solve(c[0], many)
    assert x.shape == (6, 12, 1) and np.allclose(a[0] @ x, many)


@pytest.mark.parametrize("c_lead, b_shape, x_shape", [
    ((3,), (5, 3), (3, 5, 3)),          # one matrix b against a stack of factors
    ((5,), (5,), (5, 5)),               # one vector b against a stack
    ((), (4, 5, 2), (4, 5, 2)),         # a stack of b against one factor
    ((2, 1), (3, 5, 2), (2, 3, 5, 2)),  # leading dimensions broadcast both ways
    ((4,), (4, 5), (4, 5)),             # a stack of vectors, one dimension fewer than c
    ((1,), (7, 5, 1), (7, 5, 1)),
])
def test_cho_solve_broadcasts_as_numpy_solve(c_lead, b_shape, x_shape):
    """numpy.linalg.solve's rule: b (n,) is a vector, b (..., n, k) matrices, and the leading
    dimensions of the factors and of b broadcast."""
    a = spd(5, batch=c_lead)
    b = np.random.default_rng(4).standard_normal(b_shape)
    x = tessera.cho_solve(tessera.cholesky(a), b)
    assert x.shape == x_shape
    vector = len(b_shape) == 1 or (len(b_shape) == len(c_lead) + 1 and b_shape[-2] != 5)
    if vector:
        expected = np.linalg.solve(a, np.broadcast_to(b, x_shape)[..., None])[..., 0]
    else:
        expected = np.linalg.solve(a, np.broadcast_to(b, x_shape))
    assert np.allclose(x, expected)
    assert np.allclose(tessera.posv(a, b), expected)


def test_cho_solve_shapes_that_do_not_fit_are_refused():
    c = tessera.cholesky(spd(5, batch=(2,)))
    with pytest.raises(ValueError, match="do not broadcast"):
        tessera.cho_solve(c, np.ones((3, 5, 1)))
    with pytest.raises(ValueError, match=r"\(5,\)"):
        tessera.cho_solve(c, np.ones(4))
    with pytest.raises(ValueError, match=r"\(\.\.\., 5, k\)"):
        tessera.cho_solve(c, np.ones((5, 4, 3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cho_solve_reads_the_triangle_off_the_factor(dtype):
    """An upper factor from cholesky solves without lower=: its zeros below the diagonal say which
    triangle it is. It was read as a lower factor (relative residual 0.6)."""
    a = spd(40, batch=(3,), dtype=dtype)
    b = np.random.default_rng(5).standard_normal((3, 40, 2)).astype(dtype)
    for lower in (True, False):
        x = tessera.cho_solve(tessera.cholesky(a, lower=lower), b)
        residual = np.linalg.norm(a @ x - b) / np.linalg.norm(b)
        assert residual < tolerance(dtype, 40) * 100, (lower, residual)
    # The stack of 1 x 1 factors (no strict triangle), and a diagonal factor.
    assert np.allclose(tessera.cho_solve(np.full((2, 1, 1), 2.0), np.full((2, 1), 8.0)), 2.0)
    assert np.allclose(tessera.cho_solve(2 * np.eye(3), np.full(3, 8.0)), 2.0)


def test_cho_solve_refuses_a_factor_whose_triangle_it_cannot_tell():
    a = spd(20)
    b = np.ones(20)
    with pytest.raises(ValueError, match="lower="):
        tessera.cho_solve(a, b)  # both strict triangles non-zero
    nan_above = np.linalg.cholesky(a) + np.triu(np.full_like(a, np.nan), 1)
    with pytest.raises(ValueError, match="lower="):
        tessera.cho_solve(nan_above, b)
    # A stack mixing a lower and an upper factor cannot be told either.
    mixed = np.stack([np.linalg.cholesky(a), np.linalg.cholesky(a).T])
    with pytest.raises(ValueError, match="lower="):
        tessera.cho_solve(mixed, np.ones((2, 20, 1)))
    # An explicit lower= always wins: only that triangle is read.
    x = tessera.cho_solve(nan_above, b, lower=True)
    assert np.allclose(a @ x, b)
    full = np.tril(np.linalg.cholesky(a)) + np.triu(np.linalg.cholesky(a).T, 1)
    assert np.allclose(a @ tessera.cho_solve(full, b, lower=False), b)
    assert np.allclose(a @ tessera.cho_solve(full, b, lower=True), b)


@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve_takes_scipys_cho_factor(lower):
    """scipy.linalg.cho_factor's (c, lower); its other triangle holds what a held there (scipy up to
    1.17 leaves it so, later versions zero it: the pair is also made with a's entries there)."""
    a = spd(30)
    b = np.random.default_rng(6).standard_normal((30, 3))
    factor = scipy_linalg.cho_factor(a, lower=lower)
    other = np.triu(np.ones_like(a, dtype=bool), 1) if lower else np.tril(np.ones_like(a, dtype=bool), -1)
    c = np.where(other, a, factor[0])
    assert np.tril(c, -1).any() and np.triu(c, 1).any()
    expected = scipy_linalg.cho_solve(factor, b)
    assert np.allclose(tessera.cho_solve(factor, b), expected)
    assert np.allclose(tessera.cho_solve((c, lower), b), expected)
    assert np.allclose(tessera.cho_solve((c, int(lower)), b[:, 0]), scipy_linalg.cho_solve(factor, b[:, 0]))
    # A 2 x 2 matrix given as a tuple of rows is a matrix, not a (c, lower) pair.
    assert np.allclose(tessera.cho_solve(((2.0, 0.0), (1.0, 1.0)), [2.0, 3.0]), np.linalg.solve([[4, 2], [2, 2]], [2, 3]))
    # lower= given as well wins over the tuple's flag.
    clean = tessera.cholesky(a, lower=not lower)
    assert np.allclose(tessera.cho_solve((clean, lower), b, lower=not lower), expected)


def test_byte_swapped_input():
    """Arrays of the other byte order (from files, network buffers) are read as numpy reads them.
    They were refused as an unsupported type."""
    a = spd(30)
    b = np.random.default_rng(8).standard_normal(30)
    for dtype in (">f8", ">f4"):
        swapped = a.astype(dtype)
        factor = tessera.cholesky(swapped)
        assert factor.dtype == np.dtype(dtype).newbyteorder("=")
        assert backward_error(a, factor, True) < tolerance(factor.dtype, 30)
        x = tessera.cho_solve(factor.astype(dtype), b.astype(dtype))
        assert np.allclose(a @ x, b, atol=tolerance(factor.dtype, 30) * 100)


def test_not_positive_definite_error_survives_pickling():
    """multiprocessing hands a worker's exception to its parent pickled: it must come back with its
    column. Rebuilding it failed, which left Pool.map waiting for ever."""
    import pickle

    for column in (3, np.array([[0, 2], [1, 0]], dtype=np.int32)):
        error = pickle.loads(pickle.dumps(tessera.NotPositiveDefiniteError(column)))
        assert isinstance(error, tessera.NotPositiveDefiniteError)
        assert np.array_equal(error.column, column) and str(error) == str(tessera.NotPositiveDefiniteError(column))


def test_runtime_worker_counts_are_checked():
    with pytest.raises(ValueError, match="ncpu"):
        tessera.Runtime(ncpu=-5)
    with pytest.raises(ValueError, match="ncuda"):
        tessera.Runtime(ncuda=2**40)
    with pytest.raises(TypeError, match="ncpu"):
        tessera.Runtime(ncpu=2.5)
    with tessera.Runtime(mode="cpu", ncpu=np.int64(1)) as runtime:
        assert runtime.cpu_workers == 1


def test_more_cpu_workers_than_cpus_are_warned_of():
    import os

    cpus = len(os.sched_getaffinity(0))
    with pytest.warns(RuntimeWarning, match=f"more CPU workers than the {cpus} CPUs"):
        tessera.Runtime(ncpu=cpus + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tessera.Runtime(ncpu=cpus)
        tessera.Runtime()


def test_upper_is_numpys_name_for_the_other_triangle():
    a = spd(37)
    u = tessera.cholesky(a, upper=True, mode="cpu")
    assert np.array_equal(u, tessera.cholesky(a, lower=False, mode="cpu"))
    assert backward_error(a, u, lower=False) < tolerance(a.dtype, 37)
    assert np.array_equal(np.tril(u, -1), np.zeros_like(u))
    assert np.array_equal(tessera.cholesky(a, upper=False, mode="cpu"), tessera.cholesky(a, mode="cpu"))
    assert np.array_equal(tessera.cholesky_ex(a, upper=True, mode="cpu")[0], u)
    if "upper" in inspect.signature(np.linalg.cholesky).parameters:  # numpy 2
        assert np.allclose(u, np.linalg.cholesky(a, upper=True), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="different triangles"):
        tessera.cholesky(a, lower=True, upper=True)
    assert np.array_equal(tessera.cholesky(a, lower=False, upper=True, mode="cpu"), u)


def test_posv():
    a = spd(90)
    b = np.random.default_rng(1).standard_normal((90, 4))
    x = tessera.posv(a, b)
    assert np.allclose(a @ x, b)
    assert np.allclose(tessera.posv(a, b, lower=False), x)
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.posv(not_spd_at(a, 40), b)
    assert error.value.column == 40


def test_argument_errors():
    with pytest.raises(ValueError, match="square"):
        tessera.cholesky(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="dimension"):
        tessera.cholesky(np.zeros(3))
    with pytest.raises(TypeError, match="float16"):
        tessera.cholesky(np.eye(2, dtype=np.float16))
    with pytest.raises(ValueError, match="mode"):
        tessera.cholesky(np.eye(2), mode="fast")
    with pytest.raises(ValueError, match=r"\(\.\.\., 3\)"):
        tessera.cho_solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError):
        tessera.cho_solve(np.eye(3)[None].repeat(2, 0), np.ones((3, 3, 1)))  # 2 and 3 do not broadcast


def test_runtime_context_manager():
    with tessera.Runtime(mode="cpu", ncpu=1) as runtime:
        assert runtime.cpu_workers == 1
        a = spd(100)
        assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))
        with pytest.raises(RuntimeError, match="already active"):
            with tessera.Runtime():
                pass
    with pytest.raises(RuntimeError, match="not running"):
        runtime.cpu_workers
    with pytest.raises(ValueError, match="mode"):
        tessera.Runtime(mode="fastest")


def test_policy_by_name():
    a = spd(100)
    assert np.allclose(tessera.cholesky(a, policy="eager"), np.linalg.cholesky(a))
    with pytest.raises(ValueError):
        tessera.cholesky(a, policy="no-such-policy")
    assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))


def test_the_gil_is_released_while_factoring():
    a = spd(1500)
    tessera.cholesky(a, mode="cpu")  # a first call's costs paid before timing
    running = threading.Event()
    finished = threading.Event()

    def factor():
        running.set()
        for _ in range(3):
            tessera.cholesky(a, mode="cpu")
        finished.set()

    worker = threading.Thread(target=factor)
    worker.start()
    running.wait()
    ticks = 0
    start = time.perf_counter()
    while not finished.is_set():
        ticks += 1
    elapsed = time.perf_counter() - start
    worker.join()
    # With the GIL held for a whole factorization this thread would barely run (one tick per
    # switch interval); released, it spins freely.
    assert elapsed > 0 and ticks / elapsed > 1e5, (ticks, elapsed)


def test_torch_cpu_tensors_stay_tensors():
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(spd(20))
    factor = tessera.cholesky(a)
    assert isinstance(factor, torch.Tensor)
    assert torch.allclose(factor, torch.linalg.cholesky(a))


def test_versions():
    assert tessera.__version__.split(".")[:2] == tessera.library_version.split(".")[:2]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_small_work_on_the_calling_thread_matches_the_task_graph(monkeypatch, lower, dtype):
    """Small numpy arrays go straight to LAPACK (the library's plan): the factors and info match
    the task graph's (a tile size asked for), whatever the input's order, strides and stacking."""
    cases = [spd(1, dtype=dtype), spd(17, dtype=dtype), spd(63, dtype=dtype), spd(200, dtype=dtype),
             np.asfortranarray(spd(31, dtype=dtype)), spd(40, dtype=dtype)[::-1, ::-1],
             spd(24, (3, 2), dtype=dtype), spd(12, (0,), dtype=dtype),
             not_spd_at(spd(30, (4,), dtype=dtype), 9),
             np.swapaxes(np.swapaxes(not_spd_at(spd(30, (4,), dtype=dtype), 17), -1, -2).copy(), -1, -2)]
    for a in cases:
        monkeypatch.delenv("TESSERA_NB", raising=False)
        direct, direct_info = tessera.cholesky_ex(a, lower=lower)
        monkeypatch.setenv("TESSERA_NB", "16")
        tiled, tiled_info = tessera.cholesky_ex(a, lower=lower)
        assert direct.shape == a.shape and direct.dtype == dtype
        # The factor comes back in the input's order where the input lies column by column.
        by_columns = a.shape[-1] > 1 and not a.flags.c_contiguous and np.swapaxes(a, -1, -2).flags.c_contiguous
        order = np.swapaxes(direct, -1, -2) if by_columns else direct
        assert order.flags.c_contiguous
        assert np.array_equal(direct_info, tiled_info)
        ok = np.asarray(direct_info) == 0
        scale = np.abs(a).max(initial=1.0)
        assert np.allclose(direct[ok], tiled[ok], rtol=0, atol=tolerance(dtype, a.shape[-1]) * scale)
        other = np.triu(direct, 1) if lower else np.tril(direct, -1)
        assert not other.any()
    x = tessera.cho_solve(tessera.cholesky(spd(50)), np.ones((50, 3)))
    assert np.allclose(spd(50) @ x, 1)


def test_scipy_forms_match_scipy():
    from tessera import scipy as tessera_scipy

    a = spd(70)
    b = np.arange(140.0).reshape(70, 2)
    for lower in (False, True):
        expected = scipy_linalg.cholesky(a, lower=lower)
        assert np.allclose(tessera_scipy.cholesky(a, lower=lower), expected)
        c = tessera_scipy.cho_factor(a, lower=lower)
        assert c[1] is lower
        assert np.allclose(tessera_scipy.cho_solve(c, b), scipy_linalg.cho_solve(scipy_linalg.cho_factor(a, lower), b))
        # SciPy's pair goes into tessera's solve, and tessera's into SciPy's.
        assert np.allclose(scipy_linalg.cho_solve(c, b), np.linalg.solve(a, b))
        assert np.allclose(tessera_scipy.cho_solve(scipy_linalg.cho_factor(a, lower), b), np.linalg.solve(a, b))
    assert np.allclose(tessera_scipy.cholesky(a), scipy_linalg.cholesky(a))  # SciPy's default: upper
    bad = a.copy()
    bad[3, 3] = np.nan
    with pytest.raises(ValueError, match="infs or NaNs"):
        tessera_scipy.cholesky(bad)
    _, info = tessera.cholesky_ex(bad)  # unchecked: the NaN is a failing minor
    assert int(info) == 4
    with pytest.raises(np.linalg.LinAlgError):
        tessera_scipy.cholesky(not_spd_at(a, 5))
    assert list(inspect.signature(tessera_scipy.cholesky).parameters) == \
        list(inspect.signature(scipy_linalg.cholesky).parameters)


def test_jax_cpu_arrays_come_back_as_jax_arrays():
    jax = pytest.importorskip("jax")
    a = jax.numpy.asarray(spd(20, dtype=np.float32))
    factor = tessera.cholesky(a)
    assert isinstance(factor, jax.Array)
    assert np.allclose(np.asarray(factor), np.linalg.cholesky(np.asarray(a)), atol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_torch_autograd_gradients_pass_gradcheck(dtype):
    """cholesky, cho_solve and logdet on tensors that require a gradient, real and complex
    Hermitian (PyTorch's complex convention): tessera computes them, torch's autograd
    differentiates them by the known formulas (only the triangle each reads gets one, and of a
    complex diagonal only the real part)."""
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(3)
    for n in (1, 5, 12):
        g = torch.randn(n, n, dtype=dtype, generator=gen)
        a = (g @ g.mH + n * torch.eye(n, dtype=dtype)).requires_grad_()
        for lower in (True, False):
            assert torch.autograd.gradcheck(lambda x: tessera.cholesky(x, lower=lower), (a,))
            assert torch.autograd.gradcheck(lambda x: tessera.logdet(x, lower=lower), (a,))
            c = tessera.cholesky(a.detach(), lower=lower).requires_grad_()
            b = torch.randn(n, 3, dtype=dtype, generator=gen, requires_grad=True)
            assert torch.autograd.gradcheck(lambda f, x: tessera.cho_solve(f, x, lower=lower), (c, b))
            v = torch.randn(n, dtype=dtype, generator=gen, requires_grad=True)
            assert torch.autograd.gradcheck(lambda f, x: tessera.cho_solve(f, x, lower=lower), (c, v))
    # A stack, and a factor broadcast against a stack of right-hand sides.
    g = torch.randn(3, 6, 6, dtype=dtype, generator=gen)
    stack = (g @ g.mH + 6 * torch.eye(6, dtype=dtype)).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: tessera.cholesky(x), (stack,))
    c = tessera.cholesky(stack[0].detach()).requires_grad_()
    b = torch.randn(4, 6, 2, dtype=dtype, generator=gen, requires_grad=True)
    # (lower= given: gradcheck perturbs the zeros the triangle would be read off.)
    assert torch.autograd.gradcheck(lambda f, x: tessera.cho_solve(f, x, lower=True), (c, b))
    # The same gradients as torch's own functions, for a loss of both parts of the factor.
    weights = torch.randn(3, 6, 6, dtype=dtype, generator=gen)
    x = stack.detach().clone().requires_grad_()
    (tessera.cholesky(x) * weights).real.sum().backward()
    y = stack.detach().clone().requires_grad_()
    (torch.linalg.cholesky(y) * weights).real.sum().backward()
    # torch spreads the gradient over both triangles; a diagonal's imaginary parts are not read.
    expected = y.grad.tril() + y.grad.triu(1).mH
    if expected.is_complex():
        expected.diagonal(dim1=-2, dim2=-1).imag.zero_()
    assert torch.allclose(x.grad, expected)


def test_torch_compile_runs_through_tessera():
    torch = pytest.importorskip("torch")
    a = torch.from_numpy(spd(16))
    compiled = torch.compile(lambda x: tessera.cholesky(x) * 2, backend="aot_eager")
    assert torch.allclose(compiled(a), 2 * torch.linalg.cholesky(a))


def test_jax_jit_and_vmap_run_tessera():
    """Under jax.jit and jax.vmap tessera's functions give the same results as outside a trace, a
    vmapped call handing tessera the whole stack (cho_solve's triangle read off the factor too)."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        a = jnp.asarray(spd(12, (5,), dtype=np.float32))
        b = jnp.ones((12, 2), dtype=np.float32)
        expected = np.linalg.cholesky(np.asarray(a))
        jitted = jax.jit(lambda x: tessera.cholesky(x))
        assert np.allclose(np.asarray(jitted(a)), expected, atol=1e-5)
        assert np.allclose(np.asarray(jax.vmap(tessera.cholesky)(a)), expected, atol=1e-5)
        factor, info = jax.jit(tessera.cholesky_ex)(a.at[2, 3, 3].set(-1.0))
        assert np.asarray(info).tolist() == [0, 0, 4, 0, 0]
        solve = jax.jit(lambda c, y: tessera.cho_solve(c, y, lower=True))
        x = solve(jnp.asarray(expected), b)
        assert x.shape == (5, 12, 2)
        assert np.allclose(np.asarray(a) @ np.asarray(x), 1, atol=1e-3)
        x = jax.vmap(lambda c, y: tessera.cho_solve(c, y, lower=True))(jnp.asarray(expected), jnp.ones((5, 12)))
        assert x.shape == (5, 12) and np.allclose(np.einsum("kij,kj->ki", np.asarray(a), np.asarray(x)), 1, atol=1e-3)
        x = jax.jit(lambda c, y: tessera.cho_solve(c, y))(jnp.asarray(expected), b)  # the triangle read off c
        assert np.allclose(np.asarray(a) @ np.asarray(x), 1, atol=1e-3)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_jax_programs_call_tessera_through_its_ffi_target(dtype, lower):
    """Under jax.jit and jax.vmap the calls are the native module's XLA FFI target, not host
    callbacks: a factor of either triangle read from that triangle only (the other holds garbage),
    LAPACK's info at the first, a middle and the last column, cholesky failing the program where a
    matrix is not positive definite, cho_solve of matrices and broadcast vectors, chained with
    the factor in the program."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    assert tessera._jax.ffi_ready(), "the package has no JAX FFI target (its module built without jaxlib's headers)"
    jnp = jax.numpy
    n = 13
    a = (hpd(n, dtype, (4,)) if np.dtype(dtype).kind == "c" else spd(n, (4,), dtype=dtype))
    garbage = a + np.where(np.tri(n, k=-1, dtype=bool).T if lower else np.tri(n, k=-1, dtype=bool), 1e3, 0).astype(dtype)
    expected = np.linalg.cholesky(a)
    if not lower:
        expected = np.conj(np.swapaxes(expected, -1, -2))
    tol = tolerance(dtype, n)
    with jax.default_device(jax.devices("cpu")[0]):
        factor = jax.jit(lambda x: tessera.cholesky(x, lower=lower))
        assert "custom_call @tessera" in factor.lower(jnp.asarray(garbage)).as_text()
        assert "callback" not in factor.lower(jnp.asarray(garbage)).as_text()
        f = np.asarray(factor(jnp.asarray(garbage)))
        assert f.dtype == dtype and np.allclose(f, expected, atol=tol, rtol=0)
        assert np.allclose(np.asarray(jax.vmap(lambda x: tessera.cholesky(x, lower=lower))(jnp.asarray(garbage))),
                           expected, atol=tol, rtol=0)

        bad = np.concatenate([not_spd_at(garbage[:1], 1), not_spd_at(garbage[1:2], 7), not_spd_at(garbage[2:3], n),
                              garbage[3:]])
        f, info = jax.jit(lambda x: tessera.cholesky_ex(x, lower=lower))(jnp.asarray(bad))
        assert np.asarray(info).tolist() == [1, 7, n, 0]
        assert np.allclose(np.asarray(f)[3], expected[3], atol=tol, rtol=0)
        with pytest.raises(Exception, match="not positive definite"):
            factor(jnp.asarray(bad)).block_until_ready()

        b = np.random.default_rng(5).standard_normal((4, n, 3)).astype(dtype)
        x = jax.jit(lambda c, y: tessera.cho_solve(c, y, lower=lower))(jnp.asarray(expected), jnp.asarray(b))
        assert x.shape == (4, n, 3) and _solve_error(a, np.asarray(x), b) < tol
        v = np.arange(1.0, n + 1).astype(dtype)
        solve = jax.jit(lambda x, y: tessera.cho_solve(tessera.cholesky(x, lower=lower), y, lower=lower))
        x = np.asarray(solve(jnp.asarray(garbage), jnp.asarray(v)))
        assert x.shape == (4, n) and _solve_error(a, x[..., None], np.broadcast_to(v[:, None], (4, n, 1))) < tol


def _solve_error(a, x, b):
    """||a x - b|| / (||a|| ||x||), the largest over a stack."""
    wide = np.complex128
    a, x, b = (np.asarray(m, dtype=wide) for m in (a, x, b))
    norms = np.linalg.norm(a, axis=(-2, -1)) * np.linalg.norm(x, axis=(-2, -1))
    return np.max(np.linalg.norm(a @ x - b, axis=(-2, -1)) / norms)


def test_jax_programs_take_logdet_posv_and_inv_through_the_ffi_target():
    """logdet, posv and inv under jax.jit are the FFI target's calls (cholesky, cho_solve) and
    JAX's own operations, no host callback: the same results as numpy's."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a = spd(37, (3,))
    b = np.random.default_rng(4).standard_normal((3, 37))
    tol = tolerance(np.float64, 37)
    with jax.default_device(jax.devices("cpu")[0]):
        for function, args, expected in (
                (tessera.logdet, (a,), np.linalg.slogdet(a)[1]),
                (tessera.posv, (a, b), np.linalg.solve(a, b[..., None])[..., 0]),
                (tessera.inv, (a,), np.linalg.inv(a))):
            jitted = jax.jit(function)
            text = jitted.lower(*(jnp.asarray(x) for x in args)).as_text()
            assert "custom_call @tessera" in text and "callback" not in text, function.__name__
            result = np.asarray(jitted(*(jnp.asarray(x) for x in args)))
            assert np.allclose(result, expected, atol=tol * np.abs(expected).max(), rtol=0), function.__name__
        with pytest.raises(Exception, match=r"the matrix is not positive definite \(leading minor of order 5\)"):
            jax.jit(tessera.logdet)(jnp.asarray(not_spd_at(spd(9), 5))).block_until_ready()


def test_jax_programs_run_tessera_tasks_and_empty_arrays():
    """Calls through the FFI target that run as tasks (a policy named), either triangle, and arrays
    with no matrix or of order 0."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a = spd(300, (2,))
    b = np.random.default_rng(2).standard_normal((2, 300, 4))
    tol = tolerance(np.float64, 300)
    with jax.default_device(jax.devices("cpu")[0]):
        for lower in (True, False):
            f, info = jax.jit(lambda x: tessera.cholesky_ex(x, lower=lower, policy="dmdas"))(jnp.asarray(a))
            assert np.asarray(info).tolist() == [0, 0]
            assert backward_error(a, np.asarray(f), lower) < tol
            x = jax.jit(lambda c, y: tessera.cho_solve(c, y, lower=lower, policy="dmdas"))(f, jnp.asarray(b))
            assert _solve_error(a, np.asarray(x), b) < tol
        with pytest.raises(Exception, match="not positive definite"):
            jax.jit(lambda x: tessera.cholesky(x, policy="dmdas"))(jnp.asarray(not_spd_at(a, 150))).block_until_ready()
        assert jax.jit(tessera.cholesky)(jnp.zeros((0, 5, 5))).shape == (0, 5, 5)
        assert jax.jit(tessera.cholesky)(jnp.zeros((3, 0, 0))).shape == (3, 0, 0)
        factor, info = jax.jit(tessera.cholesky_ex)(jnp.zeros((3, 0, 0)))
        assert factor.shape == (3, 0, 0) and np.asarray(info).tolist() == [0, 0, 0]
        assert jax.jit(lambda c, y: tessera.cho_solve(c, y, lower=True))(jnp.eye(4), jnp.zeros((4, 0))).shape == (4, 0)


def test_progress_reaches_the_callable_in_order_up_to_one(small_tiles):
    """progress=callable: called on the calling thread with the fraction done, a few times a second
    and once at the end with 1, for the factorization and for the solve."""
    a = spd(1500)
    fractions, threads = [], []

    def record(fraction):
        fractions.append(fraction)
        threads.append(threading.get_ident())

    L = tessera.cholesky(a, progress=record)
    assert fractions and fractions[-1] == 1.0
    assert fractions == sorted(fractions) and all(0 <= f <= 1 for f in fractions)
    assert set(threads) == {threading.get_ident()}
    fractions.clear()
    x = tessera.cho_solve(L, np.ones(1500), progress=record)
    assert fractions[-1] == 1.0
    assert np.allclose(a @ x, 1)


def test_an_exception_in_progress_cancels_the_call_and_the_next_call_works(small_tiles):
    class Stop(Exception):
        pass

    def stop(fraction):
        raise Stop

    a = spd(1500)
    with pytest.raises(Stop):
        tessera.cholesky(a, progress=stop)
    assert np.allclose(tessera.cholesky(spd(300)), np.linalg.cholesky(spd(300)))


def test_progress_bar_on_stderr_when_asked(small_tiles, capsys):
    tessera.cholesky(spd(300), progress=True)
    assert capsys.readouterr().err.rstrip("\n").endswith("] 100%")
    tessera.cholesky(spd(300), progress=False)
    tessera.cholesky(spd(300))  # stderr is not a terminal here: no bar
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress"):
        tessera.cholesky(spd(300), progress="yes")


@pytest.mark.parametrize("n", [1, 5, 300])
def test_a_progress_of_no_known_form_is_refused_on_every_route(n):
    """Orders that run on the calling thread never report progress, but take the same argument."""
    a = spd(n)
    L = np.linalg.cholesky(a)
    calls = [lambda p: tessera.cholesky(a, progress=p), lambda p: tessera.cholesky_ex(a, progress=p),
             lambda p: tessera.cholesky(np.stack([a, a]), progress=p), lambda p: tessera.cho_solve(L, np.ones(n), progress=p),
             lambda p: tessera.posv(a, np.ones(n), progress=p), lambda p: tessera.logdet(a, progress=p),
             lambda p: tessera.logdet_ex(a, progress=p), lambda p: tessera.cholesky_inverse(L, progress=p),
             lambda p: tessera.inv(a, progress=p), lambda p: tessera.cholesky_adaptive(a, 1e-8, progress=p),
             lambda p: tessera.cholesky(a, accuracy=1e-8, progress=p)]
    for call in calls:
        for bad in ("yes", 5, 0.5, [print]):
            with pytest.raises(TypeError, match="progress must be None, True, False or a callable"):
                call(bad)
        call(lambda fraction: None)
        call(False)


def test_progress_bar_waits_for_its_delay():
    from tessera._progress import Bar

    class Stream:
        text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    now = [0.0]
    stream = Stream()
    bar = Bar(stream, 1.0, clock=lambda: now[0])
    bar(0.3)
    assert stream.text == ""
    now[0] = 1.5
    bar(0.5)
    assert stream.text.startswith("\rtessera [") and stream.text.endswith(" 50%")
    bar(1.0)
    assert stream.text.endswith("100%\n")


def test_blas_kernel_choice_follows_the_vector_units():
    from tessera._blas_kernel import kernel_for_cpu, loading_with_this_cpus_kernel

    avx512 = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma"}
    assert kernel_for_cpu("x86_64", frozenset(avx512)) == "SkylakeX"
    assert kernel_for_cpu("x86_64", frozenset({"avx2", "fma", "avx512f"})) == "Haswell"
    assert kernel_for_cpu("x86_64", frozenset({"sse3"})) is None
    assert kernel_for_cpu("aarch64", frozenset(avx512)) is None
    environ = {"OPENBLAS_CORETYPE": "Zen"}
    with loading_with_this_cpus_kernel(environ) as asked:
        assert asked is None and environ == {"OPENBLAS_CORETYPE": "Zen"}
    environ = {}
    with loading_with_this_cpus_kernel(environ) as asked:
        assert environ.get("OPENBLAS_CORETYPE") == asked
    assert environ == {}
    info = tessera.blas_info()
    assert set(info) == {"library", "kernel", "kernel_asked_for", "faster_kernel"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (7,), (64,), (3, 65), (2, 2, 17), (600,)])
def test_logdet_matches_slogdet(shape, dtype):
    a = spd(shape[-1], shape[:-1], dtype=dtype)
    value = tessera.logdet(a)
    assert np.shape(value) == shape[:-1] and np.asarray(value).dtype == dtype
    expected = np.linalg.slogdet(a.astype(np.float64))[1]
    assert np.allclose(value, expected, rtol=tolerance(dtype, shape[-1]), atol=tolerance(dtype, shape[-1]))
    upper_only = np.triu(a)  # lower=False reads the upper triangle only
    assert np.allclose(tessera.logdet(upper_only, lower=False), value, rtol=1e-5)


@pytest.mark.parametrize("column", [1, 5, 9])
def test_logdet_of_matrices_that_are_not_positive_definite(column):
    stack = spd(9, (4,))
    stack[2] = not_spd_at(stack[2], column)
    with pytest.raises(tessera.NotPositiveDefiniteError) as failure:
        tessera.logdet(stack)
    assert list(failure.value.column) == [0, 0, column, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in log"
        value, info = tessera.logdet_ex(stack)
    assert list(info) == [0, 0, column, 0] and value[2] == 0 and np.all(np.isfinite(value))
    assert np.allclose(value[[0, 1, 3]], np.linalg.slogdet(stack[[0, 1, 3]])[1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", [(1,), (12,), (70,), (3, 33)])
def test_cholesky_inverse_and_inv_match_numpy(small_tiles, shape, lower, dtype):
    a = spd(shape[-1], shape[:-1], dtype=dtype)
    expected = np.linalg.inv(a.astype(np.float64))
    atol = tolerance(dtype, shape[-1]) * np.abs(expected).max()
    inverse = tessera.inv(a, lower=lower)
    assert inverse.dtype == dtype and np.allclose(inverse, expected, atol=atol)
    assert np.array_equal(inverse, np.swapaxes(inverse, -1, -2))
    c = tessera.cholesky(a, lower=lower)
    assert np.allclose(tessera.cholesky_inverse(c), expected, atol=atol)  # the triangle read off c
    if len(shape) == 1:
        import scipy.linalg

        assert np.allclose(tessera.cholesky_inverse(scipy.linalg.cho_factor(a, lower=lower)), expected, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES + [np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_cholesky_inverse_reads_a_small_stack_of_factors_in_any_layout(layout, lower, dtype):
    # Small work: each factor copied, inverted and mirrored on the calling thread where it lies.
    a = hpd(9, dtype, (2, 3)) if np.iscomplexobj(np.zeros(0, dtype)) else spd(9, (2, 3), dtype=dtype)
    expected = np.linalg.inv(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64))
    atol = tolerance(dtype, 9) * np.abs(expected).max()
    c = tessera.cholesky(a, lower=lower)
    if layout == "F":
        c = np.asfortranarray(c)
    elif layout == "strided":
        wide = np.full(c.shape[:-1] + (18,), np.nan, dtype=dtype)
        wide[..., ::2] = c
        c = wide[..., ::2]
    inverse = tessera.cholesky_inverse(c, lower=lower)
    assert inverse.shape == a.shape and inverse.dtype == dtype
    assert np.allclose(inverse, expected, atol=atol)
    assert np.array_equal(inverse, np.conjugate(np.swapaxes(inverse, -1, -2)))  # Hermitian to the last bit
    c = np.array(c)
    c[1, 2, 4, 4] = 0
    with pytest.raises(np.linalg.LinAlgError, match="matrix 5: the factor's diagonal entry 5 is zero"):
        tessera.cholesky_inverse(c, lower=lower)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_inverse_of_a_large_factor_and_of_a_singular_one(lower):
    n = 2001  # beyond the calling thread's work on every machine: the tile task graph
    a = spd(n, (), dtype=np.float64)
    c = tessera.cholesky(a, lower=lower)
    inverse = tessera.cholesky_inverse(c, lower=lower)
    identity = a @ inverse
    assert np.abs(identity - np.eye(n)).max() < 1e-10
    assert np.array_equal(inverse, inverse.T)
    c[7, 7] = 0  # a singular factor: LAPACK's potri reports the zero
    with pytest.raises(np.linalg.LinAlgError, match="diagonal entry 8 is zero"):
        tessera.cholesky_inverse(c, lower=lower)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
@pytest.mark.parametrize("batch, n", [(8, 200), (3, 300)])
def test_cholesky_inverse_of_a_stack_beyond_the_calling_thread(dtype, batch, n):
    # Beyond the calling thread's work: batched chunk tasks (order 200), one tile graph per matrix (300).
    a = spd(n, (batch,), dtype=dtype)
    c = tessera.cholesky(a)
    inverse = tessera.cholesky_inverse(c)
    expected = np.linalg.inv(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64))
    assert np.allclose(inverse, expected, atol=tolerance(dtype, n) * np.abs(expected).max())
    c[batch - 1, 3, 3] = 0
    with pytest.raises(np.linalg.LinAlgError, match=f"matrix {batch - 1}: the factor's diagonal entry 4 is zero"):
        tessera.cholesky_inverse(c)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_torch_autograd_of_logdet_and_inverse(dtype):
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(4)
    g = torch.randn(3, 7, 7, dtype=dtype, generator=gen)
    a = (g @ g.mH + 7 * torch.eye(7, dtype=dtype)).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: tessera.logdet(x), (a,))
    assert torch.autograd.gradcheck(lambda x: tessera.inv(x), (a,))
    c = tessera.cholesky(a.detach()).requires_grad_()
    assert torch.autograd.gradcheck(lambda f: tessera.cholesky_inverse(f, lower=True), (c,))
    # torch's own logdet gives the same gradient on the triangle tessera reads (the adjoint of the
    # other one's half added).
    x = a.detach().clone().requires_grad_()
    tessera.logdet(x).sum().backward()
    y = a.detach().clone().requires_grad_()
    torch.logdet(y).real.sum().backward()
    assert torch.allclose(x.grad, y.grad.tril() + y.grad.triu(1).mH)


def test_jax_jit_of_logdet_and_inverse():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    with jax.default_device(jax.devices("cpu")[0]):
        a = jnp.asarray(spd(10, (2,)))
        value = jax.jit(tessera.logdet)(a)
        assert isinstance(value, jax.Array)
        assert np.allclose(np.asarray(value), np.linalg.slogdet(np.asarray(a))[1])
        assert np.allclose(np.asarray(jax.jit(tessera.inv)(a)), np.linalg.inv(np.asarray(a)), atol=1e-10)


# ---- complex Hermitian matrices ---------------------------------------------------------------

COMPLEX_DTYPES = [np.complex128, np.complex64]


def complex_tolerance(dtype, n):
    return (1e-12 if np.dtype(dtype) == np.complex128 else 2e-4) * max(n, 10)


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 17, 64, 65, 131, 300])
def test_complex_cholesky_solve_inverse_logdet_match_numpy(small_tiles, n, lower, dtype):
    a = hpd(n, dtype, seed=n)
    factor = tessera.cholesky(a, lower=lower)
    assert factor.dtype == dtype and factor.shape == (n, n)
    reference = np.linalg.cholesky(a.astype(np.complex128))
    expected = reference if lower else np.conjugate(reference.T)
    scale = complex_tolerance(dtype, n)
    assert np.abs(factor - expected).max() <= scale * np.abs(expected).max()
    other = np.triu(factor, 1) if lower else np.tril(factor, -1)
    assert not other.any()
    assert not np.diagonal(factor).imag.any()
    b = (np.arange(2 * n).reshape(n, 2) + 1j).astype(dtype)
    x = tessera.cho_solve((factor, lower), b)
    assert x.dtype == dtype
    assert np.abs(a @ x - b).max() <= scale * np.abs(a).max() * np.abs(x).max() * n
    assert np.allclose(tessera.posv(a, b, lower=lower), x, rtol=0, atol=scale * np.abs(x).max())
    inverse = tessera.cholesky_inverse(factor, lower=lower)
    assert np.abs(inverse @ a - np.eye(n)).max() <= scale * n * 10
    assert np.array_equal(inverse, np.conjugate(inverse.T))
    sign, expected_logdet = np.linalg.slogdet(a.astype(np.complex128))
    logdet = tessera.logdet(a, lower=lower)
    assert np.isrealobj(logdet) and abs(logdet - expected_logdet) <= scale * (1 + abs(expected_logdet))


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
def test_complex_stacks_and_the_diagonals_imaginary_parts(dtype):
    a = hpd(40, dtype, batch=(3,), seed=5)
    noisy = a.copy()
    idx = np.arange(40)
    noisy[:, idx, idx] += 0.5j  # not read, as in LAPACK
    factors = tessera.cholesky(noisy)
    for k in range(3):
        reference = np.linalg.cholesky(a[k].astype(np.complex128))
        assert np.abs(factors[k] - reference).max() <= complex_tolerance(dtype, 40) * np.abs(reference).max()
    b = np.ones((3, 40, 2), dtype=dtype)
    x = tessera.cho_solve(factors, b, lower=True)
    assert np.abs(a @ x - b).max() <= complex_tolerance(dtype, 40) * 100


def test_complex_not_positive_definite_gives_the_column():
    a = hpd(90, seed=2)
    a[70, 70] = -1
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(a)
    assert error.value.column == 71
    with pytest.raises(tessera.NotPositiveDefiniteError):
        tessera.cholesky(a, mode="cpu", policy="dmdas")


def test_large_host_copies_are_split_over_threads_and_exact():
    """From _core.parallel_copy_min_bytes on, a host array's copy (NumPyArrays.stack) is split over
    threads: the same values in a fresh C-ordered array, for sizes that are no multiple of a page,
    and the factorization that starts from such a copy is numpy's."""
    from tessera import _core
    from tessera._arrays import NumPyArrays

    rng = np.random.default_rng(3)
    for shape in [(2051, 2051), (3, 1201, 1201)]:  # 33.7 and 34.6 MB
        a = rng.standard_normal(shape)
        assert a.nbytes >= _core.parallel_copy_min_bytes
        copy = NumPyArrays().stack(a, (math.prod(shape[:-2]), shape[-2], shape[-1]), np.dtype(np.float64), copy=True)
        assert copy.flags.c_contiguous and not np.shares_memory(copy, a)
        np.testing.assert_array_equal(copy.reshape(shape), a)
    g = rng.standard_normal((2051, 2051))
    a = g @ g.T / 2051 + np.eye(2051)
    factor = tessera.cholesky(a, mode="cpu")
    np.testing.assert_allclose(factor, np.linalg.cholesky(a), rtol=0, atol=1e-10)
