#!/usr/bin/env bash
# numpy and SciPy from PyPI, unmodified, under LD_PRELOAD=libtessera_lapack.so. Their wheels bundle
# their own OpenBLAS and call it through prefixed symbols: numpy 2 through 64-bit-integer ones
# (scipy_dpotrf_64_), SciPy through scipy_dpotrf_ and scipy_dpotrs_. Both must reach Tessera.
# The virtual environment is made once in VENV_DIR (in the build tree) and reused.
#   numpy_pip_test.sh VENV_DIR LIBTESSERA_LAPACK
# Exits 77 (skipped) when python3 cannot make a virtual environment (install python3-venv) or
# pip cannot reach the package index.
set -uo pipefail
venv=$1 library=$2 n=700
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/preload_support.sh"
python=$venv/bin/python

if ! "$python" -c 'import numpy, scipy' >/dev/null 2>&1; then
  rm -rf "$venv"
  if ! /usr/bin/python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    echo "SKIPPED: python3 cannot make a virtual environment (install python3-venv)"
    exit 77
  fi
  pip_log=$(mktemp)
  if ! "$python" -m pip install --disable-pip-version-check --only-binary=:all: --timeout 30 --retries 2 \
       numpy scipy >"$pip_log" 2>&1; then
    cat "$pip_log"
    if grep -qiE "connection|network|resolution|timed out|proxy|unreachable|No matching distribution" "$pip_log"; then
      rm -rf "$venv" "$pip_log"
      echo "SKIPPED: pip cannot reach the package index to install numpy and scipy"
      exit 77
    fi
    rm -f "$pip_log"
    fail "pip install numpy scipy failed"
  fi
  rm -f "$pip_log"
fi
"$python" -c 'import numpy, scipy; print(f"numpy {numpy.__version__}, scipy {scipy.__version__} from PyPI in '"$venv"'")'

# numpy: the whole numpy test with this interpreter; its call must be a 64-bit-integer one.
numpy_log=$(mktemp)
trap 'rm -f "$numpy_log" "$log"' EXIT
PYTHON=$python "$here/numpy_cholesky_test.sh" "$library" "$n" >"$numpy_log" 2>&1
status=$?
cat "$numpy_log"
[ "$status" -eq 0 ] || fail "the numpy test failed with numpy from PyPI"
grep -qE "^numpy end-to-end test passed \(.*, [a-z_]+_64_\)$" "$numpy_log" \
  || fail "numpy from PyPI did not call a 64-bit-integer dpotrf"

# SciPy: a factorization and a solve, and a matrix that is not positive definite.
run_preloaded "$library" 300 TESSERA_MODE="${TESSERA_MODE:-cpu}" -- "$python" - "$n" <<'PY'
import sys
import numpy as np
import scipy
import scipy.linalg

n = int(sys.argv[1])
rng = np.random.default_rng(2025)
G = rng.standard_normal((n, n))
A = G @ G.T / n + np.eye(n)
b = rng.standard_normal((n, 3))
factor = scipy.linalg.cho_factor(A, lower=False)
x = scipy.linalg.cho_solve(factor, b)
residual = np.linalg.norm(A @ x - b) / (np.linalg.norm(A) * np.linalg.norm(x))
print(f"scipy {scipy.__version__}: cho_factor + cho_solve n={n}: ||A x - b|| / (||A|| ||x||) = {residual:.3e}")
ok = residual < 1e-14 * n

B = A.copy()
B[n // 3, n // 3] = -1.0
try:
    scipy.linalg.cholesky(B, lower=True)
    print("FAILED: no LinAlgError for a matrix that is not positive definite")
    ok = False
except np.linalg.LinAlgError as error:
    print(f"not positive definite: LinAlgError: {error}")
sys.exit(0 if ok else 1)
PY
mode=${TESSERA_MODE:-cpu}
[ "$status" -eq 0 ] || fail "$python (scipy) exited with $status"
grep -qF "tessera-lapack: DPOTRF uplo=U n=$n (scipy_dpotrf_): tessera $mode, info=0," "$log" \
  || fail "scipy's scipy_dpotrf_ call did not go through Tessera"
grep -qF "tessera-lapack: DPOTRS uplo=U n=$n nrhs=3 (scipy_dpotrs_): tessera $mode, info=0," "$log" \
  || fail "scipy's scipy_dpotrs_ call did not go through Tessera"
grep -qF "tessera-lapack: DPOTRF uplo=L n=$n (scipy_dpotrf_): tessera $mode, info=$((n / 3 + 1))," "$log" \
  || fail "the matrix that is not positive definite did not report info $((n / 3 + 1)) through Tessera"
echo "numpy and scipy from PyPI: test passed"
