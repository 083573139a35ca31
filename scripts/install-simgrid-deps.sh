#!/usr/bin/env bash
# Installs what the simulated-scale study (docs/scaling.md, bench/simgrid/) needs, beside what
# scripts/install-deps.sh installs:
#   * Debian's SimGrid (libsimgrid-dev: the library, SMPI's smpicc/smpicxx/smpirun) and xsltproc
#     (starpu_smpirun assembles the MPI platform with it)
#   * a second StarPU 1.3.10, built from the same Debian source package and with the same patches
#     and options as the normal one, configured --enable-simgrid, into
#     $TESSERA_DEPS_PREFIX/starpu-simgrid (default /opt/tessera-deps/starpu-simgrid).
#     StarPU-MPI on SimGrid's SMPI needs a static StarPU (--disable-shared) and is compiled with
#     smpicc. CUDA stays enabled (nvcc must be installed; no GPU is needed): in simulation the
#     CUDA workers are simulated, and the CUDA toolkit only provides headers and libraries.
# The normal prefix ($TESSERA_DEPS_PREFIX/starpu) is not touched. The build is skipped when the
# prefix already holds one made with the same flags and patches.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix_root=${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}
starpu_prefix=$prefix_root/starpu-simgrid
starpu_version=1.3.10
jobs=${TESSERA_BUILD_JOBS:-$(nproc)}

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

log() { printf '[install-simgrid-deps] %s\n' "$*" >&2; }
# shellcheck source=scripts/debian_packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian_packages.sh"

install_debian_packages() {
  local packages=(build-essential pkg-config dpkg-dev patch libhwloc-dev libsimgrid-dev xsltproc
                  python3 python3-matplotlib)
  install_missing_debian_packages "${packages[@]}"
}


find_cuda() {
  local nvcc_path
  nvcc_path=$(command -v nvcc || true)
  [ -n "$nvcc_path" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc; }
  [ -n "$nvcc_path" ] || return 1
  dirname "$(dirname "$(readlink -f "$nvcc_path")")"
}

build_starpu() {
  local cuda_dir flags
  # The options of scripts/install-deps.sh (StarPU's simulation must be configured like the
  # build whose performance models it replays, --enable-maxcudadev included), plus SimGrid.
  flags=(--enable-maxcpus=256 --disable-build-examples --disable-build-tests --disable-build-doc
         --disable-fortran --disable-opencl --disable-socl --disable-starpufft --disable-starpupy
         --without-fxt --disable-fstack-protector-all --disable-full-gdb-information
         --enable-simgrid --disable-shared --enable-static
         --enable-mpi --disable-mpi-master-slave "--with-mpicc=$(command -v smpicc)"
         "--with-mpicxx=$(command -v smpicxx)" "--with-smpirun=$(command -v smpirun)")
  if cuda_dir=$(find_cuda); then
    flags+=(--enable-cuda "--with-cuda-dir=$cuda_dir" --enable-maxcudadev=8)
  else
    log "nvcc not found: StarPU's simulation is built without CUDA codelets (CUDA workers can still be simulated)"
    flags+=(--disable-cuda)
  fi
  local patches=("$here"/patches/starpu-1.3.10-*.patch)
  local stamp
  stamp="starpu $starpu_version ${flags[*]} patches $(cat "${patches[@]}" | sha256sum | cut -c1-16)"
  if [ -f "$starpu_prefix/.tessera-build" ] && [ "$(cat "$starpu_prefix/.tessera-build")" = "$stamp" ]; then
    log "StarPU (SimGrid) already built in $starpu_prefix"
    return 0
  fi
  enable_debian_sources
  local work
  work=${TESSERA_SIMGRID_BUILD_DIR:-$(mktemp -d)}
  mkdir -p "$work"
  log "building StarPU $starpu_version for SimGrid in $work (${flags[*]})"
  local srcdir
  srcdir=$(find "$work" -maxdepth 1 -type d -name "starpu-$starpu_version*" | head -n 1)
  if [ -z "$srcdir" ]; then
    (cd "$work" && apt-get source -qq "starpu=$starpu_version*" >/dev/null 2>&1 || apt-get source -qq starpu >/dev/null)
    srcdir=$(find "$work" -maxdepth 1 -type d -name "starpu-$starpu_version*" | head -n 1)
    [ -n "$srcdir" ] || { log "StarPU $starpu_version source not found"; exit 1; }
    local patch_file
    for patch_file in "${patches[@]}"; do patch -d "$srcdir" -p1 -s < "$patch_file"; done
  fi
  (cd "$srcdir" && ./configure -q --prefix="$starpu_prefix" "${flags[@]}" CFLAGS="-O2 -g" CXXFLAGS="-O2 -g" >"$work/configure.log" 2>&1) \
    || { tail -n 40 "$work/configure.log"; exit 1; }
  grep -q '^#define STARPU_SIMGRID 1' "$srcdir/src/common/config.h" \
    || { log "configure did not enable SimGrid"; exit 1; }
  make -C "$srcdir" -s -j"$jobs" >"$work/make.log" 2>&1 || { tail -n 40 "$work/make.log"; exit 1; }
  "${sudo_cmd[@]}" rm -rf "$starpu_prefix"
  "${sudo_cmd[@]}" make -C "$srcdir" -s install >"$work/install.log" 2>&1 || { tail -n 40 "$work/install.log"; exit 1; }
  [ -f "$starpu_prefix/lib/pkgconfig/starpumpi-1.3.pc" ] \
    || { grep -i mpi "$work/configure.log" | tail -n 20; log "StarPU was built without StarPU-MPI"; exit 1; }
  echo "$stamp" | "${sudo_cmd[@]}" tee "$starpu_prefix/.tessera-build" >/dev/null
  log "StarPU (SimGrid) installed in $starpu_prefix"
  [ -n "${TESSERA_SIMGRID_BUILD_DIR:-}" ] || rm -rf "$work"
}

install_debian_packages
build_starpu
