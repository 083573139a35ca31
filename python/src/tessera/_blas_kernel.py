"""The OpenBLAS CPU kernel the native module loads with.

OpenBLAS picks its kernel once, when it is loaded, from the CPU's model number; on a CPU newer than
the OpenBLAS build it falls back to a kernel without AVX2 or AVX-512, several times slower (the
`tessera` command starts itself again with OPENBLAS_CORETYPE set for that reason). A Python process
cannot start again, so the package loads its native module with OPENBLAS_CORETYPE naming the
kernel this CPU's vector units run (SkylakeX for AVX-512, Haswell for AVX2 and FMA), for the load
only: the variable is restored at once, so that programs this process starts, and BLAS libraries
loaded later, choose as they would have. A value the user set is kept. Where OpenBLAS was already
loaded by something else in the process, or Tessera uses another BLAS, the variable does nothing;
tessera.blas_info() says which kernel runs.
"""
import contextlib
import os
import platform

_AVX512 = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
_AVX2_FMA = frozenset({"avx2", "fma"})


def _cpu_flags():
    """The flags of the first CPU in /proc/cpuinfo (empty where it cannot be read). The kernel
    reports a unit the OS does not save (XSAVE) as absent, as OpenBLAS's own check does."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def kernel_for_cpu(machine, flags):
    """The OpenBLAS kernel for an x86-64 CPU with these flags; None elsewhere or without AVX2."""
    if machine not in ("x86_64", "AMD64"):
        return None
    if _AVX512 <= flags:
        return "SkylakeX"
    if _AVX2_FMA <= flags:
        return "Haswell"
    return None


@contextlib.contextmanager
def loading_with_this_cpus_kernel(environ=os.environ):
    """OPENBLAS_CORETYPE set to this CPU's kernel inside the block (unless already set), restored
    after it; the block receives the kernel it asked for (None when it asked for none)."""
    previous = environ.get("OPENBLAS_CORETYPE")
    kernel = None if previous else kernel_for_cpu(platform.machine(), _cpu_flags())
    if kernel is None:
        yield None
        return
    environ["OPENBLAS_CORETYPE"] = kernel
    try:
        yield kernel
    finally:
        if previous is None:
            del environ["OPENBLAS_CORETYPE"]
        else:
            environ["OPENBLAS_CORETYPE"] = previous
