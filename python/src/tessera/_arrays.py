"""Array kinds Tessera accepts: numpy (and anything numpy converts) on the host; CuPy, PyTorch and
JAX arrays (or any other __dlpack__ array) on the GPU.

Every operation works on C-ordered stacks (batch, rows, cols). Each GPU array kind has a small
adapter that allocates and copies with the array's own library, so that memory comes from its
pool, and that names the stream the work is ordered on (the library's current stream).
"""
import contextlib
import math

import numpy as np

from . import _core
from ._runtime import _available_cpus

_CUDA = 2  # DLPack's device type for CUDA memory


_NATIVE_FLOATS = {np.dtype(t): np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)}


def float_dtype(dtype):
    """The floating type Tessera computes in for an input of type `dtype` (numpy's rules)."""
    known = _NATIVE_FLOATS.get(dtype)  # the common case, without building a dtype
    if known is not None:
        return known
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize in (4, 8):  # either byte order: results are native
        return np.dtype(np.float32 if dtype.itemsize == 4 else np.float64)
    if dtype.kind == "c" and dtype.itemsize in (8, 16):
        return np.dtype(np.complex64 if dtype.itemsize == 8 else np.complex128)
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    raise TypeError(f"array type {dtype} is not supported: use float32, float64, complex64 or complex128")


def matrix_stride(lead, strides):
    """The one stride between consecutive matrices of a stack whose leading dimensions are `lead`
    with `strides`, or None when they do not lie one stride apart (any value serves one matrix)."""
    if len(lead) == 1:
        return strides[0]
    stride, span = 0, None
    for size, step in zip(reversed(lead), reversed(strides)):
        if size == 1:
            continue
        if span is not None and step != span:
            return None
        stride = step if span is None else stride
        span = step * size
    return stride


def square_shape(shape):
    if len(shape) < 2:
        raise ValueError(f"expected a matrix or a stack of matrices, got an array of {len(shape)} dimension(s)")
    if shape[-1] != shape[-2]:
        raise ValueError(f"the matrices must be square, not {shape[-2]} x {shape[-1]}")
    return shape[-1], math.prod(shape[:-2])


class NumPyArrays:
    """Host arrays: the same operations as the GPU adapters, in numpy."""

    def dtype(self, a):
        return float_dtype(a.dtype)

    def stack(self, a, shape, dtype, copy):
        a = a.reshape(shape) if isinstance(a, np.ndarray) else np.reshape(a, shape)
        if copy and a.dtype == dtype and a.flags.c_contiguous and a.nbytes >= _core.parallel_copy_min_bytes:
            # numpy copies on one thread: a large array's copy is split over the process's CPUs.
            out = np.empty(shape, dtype=dtype)
            _core.copy_host_bytes(out.ctypes.data, a.ctypes.data, a.nbytes, _available_cpus())
            return out
        return np.array(a, dtype=dtype, order="C") if copy else np.ascontiguousarray(a, dtype=dtype)

    def broadcast(self, a, shape):
        return a if a.shape == shape else np.broadcast_to(a, shape)

    def swap_last(self, a):
        return a.swapaxes(-1, -2)

    def conjugate(self, a):
        """a conjugated in place (a complex array)."""
        np.conjugate(a, out=a)

    def empty_info(self, like, shape):
        return np.zeros(shape, dtype=np.int32)

    def is_c_contiguous(self, a):
        return a.flags.c_contiguous

    def strict_triangles_used(self, c):
        """(any non-zero below the diagonal, any above) over a stack of matrices (NaN counts).
        A few rows at a time, so that the temporaries stay small beside a large factor."""
        m, n = c.shape[-2:]
        step = max(1, (1 << 22) // max(1, n * math.prod(c.shape[:-2])))
        columns = np.arange(n)
        below = above = False
        for start in range(0, m, step):
            rows = np.arange(start, min(m, start + step))[:, None]
            nonzero = c[..., start:start + step, :] != 0
            below = below or bool(np.any(nonzero & (columns < rows)))
            above = above or bool(np.any(nonzero & (columns > rows)))
            if below and above:
                break
        return below, above

    def to_host(self, info):
        return info


class _Torch:
    def __init__(self, torch):
        self.torch = torch
        self.native = {np.dtype(np.float64): torch.float64, np.dtype(np.float32): torch.float32,
                       np.dtype(np.complex128): torch.complex128, np.dtype(np.complex64): torch.complex64}
        self.dtypes = {t: dtype for dtype, t in self.native.items()}
        # The current stream's handle without building a Stream object (a few microseconds a call).
        self.raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
        self.int32 = torch.int32

    def plain_matrix_dtype(self, a):
        """The numpy dtype of a where a is a plain torch.Tensor (no subclass) of two dimensions on the
        current GPU, of a type Tessera factors, holding its values as they read (no lazy conjugation
        or negation) and not followed by autograd: a matrix the kernels can read where it lies with
        no device guard. None for any other array."""
        if type(a) is not self.torch.Tensor or not a.is_cuda or a.dim() != 2 or a.requires_grad:
            return None
        dtype = self.dtypes.get(a.dtype)
        if dtype is None or a.is_conj() or a.is_neg() or a.get_device() != self.current_device():
            return None
        return dtype

    def dtype(self, a):
        known = self.dtypes.get(a.dtype)
        if known is not None:
            return known
        return np.dtype(np.float64) if a.dtype == self.torch.bool else float_dtype(str(a.dtype).replace("torch.", ""))

    def stack(self, a, shape, dtype, copy):
        """a as a C-ordered array of `shape` and `dtype` (a fresh copy when `copy`)."""
        # The dict, not dtype.name: numpy builds that name at every call (microseconds here).
        t = self.native[np.dtype(dtype)]
        if a.shape != shape:  # each tensor method call costs microseconds: none where nothing changes
            a = a.reshape(shape)
        if a.dtype == t and (not copy or a.is_contiguous()):
            return a.clone() if copy else a.contiguous()
        out = self.torch.empty(shape, dtype=t, device=a.device)
        out.copy_(a)
        return out

    def broadcast(self, a, shape):
        return a if a.shape == shape else a.expand(shape)

    def swap_last(self, a):
        return a.mT

    def conjugate(self, a):
        a.conj_physical_()

    def strided(self, a, dtype, lead, n, batch):
        """(array, row stride, column stride, matrix stride) in elements: a itself where it holds
        `dtype` and its matrices lie one stride apart, else a C-ordered copy."""
        if a.dtype is self.native[dtype]:
            strides = a.stride()
            step = matrix_stride(lead, strides[:-2]) if lead else 0
            if step is not None:
                return a, strides[-2], strides[-1], step
        return self.stack(a, (batch, n, n), dtype, copy=False), n, 1, n * n

    # Tensor.new_empty: like's device without building a device object (these run at every call).
    def empty(self, like, shape, dtype):
        return like.new_empty(shape, dtype=self.native[dtype])

    def empty_by_columns(self, like, shape, dtype):
        """swap_last(empty(like, shape, dtype)) made in one call: a C-ordered stack of matrices that
        each lie column by column (the storage a column-major kernel writes)."""
        n = max(shape[-1], 1)  # as PyTorch's own strides count an empty dimension
        step, lead_strides = n * n, []
        for size in reversed(shape[:-2]):
            lead_strides.append(step)
            step *= max(size, 1)
        return like.new_empty_strided(shape, tuple(reversed(lead_strides)) + (1, n), dtype=self.native[dtype])

    def empty_info(self, like, shape):
        return self.torch.zeros(shape, dtype=self.torch.int32, device=like.device)

    def uninitialized_info(self, like, shape):
        return like.new_empty(shape, dtype=self.torch.int32)

    def is_c_contiguous(self, a):
        return a.is_contiguous()

    def strict_triangles_used(self, c):
        """As NumPyArrays.strict_triangles_used (waits for the device)."""
        rows = self.torch.arange(c.shape[-2], device=c.device)
        below = rows[:, None] > self.torch.arange(c.shape[-1], device=c.device)[None, :]
        nonzero = c != 0
        return bool((nonzero & below).any().item()), bool((nonzero & below.T).any().item())

    def pointer(self, a):
        return a.data_ptr()

    def stream(self, a):
        if self.raw_stream is not None:
            return self.raw_stream(a.get_device())
        return self.torch.cuda.current_stream(a.device).cuda_stream

    def device_guard(self, a):
        if a.get_device() == self.current_device():
            return _NO_GUARD
        return self.torch.cuda.device(a.device)

    def to_host(self, info):
        # One matrix's info through item(), which skips making a host tensor.
        return np.array(info.item(), dtype=np.int32) if info.dim() == 0 else info.cpu().numpy()


class _CuPy:
    def __init__(self, cupy):
        self.cupy = cupy

    def dtype(self, a):
        return float_dtype(a.dtype)

    def stack(self, a, shape, dtype, copy):
        if not copy and a.dtype == dtype and a.flags.c_contiguous:
            return a.reshape(shape)
        with a.device:
            out = self.cupy.empty(shape, dtype=dtype)
            out[...] = a.reshape(shape)
        return out

    def broadcast(self, a, shape):
        return a if a.shape == shape else self.cupy.broadcast_to(a, shape)

    def swap_last(self, a):
        return self.cupy.swapaxes(a, -1, -2)

    def conjugate(self, a):
        with a.device:
            self.cupy.conjugate(a, out=a)

    def strided(self, a, dtype, lead, n, batch):
        """As _Torch.strided (CuPy counts strides in bytes; these are in elements)."""
        if a.dtype == dtype:
            size = a.itemsize
            strides = [s // size for s in a.strides]
            step = matrix_stride(lead, strides[:-2]) if lead else 0
            if step is not None:
                return a, strides[-2], strides[-1], step
        return self.stack(a, (batch, n, n), dtype, copy=False), n, 1, n * n

    def empty(self, like, shape, dtype):
        with like.device:
            return self.cupy.empty(shape, dtype=dtype)

    def empty_by_columns(self, like, shape, dtype):
        return self.swap_last(self.empty(like, shape, dtype))

    def empty_info(self, like, shape):
        with like.device:
            return self.cupy.zeros(shape, dtype=np.int32)

    def uninitialized_info(self, like, shape):
        with like.device:
            return self.cupy.empty(shape, dtype=np.int32)

    def is_c_contiguous(self, a):
        return a.flags.c_contiguous

    def strict_triangles_used(self, c):
        """As NumPyArrays.strict_triangles_used (waits for the device)."""
        with c.device:
            below = self.cupy.tri(c.shape[-2], c.shape[-1], -1, dtype=bool)
            nonzero = c != 0
            return bool((nonzero & below).any()), bool((nonzero & below.T).any())

    def pointer(self, a):
        return a.data.ptr

    def stream(self, a):
        return self.cupy.cuda.get_current_stream().ptr

    def device_guard(self, a):
        return a.device

    def to_host(self, info):
        return self.cupy.asnumpy(info)


_NO_GUARD = contextlib.nullcontext()


class DeviceArrays:
    """How to work on a GPU array of one kind, and how to hand results back in that kind (None: as
    they are)."""

    def __init__(self, adapter, to_input_kind=None):
        self.adapter = adapter
        self.to_input_kind = to_input_kind


# One adapter per array library, made on first use: a call then costs no lookups.
_native_kinds = {}


def loaded_torch_adapter():
    """The PyTorch adapter once a call has made it (classify), else None."""
    kind = _native_kinds.get("torch")
    return None if kind is None else kind.adapter


def _native_kind(module):
    kind = _native_kinds.get(module)
    if kind is None:
        library = __import__(module)
        kind = DeviceArrays(_Torch(library) if module == "torch" else _CuPy(library))
        _native_kinds[module] = kind
    return kind


def _import(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def _foreign_kind(a):
    """A GPU array of a library without an adapter (JAX...): worked on as CuPy or PyTorch arrays
    through DLPack (zero-copy), and handed back through DLPack."""
    cupy, torch = _import("cupy"), _import("torch")
    module = type(a).__module__.split(".")[0]
    back = _dlpack_importer(module)
    if cupy is not None:
        return DeviceArrays(_native_kind("cupy").adapter, back), cupy.from_dlpack(a)
    if torch is not None:
        return DeviceArrays(_native_kind("torch").adapter, back), torch.from_dlpack(a)
    raise TypeError(f"GPU arrays of {module} need CuPy or PyTorch installed (Tessera works on them through DLPack)")


def _dlpack_importer(module):
    if module in ("jax", "jaxlib"):
        import jax.dlpack

        return jax.dlpack.from_dlpack
    mod = _import(module)
    if mod is not None and hasattr(mod, "from_dlpack"):
        return mod.from_dlpack
    return None


def classify(a):
    """('host', the input's kind, numpy array) or ('device', DeviceArrays, the array its adapter
    works on)."""
    module = type(a).__module__.partition(".")[0]
    if module == "torch":
        # A lazily conjugated or negated view (x.conj(), x.conj().imag) keeps its values unchanged
        # in memory, where the kernels read them: such a tensor is materialised first.
        if a.is_conj() or a.is_neg():
            a = a.resolve_conj().resolve_neg()
        if a.is_cuda:
            return "device", _native_kind("torch"), a
        return "host", "torch", a.detach().numpy()
    if module == "cupy":
        return "device", _native_kind("cupy"), a
    if not isinstance(a, np.ndarray) and hasattr(a, "__dlpack_device__"):
        device_type, _ = a.__dlpack_device__()
        if int(device_type) == _CUDA:
            kind, native = _foreign_kind(a)
            return "device", kind, native
        return "host", module, np.from_dlpack(a)
    return "host", "numpy", np.asarray(a)


def host_result(x, kind):
    """A numpy result handed back as the kind of array the input was (a PyTorch CPU tensor stays
    one, a JAX CPU array too)."""
    if kind == "torch":
        import torch

        return torch.from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray) else x
    if kind in ("jax", "jaxlib") and isinstance(x, np.ndarray):
        import jax.numpy as jnp

        return jnp.asarray(x)
    return x
