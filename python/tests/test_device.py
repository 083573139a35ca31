"""tessera on GPU arrays (CuPy, PyTorch, JAX): results against numpy, per-matrix info, the kind of
array handed back, and the stream semantics. Skipped where no GPU (or no GPU library) is present."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import tessera
from conftest import backward_error, hpd, not_spd_at, spd, tolerance

# An order the dense device API takes, one matrix at a time, whatever the stack's length.
DENSE_N = 1031


def test_the_library_routes_stacks_of_gpu_matrices():
    """The route of a stack is the library's plan (no GPU needed to ask): small matrices to the
    batched kernels alone; large ones, short stacks (a thread block per matrix, or cuSOLVER's
    batched call past the one-block orders) and long stacks of mid-sized ones (the batched kernels
    in blocks of columns) through the dense device API."""
    assert tessera._takes_batched_kernels(8, 1) and tessera._takes_batched_kernels(100, 10000)
    assert tessera._takes_batched_kernels(16, 100) and tessera._takes_batched_kernels(64, 300)
    for dtype in (np.float32, np.float64, np.complex64, np.complex128):
        assert not tessera._takes_batched_kernels(64, 100, dtype) and not tessera._takes_batched_kernels(96, 300, dtype)
    assert not tessera._takes_batched_kernels(DENSE_N, 10000) and not tessera._takes_batched_kernels(1024, 1)
    assert not tessera._takes_batched_kernels(512, 64) and not tessera._takes_batched_kernels(512, 1000)
    assert tessera._takes_batched_kernels(256, 1000, np.float32)
    assert tessera._takes_batched_kernels(64, 1000, np.complex128)
    assert not tessera._takes_batched_kernels(512, 1000, np.complex128)


def test_the_library_routes_solves_with_gpu_stacks():
    """cho_solve's route for a GPU stack is the library's plan (no GPU needed to ask): real stacks
    through the batched kernels at any count of right-hand sides up to order 64 and for few past
    it; complex ones through them on short stacks below the factorization's vendor orders and on
    long ones up to order 64 at any count, the vendor's batched solves past that."""
    core = tessera._core
    assert core.solve_takes_batched_kernels_f8(64, 4096, 64) and core.solve_takes_batched_kernels_f4(96, 4096, 4)
    assert not core.solve_takes_batched_kernels_f8(96, 4096, 8)
    assert core.solve_takes_batched_kernels_c16(40, 8, 1) and core.solve_takes_batched_kernels_c8(64, 4096, 64)
    assert core.solve_takes_batched_kernels_c8(128, 8, 1)
    assert not core.solve_takes_batched_kernels_c16(128, 8, 1)
    assert not core.solve_takes_batched_kernels_c16(96, 4096, 1) and not core.solve_takes_batched_kernels_c8(96, 512, 4)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _cupy():
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # no module, no driver or no device
        return None


class TorchKind:
    name = "torch"

    def __init__(self, torch):
        self.torch = torch

    def put(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).cuda()

    def get(self, x):
        assert isinstance(x, self.torch.Tensor) and x.is_cuda
        return x.cpu().numpy()

    def swap(self, x):
        return x.transpose(-1, -2)

    def broadcast(self, x, shape):
        return x.expand(shape)


class CuPyKind:
    name = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy

    def put(self, a):
        return self.cupy.asarray(a)

    def get(self, x):
        assert isinstance(x, self.cupy.ndarray)
        return self.cupy.asnumpy(x)

    def swap(self, x):
        return self.cupy.swapaxes(x, -1, -2)

    def broadcast(self, x, shape):
        return self.cupy.broadcast_to(x, shape)


def _kinds():
    kinds = []
    torch, cupy = _torch(), _cupy()
    if torch is not None:
        kinds.append(TorchKind(torch))
    if cupy is not None:
        kinds.append(CuPyKind(cupy))
    return kinds


KINDS = _kinds()
pytestmark = pytest.mark.skipif(not KINDS, reason="no CUDA GPU with PyTorch or CuPy: the GPU-array tests need one")


@pytest.fixture(params=KINDS, ids=lambda k: k.name)
def kind(request):
    return request.param


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, batch", [(1, ()), (8, (1000,)), (31, (7,)), (33, (2, 3)), (100, (5,)), (300, ()),
                                      (1100, ())])
def test_factor_matches_numpy(kind, n, batch, lower, dtype):
    a = spd(n, batch=batch, dtype=dtype)
    factor, info = tessera.cholesky_ex(kind.put(a), lower=lower)
    f, i = kind.get(factor), kind.get(info)
    assert f.shape == a.shape and f.dtype == dtype and i.shape == batch and i.dtype == np.int32
    assert not i.any()
    assert backward_error(a, f, lower) < tolerance(dtype, n)
    other = np.triu(f, 1) if lower else np.tril(f, -1)
    assert not other.any()


@pytest.mark.parametrize("n", [1, 8, 32, 33, 40, 128, 1100])
def test_members_that_are_not_positive_definite(kind, n):
    batch = 6 if n < 1024 else 3
    a = spd(n, batch=(batch,))
    a[1] = not_spd_at(a[1], 1)
    a[-1] = not_spd_at(a[-1], n)
    expected = np.zeros(batch, np.int32)
    expected[1], expected[-1] = 1, n
    if batch == 6:
        a[3] = not_spd_at(a[3], n // 2 + 1)
        expected[3] = n // 2 + 1
    factor, info = tessera.cholesky_ex(kind.put(a))
    assert np.array_equal(kind.get(info), expected)
    good = expected == 0
    assert backward_error(a[good], kind.get(factor)[good], True) < tolerance(np.float64, n)
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(kind.put(a))
    assert np.array_equal(error.value.column, expected)
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(kind.put(a[-1]))
    assert error.value.column == n


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, batch", [(1, ()), (17, ()), (33, ()), (64, (2, 3)), (95, (4,))])
def test_small_matrices_waited_for_give_their_factors_or_their_columns(kind, n, batch, lower, dtype):
    """cholesky of GPU matrices of the orders the batched kernels take (their factors written
    column by column into the final layout): the factors in either triangle and layout, and the
    failing columns raised in the stack's shape (a number for one matrix)."""
    a = hpd(n, dtype, batch=batch, seed=n) if np.dtype(dtype).kind == "c" else spd(n, batch, dtype, seed=3)
    for x in (kind.put(a), kind.swap(kind.put(np.ascontiguousarray(a.swapaxes(-1, -2))))):
        f = kind.get(tessera.cholesky(x, lower=lower))
        assert f.shape == a.shape and f.dtype == dtype and backward_error(a, f, lower) < tolerance(dtype, n)
        assert not (np.triu(f, 1) if lower else np.tril(f, -1)).any()
    bad, expected = a.copy(), np.zeros(batch, np.int32)
    flat, columns = bad.reshape(-1, n, n), expected.reshape(-1)
    for k, column in ((0, n), (flat.shape[0] - 1, n // 2 + 1)):
        flat[k], columns[k] = not_spd_at(flat[k], column), column
    with pytest.raises(tessera.NotPositiveDefiniteError) as error:
        tessera.cholesky(kind.put(bad), lower=lower)
    assert np.array_equal(error.value.column, expected) and np.shape(error.value.column) == batch


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [48, 97, 192, 193, 300, DENSE_N])
def test_one_matrix_waited_for_gives_its_factor_or_its_column(kind, n, lower, dtype):
    """cholesky of one GPU matrix that the dense device API takes (one thread block's kernel for a
    real one up to 192, cuSOLVER's potrf above) reads the info back in the native call (no info
    array): the factor in either triangle and layout, the input unchanged, and the
    failing column raised, at the first and last columns and between."""
    a = hpd(n, dtype, seed=n) if np.dtype(dtype).kind == "c" else spd(n, dtype=dtype, seed=5)
    for x in (kind.put(a), kind.swap(kind.put(np.ascontiguousarray(a.swapaxes(-1, -2))))):
        f = kind.get(tessera.cholesky(x, lower=lower))
        assert f.dtype == dtype and backward_error(a, f, lower) < tolerance(dtype, n)
        assert not (np.triu(f, 1) if lower else np.tril(f, -1)).any()
        assert np.array_equal(kind.get(x), a)
    for column in (1, n // 2 + 1, n):
        with pytest.raises(tessera.NotPositiveDefiniteError) as error:
            tessera.cholesky(kind.put(not_spd_at(a, column)), lower=lower)
        assert error.value.column == column and np.ndim(error.value.column) == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 17, 33, 48, 64, 97, 192, 193, 300])
def test_one_plain_torch_matrix_takes_the_short_route(n, lower, dtype):
    """One plain 2-D torch tensor on the current GPU goes the short route
    (_factor_plain_torch_matrix) once a call has made PyTorch's adapter, to the batched kernels or
    to the dense device API as the plan gives its order (the register kernel up to 32, the panel
    kernel above): the factor of every layout, read where it lies and laid out as the general path
    lays it out, each info and cholesky's raised column. A tensor it does not take (a lazily
    conjugated view, one autograd follows, a subclass) gets the same results through the general
    path."""
    torch = _torch()
    if torch is None:
        pytest.skip("no PyTorch with a CUDA GPU")
    kind = TorchKind(torch)
    a = hpd(n, dtype, seed=n) if np.dtype(dtype).kind == "c" else spd(n, dtype=dtype, seed=7)
    tessera.cholesky_ex(kind.put(a))  # PyTorch's adapter, made by the general path
    spread = np.full((2 * n, 2 * n), np.nan, dtype)
    spread[::2, ::2] = a
    layouts = {"C": kind.put(a), "Fortran": kind.swap(kind.put(np.ascontiguousarray(a.T))),
               "every other row and column": kind.put(spread)[::2, ::2]}
    general_factor = tessera.cholesky_ex(torch.nn.Parameter(kind.put(a), requires_grad=False), lower=lower)[0]
    for name, x in layouts.items():
        assert tessera._factor_plain_torch_matrix(x, lower, wait=False) is not None, name
        factor, info = tessera.cholesky_ex(x, lower=lower)
        assert factor.stride() == general_factor.stride(), name
        for f in (kind.get(factor), kind.get(tessera.cholesky(x, lower=lower))):
            assert f.dtype == dtype and backward_error(a, f, lower) < tolerance(dtype, n), name
            assert not (np.triu(f, 1) if lower else np.tril(f, -1)).any(), name
        assert info.dtype == torch.int32 and info.shape == () and int(info) == 0, name
        assert np.array_equal(kind.get(x), a), name
    for column in (1, n // 2 + 1, n):
        bad = kind.put(not_spd_at(a, column))
        assert int(tessera.cholesky_ex(bad, lower=lower)[1]) == column
        with pytest.raises(tessera.NotPositiveDefiniteError) as error:
            tessera.cholesky(bad, lower=lower)
        assert error.value.column == column
    others = {"subclass": torch.nn.Parameter(kind.put(a), requires_grad=False)}
    if np.dtype(dtype).kind == "c":
        others["lazily conjugated"] = kind.put(np.conjugate(a)).conj()
    else:
        others["followed by autograd"] = kind.put(a).requires_grad_()
    for name, x in others.items():
        assert tessera._factor_plain_torch_matrix(x, lower, wait=False) is None, name
        with torch.no_grad():
            factor, info = tessera.cholesky_ex(x, lower=lower)
        assert int(info) == 0 and backward_error(a, kind.get(factor.detach()), lower) < tolerance(dtype, n), name


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, batch", [(128, 1), (257, 2), (513, 5), (700, 3)])
def test_short_stacks_of_larger_matrices(kind, n, batch, lower):
    """A few matrices of order 192 to 1023 (one matrix: from order 48) go through the dense device
    API's one call (in double the batched kernels in blocks of columns, cuSOLVER's potrf for one
    matrix), not the batched kernels alone: numpy's factors, each member's info, the batched path's
    layouts."""
    assert not tessera._takes_batched_kernels(n, batch)
    a = spd(n, batch=(batch,))
    expected = np.zeros(batch, np.int32)
    if batch > 1:
        a[-1] = not_spd_at(a[-1], n // 2 + 1)
        expected[-1] = n // 2 + 1
    factor, info = tessera.cholesky_ex(kind.put(a), lower=lower)
    assert np.array_equal(kind.get(info), expected)
    f = kind.get(factor)
    good = expected == 0
    assert backward_error(a[good], f[good], lower) < tolerance(np.float64, n)
    assert not (np.triu(f[good], 1) if lower else np.tril(f[good], -1)).any()
    c_ordered = kind.swap(factor) if lower else factor
    assert c_ordered.is_contiguous() if kind.name == "torch" else c_ordered.flags.c_contiguous


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, batch", [(33, 4), (64, 100), (128, 7), (97, 200)])
def test_short_stacks_take_a_thread_block_per_matrix(kind, n, batch, lower, dtype):
    """Short stacks within the one-block orders (a thread block per matrix, one launch): numpy's
    factors, each member's info (a failing minor, a NaN pivot), zeros in the other triangle, and
    the input left as it was."""
    assert not tessera._takes_batched_kernels(n, batch, dtype)
    a = hpd(n, dtype, batch=(batch,), seed=n) if np.dtype(dtype).kind == "c" else spd(n, (batch,), dtype, seed=n)
    expected = np.zeros(batch, np.int32)
    a[1] = not_spd_at(a[1], n // 2 + 1)
    expected[1] = n // 2 + 1
    a[-1, n - 1, n - 1] = np.nan
    expected[-1] = n
    x = kind.put(a)
    factor, info = tessera.cholesky_ex(x, lower=lower)
    assert np.array_equal(kind.get(info), expected)
    assert np.array_equal(kind.get(x), a, equal_nan=True)
    f = kind.get(factor)
    good = expected == 0
    assert backward_error(a[good], f[good], lower) < tolerance(dtype, n)
    assert not (np.triu(f[good], 1) if lower else np.tril(f[good], -1)).any()
    assert not np.imag(np.diagonal(f[good], axis1=-2, axis2=-1)).any()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_short_stack_factored_again_and_again(kind, dtype):
    """The same shape of short stack, call after call (in single precision, from the second call on,
    cuSOLVER's batched potrf runs as a captured graph that reads each call's matrices; in double the
    kernels in blocks of columns): every call's own factors and info, whichever member fails where."""
    n, batch = 200, 6
    assert not tessera._takes_batched_kernels(n, batch)
    for call, (member, column) in enumerate([(None, 0), (0, 1), (5, n), (2, 77), (None, 0)]):
        a = spd(n, batch=(batch,), dtype=dtype, seed=call)
        expected = np.zeros(batch, np.int32)
        if member is not None:
            a[member] = not_spd_at(a[member], column)
            expected[member] = column
        factor, info = tessera.cholesky_ex(kind.put(a))
        assert np.array_equal(kind.get(info), expected), f"call {call}"
        good = expected == 0
        assert backward_error(a[good], kind.get(factor)[good], True) < tolerance(dtype, n), f"call {call}"


def _layouts(kind, clean, poisoned):
    """The poisoned stack on the GPU as C-ordered, Fortran-ordered, every other matrix of a larger
    stack, and (its first matrix) broadcast over the stack: (name, array, the clean matrices)."""
    spread = np.full((2 * poisoned.shape[0],) + poisoned.shape[1:], np.nan, poisoned.dtype)
    spread[::2] = poisoned
    fortran = kind.swap(kind.put(np.ascontiguousarray(np.swapaxes(poisoned, -1, -2))))
    return [("C", kind.put(poisoned), clean), ("Fortran", fortran, clean), ("every other", kind.put(spread)[::2], clean),
            ("broadcast", kind.broadcast(kind.put(poisoned[0]), clean.shape), np.broadcast_to(clean[0], clean.shape))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 2, 5, 31, 32, 33, 64, 100, 128, 700, DENSE_N])
def test_any_layout_is_read_where_it_lies_and_only_its_triangle(kind, n, lower, dtype):
    """The batched path and the dense ones (a stack of 700, DENSE_N one matrix at a time) read the
    matrices through their strides (one kernel, no copy): every layout gives numpy's factor, the
    other triangle is never read (NaN there), nor the imaginary parts of a complex diagonal, and
    the input is left as it was."""
    complex_matrices = np.dtype(dtype).kind == "c"
    a = hpd(n, dtype, batch=(4,), seed=n) if complex_matrices else spd(n, batch=(4,), dtype=dtype)
    poisoned = a.copy()
    rows, cols = np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)
    poisoned[:, rows, cols] = np.nan
    if complex_matrices:
        poisoned[:, np.arange(n), np.arange(n)] += 0.5j
    for name, x, clean in _layouts(kind, a, poisoned):
        before = kind.get(x)
        factor, info = tessera.cholesky_ex(x, lower=lower)
        f = kind.get(factor)
        assert f.shape == a.shape and f.dtype == dtype, name
        assert not kind.get(info).any(), name
        assert backward_error(clean, f, lower) < tolerance(dtype, n), name
        assert not (np.triu(f, 1) if lower else np.tril(f, -1)).any(), name
        assert np.array_equal(kind.get(x), before, equal_nan=True), f"{name}: the input changed"


def test_factor_layouts_are_kept(kind):
    """Lower factors above order 32 come back Fortran-ordered (as a transposed C-ordered stack),
    the others C-ordered."""
    for n, lower, fortran in [(8, True, False), (8, False, False), (33, True, True), (100, False, False)]:
        factor = tessera.cholesky(kind.put(spd(n, batch=(3,))), lower=lower)
        c_ordered = kind.swap(factor) if fortran else factor
        assert (c_ordered.is_contiguous() if kind.name == "torch" else c_ordered.flags.c_contiguous), (n, lower)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [3, 32, 48])
def test_stacks_of_stacks_nan_and_other_types(kind, n, lower):
    a = spd(n, batch=(2, 3))
    a[0, 1, 0, 0] = np.nan  # info 1
    a[1, 2] = not_spd_at(a[1, 2], n)
    factor, info = tessera.cholesky_ex(kind.put(a), lower=lower)
    expected = np.zeros((2, 3), np.int32)
    expected[0, 1], expected[1, 2] = 1, n
    assert np.array_equal(kind.get(info), expected)
    good = expected == 0
    assert backward_error(a[good], kind.get(factor)[good], lower) < tolerance(np.float64, n)
    # A permuted stack (its matrices not one stride apart) and integer matrices (computed in float64).
    b = spd(n, batch=(3, 2))
    permuted = kind.put(np.ascontiguousarray(np.swapaxes(b, 0, 1)))
    permuted = permuted.permute(1, 0, 2, 3) if kind.name == "torch" else permuted.transpose(1, 0, 2, 3)
    assert backward_error(b, kind.get(tessera.cholesky(permuted, lower=lower)), lower) < tolerance(np.float64, n)
    integers = np.round(b * 100).astype(np.int32)
    c = kind.get(tessera.cholesky(kind.put(integers), lower=lower))
    assert c.dtype == np.float64
    assert backward_error(integers, c, lower) < tolerance(np.float64, n)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, batch", [(16, (50,)), (64, ()), (300, (2,)), (1100, ())])
def test_solves(kind, n, batch, lower):
    a = spd(n, batch=batch)
    rng = np.random.default_rng(7)
    b = rng.standard_normal(batch + (n, 3))
    c = tessera.cholesky(kind.put(a), lower=lower)
    x = kind.get(tessera.cho_solve(c, kind.put(b), lower=lower))
    assert np.allclose(a @ x, b, atol=1e-8)
    v = rng.standard_normal(batch + (n,))
    y = kind.get(tessera.posv(kind.put(a), kind.put(v), lower=lower))
    assert np.allclose(np.einsum("...ij,...j->...i", a, y), v, atol=1e-8)


def test_empty_and_non_contiguous(kind):
    factor, info = tessera.cholesky_ex(kind.put(np.zeros((3, 0, 0))))
    assert kind.get(factor).shape == (3, 0, 0) and kind.get(info).shape == (3,)
    a = spd(20)
    big = np.zeros((40, 40))
    big[::2, ::2] = a
    strided = kind.put(big)[::2, ::2]
    assert np.allclose(kind.get(tessera.cholesky(strided)), np.linalg.cholesky(a))


def test_the_input_is_left_as_it_was(kind):
    a = spd(24)
    x = kind.put(a)
    tessera.cholesky(x)
    assert np.array_equal(kind.get(x), a)


def _cholesky_ex_behind_queued_work(torch, a, warm_up):
    """tessera.cholesky_ex of `a` (numpy), copied to the GPU on a new stream behind about 0.1 s of
    GPU work queued there: (factor, info, seconds the call took to return), after a first call on
    `warm_up`; fails where the call waited for the stream."""
    host = torch.from_numpy(a).pin_memory()
    stream = torch.cuda.Stream()
    tessera.cholesky_ex(torch.from_numpy(warm_up).cuda())  # first-call costs
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        device_a = torch.empty_like(host, device="cuda")
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time queued ahead on the stream
        device_a.copy_(host, non_blocking=True)
        start = time.perf_counter()
        factor, info = tessera.cholesky_ex(device_a)
        returned = time.perf_counter() - start
        assert not stream.query(), "the work queued before the call is done: the call synchronised"
    stream.synchronize()
    return factor, info, returned


def test_torch_stream_order_and_no_synchronisation():
    torch = _torch()
    if torch is None:
        pytest.skip("needs PyTorch with a CUDA GPU")
    a = spd(32, batch=(2000,))
    factor, info, returned = _cholesky_ex_behind_queued_work(torch, a, np.eye(4))
    assert returned < 0.05, f"cholesky_ex took {returned:.3f} s to return"
    assert not info.cpu().numpy().any()
    assert backward_error(a, factor.cpu().numpy(), True) < tolerance(np.float64, 32)


def test_torch_dense_stream_order_and_no_synchronisation():
    """Dense orders on one GPU are one vendor call each, enqueued on the array's stream: cholesky_ex
    returns before the work queued ahead of it is done, and the infos land on the stream."""
    torch = _torch()
    if torch is None:
        pytest.skip("needs PyTorch with a CUDA GPU")
    if torch.cuda.device_count() != 1:
        pytest.skip("one vendor call per matrix is chosen on a runtime with one GPU")
    n = DENSE_N
    a = spd(n, batch=(2,))
    a[1] = not_spd_at(a[1], n // 2)
    factor, info, returned = _cholesky_ex_behind_queued_work(torch, a, spd(n))
    assert returned < 0.05, f"cholesky_ex took {returned:.3f} s to return"
    assert np.array_equal(info.cpu().numpy(), [0, n // 2])
    assert backward_error(a[:1], factor[:1].cpu().numpy(), True) < tolerance(np.float64, n)


def test_cupy_stream_order():
    cupy = _cupy()
    if cupy is None:
        pytest.skip("needs CuPy with a CUDA GPU")
    a = spd(48, batch=(500,))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(a)
        factor, info = tessera.cholesky_ex(x)
        result = cupy.asnumpy(factor, stream=stream)
    stream.synchronize()
    assert backward_error(a, result, True) < tolerance(np.float64, 48)


def test_jax_arrays_come_back_as_jax_arrays(monkeypatch):
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave GPU memory to the others
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    import jax.numpy as jnp

    a = spd(40, batch=(3,))
    x = jnp.asarray(a)
    factor = tessera.cholesky(x)
    assert isinstance(factor, jax.Array)
    assert backward_error(a, np.asarray(factor), True) < tolerance(np.float64, 40)


def _jax_on_gpu(monkeypatch):
    """JAX with 64-bit types and its GPUs, the package's FFI target registered (skips where JAX
    sees no GPU)."""
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave GPU memory to the others
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("JAX sees no GPU")
    assert tessera._jax.ffi_ready(), "the package has no JAX FFI target (its module built without jaxlib's headers)"
    return jax, gpus


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_jax_gpu_programs_call_tessera_where_the_arrays_lie(monkeypatch, dtype, lower):
    """Under jax.jit on the GPU the calls are the FFI target on XLA's stream, no host callback in
    the program: a stack through the batched kernels and one matrix through the dense device API,
    either triangle (only it read: the other holds garbage), LAPACK's info per matrix, cholesky
    failing the program where a matrix is not positive definite, and cho_solve through both routes,
    of a factor from the same program."""
    jax, gpus = _jax_on_gpu(monkeypatch)
    complex_type = np.dtype(dtype).kind == "c"
    for n, batch in ((40, 300), (DENSE_N, 2)):
        assert tessera._takes_batched_kernels(n, batch, dtype) == (n == 40)
        a = hpd(n, dtype, (batch,)) if complex_type else spd(n, (batch,), dtype=dtype)
        other = np.tri(n, k=-1, dtype=bool)
        garbage = (a + np.where(other.T if lower else other, 1e3, 0)).astype(dtype)
        tol = tolerance(dtype, n)
        factor = jax.jit(lambda m: tessera.cholesky(m, lower=lower))
        x = jax.device_put(garbage, gpus[0])
        assert "callback" not in factor.lower(x).as_text()
        f = np.asarray(factor(x))
        assert f.dtype == dtype and backward_error(a, f, lower) < tol
        assert not np.any(f[..., other.T] if lower else f[..., other]), "the factor's other triangle is not zero"

        bad = np.concatenate([not_spd_at(garbage[:1], n // 2), not_spd_at(garbage[1:2], n), garbage[2:]])
        f, info = jax.jit(lambda m: tessera.cholesky_ex(m, lower=lower))(jax.device_put(bad, gpus[0]))
        assert np.asarray(info).tolist() == [n // 2, n] + [0] * (batch - 2)
        with pytest.raises(Exception, match="not positive definite"):
            factor(jax.device_put(bad, gpus[0])).block_until_ready()

        b = np.random.default_rng(3).standard_normal((batch, n, 2)).astype(dtype)
        solve = jax.jit(lambda m, y: tessera.cho_solve(tessera.cholesky(m, lower=lower), y, lower=lower))
        result = np.asarray(solve(x, jax.device_put(b, gpus[0])))
        residual = np.linalg.norm(a.astype(np.complex128) @ result - b, axis=(-2, -1))
        scale = np.linalg.norm(a.astype(np.complex128), axis=(-2, -1)) * np.linalg.norm(result, axis=(-2, -1))
        assert result.shape == b.shape and np.max(residual / scale) < tol
    f, info = jax.jit(tessera.cholesky_ex)(jax.device_put(np.zeros((3, 0, 0), dtype), gpus[0]))
    assert f.shape == (3, 0, 0) and np.asarray(info).tolist() == [0, 0, 0]


def test_jax_gpu_dense_calls_run_on_the_runtime_without_python(monkeypatch):
    """Once a runtime runs, the FFI target's dense GPU calls (one matrix, a stack, cho_solve of a
    stack the batched kernels do not take) run on it in the native handler, never through Python's
    run_target: on the default runtime, in a `with tessera.Runtime()` block (its mode theirs) and
    again on the default one after the block, which the first call after it starts through
    Python."""
    jax, gpus = _jax_on_gpu(monkeypatch)
    through_python = []
    real_run_target = tessera._jax.run_target

    def run_target(target, *arguments):
        through_python.append(target)
        return real_run_target(target, *arguments)

    monkeypatch.setattr(tessera._jax, "run_target", run_target)
    n = 301
    a = hpd(n, np.complex128, (2,))
    b = np.random.default_rng(5).standard_normal((2, n, 3)).astype(np.complex128)
    assert not tessera._takes_batched_kernels(n, 1, np.complex128)
    assert not tessera._takes_batched_kernels(n, 2, np.complex128)
    one = jax.jit(lambda m: tessera.cholesky(m, lower=False))
    stack = jax.jit(tessera.cholesky_ex)
    solve = jax.jit(lambda m, y: tessera.cho_solve(tessera.cholesky(m), y, lower=True))
    x, y = jax.device_put(a, gpus[0]), jax.device_put(b, gpus[0])
    bad = jax.device_put(not_spd_at(a, n // 3), gpus[0])

    def check_calls():
        assert backward_error(a[0], np.asarray(one(x[0])), False) < tolerance(np.complex128, n)
        f, info = stack(bad)
        assert np.asarray(info).tolist() == [n // 3, n // 3]
        assert backward_error(a[1], np.asarray(stack(x)[0])[1], True) < tolerance(np.complex128, n)
        result = np.asarray(solve(x, y))
        assert np.max(np.abs(a @ result - b)) < 1e-8 * np.max(np.abs(a)) * np.max(np.abs(result)) * n
        with pytest.raises(Exception, match="not positive definite"):
            one(bad[0]).block_until_ready()

    check_calls()  # starts the default runtime where none runs yet
    through_python.clear()
    check_calls()
    assert through_python == [], "dense GPU calls went through Python with a runtime running"
    with tessera.Runtime(mode="gpu"):
        check_calls()
        assert through_python == [], "dense GPU calls went through Python inside a tessera.Runtime block"
    check_calls()
    assert through_python == ["cholesky"], "the first call after the block did not start the default runtime"


def test_dense_gpu_calls_run_on_the_published_runtime_without_runtime_call(kind, monkeypatch):
    """Once a runtime runs, cholesky and cholesky_ex of a GPU matrix (and of a short stack) that the
    dense device API takes run on it through the native entries, never taking a runtime_call() in
    Python: on the default runtime and inside a tessera.Runtime block; a policy asked for still
    takes runtime_call(), which starts the runtime of that policy. Factors and infos as before."""
    taken = []
    real_runtime_call = tessera.runtime_call

    def runtime_call(policy=None, mode=None):
        taken.append(policy)
        return real_runtime_call(policy, mode)

    monkeypatch.setattr(tessera, "runtime_call", runtime_call)
    n = 129
    assert not tessera._takes_batched_kernels(n, 1) and not tessera._takes_batched_kernels(300, 2)
    a, stack = spd(n, seed=3), spd(300, batch=(2,), seed=4)
    bad = not_spd_at(a, 40)

    def check_calls():
        x = kind.put(a)
        assert backward_error(a, kind.get(tessera.cholesky(x)), True) < tolerance(np.float64, n)
        f, info = tessera.cholesky_ex(x, lower=False)
        assert backward_error(a, kind.get(f), False) < tolerance(np.float64, n) and int(kind.get(info)) == 0
        assert int(kind.get(tessera.cholesky_ex(kind.put(bad))[1])) == 40
        with pytest.raises(tessera.NotPositiveDefiniteError) as error:
            tessera.cholesky(kind.put(bad))
        assert error.value.column == 40
        f, info = tessera.cholesky_ex(kind.put(stack))
        assert kind.get(info).tolist() == [0, 0]
        assert backward_error(stack[1], kind.get(f)[1], True) < tolerance(np.float64, 300)

    tessera.cholesky(kind.put(a))  # the default runtime runs from here on
    taken.clear()
    check_calls()
    assert taken == [], "dense GPU calls took runtime_call() with a runtime running"
    with tessera.Runtime(mode="gpu"):
        check_calls()
        assert taken == [], "dense GPU calls took runtime_call() inside a tessera.Runtime block"
    tessera.cholesky(kind.put(a))  # starts the default runtime again, through runtime_call()
    taken.clear()
    assert backward_error(a, kind.get(tessera.cholesky(kind.put(a), policy="eager")), True) < tolerance(np.float64, n)
    assert taken == ["eager"]


def test_a_fresh_machine_keeps_the_callers_gpu_memory(tmp_path):
    """With an empty perf-model directory the runtime's first start calibrates the bus; that must
    leave the CUDA context and memory of the program that called it (here PyTorch's) intact."""
    if _torch() is None:
        pytest.skip("needs PyTorch with a CUDA GPU")
    script = """
import numpy as np, torch, tessera
before = torch.arange(4096, dtype=torch.float64, device="cuda")
g = np.random.default_rng(0).standard_normal((1100, 1100))
a = torch.from_numpy(g @ g.T / 1100 + np.eye(1100)).cuda()
factor = tessera.cholesky(a)  # the first dense call starts the runtime
assert torch.equal(before, torch.arange(4096, dtype=torch.float64, device="cuda")), "memory lost"
assert torch.allclose(factor @ factor.mT, a), "wrong factor"
print("ok")
"""
    env = dict(os.environ, STARPU_PERF_MODEL_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
    assert (tmp_path / "bus").is_dir(), "the bus was not calibrated: the test did not start from a fresh state"


@pytest.mark.parametrize("n", [8, 40, 1100])
def test_solves_broadcast_and_read_the_triangle_off_the_factor(kind, n):
    """cho_solve on GPU arrays: numpy.linalg.solve's shapes (one b against a stack of factors,
    one vector against a stack) and the triangle read off the factor's zeros, as on the host."""
    batch = (2,) if n > 100 else (3,)
    a = spd(n, batch=batch)
    b = np.random.default_rng(9).standard_normal((n, 2))
    for lower in (True, False):
        c = tessera.cholesky(kind.put(a), lower=lower)
        x = kind.get(tessera.cho_solve(c, kind.put(b)))
        assert x.shape == batch + (n, 2) and np.allclose(a @ x, b, atol=1e-8)
        v = kind.get(tessera.cho_solve(c, kind.put(b[:, 0])))
        assert v.shape == batch + (n,) and np.allclose(v, x[..., 0], atol=1e-8)
    with pytest.raises(ValueError, match="lower="):
        tessera.cho_solve(kind.put(a), kind.put(b))


def test_a_child_forked_after_cuda_runs_on_cpus_and_refuses_the_gpu():
    """CUDA does not survive fork: a fork-based pool's children of a process that used the GPU
    compute host arrays on CPU workers, and gpu mode or GPU arrays raise an error naming the fix."""
    if _torch() is None:
        pytest.skip("needs PyTorch with a CUDA GPU")
    script = """
import multiprocessing, numpy as np, torch, tessera

def child(_):
    g = np.random.default_rng(1).standard_normal((60, 60))
    a = g @ g.T / 60 + np.eye(60)
    assert np.allclose(tessera.cholesky(a), np.linalg.cholesky(a))
    messages = []
    # x: the parent's GPU array, copied here by fork (no CUDA call can make one here).
    for attempt in (lambda: tessera.cholesky(a, mode="gpu"), lambda: tessera.cholesky(x)):
        try:
            attempt()
            messages.append("accepted")
        except tessera.RuntimeStartError as e:
            messages.append(str(e))
    return messages

if __name__ == "__main__":
    x = torch.eye(64, dtype=torch.float64, device="cuda") * 4
    assert torch.allclose(tessera.cholesky(x), x / 2)
    assert np.allclose(tessera.cholesky(np.eye(1100) * 4), 2 * np.eye(1100))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        messages = pool.map(child, [0])[0]
    assert all('multiprocessing.get_context("spawn")' in m for m in messages), messages
    assert torch.allclose(tessera.cholesky(x), x / 2)
    print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, STARPU_SILENT="1"))
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_torch_autograd_on_the_gpu():
    """Gradients of GPU tensors: tessera factors and solves on the GPU, torch differentiates."""
    torch = _torch()
    if torch is None:
        pytest.skip("no CUDA device for PyTorch")
    gen = torch.Generator(device="cuda").manual_seed(5)
    for dtype in (torch.float64, torch.complex128):
        for n, batch in ((7, ()), (40, (3,)), (100, ())):
            g = torch.randn(batch + (n, n), dtype=dtype, device="cuda", generator=gen)
            a = (g @ g.mH + n * torch.eye(n, dtype=dtype, device="cuda")).requires_grad_()
            lower = n != 40
            assert torch.autograd.gradcheck(lambda x: tessera.cholesky(x, lower=lower), (a,), fast_mode=n == 100)
            c = tessera.cholesky(a.detach(), lower=lower).requires_grad_()
            b = torch.randn(batch + (n, 2), dtype=dtype, device="cuda", generator=gen, requires_grad=True)
            assert torch.autograd.gradcheck(lambda f, x: tessera.cho_solve(f, x, lower=lower), (c, b),
                                            fast_mode=n == 100)


@pytest.mark.parametrize("n, batch", [(1, ()), (16, (50,)), (100, (3,)), (600, ())])
def test_logdet_and_inverse_on_the_gpu(kind, n, batch):
    """logdet, logdet_ex, cholesky_inverse and inv of GPU arrays: on their GPU, as numpy's."""
    a = spd(n, batch)
    d = kind.put(a)
    expected_logdet = np.linalg.slogdet(a)[1]
    assert np.allclose(kind.get(tessera.logdet(d)), expected_logdet, rtol=1e-10, atol=1e-10)
    bad = not_spd_at(a, max(1, n // 2))
    value, info = tessera.logdet_ex(kind.put(bad))
    assert np.all(kind.get(info) == max(1, n // 2)) and np.all(kind.get(value) == 0)
    inverse = np.linalg.inv(a)
    assert np.allclose(kind.get(tessera.inv(d)), inverse, atol=1e-9 * np.abs(inverse).max())
    c = tessera.cholesky(d, lower=False)
    assert np.allclose(kind.get(tessera.cholesky_inverse(c, lower=False)), inverse,
                       atol=1e-9 * np.abs(inverse).max())


def test_the_library_routes_gpu_inverses():
    """The inverse's route is the library's plan (no GPU needed to ask): the batched inverse kernel
    for small orders (lower for one matrix and for short stacks), the dense inverse for one larger
    matrix of any order, cho_solve(c, I) for larger stacks."""
    assert tessera._inverse_route(8, 1) == "kernel" and tessera._inverse_route(100, 10000) == "kernel"
    assert tessera._inverse_route(200, 1) == "dense" and tessera._inverse_route(200, 8) == "kernel"
    assert tessera._inverse_route(20000, 1) == "dense" and tessera._inverse_route(4096, 8) == "solve"
    # Short stacks leave the kernel sooner than long ones, complex ones sooner than real ones.
    assert tessera._inverse_route(256, 8) == "solve" and tessera._inverse_route(256, 4096) == "kernel"
    assert tessera._inverse_route(192, 8, np.complex128) == "solve" and tessera._inverse_route(192, 8) == "kernel"
    # One complex factor leaves the kernel sooner than one real factor.
    assert tessera._inverse_route(112, 1, np.float64) == "kernel"
    assert tessera._inverse_route(112, 1, np.complex128) == "dense"
    assert tessera._inverse_route(112, 1, np.complex64) == "dense"
    assert tessera._inverse_route(112, 2, np.complex128) == "kernel"


@pytest.mark.parametrize("route", ["kernel", "dense", "solve"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("n, batch", [(1, (3,)), (7, ()), (33, (5,)), (130, (2,)), (40, (300,)), (1, ()), (130, ()),
                                      (1, (1,)), (257, ())])
def test_inverse_routes_match_numpy_in_every_layout(kind, monkeypatch, route, dtype, n, batch):
    """cholesky_inverse of GPU factors through the batched inverse kernel, the dense inverse (one
    matrix) and cho_solve: lower and upper factors, C-ordered, Fortran-ordered (as cholesky returns
    lower factors), broadcast, each the whole Hermitian inverse of the input's kind, dtype and
    shape, the factor unchanged. Order 130 runs the kernel from device memory for complex double;
    one matrix of order 257 the dense inverse's triangle by levels."""
    if route == "dense" and batch not in ((), (1,)):
        pytest.skip("the dense inverse takes one matrix")
    monkeypatch.setattr(tessera, "_inverse_route", lambda *_: route)
    complex_type = np.dtype(dtype).kind == "c"
    a = hpd(n, dtype, batch, seed=n + len(batch)) if complex_type else spd(n, batch, dtype, seed=len(batch))
    expected = np.linalg.inv(a.astype(np.complex128 if complex_type else np.float64))
    scale = (1e-11 if dtype in (np.float64, np.complex128) else 2e-3) * max(n, 10) * np.abs(expected).max()
    for lower in (True, False):
        lower_factor = np.linalg.cholesky(a.astype(expected.dtype))
        factor = (lower_factor if lower else np.conjugate(np.swapaxes(lower_factor, -1, -2))).astype(dtype)
        fortran = kind.swap(kind.put(np.ascontiguousarray(np.swapaxes(factor, -1, -2))))
        for c in (kind.put(factor), fortran):
            before = kind.get(c).copy()
            x = tessera.cholesky_inverse(c, lower=lower)
            got = kind.get(x)
            assert got.shape == a.shape and got.dtype == dtype
            assert np.abs(got - expected).max() <= scale, (lower, n, batch)
            assert np.array_equal(kind.get(c), before)
    if batch:
        one = kind.put(np.linalg.cholesky(a[0].astype(expected.dtype)).astype(dtype))
        got = kind.get(tessera.cholesky_inverse(kind.broadcast(one, batch + (n, n)), lower=True))
        assert np.abs(got - expected[0]).max() <= scale


def test_dense_inverse_gives_nan_for_a_singular_factor(kind):
    """One factor with a zero on its diagonal through the dense inverse: NaN, no exception."""
    a = spd(200, ())
    factor = np.linalg.cholesky(a)
    assert tessera._inverse_route(200, 1) == "dense"
    factor[77, 77] = 0
    assert np.isnan(kind.get(tessera.cholesky_inverse(kind.put(factor), lower=True))).all()


def test_inverse_kernel_gives_nan_for_a_singular_factor(kind, monkeypatch):
    """A factor with a zero on its diagonal: its inverse is NaN (no synchronisation to raise), the
    other matrices of the stack are inverted."""
    monkeypatch.setattr(tessera, "_inverse_route", lambda *_: "kernel")
    a = spd(12, (4,))
    factor = np.linalg.cholesky(a)
    factor[2, 5, 5] = 0
    got = kind.get(tessera.cholesky_inverse(kind.put(factor), lower=True))
    assert np.isnan(got[2]).all()
    others = [0, 1, 3]
    assert np.allclose(got[others], np.linalg.inv(a[others]), atol=1e-10 * np.abs(got[others]).max())


def test_torch_autograd_of_logdet_and_inverse_on_the_gpu():
    torch = _torch()
    if torch is None:
        pytest.skip("no CUDA device for PyTorch")
    gen = torch.Generator(device="cuda").manual_seed(6)
    for dtype in (torch.float64, torch.complex128):
        g = torch.randn(2, 9, 9, dtype=dtype, device="cuda", generator=gen)
        a = (g @ g.mH + 9 * torch.eye(9, dtype=dtype, device="cuda")).requires_grad_()
        assert torch.autograd.gradcheck(lambda x: tessera.logdet(x), (a,))
        assert torch.autograd.gradcheck(lambda x: tessera.inv(x), (a,))


# ---- complex Hermitian matrices on the GPU ---------------------------------------------------


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, batch", [(1, ()), (33, (3,)), (16, (400,)), (70, (2, 150)), (130, (400,)), (300, ()),
                                      (DENSE_N, ())])
def test_complex_factor_solve_inverse_logdet_match_numpy(kind, n, batch, lower, dtype):
    a = hpd(n, dtype, batch, seed=n)
    scale = (1e-12 if dtype == np.complex128 else 2e-4) * max(n, 10)
    factor, info = tessera.cholesky_ex(kind.put(a), lower=lower)
    f, i = kind.get(factor), kind.get(info)
    assert f.shape == a.shape and f.dtype == dtype and not i.any()
    reference = np.linalg.cholesky(a.astype(np.complex128))
    expected = reference if lower else np.conjugate(np.swapaxes(reference, -1, -2))
    assert np.abs(f - expected).max() <= scale * np.abs(expected).max()
    b = np.ones(batch + (n, 2), dtype=dtype) * (1 + 2j)
    x = kind.get(tessera.cho_solve(factor, kind.put(b), lower=lower))
    assert x.dtype == dtype
    assert np.abs(a @ x - b).max() <= scale * np.abs(a).max() * np.abs(x).max() * n
    inverse = kind.get(tessera.cholesky_inverse(factor, lower=lower))
    assert np.abs(inverse @ a - np.eye(n)).max() <= scale * n * 10
    logdet = kind.get(tessera.logdet(kind.put(a), lower=lower))
    assert np.allclose(logdet, np.linalg.slogdet(a.astype(np.complex128))[1], rtol=scale, atol=scale)


def test_complex_not_positive_definite_on_the_gpu(kind):
    a = hpd(90, np.complex128, (2,), seed=3)
    a[1, 70, 70] = -1
    _, info = tessera.cholesky_ex(kind.put(a))
    assert list(kind.get(info)) == [0, 71]
    # A long stack of small matrices (the batched kernels): only the broken one fails.
    stack = hpd(20, np.complex64, (300,), seed=4)
    stack[7, 10, 10] = -1
    for lower in (True, False):
        _, info = tessera.cholesky_ex(kind.put(stack), lower=lower)
        info = kind.get(info)
        assert info[7] == 11 and np.count_nonzero(info) == 1
    # A long stack of larger ones (the batched kernels in blocks of columns): failures in the first
    # block and the last.
    stack = hpd(130, np.complex128, (400,), seed=5)
    assert not tessera._takes_batched_kernels(130, 400, np.complex128)
    stack[3, 2, 2] = -1
    stack[398, 129, 129] = 0
    for lower in (True, False):
        _, info = tessera.cholesky_ex(kind.put(stack), lower=lower)
        info = kind.get(info)
        assert info[3] == 3 and info[398] == 130 and np.count_nonzero(info) == 2


def test_torch_conjugate_views_are_read_as_their_values():
    """x.conj() of a complex tensor is lazy (the memory holds x): the package reads the conjugate,
    on the GPU (the batched kernels and the dense path) and on the host."""
    torch = _torch()
    if torch is None:
        pytest.skip("no CUDA GPU with PyTorch")
    for n, batch in ((20, (300,)), (300, ())):
        a = hpd(n, np.complex128, batch, seed=n)
        expected = np.linalg.cholesky(np.conjugate(a))
        for x in (torch.from_numpy(a).cuda().conj(), torch.from_numpy(a).conj()):
            assert x.is_conj()
            factor = tessera.cholesky(x)
            assert factor.device == x.device
            assert np.abs(factor.cpu().numpy() - expected).max() <= 1e-12 * n * np.abs(expected).max()
            b = torch.from_numpy(np.full(batch + (n, 1), 1 + 2j)).to(x.device).conj()
            solution = tessera.cho_solve(factor, b, lower=True).cpu().numpy()
            assert np.abs(np.conjugate(a) @ solution - np.full(batch + (n, 1), 1 - 2j)).max() <= 1e-9


@pytest.mark.parametrize("tensor_cores", [None, "tf32", "bf16", "fp16"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, k", [(1, 1), (65, None), (300, 3), (2100, 2)])
def test_refined_solve_in_gpu_memory(kind, n, k, lower, tensor_cores):
    a = spd(n)
    b = np.random.default_rng(n).standard_normal(n if k is None else (n, k))
    da, db = kind.put(a), kind.put(b)
    x, iterations = tessera.posv_refined(da, db, lower=lower, tensor_cores=tensor_cores)
    x = kind.get(x)
    assert x.shape == b.shape and x.dtype == np.float64
    assert 0 <= iterations <= 10
    assert np.array_equal(kind.get(da), a) and np.array_equal(kind.get(db), b)
    residual = np.abs(a @ x - b).max()
    assert residual <= 64 * n * np.finfo(np.float64).eps * (np.abs(a).sum(1).max() * np.abs(x).max())


def test_refined_solve_that_diverges_falls_back_accurately(kind):
    # A BF16 factor of this matrix (order 4096, condition 1e4) sends the refinement to NaN on an
    # H200, which LAPACK's convergence test lets through as converged: the solve must fall back to
    # FP64 instead (host arrays and GPU memory), or converge; either way x is accurate.
    n = 4096
    q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((n, n)))
    a = (q * np.geomspace(1, 1e-4, n)) @ q.T
    a = (a + a.T) / 2
    b = np.random.default_rng(6).standard_normal((n, 1))
    bound = 30 * n * np.finfo(np.float64).eps * (np.abs(a).sum(1).max())
    for on_gpu in (False, True):
        x, iterations = tessera.posv_refined(kind.put(a) if on_gpu else a, kind.put(b) if on_gpu else b,
                                             tensor_cores="bf16")
        x = kind.get(x) if on_gpu else x
        assert np.isfinite(x).all(), (on_gpu, iterations)
        assert np.abs(a @ x - b).max() <= bound * np.abs(x).max() + 30 * n * np.finfo(np.float64).eps, (on_gpu, iterations)


def test_refined_solve_in_gpu_memory_reports_lapacks_info(kind):
    a = not_spd_at(spd(40), 17)
    with pytest.raises(tessera.NotPositiveDefiniteError) as raised:
        tessera.posv_refined(kind.put(a), kind.put(np.ones(40)), tensor_cores="tf32")
    assert raised.value.column == 17
    hilbert = 1.0 / (np.arange(10)[:, None] + np.arange(10)[None, :] + 1)
    x, iterations = tessera.posv_refined(kind.put(hilbert), kind.put(np.ones(10)))
    assert iterations in (-3, -31)
    assert np.abs(hilbert @ kind.get(x) - 1).max() < 1e-6
    with pytest.raises(ValueError, match="tensor_cores"):
        tessera.posv_refined(kind.put(a.astype(np.complex128)), kind.put(np.ones(40, np.complex128)),
                             tensor_cores="tf32")
    with pytest.raises(TypeError):
        tessera.posv_refined(kind.put(a), np.ones(40))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n, k", [(1, 1), (65, None), (300, 3), (1031, 2)])
def test_complex_refined_solve_in_gpu_memory(kind, n, k, lower):
    """ZCPOSV in GPU memory: a Hermitian a (only its triangle read: the other holds garbage, and so
    do the imaginary parts of its diagonal) refined to a double-precision solution, a and b
    unchanged; a real b against a complex a; not positive definite and too ill-conditioned."""
    a = hpd(n, np.complex128)
    rng = np.random.default_rng(n)
    b = rng.standard_normal(n if k is None else (n, k)) + 1j * rng.standard_normal(n if k is None else (n, k))
    other = np.tri(n, k=-1, dtype=bool)
    stored = a + np.where(other.T if lower else other, 1e3 + 7j, 0) + np.diag(np.full(n, 5j))
    da, db = kind.put(stored), kind.put(b)
    x, iterations = tessera.posv_refined(da, db, lower=lower)
    x = kind.get(x)
    assert x.shape == b.shape and x.dtype == np.complex128
    assert 0 <= iterations <= 10
    assert np.array_equal(kind.get(da), stored) and np.array_equal(kind.get(db), b)
    bound = 64 * n * np.finfo(np.float64).eps * np.abs(a).sum(1).max()
    assert np.abs(a @ x - b).max() <= bound * np.abs(x).max()
    x, _ = tessera.posv_refined(kind.put(a), kind.put(b.real), lower=lower)
    assert np.abs(a @ kind.get(x) - b.real).max() <= bound * np.abs(kind.get(x)).max()
    if n > 2:
        with pytest.raises(tessera.NotPositiveDefiniteError) as raised:
            tessera.posv_refined(kind.put(not_spd_at(a, n // 2)), db, lower=lower)
        assert raised.value.column == n // 2
    hilbert = (1.0 / (np.arange(10)[:, None] + np.arange(10)[None, :] + 1)).astype(np.complex128)
    x, iterations = tessera.posv_refined(kind.put(hilbert), kind.put(np.ones(10, np.complex128)), lower=lower)
    assert iterations in (-3, -31)
    assert np.abs(hilbert @ kind.get(x) - 1).max() < 1e-6


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gmres_refinement_in_gpu_memory(kind, dtype):
    """refinement="gmres" on one GPU matrix (condition 3e8, beyond LAPACK's steps from an FP32
    factor): GMRES-IR converges from that factor, a and b unchanged; GPU stacks refuse it."""
    n = 300
    rng = np.random.default_rng(8)
    g = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if dtype == np.complex128 else 0)
    q, _ = np.linalg.qr(g)
    a = (q * np.geomspace(1, 1 / 3e8, n)) @ q.conj().T
    a = ((a + a.conj().T) / 2).astype(dtype)
    b = rng.standard_normal((n, 2)).astype(dtype)
    da, db = kind.put(a), kind.put(b)
    _, lapack_iterations = tessera.posv_refined(da, db)
    x, iterations = tessera.posv_refined(da, db, refinement="gmres")
    if iterations == -3:  # the FP32 factorization failed: both solves are FP64's
        assert lapack_iterations == -3
    else:
        assert 1 <= iterations <= 30
        assert lapack_iterations == -31 or lapack_iterations >= iterations
    assert np.array_equal(kind.get(da), a) and np.array_equal(kind.get(db), b)
    x = kind.get(x)
    scale = np.abs(a).sum(1).max() * np.abs(x).max(0) + np.abs(b).max(0)
    assert (np.abs(a @ x - b).max(0) / scale).max() <= 30 * n * np.finfo(np.float64).eps
    with pytest.raises(ValueError, match="refinement"):
        tessera.posv_refined(kind.put(np.stack([a, a])), kind.put(np.stack([b, b])), refinement="gmres")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 33, 200])
def test_refined_solve_of_gpu_stacks(kind, n, lower, dtype):
    """Stacks in GPU memory (device::posv_refined_batched): each matrix solved to double
    precision's accuracy, as the host stack is, broadcast as cho_solve's, a and b unchanged; one
    matrix that falls back (a right-hand side beyond single precision's range) and one that is not
    positive definite report their own ITER and INFO. On a GPU whose plan solves in double
    precision at once, every ITER is -1."""
    batch = (2, 3)
    a = hpd(n, dtype, batch, seed=n) if dtype == np.complex128 else spd(n, batch, seed=n)
    rng = np.random.default_rng(n)
    b = rng.standard_normal(batch + (n, 2)).astype(dtype)
    da, db = kind.put(a), kind.put(b)
    x, iterations = tessera.posv_refined(da, db, lower=lower)
    x = kind.get(x)
    assert x.shape == b.shape and x.dtype == dtype
    refines = bool((iterations >= 0).all())
    assert iterations.shape == batch and (iterations <= 10).all() and (refines or (iterations == -1).all())
    assert np.array_equal(kind.get(da), a) and np.array_equal(kind.get(db), b)
    bound = 64 * n * np.finfo(np.float64).eps * np.abs(a).sum(-1).max()
    assert np.abs(a @ x - b).max() <= bound * np.abs(x).max()
    host_x, host_iterations = tessera.posv_refined(a, b, lower=lower)
    assert np.abs(x - host_x).max() <= 1e-10 * np.abs(host_x).max()
    x, iterations = tessera.posv_refined(da, kind.put(np.ones(n, dtype)), lower=lower)
    assert kind.get(x).shape == batch + (n,)
    large = b.copy()
    large[1, 2] *= 1e40
    x, iterations = tessera.posv_refined(da, kind.put(large), lower=lower)
    if refines:
        assert iterations[1, 2] == -2 and (np.delete(iterations.ravel(), 5) >= 0).all()
    else:
        assert (iterations == -1).all()
    assert np.abs(a @ kind.get(x) - large).max() <= bound * np.abs(kind.get(x)).max()
    if n > 2:
        bad = a.copy()
        bad[0, 1] = not_spd_at(a[0, 1], n // 2)
        with pytest.raises(tessera.NotPositiveDefiniteError) as raised:
            tessera.posv_refined(kind.put(bad), db, lower=lower)
        assert raised.value.column.shape == batch and raised.value.column[0, 1] == n // 2
        assert (np.delete(raised.value.column.ravel(), 1) == 0).all()
    with pytest.raises(ValueError, match="tensor_cores"):
        tessera.posv_refined(da, db, tensor_cores="tf32")


# ---- adaptive precision on the GPU -----------------------------------------------------------


def _covariance(n, scale=0.01):
    """exp(-|i - j| / (scale n)) + 1e-2 on the diagonal: far tiles nearly zero."""
    d = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    return np.exp(-d / (scale * n)) + 1e-2 * np.eye(n)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transposed", [False, True])
def test_adaptive_precision_of_a_gpu_matrix(kind, lower, transposed, monkeypatch):
    """cholesky_adaptive of a GPU matrix: factored where it lies, its factor on the same device and
    of the same kind, the backward error within the accuracy, reduced tiles, the input unchanged."""
    monkeypatch.setenv("TESSERA_NB", "512")  # several tiles a side
    n = 3001
    a = _covariance(n)
    x = kind.swap(kind.put(a)) if transposed else kind.put(a)  # the same symmetric matrix, by columns
    for accuracy in (1e-5, 1e-9):
        factor, tiles = tessera.cholesky_adaptive(x, accuracy, lower=lower)
        f = kind.get(factor)
        assert not (np.triu(f, 1) if lower else np.tril(f, -1)).any()
        assert tiles["fp16"] + tiles["fp32"] > 0 and sum(tiles.values()) == 6 * 5 // 2, tiles
        assert 0 < backward_error(a, f, lower) < 4 * accuracy
    np.testing.assert_array_equal(kind.get(x), a)
    expected = np.linalg.slogdet(a)[1]
    assert abs(float(tessera.logdet(x, lower=lower, accuracy=1e-9)) - expected) <= 1e-9 * n * abs(expected)


def test_adaptive_precision_of_a_gpu_matrix_reports_info_and_refuses(kind):
    a = not_spd_at(_covariance(1500), 701)
    with pytest.raises(tessera.NotPositiveDefiniteError) as raised:
        tessera.cholesky_adaptive(kind.put(a), 1e-8)
    assert raised.value.column == 701
    good = _covariance(300)
    with pytest.raises(TypeError):
        tessera.cholesky_adaptive(kind.put(good.astype(np.float32)), 1e-4)
    with pytest.raises(TypeError):
        tessera.cholesky_adaptive(kind.put(np.stack([good, good])), 1e-4)
    with pytest.raises(ValueError):
        tessera.cholesky_adaptive(kind.put(good), 2.0)
