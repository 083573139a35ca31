"""Tessera: Cholesky factorizations and SPD solves of numpy, CuPy, PyTorch and JAX arrays.

    import tessera
    L = tessera.cholesky(a)             # a: (n, n) or a stack (..., n, n)
    x = tessera.cho_solve(L, b)         # b: (n,) or (..., n, k); L's triangle is read off its zeros
    L, info = tessera.cholesky_ex(a)    # never raises for a matrix that is not SPD

Host (numpy) arrays run through Tessera's task runtime in the mode asked for; GPU arrays stay on
their GPU, and results come back as the same kind of array, ordered on the library's current
stream. See the package's README section in Tessera's README.md.
"""
import functools
import math

import numpy as np

from . import _blas_kernel

from . import _cuda_libraries
_cuda_libraries.preload()  # the CUDA libraries the native module links, from NVIDIA's pip packages
with _blas_kernel.loading_with_this_cpus_kernel() as _kernel_asked_for:
    from . import _core
from . import _jax, _progress, scipy
from ._arrays import NumPyArrays, classify, float_dtype, host_result, loaded_torch_adapter, square_shape
from ._runtime import Runtime, check_gpu_usable, check_mode, gpu_usable, requested_mode, runtime_call

__version__ = "0.2.0"
library_version = _core.library_version

TesseraError = _core.TesseraError
ResourceError = _core.ResourceError
CudaError = _core.CudaError
RuntimeStartError = _core.RuntimeStartError  # the runtime cannot start or serve calls in this process

__all__ = ["cholesky", "cholesky_ex", "cholesky_adaptive", "cho_solve", "posv", "posv_refined", "logdet", "logdet_ex",
           "cholesky_inverse", "inv", "scipy",
           "blas_info", "Runtime", "NotPositiveDefiniteError", "TesseraError", "ResourceError", "CudaError",
           "RuntimeStartError", "__version__"]


def blas_info():
    """The BLAS of Tessera's CPU work: ``library`` (OpenBLAS's configuration line, empty for another
    BLAS), ``kernel`` (the CPU kernel OpenBLAS runs), ``kernel_asked_for`` (the kernel the package
    loaded OpenBLAS with, from this CPU's vector units; None when the user's OPENBLAS_CORETYPE or
    the CPU decided) and ``faster_kernel`` (a kernel this CPU runs faster, when OpenBLAS runs one
    without AVX2: OpenBLAS was loaded before Tessera, by something else in the process)."""
    info = _core.blas_info()
    return {"library": info["library"], "kernel": info["kernel"], "kernel_asked_for": _kernel_asked_for,
            "faster_kernel": info["faster_kernel"] or None}


def _takes_batched_kernels(n, batch, dtype=np.float64):
    """Whether a stack of `batch` GPU matrices of order n and type dtype goes through the batched
    kernels in one launch, rather than through the dense device API one matrix at a time: the
    library's plan decides (tessera::device::stack_takes_batched_kernels: small matrices, unless
    the stack is too short to fill the GPU)."""
    return _STACK_TAKES_BATCHED_KERNELS[np.dtype(dtype)](n, batch)


class NotPositiveDefiniteError(np.linalg.LinAlgError):
    """A matrix is not positive definite. ``column`` is LAPACK's info: the 1-based order of the first
    leading minor that is not positive definite; for a stack, an array of one info per matrix
    (0 for those that were factored)."""

    def __init__(self, column):
        self.column = column
        if np.ndim(column) == 0:
            message = f"the matrix is not positive definite (leading minor of order {int(column)})"
        else:
            failed = np.flatnonzero(np.asarray(column))
            message = (f"{failed.size} of {np.size(column)} matrices are not positive definite "
                       f"(the first: matrix {failed[0]}, leading minor of order {np.asarray(column).flat[failed[0]]})")
        super().__init__(message)

    def __reduce__(self):
        # Rebuilt from its column, as a multiprocessing worker hands it to its parent.
        return type(self), (self.column,)


def _torch_needs_grad(*arrays):
    """Whether any of the arrays is a PyTorch tensor that autograd follows (tessera._autograd)."""
    for x in arrays:
        if type(x).__module__.partition(".")[0] == "torch" and getattr(x, "requires_grad", False):
            import torch

            return torch.is_grad_enabled()
    return False


def _triangle(lower, upper):
    """Whether the lower triangle is meant: lower= as Tessera and SciPy say it, or upper= as numpy
    does (np.linalg.cholesky(a, upper=True)); the lower one when neither is given."""
    if upper is None:
        return True if lower is None else bool(lower)
    if lower is not None and bool(lower) == bool(upper):
        raise ValueError(f"lower={lower!r} and upper={upper!r} ask for different triangles: give one of them")
    return not bool(upper)


def cholesky(a, *, lower=None, upper=None, mode=None, policy=None, progress=None, accuracy=None):
    """The Cholesky factor of a (or of each matrix of a stack (..., n, n)): L with a = L L^H
    (lower, the default) or U with a = U^H U (lower=False, or upper=True as numpy says it), zeros in
    the other triangle; for real a, L^H = L^T. Only that triangle of a is read (of a complex
    Hermitian a, not the imaginary parts of its diagonal); complex64 and complex128 arrays are
    factored on the host and on the GPU (there one matrix after the other). A numpy array whose
    matrices lie column by column (Fortran order) gets its factor in that order, others a C-ordered
    one. Raises NotPositiveDefiniteError. ``mode``:
    "auto", "gpu", "cpu" or "hybrid" (host arrays and large GPU matrices); ``policy``: a scheduling
    policy by name; ``progress`` (host arrays that run as tasks): None for a bar on stderr once the
    call has run a second and stderr is a terminal, True for a bar, False for none, or a callable
    taking the fraction done. ``accuracy`` (one float64 matrix, in host or GPU memory): the
    adaptive-precision factorization (cholesky_adaptive), a factor whose backward error is about
    that instead of FP64's."""
    lower = True if lower is None and upper is None else _triangle(lower, upper)
    if progress is not None:
        _progress.check(progress)
    if accuracy is not None:
        return _cholesky_adaptive(a, lower, mode, policy, progress, accuracy)[0]
    if type(a) is np.ndarray and policy is None:
        done = _factor_on_calling_thread(a, lower, mode)
        if done is not None:
            factor, info, failed = done
            if failed:
                raise NotPositiveDefiniteError(int(info) if info.ndim == 0 else info)
            return factor
    elif mode is None and policy is None:
        done = _factor_plain_torch_matrix(a, lower, wait=True)
        if done is not None:
            if done[1]:
                raise NotPositiveDefiniteError(done[1])
            return done[0]
    if _torch_needs_grad(a):
        from . import _autograd

        return _autograd.cholesky(a, lower, lambda t: cholesky(t, lower=lower, mode=mode, policy=policy))
    if _jax.is_traced(a):
        square_shape(a.shape)

        def on_host(x):
            return cholesky(x, lower=lower, mode=mode, policy=policy), np.zeros(x.shape[:-2], np.int32)

        return _jax.cholesky(a, float_dtype(a.dtype), lower, mode, policy, True, on_host)[0]
    factor, _, host_info = _factor(a, lower, mode, policy, read_info=True, progress=progress)
    if host_info is not None and host_info.any():
        raise NotPositiveDefiniteError(int(host_info) if host_info.ndim == 0 else host_info)
    return factor


def cholesky_ex(a, *, lower=None, upper=None, mode=None, policy=None, progress=None):
    """(factor, info) as cholesky, without raising for numerical failure: info (int32, shape
    a.shape[:-2], the same kind of array as a) is LAPACK's info per matrix. On a GPU array it
    never synchronises, neither through the batched kernels (small orders, _takes_batched_kernels) nor
    where each matrix is one vendor call (order up to 16384, one GPU, gpu or auto mode resolving
    to gpu: tessera::device::potrf_ex); the factor of a failed matrix is partial, as LAPACK leaves
    it."""
    lower = _triangle(lower, upper)
    if progress is not None:
        _progress.check(progress)
    if type(a) is not np.ndarray and mode is None and policy is None:
        done = _factor_plain_torch_matrix(a, lower, wait=False)
        if done is not None:
            return done
    if _jax.is_traced(a):
        square_shape(a.shape)
        return _jax.cholesky(a, float_dtype(a.dtype), lower, mode, policy, False,
                             lambda x: cholesky_ex(x, lower=lower, mode=mode, policy=policy))
    factor, info, _ = _factor(a, lower, mode, policy, read_info=False, progress=progress)
    return factor, info


def cho_solve(c, b, *, lower=None, mode=None, policy=None, progress=None):
    """x with A x = b, given the Cholesky factor c of A.

    c: a factor (n, n) or a stack (..., n, n), or the tuple (c, lower) that
    scipy.linalg.cho_factor returns (only that triangle of c is read, the other may hold anything).
    Which triangle holds the factor: ``lower`` where given (it always wins), else the tuple's flag,
    else read off c: a factor whose other strict triangle is all zero, as cholesky returns it, is
    that triangle's (an all-zero test over the whole stack; on a GPU array it waits for the
    device, which lower= avoids). A c with non-zeros in both strict triangles raises ValueError:
    say which with lower=.

    b: as numpy.linalg.solve takes it, a vector (n,) or matrices (..., n, k); the leading
    dimensions of c and b broadcast against each other, and x has their broadcast shape. A stack
    of vectors (..., n) with one dimension fewer than c, which cannot be read as matrices (its
    second last dimension is not n), is read as vectors, x then of that shape. ``progress`` as in
    cholesky."""
    if progress is not None:
        _progress.check(progress)
    c, lower = _factor_and_triangle(c, lower)
    if _jax.is_traced(c, b):
        import jax.numpy as jnp

        c, b = jnp.asarray(c), jnp.asarray(b)
        square_shape(c.shape)
        _, lead, vector = _rhs_layout(tuple(c.shape), tuple(b.shape))
        dtype = np.result_type(float_dtype(c.dtype), float_dtype(b.dtype))
        return _jax.cho_solve(c, b, dtype, lower, mode, policy, lead, vector,
                              lambda f, y: cho_solve(f, y, lower=lower, mode=mode, policy=policy))
    if _torch_needs_grad(c, b):
        from . import _autograd

        import torch

        c = torch.as_tensor(c)
        b = torch.as_tensor(b, device=c.device)
        if lower is None:
            where, arrays, native = classify(c.detach())
            lower = _infer_lower(NumPyArrays() if where == "host" else arrays.adapter, native)
        return _autograd.cho_solve(c, b, lower, lambda f, x: _solve(f, x, lower, mode, policy))
    return _solve(c, b, lower, mode, policy, progress)


def posv(a, b, *, lower=True, mode=None, policy=None, progress=None):
    """x with a x = b for symmetric positive definite a (only its triangle `lower` is read); b as
    in cho_solve. Raises NotPositiveDefiniteError."""
    factor = cholesky(a, lower=lower, mode=mode, policy=policy, progress=progress)
    return cho_solve(factor, b, lower=lower, mode=mode, policy=policy, progress=progress)


def posv_refined(a, b, *, lower=True, mode=None, policy=None, tensor_cores=None, refinement=None):
    """(x, iterations) with a x = b, as LAPACK's DSPOSV and ZCPOSV: a symmetric (Hermitian) positive
    definite a factored in single precision, x refined with residuals in double precision until it
    is as accurate as a double-precision solve; where that cannot work, a factored in double
    precision. ``iterations`` is LAPACK's ITER: >= 0 the refinement's steps; -2 narrowing to single
    precision overflowed, -3 the single-precision factorization failed, -31 no convergence in 30
    steps (x then comes from the double-precision factorization). a (n, n), b (n,) or (n, k); x in
    double precision (complex128 for complex input). Only the triangle ``lower`` of a is read; a
    and b are not written. Raises NotPositiveDefiniteError. Arrays may be stacks: a (..., n, n)
    and b as cho_solve takes it (broadcast against a), each matrix solved as one; x then has the
    broadcast shape and ``iterations`` is an int32 (numpy) array of the stack's shape (each matrix's
    ITER); GPU stacks the same, their single-precision factors and solves by the batched kernels (in
    FP32: no tensor_cores), except on a GPU whose single precision is not several times as fast as
    its double (such as an H100 or H200), where the refinement cannot be the faster: there every
    matrix is solved in double precision at once, iterations -1 (LAPACK's "machine-specific
    reasons").

    numpy arrays (and CPU tensors) are solved in host memory; CuPy arrays and PyTorch CUDA tensors
    in GPU memory, x then an array of the same kind on the same GPU.
    ``tensor_cores``: None or "off" factors in FP32; "tf32", "bf16" or "fp16" runs that
    factorization's products on the GPUs' tensor cores (operands rounded to that format, FP32
    accumulation; real matrices): faster for large n, a factor about as accurate as an FP16 one
    (BF16: 8x less), so a few more steps, and a matrix with a condition number beyond about 1e3 to
    1e4 (BF16: sooner) falls back to double precision (iterations -3). With tensor cores (and
    always on GPU arrays) a is scaled to a unit diagonal first, within FP16's range (largest value
    65504). ``refinement``: None or "lapack" for LAPACK's steps; "gmres" (not GPU stacks) continues
    where a classical step fails to halve the residual with GMRES-IR (corrections from GMRES
    preconditioned by the single-precision factor), which converges for matrices far more
    ill-conditioned than classical refinement takes, at O(n^2) per Krylov step: worth it where the
    double-precision factorization costs much more than those steps (large n)."""
    check_mode(mode)
    cores = "off" if tensor_cores is None else str(tensor_cores).lower()
    if cores not in ("off", "tf32", "bf16", "fp16"):
        raise ValueError(f"tensor_cores must be None, 'off', 'tf32', 'bf16' or 'fp16', not {tensor_cores!r}")
    steps = "lapack" if refinement is None else str(refinement).lower()
    if steps not in ("lapack", "gmres"):
        raise ValueError(f"refinement must be None, 'lapack' or 'gmres', not {refinement!r}")
    where, arrays, native_a = classify(a)
    where_b, _, native_b = classify(b)
    if where != where_b:
        raise TypeError("a and b must both be host arrays or both GPU arrays")
    if where != "host":
        return _posv_refined_device(arrays, native_a, native_b, lower, mode, policy, cores, steps)
    a, b = native_a, native_b
    n, _ = square_shape(a.shape)
    dtype = np.complex128 if np.result_type(a.dtype, b.dtype, np.float64).kind == "c" else np.float64
    return _posv_refined_host(a, b, n, dtype, lower, mode, policy, cores, steps)


def cholesky_adaptive(a, accuracy, *, lower=True, mode=None, policy=None, progress=None):
    """(factor, tiles) of one float64 symmetric positive definite matrix (a numpy array, a PyTorch
    tensor that needs no gradient, or a CuPy array), factored with adaptive precision: each tile's
    trailing updates in the lowest arithmetic its Frobenius norm allows for a factor whose backward
    error ||a - L L^T|| / ||a|| is about ``accuracy`` (FP16, FP32-class pieces or FP64, on the
    tensor cores in gpu and hybrid modes; the tiles stay stored in FP64). A GPU array is factored
    where it lies as the tile task graph (tessera::device::potrf_ex) and its factor comes back on
    its GPU; the call returns once it is done. ``tiles``: how many tiles below the diagonal took
    each arithmetic, {"fp16": .., "fp32": .., "fp64": ..}. Gains where tiles far from the diagonal
    are small (covariance matrices of spatial data ordered along space). Raises
    NotPositiveDefiniteError; ValueError for an accuracy outside (0, 1)."""
    if progress is not None:
        _progress.check(progress)
    return _cholesky_adaptive(a, bool(lower), mode, policy, progress, accuracy)


def _cholesky_adaptive(a, lower, mode, policy, progress, accuracy):
    if mode is not None:
        check_mode(mode)
    if _jax.is_traced(a) or _torch_needs_grad(a):
        raise TypeError("accuracy (adaptive precision) takes arrays, not JAX traces or tensors that need a gradient")
    where, arrays, native = classify(a)
    if where == "device":
        return _cholesky_adaptive_device(arrays, native, lower, mode, policy, accuracy)
    if native.ndim != 2 or native.dtype != np.float64:
        raise TypeError("accuracy (adaptive precision) takes one float64 matrix")
    n, _ = square_shape(native.shape)
    by_columns = _stored_by_columns(native)
    source = native.swapaxes(-1, -2) if by_columns else native
    f = NumPyArrays().stack(source, (1, n, n), np.float64, copy=True)
    info = np.zeros(1, dtype=np.int32)
    tiles = (0, 0, 0)
    if n > 0:
        with runtime_call(policy, mode) as call:
            call.set_progress(_progress.reporter(progress))
            tiles = call.potrf_adaptive_d(f, _stored_uplo(lower != by_columns), call.mode, float(accuracy), info)
    if info[0]:
        raise NotPositiveDefiniteError(int(info[0]))
    f = f.reshape(source.shape)
    factor = f.swapaxes(-1, -2) if by_columns else f
    return host_result(factor, arrays), dict(zip(("fp16", "fp32", "fp64"), (int(t) for t in tiles)))


def _cholesky_adaptive_device(arrays, a, lower, mode, policy, accuracy):
    """cholesky_adaptive of a GPU matrix, out of place as _factor_device does it for one matrix."""
    check_gpu_usable()
    ad = arrays.adapter
    if len(a.shape) != 2 or np.dtype(ad.dtype(a)) != np.float64:
        raise TypeError("accuracy (adaptive precision) takes one float64 matrix")
    square_shape(tuple(a.shape))
    factor, done = _factor_device_matrix(ad, a, lower, mode, policy, "potrf_adaptive_device_into_and_wait_d",
                                         float(accuracy))
    failed, tiles = (0, (0, 0, 0)) if done is None else (done[0], done[1:])
    if failed:
        raise NotPositiveDefiniteError(failed)
    factor = arrays.to_input_kind(factor) if arrays.to_input_kind else factor
    return factor, dict(zip(("fp16", "fp32", "fp64"), (int(t) for t in tiles)))


def _posv_refined_host(a, b, n, dtype, lower, mode, policy, cores, steps):
    """posv_refined on host arrays: one matrix, or each matrix of a stack (broadcast as cho_solve's)."""
    matrices, lead, vector = _rhs_layout(a.shape, b.shape)
    batch, k = math.prod(lead), matrices[-1]
    shape = lead + ((n,) if vector else (n, k))
    iterations = np.zeros(lead, np.int32)
    if batch > 0 and n > 0 and k > 0:
        # Each matrix and each block of right-hand sides column-major: C-ordered stacks of the
        # transposes; a's a copy always (the library may write a factor there), b's where need be.
        at = np.array(np.swapaxes(np.broadcast_to(a, lead + (n, n)), -1, -2), dtype=dtype, order="C")
        columns = np.broadcast_to(_reshaped(b, matrices), lead + (n, k))
        bt = np.ascontiguousarray(np.swapaxes(columns, -1, -2), dtype=dtype).reshape(batch, k, n)
        xt = np.zeros_like(bt)
        info = np.zeros(batch, np.int32)
        with runtime_call(policy, mode) as call:
            solve = call.posv_refined_stack_z if dtype == np.complex128 else call.posv_refined_stack_d
            solve(at.reshape(batch, n, n), bt, xt, "lower" if lower else "upper", call.mode, cores, steps, info,
                  iterations.reshape(batch))
        if info.any():
            raise NotPositiveDefiniteError(info.reshape(lead) if lead else int(info[0]))
        x = np.swapaxes(xt, -1, -2).reshape(shape)
    else:
        x = np.zeros(shape, dtype)
    return x, (iterations if lead else int(iterations))


def _posv_refined_device_stack(arrays, a, b, n, dtype, lower, cores):
    """posv_refined on each matrix of a GPU stack (broadcast as cho_solve's): the batched kernels'
    single-precision factors and solves, one launch per step for the whole stack
    (device::posv_refined_batched)."""
    if cores != "off":
        raise ValueError("tensor_cores is taken for one matrix: a stack's single-precision factors come from the "
                         "batched kernels, in FP32")
    ad = arrays.adapter
    matrices, lead, vector = _rhs_layout(tuple(a.shape), tuple(b.shape))
    batch, k = math.prod(lead), matrices[-1]
    shape = lead + ((n,) if vector else (n, k))
    # Each matrix and each block of right-hand sides column-major: C-ordered stacks of the transposes.
    af = ad.stack(ad.swap_last(ad.broadcast(a, lead + (n, n))), (batch, n, n), dtype, copy=True)
    bf = ad.stack(ad.swap_last(ad.broadcast(_reshaped(b, matrices), lead + (n, k))), (batch, k, n), dtype, copy=True)
    x = ad.empty(a, (batch, k, n), dtype)
    info, iterations = np.zeros(batch, np.int32), np.zeros(batch, np.int32)
    if batch > 0 and n > 0:
        with ad.device_guard(a):
            solve = _core.posv_refined_batched_device_z if dtype.kind == "c" else _core.posv_refined_batched_device_d
            solve(ad.pointer(af), ad.pointer(bf), ad.pointer(x), n, k, batch, "lower" if lower else "upper",
                  ad.stream(a), info, iterations)
        if info.any():
            raise NotPositiveDefiniteError(info.reshape(lead))
    x = _reshaped(ad.swap_last(x), shape)
    return (arrays.to_input_kind(x) if arrays.to_input_kind else x), iterations.reshape(lead)


def _check_refined_shapes(a_shape, b_shape, n):
    if len(a_shape) != 2 or len(b_shape) not in (1, 2) or b_shape[0] != n:
        raise ValueError(f"posv_refined takes a of shape (n, n) and b of shape (n,) or (n, k), not {a_shape} and {b_shape}")


def _posv_refined_device(arrays, a, b, lower, mode, policy, cores, steps):
    check_gpu_usable()
    ad = arrays.adapter
    a_shape, b_shape = tuple(a.shape), tuple(b.shape)
    n, _ = square_shape(a_shape)
    complex_type = np.dtype(ad.dtype(a)).kind == "c" or np.dtype(ad.dtype(b)).kind == "c"
    if complex_type and cores != "off":
        raise ValueError("tensor_cores is taken for real matrices (a complex one's factor runs in complex64)")
    dtype = np.dtype(np.complex128 if complex_type else np.float64)
    if len(a_shape) > 2 or len(b_shape) > 2:
        if steps != "lapack":
            raise ValueError("refinement='gmres' is taken for one matrix (GPU stacks refine as LAPACK does)")
        return _posv_refined_device_stack(arrays, a, b, n, dtype, lower, cores)
    _check_refined_shapes(a_shape, b_shape, n)
    k = 1 if len(b_shape) == 1 else b_shape[1]
    # C-ordered copies: a real a's read column-major is a^T = a, which holds a's triangle as the
    # other one; a complex a is copied transposed (its a^T is conj(a)), so that it reads as itself;
    # b's columns one after the other.
    if complex_type:
        af, uplo = ad.stack(ad.swap_last(a), (1, n, n), dtype, copy=True), "lower" if lower else "upper"
    else:
        af, uplo = ad.stack(a, (1, n, n), dtype, copy=True), "upper" if lower else "lower"
    bf = ad.stack(ad.swap_last(b.reshape(n, k)), (1, k, n), dtype, copy=True)
    x = ad.empty(a, (1, k, n), dtype)
    iterations = 0
    if n > 0 and k > 0:
        with ad.device_guard(a):
            stream = ad.stream(a)
            with runtime_call(policy, mode) as call:
                solve = call.posv_refined_device_z if complex_type else call.posv_refined_device_d
                info, iterations = solve(ad.pointer(af), ad.pointer(bf), ad.pointer(x), n, k, uplo, call.mode, cores,
                                         steps, stream)
        if info:
            raise NotPositiveDefiniteError(info)
    x = ad.swap_last(x).reshape(b_shape)
    return (arrays.to_input_kind(x) if arrays.to_input_kind else x), iterations


def logdet(a, *, lower=True, mode=None, policy=None, progress=None, accuracy=None):
    """log det(a) of a symmetric positive definite a (or of each matrix of a stack (..., n, n)),
    from its Cholesky factor: 2 sum(log(diag(L))). Only the triangle `lower` of a is read. A scalar
    of a's precision, or an array of shape a.shape[:-2] of a's kind (a GPU array stays on its GPU).
    Raises NotPositiveDefiniteError: a matrix that is not positive definite never gives a NaN or an
    infinity. Differentiable for PyTorch tensors (d logdet(a) / da = a^-1) and traceable by JAX.
    ``accuracy``: from the adaptive-precision factor (cholesky_adaptive) of one float64 matrix."""
    factor = cholesky(a, lower=lower, mode=mode, policy=policy, progress=progress, accuracy=accuracy)
    return _log_determinant(factor, None)


def logdet_ex(a, *, lower=True, mode=None, policy=None, progress=None):
    """(log det(a), info) as logdet, without raising: info is cholesky_ex's (LAPACK's, per matrix),
    and the log-determinant of a matrix whose info is not 0 is 0 (no NaN, no infinity). On a GPU
    array it does not synchronise where cholesky_ex does not."""
    factor, info = cholesky_ex(a, lower=lower, mode=mode, policy=policy, progress=progress)
    return _log_determinant(factor, info), info


def cholesky_inverse(c, *, lower=None, mode=None, policy=None, progress=None):
    """a^-1 given the Cholesky factor c of a (or of each matrix of a stack), as
    torch.cholesky_inverse: the whole symmetric inverse. c as cho_solve takes it (a factor, or
    scipy's (c, lower) pair; its triangle read off its zeros where lower= is not given). Host
    arrays (numpy, PyTorch CPU tensors that need no gradient) go through LAPACK's potri as Tessera
    runs it (each matrix as the tile task graph of the triangular inverse and its product, a stack
    of orders the batched inverse kernel takes as chunks of matrices, one task each, or LAPACK on
    the calling thread for small work) and raise numpy.linalg.LinAlgError for a zero on a factor's
    diagonal. GPU arrays of small order (_inverse_route) go through the batched inverse kernel in
    one launch, one larger GPU matrix through the library's dense inverse (cuBLAS's triangular
    inverse and product on the array's stream up to an order the plan sets, the tile task graph
    above), neither synchronising: a factor with a zero on its diagonal gives an inverse of NaN.
    Larger GPU stacks, gradients and JAX traces compute cho_solve(c, I) (twice potri's
    arithmetic)."""
    if progress is not None:
        _progress.check(progress)
    c, lower = _factor_and_triangle(c, lower)
    if not _jax.is_traced(c) and not _torch_needs_grad(c):
        where, arrays, native = classify(c)
        if where == "host":
            if lower is None:
                lower = _infer_lower(NumPyArrays(), native)
            return host_result(_inverse_host(native, lower, mode, policy, progress), arrays)
        if mode is not None:
            check_mode(mode)
        n, batch = square_shape(tuple(native.shape))
        route = _inverse_route(n, batch, arrays.adapter.dtype(native))
        if route != "solve":
            check_gpu_usable()
            ad = arrays.adapter
            if lower is None:
                lower = _infer_lower(ad, native)
            if route == "kernel":
                x = _inverse_batched_device(ad, native, n, batch, bool(lower))
            else:
                x = _inverse_dense_device(ad, native, n, bool(lower), mode, policy)
            return arrays.to_input_kind(x) if arrays.to_input_kind else x
    x = cho_solve(c, _identity_like(c), lower=lower, mode=mode, policy=policy, progress=progress)
    return 0.5 * (x + _adjoint(x))  # exactly Hermitian, as the inverse is


def inv(a, *, lower=True, mode=None, policy=None, progress=None):
    """a^-1 of a symmetric positive definite a (or of each matrix of a stack; only the triangle
    `lower` is read): cholesky_inverse(cholesky(a)). Raises NotPositiveDefiniteError."""
    factor = cholesky(a, lower=lower, mode=mode, policy=policy, progress=progress)
    return cholesky_inverse(factor, lower=lower, mode=mode, policy=policy, progress=progress)


# ---- implementation ---------------------------------------------------------------------------


def _array_module(x):
    """numpy, cupy or jax.numpy for an array of that kind (torch is handled by the callers)."""
    module = type(x).__module__.partition(".")[0]
    if module == "cupy":
        import cupy

        return cupy
    if module in ("jax", "jaxlib"):
        import jax.numpy as jnp

        return jnp
    return np


def _is_torch(x):
    return type(x).__module__.partition(".")[0] == "torch"


def _log_determinant(factor, info):
    """2 sum(log(diag)) of each factor of a stack, in the factor's array library (differentiable
    for torch, traceable by JAX, asynchronous on a GPU); 0 where info is not 0 (None: all 0),
    computed without a NaN or a warning."""
    if _is_torch(factor):
        import torch

        diagonal = torch.diagonal(factor, dim1=-2, dim2=-1)
        if diagonal.is_complex():  # a complex factor's diagonal is real
            diagonal = diagonal.real
        if info is not None:
            diagonal = torch.where((info == 0).unsqueeze(-1), diagonal, torch.ones_like(diagonal))
        return 2 * torch.log(diagonal).sum(-1)
    xp = _array_module(factor)
    diagonal = xp.real(xp.diagonal(factor, axis1=-2, axis2=-1))  # a complex factor's diagonal is real
    if info is not None:
        diagonal = xp.where((xp.asarray(info) == 0)[..., None], diagonal, xp.ones_like(diagonal))
    return 2 * xp.log(diagonal).sum(-1)


def _identity_like(c):
    """The identity of c's order, floating type, library and device (broadcast against a stack)."""
    n = c.shape[-1]
    if _is_torch(c):
        import torch

        dtype = c.dtype if c.dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128) else torch.float64
        return torch.eye(n, dtype=dtype, device=c.device)
    xp = _array_module(c)
    if xp is np:
        c = np.asarray(c)
    return xp.eye(n, dtype=float_dtype(c.dtype))


def _adjoint(x):
    if _is_torch(x):
        return x.mH
    xp = _array_module(x)
    return xp.conj(xp.swapaxes(x, -1, -2))




@functools.lru_cache(maxsize=None)  # built once per type: it is asked at every call
def _suffix(dtype):
    """The native functions' suffix of a precision: numpy's type code ("_f4", "_f8", "_c8", "_c16")."""
    dtype = np.dtype(dtype)
    return f"_{dtype.kind}{dtype.itemsize}"


def _reshaped(a, shape):
    """a in `shape`, a itself where it has it (a GPU array's reshape costs microseconds a call)."""
    return a if a.shape == shape else a.reshape(shape)


def _stored_uplo(lower):
    # A C-ordered matrix is the transpose of the column-major one Tessera reads: its lower
    # triangle is Tessera's upper.
    return "upper" if lower else "lower"


# The out-of-place batched factorization per precision: one kernel reads each matrix through its
# strides and writes the factor with zeros in the other triangle. Read transposed, a Hermitian
# matrix is its conjugate, whose factor in the other triangle is the transpose of its own: the
# C-ordered trick of _factor_batched_device holds for complex matrices too.
_POTRF_INTO = {np.dtype(t): getattr(_core, "potrf_batched_device_into" + _suffix(t))
               for t in (np.float32, np.float64, np.complex64, np.complex128)}


# The dense device API's factorizations on the published runtime (without runtime_call(); None or
# False where no runtime is published): per precision, and the waiting forms per precision and by
# the name of the runtime call they stand for.
_POTRF_DENSE_INTO_PUBLISHED = {np.dtype(t): getattr(_core, "potrf_device_into_published" + _suffix(t))
                               for t in (np.float32, np.float64, np.complex64, np.complex128)}
_POTRF_DENSE_INTO_AND_WAIT_PUBLISHED = {np.dtype(t): getattr(_core, "potrf_device_into_and_wait_published" + _suffix(t))
                                        for t in (np.float32, np.float64, np.complex64, np.complex128)}
_PUBLISHED_CALLS = {"potrf_device_into_and_wait" + _suffix(t): call
                    for t, call in _POTRF_DENSE_INTO_AND_WAIT_PUBLISHED.items()}

# The plan's route of a GPU stack per precision (_takes_batched_kernels).
_STACK_TAKES_BATCHED_KERNELS = {np.dtype(t): getattr(_core, "stack_takes_batched_kernels" + _suffix(t))
                                for t in (np.float32, np.float64, np.complex64, np.complex128)}
_INVERSE_TAKES_BATCHED_KERNEL = {np.dtype(t): getattr(_core, "inverse_takes_batched_kernel" + _suffix(t))
                                 for t in (np.float32, np.float64, np.complex64, np.complex128)}
_INVERSE_TAKES_DENSE_CALL = {np.dtype(t): getattr(_core, "inverse_takes_dense_call" + _suffix(t))
                             for t in (np.float32, np.float64, np.complex64, np.complex128)}


# The batched inverse from factors per precision: factors read through their strides, the whole
# inverse written column-major.
_POTRI_INTO = {np.dtype(t): getattr(_core, "potri_batched_device_into" + _suffix(t))
               for t in (np.float32, np.float64, np.complex64, np.complex128)}
# The dense inverse of one GPU factor on the published runtime (False where none is published).
_POTRI_DENSE_INTO_PUBLISHED = {np.dtype(t): getattr(_core, "potri_device_into_published" + _suffix(t))
                               for t in (np.float32, np.float64, np.complex64, np.complex128)}


# Small work on the calling thread with no runtime, where the library's plan says so
# (tessera::runs_on_calling_thread): per precision, by the exact dtype (native byte order).
_HOST_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)]
_CHOLESKY_ON_CALLING_THREAD = {t: getattr(_core, "cholesky_on_calling_thread" + _suffix(t)) for t in _HOST_DTYPES}
_POTRS_ON_CALLING_THREAD = {t: getattr(_core, "potrs_on_calling_thread" + _suffix(t)) for t in _HOST_DTYPES}
_INVERSE_ON_CALLING_THREAD = {t: getattr(_core, "cholesky_inverse_on_calling_thread" + _suffix(t))
                              for t in _HOST_DTYPES}


def _factor_on_calling_thread(a, lower, mode):
    """A numpy array of small work straight to LAPACK, no runtime started (the first call of a
    process included): (factor, info, whether any matrix failed), or None where the plan runs
    tasks or the array's type is not one Tessera factors (float32, float64, complex64, complex128)."""
    factor = _CHOLESKY_ON_CALLING_THREAD.get(a.dtype)
    if factor is None:
        return None
    if mode is not None:
        check_mode(mode)
    return factor(a, bool(lower), requested_mode(mode))


def _factor(a, lower, mode, policy, read_info, progress=None):
    """(factor, info, info as a numpy array when read_info, or None where every matrix is known
    to be factored), factor and info of the input's kind."""
    if mode is not None:
        check_mode(mode)
    if type(a) is np.ndarray and policy is None:
        done = _factor_on_calling_thread(a, lower, mode)
        if done is not None:
            factor, info, failed = done
            return factor, info, (info if failed else None)
    where, arrays, native = classify(a)
    if where == "host":
        factor, info = _factor_host(native, lower, mode, policy, progress)
        return host_result(factor, arrays), host_result(info, arrays), info
    check_gpu_usable()
    ad = arrays.adapter
    shape = native.shape
    n, batch = square_shape(shape)
    back = arrays.to_input_kind
    if _takes_batched_kernels(n, batch, ad.dtype(native)):
        factor, info = _factor_batched_device(ad, native, n, batch, tuple(shape[:-2]), bool(lower))
    elif read_info and len(shape) == 2:
        # One matrix waited for: its info comes back from the native call, with no info array.
        factor, info = _factor_device_matrix(ad, native, lower, mode, policy,
                                             "potrf_device_into_and_wait" + _suffix(ad.dtype(native)))
        return (factor if back is None else back(factor)), None, (np.int32(info) if info else None)
    else:
        factor, info = _factor_device(ad, native, lower, mode, policy)
    host_info = ad.to_host(info) if read_info else None
    if back is None:
        return factor, info, host_info
    return back(factor), back(info), host_info


def _factor_batched_device(ad, a, n, batch, lead, lower):
    """A GPU stack the batched kernels take (_takes_batched_kernels): the factors into
    a fresh array of the input's library and its info, in one kernel launch that reads a where it
    lies (no copy of a, unless its type or its layout needs one). The kernel writes column-major
    factors; above order 32 lower factors come back Fortran-ordered (the panel kernel is fastest on
    lower storage), the others C-ordered: the column-major factor of the other triangle, whose
    source is a read transposed (its triangle `lower` is then the kernel's other one)."""
    dtype = ad.dtype(a)
    source, row_stride, col_stride, step = ad.strided(a, dtype, lead, n, batch)
    fortran = _batched_lower_by_columns(n, lower)
    with ad.device_guard(a):
        shape = lead + (n, n)
        factor = ad.empty_by_columns(a, shape, dtype) if fortran else ad.empty(a, shape, dtype)
        if n == 0 or batch == 0:
            return factor, ad.empty_info(a, lead)
        # The kernels write every matrix's info: no need to clear it first.
        info = ad.uninitialized_info(a, lead)
        if not fortran:
            row_stride, col_stride = col_stride, row_stride
        _POTRF_INTO[dtype](ad.pointer(source), row_stride, col_stride, step, ad.pointer(factor), n, batch,
                           lower and not fortran, ad.pointer(info), ad.stream(a))
    return factor, info


def _batched_lower_by_columns(n, lower):
    """Whether the batched kernels write a factor column by column as the lower factor of what
    they read (the panel kernel, above order 32, is fastest on lower storage) rather than as the
    upper factor of its transpose (a lower factor then reads by rows)."""
    return lower and n > 32


def _inverse_takes_batched_kernel(n, batch, dtype=np.float64):
    """Whether GPU factors of order n and type dtype (a stack of `batch`) go through the batched
    inverse kernel (tessera::device::potri_batched_ex) rather than cho_solve(c, I): the library's
    plan decides (tessera::device::inverse_takes_batched_kernel)."""
    return _INVERSE_TAKES_BATCHED_KERNEL[np.dtype(float_dtype(dtype))](n, batch)


def _inverse_route(n, batch, dtype=np.float64):
    """How GPU factors of order n and type dtype (a stack of `batch`) are inverted, as the library's
    plan says: "kernel" (the batched inverse kernel, tessera::device::potri_batched_ex), "dense"
    (one matrix: tessera::device::potri_ex) or "solve" (cho_solve(c, I))."""
    if _inverse_takes_batched_kernel(n, batch, dtype):
        return "kernel"
    return "dense" if _INVERSE_TAKES_DENSE_CALL[np.dtype(float_dtype(dtype))](n, batch) else "solve"


def _inverse_dense_device(ad, c, n, lower, mode, policy):
    """The inverse from one GPU factor (a stack of one) by the dense device API
    (tessera::device::potri_ex) into a fresh array, laid out as _inverse_batched_device's, on the
    published runtime (or a runtime_call()'s where none is, or a policy is asked for)."""
    dtype = ad.dtype(c)
    lead = tuple(c.shape[:-2])
    source, row_stride, col_stride, _ = ad.strided(c, dtype, lead, n, 1)
    with ad.device_guard(c):
        x = ad.empty(c, lead + (n, n), dtype)
        if n > 0:
            arguments = (ad.pointer(source), row_stride, col_stride, ad.pointer(x), n, not lower)
            stream = ad.stream(c)
            if policy is not None or not _POTRI_DENSE_INTO_PUBLISHED[dtype](*arguments, mode or "", stream):
                with runtime_call(policy, mode) as call:
                    getattr(call, "potri_device_into" + _suffix(dtype))(*arguments, call.mode, stream)
    return ad.swap_last(x) if dtype.kind == "c" else x


def _inverse_batched_device(ad, c, n, batch, lower):
    """The inverses from a GPU stack of factors in one kernel launch that reads c where it lies
    (through its strides; a copy only where its type needs one) into a fresh array. The kernel
    writes each whole inverse column-major: in a C-ordered slot it reads as its transpose, which for
    a Hermitian matrix is its conjugate, so complex inverses come back as transposed views."""
    dtype = ad.dtype(c)
    lead = tuple(c.shape[:-2])
    source, row_stride, col_stride, step = ad.strided(c, dtype, lead, n, batch)
    with ad.device_guard(c):
        x = ad.empty(c, lead + (n, n), dtype)
        if n > 0 and batch > 0:
            # No info array (0): a failed matrix's inverse is NaN, which is all the caller gets.
            _POTRI_INTO[dtype](ad.pointer(source), row_stride, col_stride, step, ad.pointer(x), n, batch, not lower,
                               0, ad.stream(c))
    return ad.swap_last(x) if dtype.kind == "c" else x


def _stored_by_columns(a):
    """Whether a's matrices lie column by column (Fortran order, as SciPy and LAPACK keep them) and
    not also row by row: their transposes are C-ordered."""
    return a.ndim >= 2 and not a.flags.c_contiguous and a.swapaxes(-1, -2).flags.c_contiguous


def _factor_host(a, lower, mode, policy, progress=None):
    arrays = NumPyArrays()
    n, batch = square_shape(a.shape)
    dtype = arrays.dtype(a)
    # Matrices stored column by column are factored as their transposes, which are C-ordered: a
    # plain copy instead of a transposing one (which cost a third of a large call). The triangle
    # `lower` of a is the other one of its transpose, whose factor in that triangle, transposed,
    # is a's (a Hermitian matrix's transpose is its conjugate, factored by the conjugates).
    by_columns = _stored_by_columns(a)
    source = a.swapaxes(-1, -2) if by_columns else a
    f = arrays.stack(source, (batch, n, n), dtype, copy=True)
    info = np.zeros(batch, dtype=np.int32)
    if n > 0 and batch > 0:
        # The native call zeroes the other triangle.
        with runtime_call(policy, mode) as call:
            call.set_progress(_progress.reporter(progress))
            getattr(call, "potrf" + _suffix(dtype))(f, _stored_uplo(lower != by_columns), call.mode, info)
    f = f.reshape(source.shape)
    return (f.swapaxes(-1, -2) if by_columns else f), info.reshape(a.shape[:-2])


def _inverse_host(c, lower, mode, policy, progress=None):
    """The inverse from a numpy factor (stack) by potri, its triangle mirrored into the other: on
    the calling thread, each factor copied, inverted and mirrored in one pass (the library's
    out-of-place form), where the plan runs it there; else as tasks."""
    if mode is not None:
        check_mode(mode)
    inverse = _INVERSE_ON_CALLING_THREAD.get(c.dtype) if policy is None else None
    done = inverse(c, bool(lower), requested_mode(mode)) if inverse is not None else None
    if done is not None:
        x, info, failed = done
        if failed:
            raise _singular_factor_error(info)
        return x
    arrays = NumPyArrays()
    n, batch = square_shape(c.shape)
    dtype = arrays.dtype(c)
    x = arrays.stack(c, (batch, n, n), dtype, copy=True)
    info = np.zeros(batch, dtype=np.int32)
    if n > 0 and batch > 0:
        suffix, uplo = _suffix(dtype), _stored_uplo(lower)
        on_calling_thread = False
        if policy is None:
            on_calling_thread = getattr(_core, "potri_on_calling_thread" + suffix)(x, uplo, requested_mode(mode), info)
        if not on_calling_thread:
            with runtime_call(policy, mode) as call:
                call.set_progress(_progress.reporter(progress))
                getattr(call, "potri" + suffix)(x, uplo, call.mode, info)
    if info.any():
        raise _singular_factor_error(info)
    triangle = np.tril if lower else np.triu
    x = triangle(x) + np.conjugate(np.swapaxes(triangle(x, -1 if lower else 1), -1, -2))
    return x.reshape(c.shape)


def _singular_factor_error(info):
    """numpy's LinAlgError for the first matrix whose factor has a zero on its diagonal (xPOTRI's
    info, per matrix of the stack in C order)."""
    k = int(np.flatnonzero(info)[0])
    return np.linalg.LinAlgError(f"matrix {k}: the factor's diagonal entry {int(np.ravel(info)[k])} is zero (singular)")


def _factor_device(ad, a, lower, mode, policy):
    """A GPU stack the batched kernels do not take (_takes_batched_kernels): factored out of place
    by the dense device API (tessera::device::potrf_ex for one matrix: one kernel loads its
    triangle where it lies into the factor's array with zeros in the other, then cuSOLVER's potrf on
    the array's stream up to order 16384 on one GPU, the tile DAG above; a real matrix up to order
    192 is read, factored and written by one kernel of Tessera's instead; device::potrf_stack_ex for
    a stack: one call of cuSOLVER's batched potrf for moderate orders, as the library's plan says).
    Tessera factors a lower triangle into column-major storage: in a C-ordered (n, n) slot the
    lower factor L of what it read reads as L^T. For a lower factor that is L returned transposed
    (Fortran-ordered, as torch returns it); for an upper one the strides are swapped, so that the
    upper triangle is read as a lower one: that of a^T, conj(a) for a complex matrix, whose factor
    L gives a = (L^T)^H L^T, so that L read C-ordered is U = L^T in every precision. The input is
    copied only where its type is not one Tessera factors or its matrices do not lie one stride
    apart."""
    n, batch = square_shape(tuple(a.shape))
    dtype = ad.dtype(a)
    lead = tuple(a.shape[:-2])
    with ad.device_guard(a):
        source, row, col, step = ad.strided(a, dtype, lead, n, batch)
        if not lower:
            row, col = col, row
        # Made in their final shapes (the matrices n * n apart, the infos one apart): no reshape
        # after the call.
        shape = lead + (n, n)
        f = ad.empty_by_columns(a, shape, dtype) if lower else ad.empty(a, shape, dtype)
        info = ad.uninitialized_info(a, lead)  # each one written by its factorization
        if batch > 0:
            _factor_dense_at(ad.pointer(source), (row, col, step), ad.pointer(f), ad.pointer(info), n, batch, dtype,
                             mode, policy, ad.stream(a))
    return f, info


def _factor_plain_torch_matrix(a, lower, wait):
    """One plain PyTorch matrix on the GPU (_Torch.plain_matrix_dtype), factored as the general path
    factors it, without that path's steps (each of its PyTorch calls costs microseconds, as much as
    the factorization of a small matrix): an order the plan gives to the batched kernels as
    _factor_batched_device does, one it gives to the dense device API on the published runtime as
    _factor_device (with `wait`, _factor_device_matrix) does. (factor, info tensor), or with `wait`
    (factor, LAPACK's info as an int); None where a is not such a matrix or no runtime is published
    yet, for the general path to take the call (and in a child forked after CUDA started, where
    asking PyTorch for the current GPU would raise its own error: the general path raises Tessera's)."""
    ad = loaded_torch_adapter()
    dtype = None if ad is None or not gpu_usable() else ad.plain_matrix_dtype(a)
    if dtype is None:
        return None
    n = a.shape[0]
    if n == 0 or a.shape[1] != n:
        return None
    if _STACK_TAKES_BATCHED_KERNELS[dtype](n, 1):
        return _factor_plain_torch_matrix_by_kernel(ad, a, n, dtype, lower, wait)
    row, col = a.stride()
    if not lower:
        row, col = col, row
    # The factor as _factor_device makes it: column by column for a lower one, C-ordered for an upper.
    factor = a.new_empty_strided((n, n), (1, n)) if lower else a.new_empty((n, n))
    if wait:
        info = _POTRF_DENSE_INTO_AND_WAIT_PUBLISHED[dtype](a.data_ptr(), row, col, factor.data_ptr(), n, "",
                                                           ad.stream(a))
        return None if info is None else (factor, info)
    info = a.new_empty((), dtype=ad.int32)
    if _POTRF_DENSE_INTO_PUBLISHED[dtype](a.data_ptr(), row, col, 0, factor.data_ptr(), n, 1, "", info.data_ptr(),
                                          ad.stream(a)):
        return factor, info
    return None


def _factor_plain_torch_matrix_by_kernel(ad, a, n, dtype, lower, wait):
    """_factor_plain_torch_matrix's matrix through the batched kernels, in the layout
    _factor_batched_device gives its factor; with `wait` the info is read back (as the general path
    reads it)."""
    row, col = a.stride()
    fortran = _batched_lower_by_columns(n, lower)
    factor = a.new_empty_strided((n, n), (1, n)) if fortran else a.new_empty((n, n))
    if not fortran:
        row, col = col, row
    info = a.new_empty((), dtype=ad.int32)
    _POTRF_INTO[dtype](a.data_ptr(), row, col, 0, factor.data_ptr(), n, 1, lower and not fortran, info.data_ptr(),
                       ad.stream(a))
    return (factor, int(info)) if wait else (factor, info)


def _factor_device_matrix(ad, a, lower, mode, policy, native_call, *arguments):
    """One GPU matrix (2-D) factored out of place as _factor_device does, by the runtime call's
    `native_call` (a, row stride, column stride, factor, n, mode, stream, *arguments), which waits
    for the factor: (factor, what the native call returned; None for n = 0)."""
    n = a.shape[-1]
    dtype = ad.dtype(a)
    result = None
    with ad.device_guard(a):
        source, row, col, _ = ad.strided(a, dtype, (), n, 1)
        if not lower:
            row, col = col, row
        factor = ad.empty_by_columns(a, (n, n), dtype) if lower else ad.empty(a, (n, n), dtype)
        if n > 0:
            address, stream = ad.pointer(source), ad.stream(a)
            published = _PUBLISHED_CALLS.get(native_call) if policy is None else None
            if published is not None:
                result = published(address, row, col, ad.pointer(factor), n, mode or "", stream, *arguments)
            if result is None:
                with runtime_call(policy, mode) as call:
                    result = getattr(call, native_call)(address, row, col, ad.pointer(factor), n, call.mode, stream,
                                                        *arguments)
    return factor, result


def _factor_dense_at(a, strides, l, i, n, batch, dtype, mode, policy, stream):
    """The lower triangles of the GPU matrices at address a (matrix k's element (r, c) at a + k *
    step + r * row + c * col elements; strides = (row, col, step)) factored by the dense device API
    into the column-major n x n factors at l, one after the other, their infos at i, in the order
    of `stream`."""
    row, col, step = strides
    # On the runtime a runtime_call() would take, without taking one, where one is published.
    if policy is None and _POTRF_DENSE_INTO_PUBLISHED[dtype](a, row, col, step, l, n, batch, mode or "", i, stream):
        return
    with runtime_call(policy, mode) as call:
        if batch > 1:
            # One vendor batched call where the library's plan says so, else one matrix after another.
            getattr(call, "potrf_stack_device_into" + _suffix(dtype))(a, row, col, step, l, n, batch, call.mode, i, stream)
            return
        # Info written on the stream: no synchronisation where the call is one vendor call.
        getattr(call, "potrf_device_into" + _suffix(dtype))(a, row, col, l, n, call.mode, i, stream)


def _factor_and_triangle(c, lower):
    """The factor and its triangle as given: scipy.linalg.cho_factor's (c, lower) tuple or a
    factor alone (lower None: to be read off the factor)."""
    # A matrix given as a tuple of rows has a sequence second, the flag is a scalar.
    if isinstance(c, tuple) and len(c) == 2 and np.ndim(c[1]) == 0:
        c, flag = c
        return c, bool(flag) if lower is None else bool(lower)
    return c, None if lower is None else bool(lower)


def _infer_lower(ad, c):
    """The triangle of factor(s) c from the zeros of the other one (cholesky writes them)."""
    lower_used, upper_used = ad.strict_triangles_used(c)
    if lower_used and upper_used:
        raise ValueError("cannot tell which triangle of c holds the Cholesky factor: neither strict triangle is "
                         "all zero; pass lower=True or lower=False (or the (c, lower) tuple of "
                         "scipy.linalg.cho_factor)")
    return not upper_used


def _rhs_layout(c_shape, b_shape):
    """(b's shape as matrices (..., n, k), the leading shape of x, whether x holds vectors), by
    numpy.linalg.solve's rule: b (n,) is a vector, b (..., n, k) matrices; a stack of vectors
    (..., n) with one dimension fewer than c is read as vectors where it cannot be read as
    matrices."""
    n = c_shape[-1]
    if len(b_shape) == 1 and b_shape[0] == n:
        matrices, vector = b_shape + (1,), True
    elif len(b_shape) >= 2 and b_shape[-2] == n:
        matrices, vector = b_shape, False
    elif len(b_shape) == len(c_shape) - 1 and b_shape[-1] == n:
        matrices, vector = b_shape + (1,), True
    else:
        raise ValueError(f"b must have shape ({n},) or (..., {n}, k) (or (..., {n}) with one dimension fewer than c), "
                         f"not {b_shape}")
    if c_shape[:-2] == matrices[:-2]:
        return matrices, c_shape[:-2], vector
    try:
        lead = tuple(np.broadcast_shapes(c_shape[:-2], matrices[:-2]))
    except ValueError:
        raise ValueError(f"the leading dimensions of c {c_shape} and b {b_shape} do not broadcast") from None
    return matrices, lead, vector


def _solve(c, b, lower, mode, policy, progress=None):
    check_mode(mode)
    where, arrays, native_c = classify(c)
    where_b, arrays_b, native_b = classify(b)
    if where != where_b:
        raise TypeError("c and b must both be host arrays or both GPU arrays")
    if where != "host":
        check_gpu_usable()
    ad = NumPyArrays() if where == "host" else arrays.adapter
    c_shape, b_shape = tuple(native_c.shape), tuple(native_b.shape)
    n, _ = square_shape(c_shape)
    matrices, lead, vector = _rhs_layout(c_shape, b_shape)
    if lower is None:
        lower = _infer_lower(ad, native_c)
    batch, k = math.prod(lead), matrices[-1]
    dtype = np.result_type(ad.dtype(native_c), ad.dtype(native_b))
    factors, uplo = _factor_stack(ad, ad.broadcast(native_c, lead + (n, n)), (batch, n, n), dtype, lower)
    columns = ad.broadcast(_reshaped(native_b, matrices), lead + (n, k))
    # Each right-hand side block column-major: (batch, k, n) C-ordered.
    x = ad.stack(ad.swap_last(columns), (batch, k, n), dtype, copy=True)
    # A factor read transposed (its triangle flipped) is, for a complex one, the factor of conj(A):
    # conj(A) conj(x) = conj(b) gives x.
    conjugated = np.dtype(dtype).kind == "c" and uplo != ("lower" if lower else "upper")
    if conjugated:
        ad.conjugate(x)
    if n > 0 and k > 0 and batch > 0:
        if where == "host":
            on_calling_thread = False
            if policy is None:
                on_calling_thread = _POTRS_ON_CALLING_THREAD[dtype](factors, x, uplo, requested_mode(mode))
            if not on_calling_thread:
                with runtime_call(policy, mode) as call:
                    call.set_progress(_progress.reporter(progress))
                    getattr(call, "potrs" + _suffix(dtype))(factors, x, uplo, call.mode)
        else:
            _solve_device(ad, native_c, factors, x, n, k, batch, dtype, uplo, mode, policy)
    if conjugated:
        ad.conjugate(x)
    x = _reshaped(ad.swap_last(x), lead + ((n,) if vector else (n, k)))
    if where == "host":
        return host_result(x, arrays)
    return arrays.to_input_kind(x) if arrays.to_input_kind else x


def _factor_stack(ad, c, shape, dtype, lower):
    """The factors as column-major matrices without a copy where their layout allows (a C-ordered
    matrix is read as its transpose, so its triangle flips; a Fortran-ordered one, as cholesky
    returns lower factors of GPU arrays, is read as it is), and the triangle Tessera reads."""
    transposed = ad.swap_last(c)
    if ad.dtype(c) == dtype and ad.is_c_contiguous(transposed) and not ad.is_c_contiguous(c):
        return ad.stack(transposed, shape, dtype, copy=False), "lower" if lower else "upper"
    return ad.stack(c, shape, dtype, copy=False), _stored_uplo(lower)


def _solve_device(ad, like, factors, x, n, k, batch, dtype, uplo, mode, policy):
    with ad.device_guard(like):
        _solve_device_at(ad.pointer(factors), ad.pointer(x), n, k, batch, dtype, uplo, mode, policy, ad.stream(like))


def _solve_device_at(c, x, n, k, batch, dtype, uplo, mode, policy, stream):
    """x_j := A_j^{-1} x_j for the column-major factors (n x n, triangle `uplo`) at GPU address c and
    the column-major right-hand side blocks (n x k) at x, in the order of `stream`."""
    suffix = _suffix(dtype)
    if not getattr(_core, "solve_takes_batched_kernels" + suffix)(n, batch, k):
        with runtime_call(policy, mode) as call:
            getattr(call, "potrs_stack_device" + suffix)(c, x, n, k, batch, uplo, call.mode, stream)
    else:
        getattr(_core, "potrs_batched_device" + suffix)(c, x, n, k, batch, uplo, stream)
