// Fuzzes the C API (tessera_{d,s}{potrf,potrs,posv}) on tiny matrices: uplo, sizes, leading
// dimensions, the tile size (TESSERA_NB), null pointers, right-hand sides overlapping the matrix,
// and matrices that are positive definite, fail at a chosen column, hold a NaN or an infinity, or
// are arbitrary. Invariants checked on every input:
//   * a bad argument gives LAPACK's -i (Tessera's numbering) and leaves every buffer as it was;
//   * a valid call gives info in [0, n] (the exact column wherever the input fixes it), never
//     writes outside the referenced triangle of A and the n x nrhs block of B, leaves B as it was
//     when it fails, and is right (small backward error) when it reports success.
// A violated invariant aborts with a message, which libFuzzer (and the replay test) reports.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "byte_reader.hpp"
#include "tessera/tessera.h"

namespace {

using tessera::fuzz::ByteReader;
using Real = long double;  // reference arithmetic

// Scaled residuals (in units of n eps) pass below LAPACK's test-suite threshold: rounding alone
// can exceed 1 on tiny matrices, a wrong answer is orders of magnitude above.
constexpr Real kResidualThreshold = 30;

enum class Operation { potrf, potrs, posv };
enum class Content { spd, fails_at_column, non_finite, arbitrary };

const char* name_of(Operation op) { return op == Operation::potrf ? "potrf" : op == Operation::potrs ? "potrs" : "posv"; }

struct Case {
  Operation op = Operation::potrf;
  bool single = false;  // float instead of double
  char uplo = 'L';
  int n = 0, lda = 1, nrhs = 0, ldb = 1;
  bool a_null = false, b_null = false, b_overlaps = false;
  Content content = Content::spd;
  bool nan_in_b = false;  // one right-hand side holds a NaN: it propagates, info does not change
  int aux = 0;
  std::string nb;  // TESSERA_NB; "" lets Tessera choose
  bool nb_valid = true;
  std::uint32_t seed = 0;
};

[[noreturn]] void violated(const Case& c, const std::string& what) {
  std::fprintf(stderr,
               "invariant violated: %s\n  case: %s%s uplo=%d n=%d lda=%d nrhs=%d ldb=%d a_null=%d b_null=%d "
               "b_overlaps=%d content=%d nan_in_b=%d aux=%d TESSERA_NB='%s' seed=%u\n",
               what.c_str(), c.single ? "s" : "d", name_of(c.op), c.uplo, c.n, c.lda, c.nrhs, c.ldb, c.a_null, c.b_null,
               c.b_overlaps, static_cast<int>(c.content), c.nan_in_b, c.aux, c.nb.c_str(), c.seed);
  std::abort();
}

void require(const Case& c, bool ok, const std::string& what) {
  if (!ok) violated(c, what);
}

int pick_leading_dimension(std::uint8_t b, int n) {
  const int minimum = std::max(1, n);
  if (b < 192) return minimum + b % 4;
  if (b < 216) return minimum - 1 - b % 2;  // too small
  if (b < 232) return -(b % 3);       // zero or negative
  return n <= 2 ? minimum + (1 << 16) + b : minimum + b % 4;  // far larger than n; the buffer stays small
}

Case decode(ByteReader& in) {
  Case c;
  const std::uint8_t op = in.byte();
  c.op = static_cast<Operation>(op % 3);
  c.single = (op / 3) % 2 == 1;
  static const char valid_uplo[] = {'L', 'U', 'l', 'u'};
  static const char invalid_uplo[] = {'X', 'x', 'A', 'N', ' ', '\0', '*', '\xff'};
  const std::uint8_t u = in.byte();
  c.uplo = u < 232 ? valid_uplo[u % 4] : invalid_uplo[u % 8];
  const std::uint8_t nbyte = in.byte();
  if (nbyte < 216) {
    c.n = nbyte % 25;
  } else if (nbyte < 236) {
    c.n = nbyte == 235 ? std::numeric_limits<int>::min() : -1 - nbyte % 3;
  } else {
    c.n = 1000000 + nbyte;  // only with a null A: no buffer is made for it
    c.a_null = true;
  }
  c.lda = pick_leading_dimension(in.byte(), c.n);
  const std::uint8_t r = in.byte();
  c.nrhs = r < 208 ? r % 5 : r < 232 ? -1 - r % 2 : 0;
  c.ldb = pick_leading_dimension(in.byte(), c.n);
  const std::uint8_t flags = in.byte();
  c.a_null = c.a_null || (flags & 0x07) == 0x07;
  c.b_null = (flags & 0x38) == 0x38;
  c.b_overlaps = c.op != Operation::potrf && (flags & 0xC0) == 0xC0 && !c.a_null && !c.b_null;
  const std::uint8_t content = in.byte();
  c.content = static_cast<Content>(content % 4);
  c.nan_in_b = (content / 4) % 8 == 7;
  c.aux = in.byte() | (in.byte() << 8);
  const int nb_choice = in.byte() % 8;
  static const char* const invalid_nb[] = {"0", "-3", "x9", "99999999999"};
  if (nb_choice == 2 && c.n <= 6)
    c.nb = "1";  // (on larger matrices, thousands of tasks per input: too slow for fuzzing)
  else if (nb_choice >= 2 && nb_choice <= 6)
    c.nb = std::to_string(2 + c.aux % (std::max(c.n, 0) % 30 + 2));
  else if (nb_choice == 7) {
    c.nb = invalid_nb[c.aux % 4];
    c.nb_valid = false;
  }
  c.seed = in.u32();
  return c;
}

// Elements spanned by a column-major rows x cols matrix with leading dimension ld (0 when empty
// or when the sizes are invalid: then a token buffer stands in).
std::size_t span_of(int rows, int cols, int ld) {
  if (rows <= 0 || cols <= 0 || ld < rows) return 0;
  return static_cast<std::size_t>(ld) * (cols - 1) + rows;
}

bool referenced(char uplo, int i, int j) { return (uplo == 'U' || uplo == 'u') ? i <= j : i >= j; }

// Reference LAPACK's checks in its order (uplo, n, [nrhs,] lda, [ldb]), then Tessera's: null
// pointers to matrices that hold elements, then B sharing an element with the n x n block of A
// (found element by element: independent of Tessera's own test).
int expected_argument_status(const Case& c, bool b_shares_an_element_with_a) {
  if (!std::strchr("LlUu", c.uplo) || c.uplo == '\0') return -1;
  if (c.n < 0) return -2;
  const int min_ld = std::max(1, c.n);
  if (c.op == Operation::potrf) {
    if (c.lda < min_ld) return -4;
    if (c.a_null && c.n > 0) return -3;
    return 0;
  }
  if (c.nrhs < 0) return -3;
  if (c.lda < min_ld) return -5;
  if (c.ldb < min_ld) return -7;
  if (c.a_null && c.n > 0) return -4;
  if (c.b_null && c.n > 0 && c.nrhs > 0) return -6;
  if (b_shares_an_element_with_a) return -6;
  return 0;
}

// The symmetric matrix held by the referenced triangle of A (n x n, leading dimension lda).
template <class T>
std::vector<Real> symmetric_from(const Case& c, const T* A) {
  const int n = c.n;
  std::vector<Real> S(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool ref = referenced(c.uplo, i, j);
      S[i + static_cast<std::size_t>(j) * n] = A[(ref ? i : j) + static_cast<std::size_t>(ref ? j : i) * c.lda];
    }
  return S;
}

// Unblocked Cholesky in extended precision: LAPACK's info, and how far every pivot up to the
// failing one is from zero relative to the largest diagonal entry (small: the outcome in T's
// precision may legitimately differ).
struct ReferenceCholesky {
  int info = 0;
  Real margin = 1;
  std::vector<Real> L;
};

ReferenceCholesky reference_cholesky(const std::vector<Real>& S, int n) {
  ReferenceCholesky ref;
  ref.L.assign(static_cast<std::size_t>(n) * n, 0);
  Real scale = 0;
  for (int j = 0; j < n; ++j) scale = std::max(scale, std::fabs(S[j + static_cast<std::size_t>(j) * n]));
  if (scale == 0) scale = 1;
  auto L = [&](int i, int j) -> Real& { return ref.L[i + static_cast<std::size_t>(j) * n]; };
  for (int j = 0; j < n; ++j) {
    Real d = S[j + static_cast<std::size_t>(j) * n];
    for (int k = 0; k < j; ++k) d -= L(j, k) * L(j, k);
    ref.margin = std::min(ref.margin, std::isnan(d) ? Real(0) : std::fabs(d) / scale);
    if (!(d > 0)) {
      ref.info = j + 1;
      return ref;
    }
    L(j, j) = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      Real s = S[i + static_cast<std::size_t>(j) * n];
      for (int k = 0; k < j; ++k) s -= L(i, k) * L(j, k);
      L(i, j) = s / L(j, j);
    }
  }
  return ref;
}

Real one_norm(const std::vector<Real>& M, int rows, int cols) {
  Real norm = 0;
  for (int j = 0; j < cols; ++j) {
    Real s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(M[i + static_cast<std::size_t>(j) * rows]);
    norm = std::max(norm, s);
  }
  return norm;
}

// ||S - L L^T||_1 / (n ||S||_1 eps) with L read from the referenced triangle of F.
template <class T>
Real factor_backward_error(const Case& c, const std::vector<Real>& S, const T* F) {
  const int n = c.n;
  auto L = [&](int i, int j) -> Real {  // lower factor from either storage
    if (i < j) return 0;
    return (c.uplo == 'U' || c.uplo == 'u') ? F[j + static_cast<std::size_t>(i) * c.lda] : F[i + static_cast<std::size_t>(j) * c.lda];
  };
  std::vector<Real> R(S);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Real llt = 0;
      for (int k = 0; k <= std::min(i, j); ++k) llt += L(i, k) * L(j, k);
      R[i + static_cast<std::size_t>(j) * n] -= llt;
    }
  return one_norm(R, n, n) / (n * one_norm(S, n, n) * std::numeric_limits<T>::epsilon());
}

// ||S X - B||_1 / (||S||_1 ||X||_1 n eps), leaving out right-hand side `skipped` (-1: none).
template <class T>
Real solve_backward_error(const Case& c, const std::vector<Real>& S, const T* X, const std::vector<T>& B, int skipped) {
  const int n = c.n;
  std::vector<Real> R(static_cast<std::size_t>(n) * c.nrhs), Xr(R.size());
  for (int r = 0; r < c.nrhs; ++r)
    for (int i = 0; i < n && r != skipped; ++i) {
      Real ax = 0;
      for (int k = 0; k < n; ++k) ax += S[i + static_cast<std::size_t>(k) * n] * X[k + static_cast<std::size_t>(r) * c.ldb];
      R[i + static_cast<std::size_t>(r) * n] = ax - B[i + static_cast<std::size_t>(r) * c.ldb];
      Xr[i + static_cast<std::size_t>(r) * n] = X[i + static_cast<std::size_t>(r) * c.ldb];
    }
  const Real denominator = one_norm(S, n, n) * one_norm(Xr, n, c.nrhs) * n * std::numeric_limits<T>::epsilon();
  return denominator > 0 ? one_norm(R, n, c.nrhs) / denominator : 0;
}

// The C API's routines of one precision.
template <class T>
struct CRoutines {
  int (*potrf)(char, int, T*, int);
  int (*potrs)(char, int, int, const T*, int, T*, int);
  int (*posv)(char, int, int, T*, int, T*, int);
};

template <class T>
int call(const Case& c, T* A, T* B) {
  CRoutines<T> routines;
  if constexpr (std::is_same_v<T, double>)
    routines = {tessera_dpotrf, tessera_dpotrs, tessera_dposv};
  else
    routines = {tessera_spotrf, tessera_spotrs, tessera_sposv};
  switch (c.op) {
    case Operation::potrf: return routines.potrf(c.uplo, c.n, A, c.lda);
    case Operation::potrs: return routines.potrs(c.uplo, c.n, c.nrhs, A, c.lda, B, c.ldb);
    case Operation::posv: return routines.posv(c.uplo, c.n, c.nrhs, A, c.lda, B, c.ldb);
  }
  return 0;
}

// Where the non-finite entry goes: (row, col) of the referenced triangle, and its value; and,
// for some inputs, a failing pivot in an earlier column (-1: none), which LAPACK reaches first.
struct BadEntry {
  int row = 0, col = 0;
  double value = 0;
  int earlier_failure = -1;
};

BadEntry bad_entry_of(const Case& c) {
  const int r = c.aux % c.n;
  const int k = static_cast<int>(c.seed % static_cast<std::uint32_t>(r + 1));  // k <= r
  const bool upper = c.uplo == 'U' || c.uplo == 'u';
  const double values[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()};
  const int earlier_failure = r > 0 && (c.aux / 96) % 2 == 1 ? static_cast<int>((c.seed >> 8) % static_cast<std::uint32_t>(r)) : -1;
  return {upper ? k : r, upper ? r : k, values[(c.aux / 32) % 3], earlier_failure};
}

// Fills the n x n block of A (lda) with the case's content; `solved_matrix` receives, for potrs
// on a positive definite matrix, the matrix whose factor A then holds.
template <class T>
void fill_matrix(const Case& c, ByteReader& in, T* A, std::vector<Real>& solved_matrix) {
  const int n = c.n;
  std::mt19937 gen(c.seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  auto at = [&](int i, int j) -> T& { return A[i + static_cast<std::size_t>(j) * c.lda]; };
  if (c.content == Content::arbitrary) {
    // Both triangles, independently: the unreferenced one must not matter. Values in [-16, 16),
    // the diagonal raised by a multiple of n so that some matrices are positive definite.
    const Real boost = static_cast<Real>(c.aux % 4) * n;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        at(i, j) = static_cast<T>(static_cast<std::int8_t>(in.byte()) / 8.0 + (i == j ? static_cast<double>(boost) : 0.0));
    return;
  }
  // G G^T / n + I: positive definite, well conditioned.
  std::vector<Real> G(static_cast<std::size_t>(n) * n);
  for (Real& g : G) g = unit(gen);
  std::vector<Real> S(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      Real s = 0;
      for (int k = 0; k < n; ++k) s += G[i + static_cast<std::size_t>(k) * n] * G[j + static_cast<std::size_t>(k) * n];
      S[i + static_cast<std::size_t>(j) * n] = static_cast<T>(s / n + (i == j ? 1 : 0));
    }
  if (c.op == Operation::potrs && c.content == Content::spd) {
    // potrs needs a factor: that of S, rounded to T; the matrix it solves is L L^T.
    const ReferenceCholesky ref = reference_cholesky(S, n);
    solved_matrix.assign(S.size(), 0);
    std::vector<Real> L(S.size());
    for (std::size_t k = 0; k < L.size(); ++k) L[k] = static_cast<T>(ref.L[k]);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        Real s = 0;
        for (int k = 0; k <= std::min(i, j); ++k) s += L[i + static_cast<std::size_t>(k) * n] * L[j + static_cast<std::size_t>(k) * n];
        solved_matrix[i + static_cast<std::size_t>(j) * n] = s;
        if (i >= j) (referenced(c.uplo, i, j) ? at(i, j) : at(j, i)) = static_cast<T>(L[i + static_cast<std::size_t>(j) * n]);
      }
    return;
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (referenced(c.uplo, i, j)) at(i, j) = static_cast<T>(S[i + static_cast<std::size_t>(j) * n]);
  if (c.content == Content::fails_at_column) {
    const int column = 1 + c.aux % n;
    at(column - 1, column - 1) = static_cast<T>(-(1 + c.aux % 50));
  } else if (c.content == Content::non_finite) {
    const BadEntry bad = bad_entry_of(c);
    at(bad.row, bad.col) = static_cast<T>(bad.value);
    if (bad.earlier_failure >= 0) at(bad.earlier_failure, bad.earlier_failure) = T(-1);
  }
}

// The info the content fixes (-1 where it fixes none).
int expected_info(const Case& c) {
  switch (c.content) {
    case Content::spd: return 0;
    case Content::fails_at_column: return c.op == Operation::potrs ? 0 : 1 + c.aux % c.n;
    case Content::non_finite: {
      // In potrs A is a factor: LAPACK's xPOTRS lets the value propagate into B, with info 0.
      if (c.op == Operation::potrs) return 0;
      // LAPACK's pivot there is +inf: its square root, and the column below divided by it.
      const BadEntry bad = bad_entry_of(c);
      if (bad.earlier_failure >= 0) return bad.earlier_failure + 1;
      if (bad.row == bad.col && bad.value > 0) return 0;
      return std::max(bad.row, bad.col) + 1;
    }
    case Content::arbitrary: return c.op == Operation::potrs ? 0 : -1;
  }
  return -1;
}

template <class T>
void run_case(const Case& c, ByteReader& in) {
  // Buffers: exact sizes (AddressSanitizer sees any access past them); B inside A's allocation
  // when it overlaps.
  // (Sizes beyond the tiny ones come only with a null A, which must be rejected unread.)
  const bool sizes_valid = c.n >= 0 && c.n <= 64 && c.lda >= std::max(1, c.n);
  const std::size_t a_span = sizes_valid ? span_of(c.n, c.n, c.lda) : 0;
  const std::size_t b_span = (sizes_valid && c.nrhs > 0 && c.ldb >= std::max(1, c.n)) ? span_of(c.n, c.nrhs, c.ldb) : 0;
  const std::size_t b_offset = c.b_overlaps ? static_cast<std::size_t>(c.aux) % std::max<std::size_t>(a_span, 1) : 0;
  std::vector<T> a_memory(std::max<std::size_t>(c.b_overlaps ? std::max(a_span, b_offset + b_span) : a_span, 1));
  std::vector<T> b_memory(c.b_overlaps ? 1 : std::max<std::size_t>(b_span, 1));
  // Background: NaN (a read of it would show) or a plain sentinel.
  const T background = (c.seed & 1) ? std::numeric_limits<T>::quiet_NaN() : T(-7.25);
  std::fill(a_memory.begin(), a_memory.end(), background);
  std::fill(b_memory.begin(), b_memory.end(), background);
  T* A = c.a_null ? nullptr : a_memory.data();
  T* B = c.b_null ? nullptr : c.b_overlaps ? a_memory.data() + b_offset : b_memory.data();

  std::vector<Real> solved_matrix;
  if (a_span > 0) fill_matrix(c, in, a_memory.data(), solved_matrix);
  std::vector<T> rhs;
  const int nan_column = c.nan_in_b && c.nrhs > 0 ? c.aux % c.nrhs : -1;
  if (b_span > 0) {
    T* Bfill = c.b_overlaps ? a_memory.data() + b_offset : b_memory.data();
    std::mt19937 gen(c.seed ^ 0x5bd1e995u);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (int r = 0; r < c.nrhs; ++r)
      for (int i = 0; i < c.n; ++i) Bfill[i + static_cast<std::size_t>(r) * c.ldb] = static_cast<T>(unit(gen));
    if (c.nan_in_b) Bfill[c.aux % c.n + static_cast<std::size_t>(nan_column) * c.ldb] = std::numeric_limits<T>::quiet_NaN();
    rhs.assign(Bfill, Bfill + b_span);
  }

  bool shares = false;
  if (c.b_overlaps && a_span > 0 && b_span > 0)
    for (int r = 0; r < c.nrhs && !shares; ++r)
      for (int i = 0; i < c.n && !shares; ++i) {
        const std::size_t e = b_offset + i + static_cast<std::size_t>(r) * c.ldb;
        shares = static_cast<int>(e / c.lda) < c.n && static_cast<int>(e % c.lda) < c.n;
      }
  const std::vector<T> a_before = a_memory, b_before = b_memory;
  const std::vector<Real> S = a_span > 0 ? symmetric_from(c, a_memory.data()) : std::vector<Real>();

  setenv("TESSERA_NB", c.nb.c_str(), 1);
  const int info = call(c, A, B);

  auto unchanged = [](const std::vector<T>& before, const std::vector<T>& after) {
    return std::memcmp(before.data(), after.data(), before.size() * sizeof(T)) == 0;
  };
  const int status = expected_argument_status(c, shares);
  if (status < 0) {
    require(c, info == status, "bad argument: expected " + std::to_string(status) + ", got " + std::to_string(info));
    require(c, unchanged(a_before, a_memory) && unchanged(b_before, b_memory), "bad argument, yet memory was written");
    return;
  }
  const bool trivial = c.n == 0 || (c.op == Operation::potrs && c.nrhs == 0);
  if (trivial || !c.nb_valid) {
    require(c, info == (trivial ? 0 : TESSERA_RUNTIME_FAILURE), "got " + std::to_string(info));
    require(c, unchanged(a_before, a_memory) && unchanged(b_before, b_memory), "memory written by a call that does nothing");
    return;
  }
  require(c, info >= 0 && info <= c.n, "info " + std::to_string(info) + " out of [0, n]");

  // Memory Tessera may write: A's referenced triangle (potrf, posv) and B's block (on success).
  const bool writes_a = c.op != Operation::potrs;
  const bool writes_b = c.op != Operation::potrf && info == 0;
  for (std::size_t e = 0; e < a_memory.size(); ++e) {
    const int col = static_cast<int>(e / c.lda), row = static_cast<int>(e % c.lda);
    bool writable = writes_a && e < a_span && col < c.n && row < c.n && referenced(c.uplo, row, col);
    if (c.b_overlaps && writes_b && e >= b_offset && e < b_offset + b_span)
      writable = writable || static_cast<int>((e - b_offset) % c.ldb) < c.n;
    if (!writable && std::memcmp(&a_before[e], &a_memory[e], sizeof(T)) != 0)
      violated(c, "wrote A's memory outside what it may write, element " + std::to_string(e));
  }
  if (!c.b_overlaps)
    for (std::size_t e = 0; e < b_memory.size(); ++e) {
      const bool writable = writes_b && e < b_span && static_cast<int>(e % c.ldb) < c.n;
      if (!writable && std::memcmp(&b_before[e], &b_memory[e], sizeof(T)) != 0)
        violated(c, "wrote B's memory outside what it may write, element " + std::to_string(e));
    }

  const int fixed = expected_info(c);
  if (fixed >= 0) require(c, info == fixed, "info " + std::to_string(info) + ", expected " + std::to_string(fixed));
  if (c.op == Operation::potrs) {
    if (c.content == Content::spd)
      require(c, solve_backward_error(c, solved_matrix, B, rhs, nan_column) < kResidualThreshold,
              "potrs: large solve backward error");
    return;
  }
  // potrf and posv: compare with the extended-precision reference where the pivots are clear
  // (a non-finite input is Tessera's own report, checked above).
  const ReferenceCholesky ref = reference_cholesky(S, c.n);
  const Real clear_margin = Real(100) * c.n * std::numeric_limits<T>::epsilon();
  const bool comparable = c.content != Content::non_finite && ref.margin > clear_margin;
  if (comparable)
    require(c, info == ref.info, "info " + std::to_string(info) + ", reference " + std::to_string(ref.info));
  if (info != 0 || c.content == Content::non_finite) return;  // a factor with +inf has no finite error
  require(c, factor_backward_error(c, S, A) < kResidualThreshold, "success reported with a large factor backward error");
  if (c.op == Operation::posv && comparable)
    require(c, solve_backward_error(c, S, B, rhs, nan_column) < kResidualThreshold,
            "posv: success reported with a large solve backward error");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Set before StarPU starts, so that later writes only replace values: StarPU's threads may read
  // the environment while this thread changes TESSERA_NB.
  setenv("TESSERA_NB", "", 1);
  setenv("STARPU_SILENT", "1", 0);
  setenv("TESSERA_NCPU", "2", 0);
  // The target is Tessera's checking and memory handling: StarPU's simplest policy runs about
  // three times as many inputs per second as dmdas (every policy runs in the test suite).
  setenv("TESSERA_POLICY", "eager", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const Case c = decode(in);
  if (c.single)
    run_case<float>(c, in);
  else
    run_case<double>(c, in);
  return 0;
}
