#!/usr/bin/env bash
# The Python package as a user gets it: the build installed into a fresh prefix, then
# `pip install ./python` against it in a virtual environment (made once in the build tree and
# reused), then its pytest suite (GPU tests skip with the reason where no GPU is present).
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

skip_unless_reachable() {  # LOG WHAT
  cat "$1"
  if grep -qiE "connection|network|resolution|timed out|proxy|unreachable|No matching distribution" "$1"; then
    echo "SKIPPED: pip cannot reach the package index to install $2"
    exit 77
  fi
  echo "FAILED: pip install $2"
  exit 1
}

if ! "$python" -c 'import numpy, scipy, pytest' >/dev/null 2>&1; then
  rm -rf "$venv"
  if ! "${PYTHON:-python3}" -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    echo "SKIPPED: python3 cannot make a virtual environment (install python3-venv)"
    exit 77
  fi
  "$python" -m pip install -q --disable-pip-version-check --timeout 30 --retries 2 numpy scipy pytest \
    >"$work/pip-deps.log" 2>&1 || { rm -rf "$venv"; skip_unless_reachable "$work/pip-deps.log" "numpy scipy pytest"; }
fi

echo "== cmake --install into $work/prefix"
rm -rf "$work/prefix"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }

echo "== pip install $source/python"
"$python" -m pip uninstall -q -y tessera >/dev/null 2>&1
"$python" -m pip install -v --disable-pip-version-check --timeout 30 --retries 2 "$source/python" \
  -Ccmake.define.CMAKE_PREFIX_PATH="$work/prefix" -Cbuild-dir="$work/wheel-build" >"$work/pip-tessera.log" 2>&1 \
  || skip_unless_reachable "$work/pip-tessera.log" "the tessera package (its build needs scikit-build-core and nanobind)"

echo "== pytest"
# From another folder, so that the installed package is imported, not the source tree's.
cd "$work" && exec "$python" -m pytest -v -p no:cacheprovider "$source/python/tests"
