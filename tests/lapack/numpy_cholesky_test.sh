#!/usr/bin/env bash
# End to end: Debian's numpy, unmodified, under LD_PRELOAD=libtessera_lapack.so. numpy.linalg.cholesky
# calls LAPACK's dpotrf_; the verbose line must show that the call went through Tessera, and the
# factor must be right. A matrix that is not positive definite must still raise LinAlgError.
# Exits 77 (skipped) when no python3 with numpy is installed.
#   numpy_cholesky_test.sh LIBTESSERA_LAPACK [N]
set -uo pipefail
library=$1 n=${2:-700}

python=
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import numpy' >/dev/null 2>&1; then
    python=$(command -v "$candidate")
    break
  fi
done
if [ -z "$python" ]; then
  echo "SKIPPED: no python3 with numpy (install python3-numpy)"
  exit 77
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
LD_PRELOAD=$library TESSERA_LAPACK_MIN_N=0 TESSERA_LAPACK_VERBOSE=1 TESSERA_MODE=${TESSERA_MODE:-cpu} \
  STARPU_SILENT=1 timeout 300 "$python" - "$n" >"$log" 2>&1 <<'PY'
import sys
import numpy as np

n = int(sys.argv[1])
rng = np.random.default_rng(2024)
G = rng.standard_normal((n, n))
A = G @ G.T / n + np.eye(n)
L = np.linalg.cholesky(A)
residual = np.linalg.norm(A - L @ L.T) / np.linalg.norm(A)
upper_zero = not np.triu(L, 1).any()
print(f"numpy {np.__version__}: cholesky n={n}: ||A - L L^T||_F / ||A||_F = {residual:.3e}, "
      f"strict upper triangle zero: {upper_zero}")
ok = residual < 1e-14 * n and upper_zero

B = A.copy()
B[n // 2, n // 2] = -1.0
try:
    np.linalg.cholesky(B)
    print("FAILED: no LinAlgError for a matrix that is not positive definite")
    ok = False
except np.linalg.LinAlgError as error:
    print(f"not positive definite: LinAlgError: {error}")
sys.exit(0 if ok else 1)
PY
status=$?
cat "$log"

fail() { echo "FAILED: $*"; exit 1; }
[ "$status" -eq 0 ] || fail "$python exited with $status"
mode=${TESSERA_MODE:-cpu}
grep -q "^tessera-lapack: DPOTRF uplo=[LU] n=$n: tessera $mode, info=0," "$log" \
  || fail "numpy's dpotrf_ call did not go through Tessera"
grep -q "^tessera-lapack: DPOTRF uplo=[LU] n=$n: tessera $mode, info=$((n / 2 + 1))," "$log" \
  || fail "the matrix that is not positive definite did not report info $((n / 2 + 1)) through Tessera"
echo "numpy end-to-end test passed ($python)"
