"""JAX arrays being traced (inside jax.jit, jax.vmap...): tessera's functions enter the traced
program as calls of the native module's XLA FFI target (jax.ffi.ffi_call), which XLA runs where
the arrays lie, on its own stream for GPU buffers, by the routes the package takes outside a trace:
the ones without the task runtime (small host work on the calling thread, GPU stacks through the
batched kernels) in the native handler alone, the others through run_target below. A batched call
(vmap) hands over the stack whole, which tessera factors as one.

The buffers' layouts are asked of XLA so that the native routes take them as they are: a lower
factor is written column-major (LAPACK's storage of L) where the route writes it so, else
row-major (the upper factor of the transpose, which read by rows is L), an upper one row-major
(the lower factor of the transpose); cho_solve takes its factor and its right-hand sides
column-major and solves in place in the right-hand sides' buffer.

Where the module has no FFI target (built without XLA's FFI headers) or JAX cannot register it,
the functions run as host callbacks (jax.pure_callback) on numpy copies instead, as they do for a
factor whose triangle is to be read off its values (cho_solve without lower=)."""
import ctypes
import math

import numpy as np

from . import _core

TARGET = "tessera"
_registered = None  # whether the FFI target is registered with JAX (None: not tried yet)


def is_traced(*arrays):
    """Whether any of the arrays is a JAX tracer (without importing JAX where it is not loaded)."""
    for x in arrays:
        if type(x).__module__.partition(".")[0] in ("jax", "jaxlib") and "Tracer" in type(x).__name__:
            return True
    return False


def ffi_ready():
    """Whether tessera's calls enter JAX programs through the FFI target (registered on first use)."""
    global _registered
    if _registered is None:
        _registered = _register()
    return _registered


def _register():
    targets = getattr(_core, "jax_ffi_targets", None)
    if targets is None:
        return False
    import jax

    try:
        # JAX's backends first: a target registered before a backend starts is checked only when it
        # starts, and one it refused (an API version it does not take) would fail that start.
        jax.devices()
        for platform, capsule in targets().items():
            jax.ffi.register_ffi_target(TARGET, capsule, platform=platform)
    except Exception:  # a JAX without the FFI, or one that refuses these handlers' API version
        return False
    return True


def _matrix_layout(ndim, column_major):
    """An FFI layout (major to minor) of an array of matrices (..., rows, cols)."""
    lead = tuple(range(ndim - 2))
    return lead + ((ndim - 1, ndim - 2) if column_major else (ndim - 2, ndim - 1))


def _attributes(target, lower, mode, policy, column_major=True):
    """The call's attributes; its mode as the calls outside a trace resolve it (the active
    tessera.Runtime's where none is given), fixed when the program is traced."""
    from ._runtime import requested_mode

    return dict(target=target, lower=bool(lower), mode=requested_mode(mode), policy=policy or "",
                column_major=bool(column_major))


def _factor_by_columns(n, batch, dtype, lower):
    """Whether the factor comes out of the call column-major (a lower factor, as the batched
    kernels write it above order 32 and the dense device API always) or row-major (an upper one,
    and a lower one of the batched kernels' small orders: the upper factor of the transpose)."""
    from . import _batched_lower_by_columns, _takes_batched_kernels

    return lower and (_batched_lower_by_columns(n, lower) or not _takes_batched_kernels(n, batch, dtype))


def cholesky(a, dtype, lower, mode, policy, check, on_host):
    """(factor, info) of a traced stack a (..., n, n) in type dtype; with `check`, the program
    fails at run time where a matrix is not positive definite (NotPositiveDefiniteError's message).
    on_host(numpy array) -> (factor, info) serves where the FFI target does not."""
    import jax
    import jax.numpy as jnp

    shape = tuple(a.shape)
    if shape[-1] == 0:  # every matrix of order 0 is factored: known when the program is traced
        return jnp.zeros(shape, dtype), jnp.zeros(shape[:-2], np.int32)
    results = (jax.ShapeDtypeStruct(shape, dtype), jax.ShapeDtypeStruct(shape[:-2], np.int32))
    if not ffi_ready():
        return _callback(lambda x: tuple(np.asarray(r, dtype=t) for r, t in zip(on_host(x), (dtype, np.int32))),
                         results, a)
    by_columns = _factor_by_columns(shape[-1], math.prod(shape[:-2]), dtype, lower)
    call = jax.ffi.ffi_call(TARGET, results, vmap_method="broadcast_all",
                            output_layouts=(_matrix_layout(len(shape), by_columns), None))
    return call(a.astype(dtype), **_attributes("cholesky" if check else "cholesky_ex", lower, mode, policy, by_columns))


def cho_solve(c, b, dtype, lower, mode, policy, lead, vector, on_host):
    """x with A x = b for traced c (the factor of A, or a stack) and b, of b's shape read as
    matrices against the leading shape `lead` (vectors where `vector`), type dtype. lower None (the
    triangle read off c) and a module without the FFI target take on_host(numpy c, numpy b)."""
    import jax
    import jax.numpy as jnp

    n = c.shape[-1]
    k = 1 if vector else b.shape[-1]
    shape = lead + ((n,) if vector else (n, k))
    if lower is None or not ffi_ready():
        return _callback(lambda f, y: np.asarray(on_host(f, y), dtype=dtype), jax.ShapeDtypeStruct(shape, dtype), c, b)
    factors = jnp.broadcast_to(c.astype(dtype), lead + (n, n))
    columns = jnp.broadcast_to(b.astype(dtype).reshape(b.shape + ((1,) if vector else ())), lead + (n, k))
    layout = _matrix_layout(len(lead) + 2, True)
    call = jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(lead + (n, k), dtype), vmap_method="broadcast_all",
                            input_layouts=(layout, layout), output_layouts=layout, input_output_aliases={1: 0})
    return call(factors, columns, **_attributes("cho_solve", lower, mode, policy)).reshape(shape)


def _callback(on_host, result_shapes, *arrays):
    import jax

    def run(*values):
        return on_host(*(np.asarray(v) for v in values))

    return jax.pure_callback(run, result_shapes, *arrays, vmap_method="broadcast_all")


# ---- run by the native module's FFI handlers (jax_ffi.cpp) for the routes through the runtime ----

def run_target(target, platform, args, rets, lower, column_major, mode, policy, stream):
    """One call of the FFI target that the handler leaves to the runtime (the task graph on host
    buffers, the dense device API on GPU buffers): args and rets are its buffers as (address,
    shape, numpy type name); platform "cpu" (host memory) or "cuda" (GPU memory, on `stream`)."""
    mode, policy = mode or None, policy or None
    on_gpu = platform == "cuda"
    if target in ("cholesky", "cholesky_ex"):  # the handler checks cholesky's infos
        factor_on = _factor_on_gpu if on_gpu else _factor_on_host
        factor_on(args[0], rets[0], rets[1], lower, column_major, mode, policy, stream)
    elif target == "cho_solve":
        (_solve_on_gpu if on_gpu else _solve_on_host)(args[0], rets[0], lower, mode, policy, stream)
    else:
        raise ValueError(f"tessera's FFI target has no operation {target!r}")


def raise_not_positive_definite(info, scalar):
    """cholesky's failure: NotPositiveDefiniteError of the infos (a list; one matrix where scalar)."""
    from . import NotPositiveDefiniteError

    raise NotPositiveDefiniteError(int(info[0]) if scalar else np.asarray(info, dtype=np.int32))


def _flat(buffer):
    """A one-dimensional numpy view of a host buffer (address, shape, type name)."""
    address, shape, name = buffer
    dtype = np.dtype(name)
    if math.prod(shape) == 0:
        return np.empty(0, dtype)
    return np.frombuffer((ctypes.c_char * (math.prod(shape) * dtype.itemsize)).from_address(address), dtype=dtype)


def _host_array(buffer, column_major=False):
    """A numpy view of a host buffer of its shape, its matrices column-major where asked (as the
    layouts above give them)."""
    shape = tuple(buffer[1])
    if column_major:
        return _flat(buffer).reshape(shape[:-2] + (shape[-1], shape[-2])).swapaxes(-1, -2)
    return _flat(buffer).reshape(shape)


def _factor_on_host(a, factor, info, lower, column_major, mode, policy, stream):
    from . import cholesky_ex

    f, i = cholesky_ex(_host_array(a), lower=lower, mode=mode, policy=policy)
    _host_array(factor, column_major)[...] = f
    _host_array(info)[...] = i


def _factor_on_gpu(a, factor, info, lower, column_major, mode, policy, stream):
    """The dense device API, reading A's lower triangle (a lower factor, column-major: A as its
    row-major buffer lies; an upper one, row-major: its transpose, whose column-major L read by
    rows is U)."""
    from . import _factor_dense_at

    address, shape, name = a
    n, batch = shape[-1], math.prod(shape[:-2])
    if column_major != lower:
        raise ValueError("the dense device API writes a lower factor column-major and an upper one row-major")
    if n > 0 and batch > 0:
        strides = ((n, 1) if lower else (1, n)) + (n * n,)
        _factor_dense_at(address, strides, factor[0], info[0], n, batch, np.dtype(name), mode, policy, stream)


def _solve_on_host(c, x, lower, mode, policy, stream):
    """x (aliasing b) := A^{-1} x in place as tasks; the column-major stacks read by the native
    module as C-ordered (batch, cols, rows) stacks, its layout."""
    from . import _suffix, runtime_call

    _, shape, name = x
    n, k = shape[-2], shape[-1]
    batch = math.prod(shape[:-2])
    if n > 0 and k > 0 and batch > 0:
        factors, columns = _flat(c).reshape(batch, n, n), _flat(x).reshape(batch, k, n)
        with runtime_call(policy, mode) as call:
            getattr(call, "potrs" + _suffix(np.dtype(name)))(factors, columns, "lower" if lower else "upper", call.mode)


def _solve_on_gpu(c, x, lower, mode, policy, stream):
    from . import _solve_device_at

    address, shape, name = x
    n, k = shape[-2], shape[-1]
    batch = math.prod(shape[:-2])
    if n > 0 and k > 0 and batch > 0:
        _solve_device_at(c[0], address, n, k, batch, np.dtype(name), "lower" if lower else "upper", mode, policy,
                         stream)
