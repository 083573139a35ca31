#!/usr/bin/env python3
"""Builds the CUDA placeholder libraries of the binary wheel (scripts/build-wheel.sh).

The wheel's libtessera and StarPU link the CUDA runtime, cuBLAS, cuSOLVER and cuSPARSE, which the
wheel leaves to NVIDIA's pip packages (its optional `cuda` extra). Without those packages the
native module could not even load. For that case the wheel carries, in tessera/_cuda_placeholders/,
one library per CUDA soname the bundled binaries need, with the same soname and symbol versions,
defining exactly the functions they import: each reports that CUDA is not installed (the status a
library returns when it cannot start: cudaErrorStubLibrary, *_STATUS_NOT_INITIALIZED; an error
message for the functions that return one), so the library behaves as on a machine without a GPU.
tessera/_cuda_libraries.py loads them only where NVIDIA's libraries are not found.

What each function returns is checked against CUDA's own headers (a C file that must compile):
a function whose return type is not the one assumed here fails the build, as does an internal
`__cuda` function this script does not know.

    build-wheel-cuda-placeholders.py WHEEL_TREE OUT_DIR --cuda-include DIR [--cc CC]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MESSAGE = ("CUDA 13's libraries are not installed: the package's `cuda` extra installs NVIDIA's "
           "(pip install 'tessera-cholesky[cuda]')")

# soname -> (the failure status every function returns, the header's name of it, its type)
LIBRARIES = {
    "libcudart.so.13": (34, "cudaErrorStubLibrary", "cudaError_t"),
    "libcublas.so.13": (1, "CUBLAS_STATUS_NOT_INITIALIZED", "cublasStatus_t"),
    "libcusolver.so.12": (1, "CUSOLVER_STATUS_NOT_INITIALIZED", "cusolverStatus_t"),
    "libcusparse.so.12": (1, "CUSPARSE_STATUS_NOT_INITIALIZED", "cusparseStatus_t"),
}
HEADERS = ("cuda_runtime_api.h", "cublas_v2.h", "cusolverDn.h", "cusparse.h")

# Functions that return something other than their library's status (the default).
STRING = {"cudaGetErrorString", "cudaGetErrorName", "cublasGetStatusName", "cublasGetStatusString",
          "cusparseGetErrorName", "cusparseGetErrorString"}
# The runtime's internal registration and launch functions that nvcc's host code calls (declared
# only for nvcc's own translation units, so their kinds are fixed here rather than checked).
INTERNAL = {
    "__cudaRegisterFatBinary": "handle",
    "__cudaRegisterFatBinaryEnd": "void",
    "__cudaUnregisterFatBinary": "void",
    "__cudaRegisterFunction": "void",
    "__cudaRegisterVar": "void",
    "__cudaPushCallConfiguration": "unsigned",
    "__cudaPopCallConfiguration": "status",
    "__cudaGetKernel": "status",
    "__cudaLaunchKernel": "status",
}

SYMBOL = re.compile(r"\sUND\s+([A-Za-z_][A-Za-z0-9_]*)@(lib[A-Za-z0-9_.]+)")


def elf_files(tree):
    for folder, _, names in os.walk(tree):
        for name in names:
            path = os.path.join(folder, name)
            if ".so" in name and not os.path.islink(path):
                with open(path, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        yield path


def needed_sonames(path):
    out = subprocess.run(["readelf", "-d", "-W", path], check=True, capture_output=True, text=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


def imported_symbols(path):
    """(symbol, soname) of every undefined dynamic symbol versioned by one of LIBRARIES' sonames."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], check=True, capture_output=True, text=True).stdout
    return {(m.group(1), m.group(2)) for m in map(SYMBOL.search, out.splitlines()) if m and m.group(2) in LIBRARIES}


def kind_of(symbol):
    if symbol.startswith("__cuda"):
        if symbol not in INTERNAL:
            sys.exit(f"{symbol}: an internal CUDA runtime function this script does not know; add its return type to INTERNAL")
        return INTERNAL[symbol]
    return "string" if symbol in STRING else "status"


def c_definition(symbol, kind, status):
    if kind == "status":
        return f"int {symbol}(void) {{ return {status}; }}"
    if kind == "unsigned":
        return f"unsigned {symbol}(void) {{ return 1u; }}"
    if kind == "string":
        return f"const char* {symbol}(void) {{ return message; }}"
    if kind == "handle":
        return f"void** {symbol}(void) {{ return &handle; }}"
    return f"void {symbol}(void) {{}}"


def header_check(symbols):
    """C that compiles (with incompatible pointer types as errors) only where every symbol returns
    what its placeholder returns: each is assigned to a pointer to a function of unspecified
    parameters returning that type. C, not C++: cuBLAS overloads some functions for C++."""
    lines = [f"#include <{h}>" for h in HEADERS]
    for soname, (status, name, _) in LIBRARIES.items():
        lines.append(f'_Static_assert({name} == {status}, "{soname}: the status its placeholder returns");')
    for (symbol, soname), kind in sorted(symbols.items()):
        if symbol.startswith("__cuda"):
            continue
        returned = LIBRARIES[soname][2] if kind == "status" else "const char*"
        lines.append(f"{returned} (*check_{symbol})() = {symbol};")
    return "\n".join(lines) + "\n"


def build_library(soname, symbols, out_dir, cc, work):
    status = LIBRARIES[soname][0]
    source = os.path.join(work, soname + ".c")
    script = os.path.join(work, soname + ".map")
    body = [f"/* {soname}: placeholder (scripts/build-wheel-cuda-placeholders.py) */",
            f'static const char message[] = "{MESSAGE}";', "static void* handle;"]
    body += [c_definition(s, kind_of(s), status) for s in sorted(symbols)]
    with open(source, "w") as f:
        f.write("\n".join(body) + "\n")
    exported = "".join(f" {s};" for s in sorted(symbols))
    with open(script, "w") as f:
        f.write(f"{soname} {{ global:{exported} local: *; }};\n")
    target = os.path.join(out_dir, soname)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-fno-builtin", "-w", "-o", target, source,
                    f"-Wl,-soname,{soname}", f"-Wl,--version-script={script}"], check=True)
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("out_dir")
    parser.add_argument("--cuda-include", required=True)
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = parser.parse_args()

    by_soname = {}
    for path in elf_files(args.tree):
        for soname in needed_sonames(path) & LIBRARIES.keys():
            by_soname.setdefault(soname, set())
        for symbol, soname in imported_symbols(path):
            by_soname.setdefault(soname, set()).add(symbol)
    if not by_soname:
        print("the wheel's binaries link no CUDA library: no placeholders")
        return

    kinds = {(s, soname): kind_of(s) for soname, symbols in by_soname.items() for s in symbols}
    with tempfile.TemporaryDirectory() as work:
        check = os.path.join(work, "check.c")
        with open(check, "w") as f:
            f.write(header_check(kinds))
        subprocess.run([args.cc, "-std=gnu11", "-fsyntax-only", "-Werror=incompatible-pointer-types", "-Wno-deprecated-declarations", "-I",
                        args.cuda_include, check], check=True)
        os.makedirs(args.out_dir, exist_ok=True)
        for soname, symbols in sorted(by_soname.items()):
            build_library(soname, symbols, args.out_dir, args.cc, work)
            print(f"{soname}: {len(symbols)} functions")


if __name__ == "__main__":
    main()
