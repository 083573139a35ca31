#!/usr/bin/env bash
# Installs everything Tessera needs on a fresh Debian 12 machine:
#   * Debian packages (compilers, CMake, Ninja, OpenBLAS + LAPACKE, hwloc, GoogleTest, CLI11, fmt, nlohmann-json;
#     reference LAPACK, numpy and python3-venv (numpy and SciPy from PyPI) for the tests of
#     libtessera_lapack; python3-dev for the Python package's native module; locales, and the
#     de_DE.UTF-8 locale generated, for the tests of reading numbers under a comma locale)
#   * Open MPI (libopenmpi-dev, openmpi-bin) for StarPU-MPI and Tessera's distributed matrices
#   * reference LAPACK's own test programs for the linear-equation routines (TESTING/LIN:
#     xlintsts, xlintstd, xlintstc, xlintstz), built with gfortran from Debian's source package of
#     the installed LAPACK into $TESSERA_DEPS_PREFIX/lapack-testing, for the drop-in's tests
#   * StarPU 1.3.10 built from Debian's own source package into $TESSERA_DEPS_PREFIX/starpu,
#     with StarPU-MPI (libstarpumpi) on Open MPI in the same prefix
#     (Debian's binary StarPU caps CPU workers at 4 and has no CUDA).
# StarPU gains CUDA when nvcc is found (or TESSERA_CUDA=ON); TESSERA_CUDA=OFF forces a CPU-only build.
# The StarPU build is skipped when the prefix already holds a build made with the same flags.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix_root=${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}
starpu_prefix=$prefix_root/starpu
starpu_version=1.3.10

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

log() { printf '[install-deps] %s\n' "$*" >&2; }
# shellcheck source=scripts/debian_packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian_packages.sh"

install_debian_packages() {
  local packages=(
    build-essential cmake ninja-build pkg-config dpkg-dev ca-certificates patch
    libopenblas-dev liblapacke-dev libhwloc-dev
    libgtest-dev libgmock-dev libcli11-dev libfmt-dev nlohmann-json3-dev
    python3 libopenmpi-dev openmpi-bin libscalapack-openmpi-dev
    liblapack3 libblas3 libtmglib3 gfortran python3-numpy python3-venv python3-dev locales
  )
  # Clang, its sanitizer and libFuzzer runtimes, and llvm-symbolizer, for scripts/fuzz.sh.
  if [ "${TESSERA_FUZZ_DEPS:-0}" = 1 ]; then packages+=(clang-14 libclang-rt-14-dev llvm-14); fi
  install_missing_debian_packages "${packages[@]}"
}


find_cuda() {
  local nvcc_path
  case "${TESSERA_CUDA:-AUTO}" in
    OFF|off|0|no) return 1 ;;
  esac
  nvcc_path=$(command -v nvcc || true)
  [ -n "$nvcc_path" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc; }
  if [ -z "$nvcc_path" ]; then
    case "${TESSERA_CUDA:-AUTO}" in
      ON|on|1|yes) log "TESSERA_CUDA=ON but nvcc was not found"; exit 1 ;;
    esac
    return 1
  fi
  dirname "$(dirname "$(readlink -f "$nvcc_path")")"
}

build_starpu() {
  local cuda_dir flags
  flags=(--enable-maxcpus=256 --disable-build-examples --disable-build-tests --disable-build-doc
         --disable-fortran --disable-opencl --disable-socl --disable-starpufft --disable-starpupy
         --without-fxt --disable-fstack-protector-all --disable-full-gdb-information
         --enable-mpi --disable-mpi-master-slave "--with-mpicc=$(command -v mpicc)")
  if cuda_dir=$(find_cuda); then
    flags+=(--enable-cuda "--with-cuda-dir=$cuda_dir" --enable-maxcudadev=8)
  else
    flags+=(--disable-cuda)
  fi
  # The patches are part of the build: a changed patch rebuilds StarPU.
  local patches=("$here"/patches/starpu-1.3.10-*.patch)
  local stamp
  stamp="starpu $starpu_version ${flags[*]} patches $(cat "${patches[@]}" | sha256sum | cut -c1-16)"
  if [ -f "$starpu_prefix/.tessera-build" ] && [ "$(cat "$starpu_prefix/.tessera-build")" = "$stamp" ]; then
    log "StarPU already built in $starpu_prefix"
    return 0
  fi
  enable_debian_sources
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  log "building StarPU $starpu_version from Debian's source package (${flags[*]})"
  (cd "$work" && apt-get source -qq "starpu=$starpu_version*" >/dev/null 2>&1 || apt-get source -qq starpu >/dev/null)
  local srcdir
  srcdir=$(find "$work" -maxdepth 1 -type d -name "starpu-$starpu_version*" | head -n 1)
  [ -n "$srcdir" ] || { log "StarPU $starpu_version source not found"; exit 1; }
  # starpu-1.3.10-cuda13.patch: CUDA 13 removed cudaDeviceProp::computeMode and the legacy cublas.h
  # API that StarPU 1.3 uses. starpu-1.3.10-no-device-reset.patch: the bus calibration (first
  # start with an empty perf-model directory) ended with cudaDeviceReset(), which destroyed the
  # CUDA context and memory of an application that had used the GPU before starting StarPU.
  # starpu-1.3.10-bus-topology-copy.patch: that calibration copies the hwloc topology StarPU has
  # just loaded instead of loading it from the system a second time.
  # starpu-1.3.10-bus-hidden-gpus.patch: the bus model no longer starts the CUDA driver to count
  # the GPUs of a process that hides them all (CUDA_VISIBLE_DEVICES empty, as cpu mode sets it).
  # starpu-1.3.10-ram-size.patch: host memory's size is at least the system's physical memory,
  # not only what hwloc's NUMA nodes list: on a freshly started virtual machine they listed 5 GB of
  # 256, and StarPU-MPI's receive buffers beyond that waited forever for memory to be freed.
  # starpu-1.3.10-failed-start-key.patch: a start that finds no worker deletes the thread key it
  # created for scheduling contexts; a process retrying such starts used up its keys (about a
  # thousand), and the next start aborted it.
  local patch_file
  for patch_file in "${patches[@]}"; do patch -d "$srcdir" -p1 -s < "$patch_file"; done
  (cd "$srcdir" && ./configure -q --prefix="$starpu_prefix" "${flags[@]}" CFLAGS="-O2 -g" >"$work/configure.log" 2>&1) \
    || { tail -n 40 "$work/configure.log"; exit 1; }
  "${sudo_cmd[@]}" rm -rf "$starpu_prefix"
  make -C "$srcdir" -s -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -n 40 "$work/make.log"; exit 1; }
  "${sudo_cmd[@]}" make -C "$srcdir" -s install >"$work/install.log" 2>&1 || { tail -n 40 "$work/install.log"; exit 1; }
  # configure quietly leaves StarPU-MPI out when it finds no usable MPI: refuse such a build.
  [ -f "$starpu_prefix/lib/pkgconfig/starpumpi-1.3.pc" ] \
    || { grep -i mpi "$work/configure.log" | tail -n 20; log "StarPU was built without StarPU-MPI"; exit 1; }
  echo "$stamp" | "${sudo_cmd[@]}" tee "$starpu_prefix/.tessera-build" >/dev/null
  log "StarPU installed in $starpu_prefix"
}

# Reference LAPACK's test programs for the linear-equation routines, from the source package of the
# LAPACK Debian installed, linked against that reference LAPACK, reference BLAS and TMGLIB and
# finding the first two by their run path (the system's liblapack.so.3 may be OpenBLAS's), so that a
# drop-in preloaded in front of them passes what it does not take to reference LAPACK. Skipped when
# the prefix holds the programs of the same version.
build_lapack_test_programs() {
  local dest=$prefix_root/lapack-testing version stamp multiarch work srcdir
  version=$(dpkg-query -W -f='${Version}' liblapack3)
  stamp="$version, reference LAPACK and BLAS by run path"
  if [ -f "$dest/.tessera-build" ] && [ "$(cat "$dest/.tessera-build")" = "$stamp" ]; then
    log "reference LAPACK's test programs $version already in $dest"
    return 0
  fi
  log "building reference LAPACK's test programs (TESTING/LIN) from Debian's source package lapack $version"
  enable_debian_sources
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  work=$(mktemp -d)
  (cd "$work" && apt-get source -qq "lapack=$version" >/dev/null 2>&1 || apt-get source -qq lapack >/dev/null)
  srcdir=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'lapack-*' | head -n 1)
  [ -n "$srcdir" ] || { log "apt-get source lapack gave no source tree"; exit 1; }
  sed -e "s|^BLASLIB .*|BLASLIB = /usr/lib/$multiarch/blas/libblas.so.3|" \
      -e "s|^LAPACKLIB .*|LAPACKLIB = /usr/lib/$multiarch/lapack/liblapack.so.3|" \
      -e "s|^TMGLIB .*|TMGLIB = /usr/lib/$multiarch/libtmglib.so.3|" \
      -e "s|^LDFLAGS .*|LDFLAGS = -Wl,-rpath,/usr/lib/$multiarch/lapack:/usr/lib/$multiarch/blas|" \
      "$srcdir/make.inc.example" >"$srcdir/make.inc"
  make -C "$srcdir/TESTING/LIN" -s -j"$(nproc)" single double complex complex16 >"$work/make.log" 2>&1 \
    || { tail -n 40 "$work/make.log"; exit 1; }
  "${sudo_cmd[@]}" rm -rf "$dest"
  "${sudo_cmd[@]}" mkdir -p "$dest"
  "${sudo_cmd[@]}" cp "$srcdir"/TESTING/LIN/xlintst[sdcz] "$srcdir"/TESTING/[sdcz]test.in "$dest/"
  echo "$stamp" | "${sudo_cmd[@]}" tee "$dest/.tessera-build" >/dev/null
  rm -rf "$work"
  log "reference LAPACK's test programs installed in $dest"
}

# A locale whose decimal point is a comma, for the tests that numbers are read and written the
# format's way whatever the program's locale.
add_comma_decimal_locale() {
  locale -a 2>/dev/null | grep -qi '^de_DE.utf-\?8$' && return 0
  log "generating the de_DE.UTF-8 locale"
  "${sudo_cmd[@]}" localedef -i de_DE -c -f UTF-8 de_DE.UTF-8 || log "could not generate de_DE.UTF-8"
}

install_debian_packages
add_comma_decimal_locale
build_lapack_test_programs
build_starpu
