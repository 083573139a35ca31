"""Array kinds Tessera accepts: numpy (and anything numpy converts) on the host; CuPy, PyTorch and
JAX arrays (or any other __dlpack__ array) on the GPU.

Every operation works on C-ordered stacks (batch, rows, cols). Each GPU array kind has a small
adapter that allocates and copies with the array's own library, so that memory comes from its
pool, and that names the stream the work is ordered on (the library's current stream).
"""
import contextlib
import math

import numpy as np

_CUDA = 2  # DLPack's device type for CUDA memory


def float_dtype(dtype):
    """The floating type Tessera computes in for an input of type `dtype` (numpy's rules)."""
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.float64):
        return dtype
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind == "c":
        raise TypeError("tessera supports real matrices only (float32 and float64), not complex")
    raise TypeError(f"array type {dtype} is not supported: use float32 or float64")


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
        a = np.reshape(a, shape)
        return np.array(a, dtype=dtype, order="C") if copy else np.ascontiguousarray(a, dtype=dtype)

    def broadcast(self, a, shape):
        return np.broadcast_to(a, shape)

    def swap_last(self, a):
        return np.swapaxes(a, -1, -2)

    def empty_info(self, like, shape):
        return np.zeros(shape, dtype=np.int32)

    def is_c_contiguous(self, a):
        return a.flags.c_contiguous

    def to_host(self, info):
        return info


class _Torch:
    def __init__(self, torch):
        self.torch = torch
        self.dtypes = {torch.float64: np.dtype(np.float64), torch.float32: np.dtype(np.float32)}
        # The current stream's handle without building a Stream object (a few microseconds a call).
        self.raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def dtype(self, a):
        known = self.dtypes.get(a.dtype)
        if known is not None:
            return known
        return np.dtype(np.float64) if a.dtype == self.torch.bool else float_dtype(str(a.dtype).replace("torch.", ""))

    def stack(self, a, shape, dtype, copy):
        """a as a C-ordered array of `shape` and `dtype` (a fresh copy when `copy`)."""
        t = getattr(self.torch, dtype.name)
        if a.dtype == t and (not copy or a.is_contiguous()):
            a = a.reshape(shape)
            return a.clone() if copy else a.contiguous()
        out = self.torch.empty(shape, dtype=t, device=a.device)
        out.copy_(a.reshape(shape))
        return out

    def broadcast(self, a, shape):
        return a.expand(shape)

    def swap_last(self, a):
        return a.transpose(-1, -2)

    def empty_info(self, like, shape):
        return self.torch.zeros(shape, dtype=self.torch.int32, device=like.device)

    def uninitialized_info(self, like, shape):
        return self.torch.empty(shape, dtype=self.torch.int32, device=like.device)

    def is_c_contiguous(self, a):
        return a.is_contiguous()

    def pointer(self, a):
        return a.data_ptr()

    def stream(self, a):
        if self.raw_stream is not None:
            return self.raw_stream(a.device.index)
        return self.torch.cuda.current_stream(a.device).cuda_stream

    def device_guard(self, a):
        if a.device.index == self.torch.cuda.current_device():
            return contextlib.nullcontext()
        return self.torch.cuda.device(a.device)

    def set_info(self, info, index, value):
        info.view(-1)[index] = int(value)

    def to_host(self, info):
        return info.cpu().numpy()


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
        return self.cupy.broadcast_to(a, shape)

    def swap_last(self, a):
        return self.cupy.swapaxes(a, -1, -2)

    def empty_info(self, like, shape):
        with like.device:
            return self.cupy.zeros(shape, dtype=np.int32)

    def uninitialized_info(self, like, shape):
        with like.device:
            return self.cupy.empty(shape, dtype=np.int32)

    def is_c_contiguous(self, a):
        return a.flags.c_contiguous

    def pointer(self, a):
        return a.data.ptr

    def stream(self, a):
        return self.cupy.cuda.get_current_stream().ptr

    def device_guard(self, a):
        return a.device

    def set_info(self, info, index, value):
        info.reshape(-1)[index] = int(value)

    def to_host(self, info):
        return self.cupy.asnumpy(info)


class DeviceArrays:
    """How to work on a GPU array of one kind, and how to hand results back in that kind."""

    def __init__(self, adapter, to_input_kind=lambda x: x):
        self.adapter = adapter
        self.to_input_kind = to_input_kind


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
        return DeviceArrays(_CuPy(cupy), back), cupy.from_dlpack(a)
    if torch is not None:
        return DeviceArrays(_Torch(torch), back), torch.from_dlpack(a)
    raise TypeError(f"GPU arrays of {module} need CuPy or PyTorch installed (Tessera works on them through DLPack)")


def _dlpack_importer(module):
    if module in ("jax", "jaxlib"):
        import jax.dlpack

        return jax.dlpack.from_dlpack
    mod = _import(module)
    if mod is not None and hasattr(mod, "from_dlpack"):
        return mod.from_dlpack
    return lambda x: x


def classify(a):
    """('host', the input's kind, numpy array) or ('device', DeviceArrays, the array its adapter
    works on)."""
    module = type(a).__module__.split(".")[0]
    if module == "torch":
        if a.is_cuda:
            return "device", DeviceArrays(_Torch(__import__("torch"))), a
        return "host", "torch", a.detach().numpy()
    if module == "cupy":
        return "device", DeviceArrays(_CuPy(__import__("cupy"))), a
    if not isinstance(a, np.ndarray) and hasattr(a, "__dlpack_device__"):
        device_type, _ = a.__dlpack_device__()
        if int(device_type) == _CUDA:
            kind, native = _foreign_kind(a)
            return "device", kind, native
        return "host", module, np.from_dlpack(a)
    return "host", "numpy", np.asarray(a)


def host_result(x, kind):
    """A numpy result handed back as the kind of array the input was (a PyTorch CPU tensor stays one)."""
    if kind == "torch":
        import torch

        return torch.from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray) else x
    return x
