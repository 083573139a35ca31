#!/usr/bin/env bash
# Installs the build into a fresh prefix and uses it as another project would:
#   1. a CMake project (tests/install/consumer: find_package(Tessera 0.2), Tessera::tessera) built
#      from examples/minimal.cpp and examples/c_api.c (and examples/distributed.cpp where Tessera
#      has the distributed API), all run;
#   2. examples/c_api.c compiled by plain cc with `pkg-config --cflags --libs tessera`, run;
#   3. the installed `tessera` (info, then a small factorization), which must find its libraries
#      through its RPATH alone.
#   run_install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$build/install-test
rm -rf "$work"
mkdir -p "$work"
step() { echo "== $*"; }

step "cmake --install into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
for f in include/tessera/tessera.hpp include/tessera/version.h lib/cmake/Tessera/TesseraConfig.cmake lib/cmake/Tessera/TesseraConfigVersion.cmake \
         lib/pkgconfig/tessera.pc bin/tessera share/doc/tessera/LICENSE; do
  [ -e "$work/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done

step "CMake consumer (find_package(Tessera 0.2), Tessera::tessera)"
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DTESSERA_EXAMPLES_DIR="$source/examples" >"$work/consumer-configure.log" \
  || { cat "$work/consumer-configure.log"; exit 1; }
cmake --build "$work/consumer" >"$work/consumer-build.log" 2>&1 || { cat "$work/consumer-build.log"; exit 1; }
# The consumer must use the installed library, not the build tree's. ldd's output is kept whole
# before it is searched: piped into `grep -q`, the loader can be killed by SIGPIPE once grep has
# its match, and pipefail would fail the test on a library that was found.
loaded=$(ldd "$work/consumer/consumer_minimal")
grep -qF "$work/prefix/lib/libtessera" <<<"$loaded" \
  || { echo "consumer_minimal does not load the installed libtessera:"; echo "$loaded"; exit 1; }
"$work/consumer/consumer_minimal"
"$work/consumer/consumer_c_api"
# Built when the installed Tessera has the distributed API; one process is a 1 x 1 grid.
if [ -x "$work/consumer/consumer_distributed" ]; then "$work/consumer/consumer_distributed"; fi

step "pkg-config consumer (plain C)"
export PKG_CONFIG_PATH=$work/prefix/lib/pkgconfig
cc -std=c11 "$source/examples/c_api.c" $(pkg-config --cflags --libs tessera) -o "$work/c_api_pkg_config"
"$work/c_api_pkg_config"

step "installed tessera"
env -u LD_LIBRARY_PATH "$work/prefix/bin/tessera" info
env -u LD_LIBRARY_PATH "$work/prefix/bin/tessera" potrf --n 200 --mode cpu
echo "install test passed"
