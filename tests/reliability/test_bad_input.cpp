// Bad input and injected faults: a matrix that stops being positive definite at every column and
// through every tile, NaN and infinity in every tile, empty matrices, tiles larger than the
// matrix, buffers at every alignment a pointer can have, right-hand sides overlapping the matrix,
// and matrices too large for memory. Every fault must give a clear answer (LAPACK info, a negative
// C status, or a tessera::Error), leave memory it must not write untouched, and leave the runtime
// able to factor the next matrix correctly.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <sys/mman.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../test_support.hpp"
#include "reliability_support.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

// Modes that run on this machine: hybrid without a GPU is cpu mode again, so it only adds cases
// where a GPU is present.
std::vector<Mode> available_modes() {
  if (have_gpu()) return {Mode::cpu, Mode::gpu, Mode::hybrid};
  return {Mode::cpu};
}

FactorOptions options_of(int nb, Uplo uplo, Mode mode) {
  FactorOptions options;
  options.nb = nb;
  options.uplo = uplo;
  options.mode = mode;
  return options;
}

// The next factorization after a fault must still be right.
void expect_runtime_usable(const std::string& after) {
  const int n = 57;
  const std::vector<double> A = random_spd<double>(n, n, 1234);
  std::vector<double> F = A;
  ASSERT_EQ(potrf(runtime(), n, F.data(), n, options_of(16, Uplo::lower, Mode::cpu)), 0) << "after " << after;
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0) << "after " << after;
}

// Entries of A (n x n, leading dimension ld) that a factorization of triangle `uplo` must not
// write: the other triangle and the padding rows.
template <class T>
void expect_unreferenced_untouched(const std::vector<T>& before, const std::vector<T>& after, int n, int ld, Uplo uplo,
                                   const std::string& what) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ld; ++i) {
      const bool referenced = i < n && (uplo == Uplo::lower ? i >= j : i <= j);
      const std::size_t k = i + static_cast<std::size_t>(j) * ld;
      if (!referenced && std::memcmp(&before[k], &after[k], sizeof(T)) != 0) {
        ADD_FAILURE() << what << ": entry (" << i << ", " << j << ") outside the referenced triangle was written";
        return;
      }
    }
}

// ---- not positive definite ------------------------------------------------------------------

// Three tiles of 8, 8 and 7 rows: first, middle and partial last tile.
constexpr int kN = 23;
constexpr int kNb = 8;

TEST(NotPositiveDefinite, AtEveryColumnBothTrianglesEveryMode) {
  const int ld = kN + 3;
  for (Mode mode : available_modes())
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (int column = 1; column <= kN; ++column) {
        std::vector<double> A = random_spd<double>(kN, ld, 100u + column);
        A[(column - 1) + static_cast<std::size_t>(column - 1) * ld] = -100.0;
        std::vector<double> F = A;
        const std::string what = std::string("column ") + std::to_string(column) + " " + to_string(uplo) + " " + to_string(mode);
        EXPECT_EQ(potrf(runtime(), kN, F.data(), ld, options_of(kNb, uplo, mode)), column) << what;
        expect_unreferenced_untouched(A, F, kN, ld, uplo, what);

        // posv: same info, and B left exactly as it was (LAPACK's contract).
        std::vector<double> G = A;
        std::vector<double> B = random_matrix<double>(kN, 3, kN, 7u + column);
        const std::vector<double> B0 = B;
        EXPECT_EQ(posv(runtime(), kN, 3, G.data(), ld, B.data(), kN, options_of(kNb, uplo, mode)), column) << what;
        EXPECT_EQ(B, B0) << what;
      }
  expect_runtime_usable("not positive definite at every column");
}

TEST(NotPositiveDefinite, OffDiagonalEntryInEveryTile) {
  // A(r, c) = A(c, r) = 1000 makes the 2 x 2 principal submatrix on rows c and r indefinite:
  // the leading minors up to order r stay positive definite, the one of order r + 1 does not.
  const int tiles = (kN + kNb - 1) / kNb;
  auto first = [](int t) { return t * kNb; };
  auto last = [](int t) { return std::min(kN, (t + 1) * kNb) - 1; };
  int cases = 0;
  for (Mode mode : available_modes())
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (int ti = 0; ti < tiles; ++ti)
        for (int tj = 0; tj <= ti; ++tj)
          for (int r : {first(ti), last(ti)})
            for (int c : {first(tj), last(tj)}) {
              if (r <= c) continue;
              std::vector<double> A = random_spd<double>(kN, kN, 300u + r * 31 + c);
              A[r + static_cast<std::size_t>(c) * kN] = 1000.0;
              A[c + static_cast<std::size_t>(r) * kN] = 1000.0;
              EXPECT_EQ(potrf(runtime(), kN, A.data(), kN, options_of(kNb, uplo, mode)), r + 1)
                  << "tile (" << ti << ", " << tj << ") entry (" << r << ", " << c << ") " << to_string(uplo) << " "
                  << to_string(mode);
              ++cases;
            }
  EXPECT_GT(cases, 0);
  expect_runtime_usable("indefinite off-diagonal entries");
}

TEST(NotPositiveDefinite, CApiReportsTheColumnAndStaysUsable) {
  // The C API picks its own tile size; every column of a matrix of a few default tiles.
  const int n = 150;
  for (int column : {1, 2, 63, 64, 65, 128, 129, 149, 150}) {
    std::vector<double> A = random_spd<double>(n, n, 500u + column);
    A[(column - 1) + static_cast<std::size_t>(column - 1) * n] = -1.0;
    EXPECT_EQ(tessera_dpotrf('L', n, A.data(), n), column);
    std::vector<float> S = random_spd<float>(n, n, 600u + column);
    S[(column - 1) + static_cast<std::size_t>(column - 1) * n] = -1.0f;
    EXPECT_EQ(tessera_spotrf('U', n, S.data(), n), column);
  }
  expect_runtime_usable("C API failures");
}

// ---- NaN and infinity -----------------------------------------------------------------------

template <class T>
void expect_non_finite_reported_in_every_tile(T bad) {
  const int tiles = (kN + kNb - 1) / kNb;
  for (Mode mode : available_modes())
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (int ti = 0; ti < tiles; ++ti)
        for (int tj = 0; tj <= ti; ++tj) {
          // The last row of tile row ti and the first column of tile column tj: r >= c.
          const int r = std::min(kN, (ti + 1) * kNb) - 1;
          const int c = tj * kNb;
          std::vector<T> A = random_spd<T>(kN, kN, 700u + ti * 7 + tj);
          // The entry lies in the referenced triangle of either storage.
          if (uplo == Uplo::lower)
            A[r + static_cast<std::size_t>(c) * kN] = bad;
          else
            A[c + static_cast<std::size_t>(r) * kN] = bad;
          const std::vector<T> A0 = A;
          Request request = potrf_async(runtime(), kN, A.data(), kN, options_of(kNb, uplo, mode));
          const std::string what = "value " + std::to_string(double(bad)) + " in tile (" + std::to_string(ti) + ", " +
                                   std::to_string(tj) + ") " + to_string(uplo) + " " + to_string(mode);
          // The smallest leading minor holding the entry has order r + 1.
          EXPECT_EQ(request.wait(), r + 1) << what;
          EXPECT_TRUE(request.non_finite_input()) << what;
          expect_unreferenced_untouched(A0, A, kN, kN, uplo, what);
        }
}

TEST(NonFinite, NanInEveryTile) {
  expect_non_finite_reported_in_every_tile<double>(std::numeric_limits<double>::quiet_NaN());
  expect_non_finite_reported_in_every_tile<float>(std::numeric_limits<float>::quiet_NaN());
  expect_runtime_usable("NaN input");
}

TEST(NonFinite, InfinityInEveryTile) {
  expect_non_finite_reported_in_every_tile<double>(std::numeric_limits<double>::infinity());
  expect_non_finite_reported_in_every_tile<double>(-std::numeric_limits<double>::infinity());
  expect_non_finite_reported_in_every_tile<float>(std::numeric_limits<float>::infinity());
  expect_runtime_usable("infinite input");
}

// Reference LAPACK's unblocked Cholesky (xPOTF2) of the lower triangle of the symmetric n x n
// matrix S: its info (a pivot that is not positive, or NaN, fails) and the factor computed up to it.
struct ReferencePotrf {
  int info = 0;
  std::vector<long double> L;
};

template <class T>
ReferencePotrf reference_potrf(const std::vector<T>& S, int n) {
  ReferencePotrf ref;
  ref.L.assign(static_cast<std::size_t>(n) * n, 0);
  auto L = [&](int i, int j) -> long double& { return ref.L[i + static_cast<std::size_t>(j) * n]; };
  for (int j = 0; j < n; ++j) {
    long double d = S[j + static_cast<std::size_t>(j) * n];
    for (int k = 0; k < j; ++k) d -= L(j, k) * L(j, k);
    if (!(d > 0)) {
      ref.info = j + 1;
      return ref;
    }
    L(j, j) = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      long double s = S[i + static_cast<std::size_t>(j) * n];
      for (int k = 0; k < j; ++k) s -= L(i, k) * L(j, k);
      L(i, j) = s / L(j, j);
    }
  }
  return ref;
}

// A symmetric n x n matrix (both triangles) holding 4 I, with `value` at (row, col) and (col, row).
template <class T>
std::vector<T> scaled_identity_with(int n, std::initializer_list<std::tuple<int, int, T>> entries) {
  std::vector<T> S(static_cast<std::size_t>(n) * n, T(0));
  for (int j = 0; j < n; ++j) S[j + static_cast<std::size_t>(j) * n] = T(4);
  for (const auto& [row, col, value] : entries)
    S[row + static_cast<std::size_t>(col) * n] = S[col + static_cast<std::size_t>(row) * n] = value;
  return S;
}

template <class T>
int c_api_potrf(char uplo, int n, T* a) {
  if constexpr (std::is_same_v<T, double>) {
    return tessera_dpotrf(uplo, n, a, n);
  } else {
    return tessera_spotrf(uplo, n, a, n);
  }
}

// Info of every interface on S, each run `repeats` times: the C++ API in every mode and tile size
// given, both storages, and the C API.
template <class T>
void expect_info_everywhere(const std::vector<T>& S, int n, int expected, const std::vector<int>& tile_sizes,
                            const std::string& what, int repeats = 3) {
  for (int repeat = 0; repeat < repeats; ++repeat) {
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      for (Mode mode : available_modes())
        for (int nb : tile_sizes) {
          std::vector<T> A = S;
          EXPECT_EQ(potrf(runtime(), n, A.data(), n, options_of(nb, uplo, mode)), expected)
              << what << " " << to_string(uplo) << " " << to_string(mode) << " nb=" << nb << " run " << repeat;
        }
      std::vector<T> A = S;
      EXPECT_EQ(c_api_potrf(uplo == Uplo::lower ? 'L' : 'U', n, A.data()), expected)
          << what << " C API " << to_string(uplo) << " run " << repeat;
    }
  }
}

TEST(NonFinite, InfoIsTheFirstFailingMinorEvenWithANanAfterIt) {
  // A failing pivot at column 2 and a NaN at row 64 (the same tile, or another one, depending on
  // the tile size): LAPACK stops at column 2. The first failing column, whatever the tiles and
  // the order tasks run in.
  const int n = 150;
  for (int nan_row : {4, 63, 64, 133, 149}) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> S = scaled_identity_with<double>(n, {{1, 1, -1.0}, {nan_row, 0, nan}});
    const int expected = reference_potrf(S, n).info;
    ASSERT_EQ(expected, 2);
    expect_info_everywhere(S, n, expected, {0, 16, 50, 64, 150}, "NaN at row " + std::to_string(nan_row + 1));
    const std::vector<float> Sf(S.begin(), S.end());
    expect_info_everywhere(Sf, n, expected, {0, 32}, "float NaN at row " + std::to_string(nan_row + 1), 1);
  }
  // The NaN first, a failing pivot after it: the NaN's row fails.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> S = scaled_identity_with<double>(n, {{40, 3, nan}, {100, 100, -1.0}});
  ASSERT_EQ(reference_potrf(S, n).info, 41);
  expect_info_everywhere(S, n, 41, {0, 16, 64}, "NaN at row 41, failing pivot at 101");
  expect_runtime_usable("a NaN after a failing pivot");
}

// +inf on the diagonal: LAPACK takes its square root, divides the column below by it and goes on
// (info 0, an infinite diagonal entry in the factor); -inf fails at its column, an infinity off
// the diagonal at its row. Tessera still tells the input held one (non_finite_input()).
TEST(NonFinite, InfinityOnTheDiagonalAnswersAsLapack) {
  const double inf = std::numeric_limits<double>::infinity();
  {
    const std::vector<double> S = scaled_identity_with<double>(3, {{0, 0, 1.0}, {1, 1, inf}, {2, 2, 1.0}});
    expect_info_everywhere(S, 3, 0, {0, 1, 2}, "diag(1, inf, 1)");
  }
  for (int column : {0, 7, 8, 22}) {
    std::vector<double> S = random_spd<double>(kN, kN, 900u + column);
    S[column + static_cast<std::size_t>(column) * kN] = inf;
    const ReferencePotrf ref = reference_potrf(S, kN);
    ASSERT_EQ(ref.info, 0);
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (Mode mode : available_modes()) {
        std::vector<double> A = S;
        Request request = potrf_async(runtime(), kN, A.data(), kN, options_of(kNb, uplo, mode));
        const std::string what = "+inf at (" + std::to_string(column) + ", " + std::to_string(column) + ") " +
                                 to_string(uplo) + " " + to_string(mode);
        EXPECT_EQ(request.wait(), 0) << what;
        EXPECT_TRUE(request.non_finite_input()) << what;
        for (int j = 0; j < kN; ++j)
          for (int i = j; i < kN; ++i) {
            const double ours = uplo == Uplo::lower ? A[i + static_cast<std::size_t>(j) * kN] : A[j + static_cast<std::size_t>(i) * kN];
            const long double want = ref.L[i + static_cast<std::size_t>(j) * kN];
            if (std::isinf(static_cast<double>(want)))
              EXPECT_EQ(ours, static_cast<double>(want)) << what << ": L(" << i << ", " << j << ")";
            else
              EXPECT_NEAR(ours, static_cast<double>(want), 1e-12) << what << ": L(" << i << ", " << j << ")";
          }
      }
    std::vector<double> A = S;
    EXPECT_EQ(tessera_dpotrf('L', kN, A.data(), kN), 0) << "C API, +inf at column " << column;
  }
  for (int column : {0, 9, 22}) {
    std::vector<double> S = random_spd<double>(kN, kN, 950u + column);
    S[column + static_cast<std::size_t>(column) * kN] = -inf;
    expect_info_everywhere(S, kN, column + 1, {kNb}, "-inf at column " + std::to_string(column + 1), 1);
  }
  expect_runtime_usable("infinities on the diagonal");
}

TEST(NonFinite, NanInRightHandSideIsNotAFactorizationFailure) {
  // LAPACK's posv factors A and lets a NaN of B propagate into X; it never reports a leading
  // minor of the (positive definite) A as failing because of B.
  const int n = 40, nrhs = 2;
  const std::vector<double> A = random_spd<double>(n, n, 801);
  std::vector<double> B = random_matrix<double>(n, nrhs, n, 802);
  B[17] = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> F = A, X = B;
  EXPECT_EQ(posv(runtime(), n, nrhs, F.data(), n, X.data(), n, options_of(16, Uplo::lower, Mode::cpu)), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);  // A was factored
  EXPECT_TRUE(std::isnan(X[17]));
  // The second right-hand side has no NaN: its solution is right.
  std::vector<double> A2(A), B2(B.begin() + n, B.end()), X2(X.begin() + n, X.end());
  EXPECT_LT(solve_backward_error(n, 1, A2, n, X2, B2, n), kResidualThreshold);

  std::vector<double> Y = B;
  EXPECT_EQ(potrs(runtime(), n, nrhs, F.data(), n, Y.data(), n, options_of(16, Uplo::lower, Mode::cpu)), 0);
  EXPECT_TRUE(std::isnan(Y[17]));
  expect_runtime_usable("NaN in a right-hand side");
}

// LAPACK's xPOTRS has no positive INFO: a NaN or infinity in the factor propagates into the
// solution. A factor of order n with one non-finite entry in triangle `uplo`, and right-hand
// sides; the solution Tessera gives must be non-finite exactly where LAPACKE's is and agree
// elsewhere.
template <class T>
struct FactorWithNonFinite {
  int n;
  int nrhs;
  Uplo uplo;
  std::vector<T> factor;
  std::vector<T> rhs;
  std::vector<T> lapack_solution;

  FactorWithNonFinite(int order, int rhs_count, Uplo triangle, int row, int col, T bad)
      : n(order), nrhs(rhs_count), uplo(triangle) {
    factor = random_spd<T>(n, n, 820u + static_cast<unsigned>(n));
    const char lapack_uplo = uplo == Uplo::lower ? 'L' : 'U';
    EXPECT_EQ(lapack_potrf(lapack_uplo, factor), 0);
    // (row, col) with row >= col names an entry of the lower factor; upper storage holds it transposed.
    const std::size_t at = uplo == Uplo::lower ? row + static_cast<std::size_t>(col) * n : col + static_cast<std::size_t>(row) * n;
    factor[at] = bad;
    rhs = random_matrix<T>(n, nrhs, n, 830u + static_cast<unsigned>(n));
    lapack_solution = rhs;
    // LAPACKE_xpotrs would refuse the NaN (-5) before LAPACK sees it: its _work form does not check.
    EXPECT_EQ(lapack_potrs(lapack_uplo, lapack_solution), 0);
  }

  int lapack_potrf(char lapack_uplo, std::vector<T>& a) const {
    if constexpr (std::is_same_v<T, double>) {
      return LAPACKE_dpotrf(LAPACK_COL_MAJOR, lapack_uplo, n, a.data(), n);
    } else {
      return LAPACKE_spotrf(LAPACK_COL_MAJOR, lapack_uplo, n, a.data(), n);
    }
  }
  int lapack_potrs(char lapack_uplo, std::vector<T>& b) const {
    if constexpr (std::is_same_v<T, double>) {
      return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, lapack_uplo, n, nrhs, factor.data(), n, b.data(), n);
    } else {
      return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, lapack_uplo, n, nrhs, factor.data(), n, b.data(), n);
    }
  }

  void expect_like_lapack(int info, const std::vector<T>& solution, const std::string& what) const {
    EXPECT_EQ(info, 0) << what << ": xPOTRS has no positive INFO";
    int non_finite = 0;
    for (std::size_t k = 0; k < solution.size(); ++k) {
      const T ours = solution[k], lapack = lapack_solution[k];
      non_finite += !std::isfinite(lapack);
      ASSERT_EQ(std::isfinite(ours), std::isfinite(lapack)) << what << ": element " << k << " is " << ours
                                                            << ", LAPACKE gives " << lapack;
      if (std::isfinite(lapack)) {
        ASSERT_NEAR(ours, lapack, 1e3 * std::numeric_limits<T>::epsilon() * (1 + std::abs(lapack))) << what << ": element " << k;
      }
    }
    EXPECT_GT(non_finite, 0) << what << ": the case must put a NaN or infinity into the solution";
  }
};

template <class T>
void expect_potrs_propagates(int n, int nrhs, Uplo uplo, int row, int col, T bad) {
  const FactorWithNonFinite<T> c(n, nrhs, uplo, row, col, bad);
  const std::string where = "n=" + std::to_string(n) + " uplo=" + to_string(uplo) + " L(" + std::to_string(row) + "," +
                            std::to_string(col) + ")=" + std::to_string(bad);
  for (Mode mode : available_modes()) {
    std::vector<T> X = c.rhs;
    const int info = potrs(runtime(), n, nrhs, c.factor.data(), n, X.data(), n, options_of(16, uplo, mode));
    c.expect_like_lapack(info, X, "C++ potrs " + where + " " + to_string(mode));
  }
  std::vector<T> X = c.rhs;
  const char c_uplo = uplo == Uplo::lower ? 'L' : 'U';
  int info = 0;
  if constexpr (std::is_same_v<T, double>) {
    info = tessera_dpotrs(c_uplo, n, nrhs, c.factor.data(), n, X.data(), n);
  } else {
    info = tessera_spotrs(c_uplo, n, nrhs, c.factor.data(), n, X.data(), n);
  }
  c.expect_like_lapack(info, X, "C API potrs " + where);

  // Tiles: the factor loaded into a tile matrix (its load reports the entry as a factorization
  // would), then the solve on tiles propagates it.
  TileMatrix<T> L(runtime(), n, 16);
  TileMatrix<T> B(runtime(), n, nrhs, 16, TileStructure::general);
  load_async(L, uplo, c.factor.data(), n).wait();
  ASSERT_EQ(load_async(B, c.rhs.data(), n).wait(), 0);
  EXPECT_EQ(potrs_async(L, B).wait(), 0);
  X.assign(c.rhs.size(), T(0));
  ASSERT_EQ(store_async(B, X.data(), n).wait(), 0);
  c.expect_like_lapack(0, X, "tile potrs " + where);
}

TEST(NonFinite, NanOrInfinityInTheFactorPropagatesThroughPotrs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_potrs_propagates<double>(41, 3, Uplo::lower, 20, 7, nan);
  expect_potrs_propagates<double>(41, 3, Uplo::upper, 20, 7, nan);
  expect_potrs_propagates<double>(37, 2, Uplo::lower, 0, 0, nan);
  expect_potrs_propagates<double>(37, 2, Uplo::upper, 33, 17, -inf);
  expect_potrs_propagates<float>(29, 1, Uplo::lower, 28, 28, std::numeric_limits<float>::quiet_NaN());
  expect_potrs_propagates<float>(29, 2, Uplo::upper, 19, 3, std::numeric_limits<float>::infinity());
  expect_runtime_usable("a NaN in the factor of a solve");
}

// ---- empty matrices and tiles larger than the matrix ----------------------------------------

TEST(Sizes, EmptyMatricesSucceedWithoutTouchingMemory) {
  for (Mode mode : available_modes()) {
    const FactorOptions options = options_of(0, Uplo::lower, mode);
    EXPECT_EQ(potrf<double>(runtime(), 0, nullptr, 1, options), 0);
    EXPECT_EQ(potrs<double>(runtime(), 0, 4, nullptr, 1, nullptr, 1, options), 0);
    EXPECT_EQ(posv<float>(runtime(), 0, 0, nullptr, 1, nullptr, 1, options), 0);
    // nrhs = 0: posv still factors A, B is not referenced.
    const std::vector<double> A = random_spd<double>(9, 9, 901);
    std::vector<double> F = A;
    EXPECT_EQ(posv<double>(runtime(), 9, 0, F.data(), 9, nullptr, 9, options), 0);
    EXPECT_LT(factor_backward_error(Uplo::lower, 9, A, F, 9), 1.0);
  }
  TileMatrix<double> empty(runtime(), 0, 8);
  EXPECT_EQ(empty.tile_rows(), 0);
  EXPECT_EQ(load_async(empty, Uplo::lower, static_cast<const double*>(nullptr), 1).wait(), 0);
  EXPECT_EQ(potrf_async(empty).wait(), 0);
  TileMatrix<double> no_rhs(runtime(), 0, 0, 8, TileStructure::general);
  EXPECT_EQ(potrs_async(empty, no_rhs).wait(), 0);

  EXPECT_EQ(tessera_spotrf('U', 0, nullptr, 1), 0);
  EXPECT_EQ(tessera_sposv('L', 0, 2, nullptr, 1, nullptr, 1), 0);
  EXPECT_EQ(tessera_spotrs('L', 3, 0, nullptr, 3, nullptr, 3), -4);  // A is still referenced
  expect_runtime_usable("empty matrices");
}

TEST(Sizes, TileLargerThanMatrix) {
  const int n = 37;
  for (int nb : {n, n + 1, 2 * n, 4096, INT_MAX / 2, INT_MAX - 1, INT_MAX})
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      const std::vector<double> A = random_spd<double>(n, n + 2, 1000u + nb % 97);
      std::vector<double> F = A;
      ASSERT_EQ(potrf(runtime(), n, F.data(), n + 2, options_of(nb, uplo, Mode::cpu)), 0) << "nb=" << nb;
      EXPECT_LT(factor_backward_error(uplo, n, A, F, n + 2), 1.0) << "nb=" << nb;
      expect_unreferenced_untouched(A, F, n, n + 2, uplo, "nb=" + std::to_string(nb));
      const std::vector<double> B = random_matrix<double>(n, 2, n, 1001);
      std::vector<double> X = B;
      ASSERT_EQ(potrs(runtime(), n, 2, F.data(), n + 2, X.data(), n, options_of(nb, uplo, Mode::cpu)), 0);
      EXPECT_LT(solve_backward_error(n, 2, A, n + 2, X, B, n), kResidualThreshold) << "nb=" << nb;
    }
  TileMatrix<float> one_tile(runtime(), n, INT_MAX);
  EXPECT_EQ(one_tile.tile_rows(), 1);
  EXPECT_EQ(one_tile.tile_height(0), n);
}

// ---- alignment --------------------------------------------------------------------------------

// Every alignment a T* can have within a 64-byte line (LAPACK callers pass sub-matrices and
// arrays from any allocator), for A and B independently.
template <class T>
void check_every_alignment() {
  const int n = 45, nrhs = 3, lda = n + 1, ldb = n;
  const std::vector<T> A = random_spd<T>(n, lda, 1100);
  const std::vector<T> B = random_matrix<T>(n, nrhs, ldb, 1101);
  const std::size_t per_line = 64 / sizeof(T);
  for (std::size_t offset = 0; offset < per_line; ++offset) {
    PlacedBuffer<T> F(A.size(), offset), X(B.size(), per_line - 1 - offset);
    std::copy(A.begin(), A.end(), F.data());
    std::copy(B.begin(), B.end(), X.data());
    const FactorOptions options = options_of(16, offset % 2 ? Uplo::upper : Uplo::lower, Mode::cpu);
    ASSERT_EQ(posv(runtime(), n, nrhs, F.data(), lda, X.data(), ldb, options), 0) << "offset " << offset;
    const std::vector<T> factor(F.data(), F.data() + A.size()), solution(X.data(), X.data() + B.size());
    EXPECT_LT(factor_backward_error(options.uplo, n, A, factor, lda), 1.0) << "offset " << offset;
    EXPECT_LT(solve_backward_error(n, nrhs, A, lda, solution, B, ldb), kResidualThreshold) << "offset " << offset;
  }
}

TEST(Alignment, EveryElementOffsetWithinACacheLine) {
  check_every_alignment<double>();
  check_every_alignment<float>();
}

// ---- right-hand sides overlapping the matrix ---------------------------------------------------

// A and B placed inside one array; InvalidArgument (argument 6, B) from the C++ API and -6 from
// the C API when B shares an element with the n x n block of A, and nothing read or written.
struct Placement {
  const char* name;
  int lda;
  int ldb;
  std::size_t a_start;  // elements from the array's start
  std::size_t b_start;
  bool overlaps;
};

TEST(Overlap, RightHandSidesSharingMemoryWithTheMatrixAreRejected) {
  constexpr int n = 20, nrhs = 3, ld = n + 5;
  constexpr std::size_t a_span = std::size_t(ld) * (n - 1) + n;  // with lda = ld
  constexpr std::size_t b_span = std::size_t(ld) * (nrhs - 1) + n;  // with ldb = ld
  const Placement placements[] = {
      {"B is A", ld, ld, 0, 0, true},
      {"B starts in A's third column", ld, ld, 0, 2 * ld, true},
      {"B's last element is A's first", ld, ld, b_span - 1, 0, true},
      {"B starts at A's last element", ld, ld, 0, a_span - 1, true},
      {"B in A's padding rows", 2 * n, 2 * n, 0, n, false},
      {"B right after A", ld, n, 0, a_span, false},
  };
  for (const Placement& p : placements) {
    const std::size_t a_size = std::size_t(p.lda) * (n - 1) + n;
    const std::size_t b_size = std::size_t(p.ldb) * (nrhs - 1) + n;
    std::vector<double> memory(std::max(p.a_start + a_size, p.b_start + b_size) + 8, 0.0);
    // A: positive definite in its n x n block; B: random where it does not overlap A.
    const std::vector<double> spd = random_spd<double>(n, p.lda, 1200);
    const std::vector<double> rhs = random_matrix<double>(n, nrhs, p.ldb, 1201);
    for (std::size_t k = 0; k < b_size; ++k) memory[p.b_start + k] = rhs[k];
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        memory[p.a_start + i + std::size_t(j) * p.lda] = spd[i + std::size_t(j) * p.lda];
    double* A = memory.data() + p.a_start;
    double* B = memory.data() + p.b_start;
    const std::vector<double> before = memory;
    const FactorOptions options = options_of(8, Uplo::lower, Mode::cpu);
    if (p.overlaps) {
      try {
        posv(runtime(), n, nrhs, A, p.lda, B, p.ldb, options);
        ADD_FAILURE() << p.name << ": posv accepted overlapping B";
      } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.position(), 6) << p.name;
      }
      EXPECT_THROW(potrs(runtime(), n, nrhs, A, p.lda, B, p.ldb, options), InvalidArgument) << p.name;
      EXPECT_EQ(tessera_dposv('L', n, nrhs, A, p.lda, B, p.ldb), -6) << p.name;
      EXPECT_EQ(tessera_dpotrs('U', n, nrhs, A, p.lda, B, p.ldb), -6) << p.name;
      EXPECT_EQ(memory, before) << p.name << ": memory was touched";
    } else {
      // Disjoint elements of one array are fine: the solve is right.
      ASSERT_EQ(posv(runtime(), n, nrhs, A, p.lda, B, p.ldb, options), 0) << p.name;
      const std::vector<double> x(B, B + b_size);
      const std::vector<double> b(before.begin() + p.b_start, before.begin() + p.b_start + b_size);
      EXPECT_LT(solve_backward_error(n, nrhs, spd, p.lda, x, b, p.ldb), kResidualThreshold) << p.name;
    }
  }
  // Float, through the C API: B aliasing A exactly, and B inside A.
  std::vector<float> S = random_spd<float>(4, 4, 1203);
  const std::vector<float> S0 = S;
  EXPECT_EQ(tessera_sposv('L', 4, 1, S.data(), 4, S.data(), 4), -6);
  EXPECT_EQ(tessera_spotrs('L', 4, 1, S.data(), 4, S.data() + 3, 4), -6);
  EXPECT_EQ(S, S0);
  // A bad ldb is reported before the overlap (LAPACK's argument order).
  EXPECT_EQ(tessera_sposv('L', 4, 1, S.data(), 4, S.data(), 3), -7);
  expect_runtime_usable("overlapping right-hand sides");
}

// ---- matrices too large for memory ---------------------------------------------------------------

TEST(OutOfMemory, TileMatrixLargerThanTheMachineIsAClearError) {
  expect_runtime_usable("warm-up");
  const double rss_before = resident_mib();
  for (int round = 0; round < 3; ++round) {
    // 2,000,000^2 / 2 doubles: 16 TB of tiles.
    try {
      TileMatrix<double> huge(runtime(), 2'000'000, 512);
      ADD_FAILURE() << "a 2,000,000 x 2,000,000 tile matrix was allocated";
    } catch (const InvalidArgument& e) {
      ADD_FAILURE() << "InvalidArgument instead of an allocation error: " << e.what();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot allocate"), std::string::npos) << e.what();
    }
    // Sizes whose byte count overflows 64 bits, and whose tile count overflows int arithmetic.
    EXPECT_THROW(TileMatrix<double>(runtime(), INT_MAX, 1 << 30), Error);
    EXPECT_THROW(TileMatrix<float>(runtime(), 2'000'000'000, 500'000'000), Error);
    EXPECT_THROW(TileMatrix<double>(runtime(), INT_MAX, INT_MAX, 1 << 30, TileStructure::general), Error);
  }
  const double rss_after = resident_mib();
  std::printf("[ RSS      ] before %.1f MiB, after 3 rounds of refused allocations %.1f MiB\n", rss_before, rss_after);
  // The refused attempts keep nothing: only allocator noise remains (the tile index of the 16 TB
  // matrix, 61 MB, goes back before the exception leaves; under AddressSanitizer it sits in the
  // quarantine, 256 MiB at most).
  EXPECT_LT(rss_after - rss_before, under_address_sanitizer() ? 300.0 : 32.0);
  expect_runtime_usable("refused allocations");
}

TEST(OutOfMemory, CApiRefusesWithoutReadingTheMatrix) {
  // A 2,000,000 x 2,000,000 matrix whose memory is reserved but unreadable: Tessera must refuse
  // before its first read (which would fault).
  const int n = 2'000'000;
  const std::size_t bytes = static_cast<std::size_t>(n) * n * sizeof(double);
  void* reserved = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) GTEST_SKIP() << "cannot reserve " << (bytes >> 40) << " TiB of address space here";
  EXPECT_EQ(tessera_dpotrf('L', n, static_cast<double*>(reserved), n), TESSERA_RUNTIME_FAILURE);
  EXPECT_EQ(tessera_dposv('L', n, 1, static_cast<double*>(reserved), n, static_cast<double*>(reserved) + n, n),
            -6);  // B inside A: rejected before anything else
  munmap(reserved, bytes);
  expect_runtime_usable("a refused C API call");
}

}  // namespace
}  // namespace tessera::test
