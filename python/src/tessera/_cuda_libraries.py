"""The CUDA libraries the native module needs, loaded before it.

libtessera and StarPU link cuBLAS, cuSOLVER, cuSPARSE and the CUDA runtime (DT_NEEDED: the module
cannot load without them, even on a machine without a GPU). The binary wheel does not bundle them:
NVIDIA's pip packages (the package's `cuda` extra) put them in site-packages' nvidia/cu13/lib, a
folder the dynamic loader does not search. Loading them here first, by full path, satisfies the
native module's dependencies by soname. Where those packages are not installed, the binary wheel
loads the system's: LD_LIBRARY_PATH and the loader cache, then CUDA_HOME, CUDA_PATH and
/usr/local/cuda. Where one is found nowhere, the binary wheel's placeholder of it
(tessera/_cuda_placeholders/, made by scripts/build-wheel-cuda-placeholders.py) is loaded: it
reports CUDA as not installed, and the library then runs as on a machine without a GPU. A source
build has no placeholders and loads nothing of the system's here: its libtessera finds CUDA itself,
through the lazy forwarders of cuBLAS, cuSOLVER and cuSPARSE (src/lazy_cuda) where it was built
with them. The binary wheel carries those forwarders (tessera/_cuda_forwarders/) and loads them in
place of the real cuBLAS, cuSOLVER and cuSPARSE it finds, telling each where its real library is:
the real ones (and cuBLASLt and nvJitLink with them) are loaded at the first call into them, so
that `import tessera` maps none of them until a GPU is used.
libcuda.so.1 is the driver's: the CUDA runtime opens it itself when a GPU is used.
"""
import ctypes
import importlib.util
import os

# In load order: each one's own CUDA dependencies come before it.
SONAMES = ("libnvJitLink.so.13", "libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13",
           "libcusparse.so.12", "libcusolver.so.12")

# The libraries the native module's binaries link themselves: those the placeholders stand for.
LINKED = ("libcudart.so.13", "libcublas.so.13", "libcusparse.so.12", "libcusolver.so.12")
PLACEHOLDERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_cuda_placeholders")

# The libraries the wheel's forwarders stand for, and those their real libraries load beside them.
FORWARDED = ("libcublas.so.13", "libcusparse.so.12", "libcusolver.so.12")
LOADED_BY_FORWARDERS = ("libnvJitLink.so.13", "libcublasLt.so.13")
FORWARDERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_cuda_forwarders")

loaded = {}  # soname -> the path (or soname, for the loader's search) it was loaded from
placeholders = []  # the sonames loaded from PLACEHOLDERS: CUDA cannot be used in this process
forwarded = {}  # soname -> the real library its forwarder (in loaded) opens at the first call into it


def _pip_folders():
    """nvidia/cu13/lib in each folder of the `nvidia` namespace package: where all of CUDA 13's pip
    packages put their libraries. The CUDA 12 packages' nvidia/<package>/lib is not searched: its
    libcusparse.so.12 is CUDA 12's, with the soname of CUDA 13's."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    roots = (spec.submodule_search_locations or []) if spec else []
    return [f for f in (os.path.join(root, "cu13", "lib") for root in roots) if os.path.isdir(f)]


def _system_folders():
    folders = [os.path.join(os.environ[v], sub) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)
               for sub in ("lib64", "lib")]
    folders += ["/usr/local/cuda/lib64", "/usr/local/cuda/lib"]
    return [f for f in folders if os.path.isdir(f)]


def _load(path):
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        return True
    except OSError:
        return False


def _forward(soname, real):
    """Loads the wheel's forwarder of SONAME, told to look for the real library in REAL's folder
    first; False where it has none or it cannot be loaded."""
    forwarder = os.path.join(FORWARDERS, soname)
    if not os.path.isfile(forwarder):
        return False
    try:
        library = ctypes.CDLL(forwarder, mode=ctypes.RTLD_GLOBAL)
        library.tessera_lazy_cuda_prefer_folder(os.path.dirname(real).encode())
    except (OSError, AttributeError):
        return False
    loaded[soname], forwarded[soname] = forwarder, real
    return True


def preload():
    """Loads each CUDA library of SONAMES not loaded yet: from the pip packages' folders, else (in
    the binary wheel) by soname (LD_LIBRARY_PATH, the loader cache), else from the toolkit's
    folders; in the wheel, the forwarder of each library of FORWARDED found in a folder, in its
    place; then the placeholder of each library of LINKED found nowhere, where the wheel has them."""
    pip, system = _pip_folders(), None
    wheel = os.path.isdir(PLACEHOLDERS)
    forwarding = wheel and os.path.isdir(FORWARDERS)
    for soname in SONAMES:
        if soname in loaded or (forwarding and soname in LOADED_BY_FORWARDERS):
            continue
        candidates = [os.path.join(f, soname) for f in pip]
        if not any(os.path.isfile(c) for c in candidates):
            if not wheel:
                continue
            system = _system_folders() if system is None else system
            candidates = [soname] + [os.path.join(f, soname) for f in system]
        real = next((c for c in candidates if c != soname and os.path.isfile(c)), None)
        if forwarding and soname in FORWARDED and real and _forward(soname, real):
            continue
        for candidate in candidates:
            if (candidate == soname or os.path.isfile(candidate)) and _load(candidate):
                loaded[soname] = candidate
                break
    for soname in LINKED:
        placeholder = os.path.join(PLACEHOLDERS, soname)
        if soname not in loaded and os.path.isfile(placeholder) and _load(placeholder):
            loaded[soname] = placeholder
            placeholders.append(soname)
