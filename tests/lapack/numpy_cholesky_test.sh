#!/usr/bin/env bash
# End to end: numpy, unmodified, under LD_PRELOAD=libtessera_lapack.so. numpy.linalg.cholesky
# calls LAPACK's dpotrf (Debian's numpy: dpotrf_; numpy 2's wheels: scipy_dpotrf_64_); the
# verbose line must show that the call went through Tessera, and the factor must be right. A
# matrix that is not positive definite must still raise LinAlgError. numpy's own LAPACK must
# stay the next LAPACK (the verbose startup line names it), and numpy's own xerbla_ must still
# answer a routine Tessera does not handle (lapack_lite.dorgqr with a bad argument behaves as
# without the library: Debian's numpy raises ValueError).
#   numpy_cholesky_test.sh LIBTESSERA_LAPACK [N]
# PYTHON names the interpreter (default: Debian's python3 with numpy). Exits 77 (skipped) when
# no python3 with numpy is installed.
set -uo pipefail
library=$1 n=${2:-700}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/preload_support.sh"

python=
for candidate in ${PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import numpy' >/dev/null 2>&1; then
    python=$(command -v "$candidate")
    break
  fi
done
if [ -z "$python" ]; then
  echo "SKIPPED: no python3 with numpy (install python3-numpy)"
  exit 77
fi

# The symbol numpy calls and the library that defines it among numpy's own dependencies.
umath=$("$python" -c 'import numpy.linalg._umath_linalg as m; print(m.__file__)') || fail "numpy has no _umath_linalg"
symbol=$(nm -D "$umath" | awk '$1 == "U" && $2 ~ /^(scipy_)?dpotrf_(64_)?$/ && !s {s = $2} END {print s}')
[ -n "$symbol" ] || fail "$umath calls no dpotrf"
numpy_lapack=
for candidate in $(ldd "$umath" | awk '$3 ~ /^\// {print $3}'); do
  if nm -D --defined-only "$candidate" 2>/dev/null | awk -v s="$symbol" '$3 == s {found = 1} END {exit !found}'; then
    numpy_lapack=$candidate
    break
  fi
done
[ -n "$numpy_lapack" ] || fail "no library of numpy's defines $symbol"
echo "numpy ($python) calls $symbol, defined by $numpy_lapack"

# lapack_lite.dorgqr with LDA = 1 < M = 2 (argument 5): whatever numpy does without the library.
dorgqr_bad_argument() {
  "$python" - <<'PY' 2>&1 | grep '^dorgqr:'
import numpy as np
from numpy.linalg import lapack_lite
a, tau, work = np.zeros((2, 2)), np.zeros(2), np.zeros(4)
try:
    result = lapack_lite.dorgqr(2, 2, 2, a, 1, tau, work, 4, 0)
    print(f"dorgqr: returned info={result['info']}")
except Exception as error:
    print(f"dorgqr: {type(error).__name__}: {error}")
PY
}
without=$(dorgqr_bad_argument)
with=$(LD_PRELOAD=$library STARPU_SILENT=1 dorgqr_bad_argument)
echo "without libtessera_lapack: $without"
echo "with libtessera_lapack:    $with"
[ -n "$without" ] && [ "$with" = "$without" ] || fail "lapack_lite.dorgqr with a bad argument behaves differently under the library"

run_preloaded "$library" 300 TESSERA_MODE="${TESSERA_MODE:-cpu}" -- "$python" - "$n" <<'PY'
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

[ "$status" -eq 0 ] || fail "$python exited with $status"
mode=${TESSERA_MODE:-cpu}
# LP64 calls are shown as before; the other families name their symbol.
shown=" ($symbol)"
[ "$symbol" = dpotrf_ ] && shown=
grep -qF "tessera-lapack: DPOTRF uplo=L n=$n$shown: tessera $mode, info=0," "$log" \
  || grep -qF "tessera-lapack: DPOTRF uplo=U n=$n$shown: tessera $mode, info=0," "$log" \
  || fail "numpy's $symbol call did not go through Tessera"
grep -qE "^tessera-lapack: DPOTRF uplo=[LU] n=$n( \($symbol\))?: tessera $mode, info=$((n / 2 + 1))," "$log" \
  || fail "the matrix that is not positive definite did not report info $((n / 2 + 1)) through Tessera"
next=$(sed -nE '/^tessera-lapack: TESSERA_LAPACK_MIN_N=0; /{s/^.*smaller calls (to [^ ]+ )?go to //p;q}' "$log")
[ "$(readlink -f "$next")" = "$(readlink -f "$numpy_lapack")" ] \
  || fail "the next LAPACK is '$next', not numpy's own $numpy_lapack"
echo "numpy end-to-end test passed ($python, $symbol)"
