// The distributed matrices under mpirun (tests/distributed/CMakeLists.txt runs this program on 4
// ranks, --grid=2x2 and --grid=1x4). Every test is collective: each rank runs it, checks what
// it holds, and never returns early (a rank leaving a collective call would hang the others).
#include <gtest/gtest.h>
#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/distributed.hpp"
#include "tessera/error.hpp"

namespace {

using tessera::Uplo;
namespace dist = tessera::distributed;

// The one context of the process, made in main() before the tests run.
dist::Context* g_context = nullptr;
dist::Context& context() { return *g_context; }

// A symmetric, diagonally dominant (so positive definite) matrix with varied entries.
template <class T>
T spd_entry(int n, int i, int j) {
  if (i == j) return T(n + 1) + T((i % 7) * 0.25);
  return T(1) / T(1 + std::abs(i - j)) + T(((i + j) % 5) * 0.01);
}

// ScaLAPACK's layout written out here on its own terms (first block on process (0, 0)):
// global (i, j) is on process ((i / nb) mod P, (j / nb) mod Q), at local row
// (i / nb / P) nb + i mod nb and local column (j / nb / Q) nb + j mod nb.
struct Layout {
  int n_rows, n_cols, nb, P, Q, my_row, my_col;

  static int numroc(int size, int nb, int process, int processes) {
    int count = 0;
    for (int i = 0; i < size; ++i)
      if ((i / nb) % processes == process) ++count;
    return count;
  }
  int local_rows() const { return numroc(n_rows, nb, my_row, P); }
  int local_cols() const { return numroc(n_cols, nb, my_col, Q); }
  int lld() const { return std::max(1, local_rows()); }
  bool holds(int i, int j) const { return (i / nb) % P == my_row && (j / nb) % Q == my_col; }
  std::size_t local_index(int i, int j) const {
    const int li = (i / nb / P) * nb + i % nb;
    const int lj = (j / nb / Q) * nb + j % nb;
    return static_cast<std::size_t>(lj) * lld() + li;
  }
};

template <class T>
Layout layout_of(const dist::Matrix<T>& M) {
  return {M.rows(), M.cols(), M.nb(), context().grid().rows, context().grid().cols, context().grid_row(),
          context().grid_col()};
}

template <class T>
std::vector<T> local_array(const Layout& L, T fill = T(0)) {
  return std::vector<T>(static_cast<std::size_t>(L.lld()) * std::max(1, L.local_cols()), fill);
}

// The whole matrix on every rank, assembled from each rank's local array.
template <class T>
std::vector<T> gather_global(const dist::Matrix<T>& M, T outside = T(0)) {
  const Layout L = layout_of(M);
  std::vector<T> local = local_array<T>(L, outside);
  M.export_local(local.data(), L.lld());
  std::vector<T> global(static_cast<std::size_t>(M.rows()) * M.cols(), outside);
  for (int j = 0; j < M.cols(); ++j)
    for (int i = 0; i < M.rows(); ++i)
      if (L.holds(i, j)) global[static_cast<std::size_t>(j) * M.rows() + i] = local[L.local_index(i, j)];
  // Every element is held by exactly one rank: the others contribute `outside`, subtracted back.
  // A complex element is summed as its two real parts.
  using Real = decltype(std::real(T{}));
  std::vector<T> contribution(global.size());
  for (std::size_t e = 0; e < global.size(); ++e) contribution[e] = global[e] - outside;
  const MPI_Datatype type = sizeof(Real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT;
  MPI_Allreduce(MPI_IN_PLACE, contribution.data(), static_cast<int>(contribution.size() * (sizeof(T) / sizeof(Real))),
                type, MPI_SUM, context().comm());
  for (std::size_t e = 0; e < global.size(); ++e) global[e] = contribution[e] + outside;
  return global;
}

// The backward errors are normalized by n eps: a correct factorization stays within a few units
// (n = 1 reaches 1 from the rounding of one square root); a wrong one is orders of magnitude off.
constexpr double kTolerance = 2.0;

struct Case {
  int n;
  int nb;
};

// n = 1, nb - 1, nb, nb + 1, primes, and sizes that are no multiple of nb.
const std::vector<Case> kCases = {{1, 8}, {7, 8}, {8, 8}, {9, 8}, {13, 8}, {37, 8}, {67, 16}, {23, 5}, {5, 1}, {41, 6}};

template <class T>
void check_potrf(const Case& c, Uplo uplo) {
  SCOPED_TRACE("n = " + std::to_string(c.n) + ", nb = " + std::to_string(c.nb) + ", uplo " + tessera::to_string(uplo));
  dist::Matrix<T> A(context(), c.n, c.nb, uplo);
  dist::Matrix<T> L(context(), c.n, c.nb, uplo);
  A.fill([&](int i, int j) { return spd_entry<T>(c.n, i, j); });
  L.fill([&](int i, int j) { return spd_entry<T>(c.n, i, j); });
  tessera::FactorOptions options;
  options.mode = tessera::Mode::cpu;
  EXPECT_EQ(dist::potrf(L, options), 0);
  const double error = dist::backward_error(A, L, tessera::Mode::cpu);
  EXPECT_LT(error, kTolerance);
  // Every rank gets the same value.
  double largest = error;
  double smallest = error;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, context().comm());
  MPI_Allreduce(MPI_IN_PLACE, &smallest, 1, MPI_DOUBLE, MPI_MIN, context().comm());
  EXPECT_EQ(largest, smallest);
}

TEST(Distributed, PotrfDoubleLowerAndUpper) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const Case& c : kCases) check_potrf<double>(c, uplo);
}

TEST(Distributed, PotrfFloatLowerAndUpper) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const Case& c : {Case{1, 8}, Case{9, 8}, Case{37, 8}, Case{23, 5}}) check_potrf<float>(c, uplo);
}

// The tiles each rank must send and receive in a tile Cholesky, worked out here from the owner map:
// L(k, k) goes to the owners of the trsm tiles below it, L(i, k) to the owners of the tiles its
// syrk and gemm update, each once per reading rank other than its owner.
template <class T>
dist::Traffic expected_traffic(int n, int nb, Uplo uplo) {
  const int P = context().grid().rows, Q = context().grid().cols, me = context().rank();
  // Tile (i, j), i >= j, of the lower triangle; an upper matrix stores it as block (j, i).
  const auto owner = [&](int i, int j) { return uplo == Uplo::lower ? (i % P) * Q + j % Q : (j % P) * Q + i % Q; };
  const int nt = (n + nb - 1) / nb;
  const auto extent = [&](int t) { return std::min(nb, n - t * nb); };
  dist::Traffic traffic;
  for (int k = 0; k < nt; ++k)
    for (int i = k; i < nt; ++i) {
      std::vector<int> readers;
      if (i == k) {
        for (int r = k + 1; r < nt; ++r) readers.push_back(owner(r, k));
      } else {
        readers.push_back(owner(i, i));
        for (int j = k + 1; j < i; ++j) readers.push_back(owner(i, j));
        for (int r = i + 1; r < nt; ++r) readers.push_back(owner(r, i));
      }
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      const std::int64_t bytes = std::int64_t(extent(i)) * extent(k) * std::int64_t(sizeof(T));
      for (int reader : readers) {
        if (reader == owner(i, k)) continue;
        if (owner(i, k) == me) ++traffic.tiles_sent, traffic.bytes_sent += bytes;
        if (reader == me) ++traffic.tiles_received, traffic.bytes_received += bytes;
      }
    }
  return traffic;
}

TEST(Distributed, TrafficIsEveryTileOncePerReadingRank) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const Case& c : {Case{37, 8}, Case{67, 16}, Case{5, 1}}) {
      SCOPED_TRACE("n = " + std::to_string(c.n) + ", nb = " + std::to_string(c.nb) + ", uplo " + tessera::to_string(uplo));
      dist::Matrix<double> A(context(), c.n, c.nb, uplo);
      A.fill([&](int i, int j) { return spd_entry<double>(c.n, i, j); });
      EXPECT_EQ(context().last_traffic().tiles_sent, 0);  // a fill moves no tile
      tessera::FactorOptions options;
      options.mode = tessera::Mode::cpu;
      ASSERT_EQ(dist::potrf(A, options), 0);
      const dist::Traffic measured = context().last_traffic();
      const dist::Traffic expected = expected_traffic<double>(c.n, c.nb, uplo);
      EXPECT_EQ(measured.tiles_sent, expected.tiles_sent);
      EXPECT_EQ(measured.bytes_sent, expected.bytes_sent);
      EXPECT_EQ(measured.tiles_received, expected.tiles_received);
      EXPECT_EQ(measured.bytes_received, expected.bytes_received);
      // What one rank sends, another receives.
      std::int64_t totals[2] = {measured.bytes_sent, measured.bytes_received};
      MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, context().comm());
      EXPECT_EQ(totals[0], totals[1]);
      EXPECT_GT(totals[0], 0);
    }
}

// The factor against LAPACK's on the same matrix, through ScaLAPACK-layout local arrays built by
// the test's own layout: import, factor, export, compare.
template <class T>
void check_against_lapack(const Case& c, Uplo uplo) {
  SCOPED_TRACE("n = " + std::to_string(c.n) + ", nb = " + std::to_string(c.nb) + ", uplo " + tessera::to_string(uplo));
  dist::Matrix<T> A(context(), c.n, c.nb, uplo);
  const Layout L = layout_of(A);
  std::vector<T> local = local_array<T>(L, T(-7));
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.n; ++i)
      if (L.holds(i, j)) local[L.local_index(i, j)] = spd_entry<T>(c.n, i, j);
  A.import_local(local.data(), L.lld());
  EXPECT_EQ(dist::potrf(A), 0);
  std::vector<T> factor = local_array<T>(L, T(-7));
  A.export_local(factor.data(), L.lld());

  std::vector<T> reference(static_cast<std::size_t>(c.n) * c.n);
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.n; ++i) reference[static_cast<std::size_t>(j) * c.n + i] = spd_entry<T>(c.n, i, j);
  const char uplo_letter = uplo == Uplo::lower ? 'L' : 'U';
  int info = 0;
  if constexpr (sizeof(T) == sizeof(double))
    info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, uplo_letter, c.n, reference.data(), c.n);
  else
    info = LAPACKE_spotrf(LAPACK_COL_MAJOR, uplo_letter, c.n, reference.data(), c.n);
  ASSERT_EQ(info, 0);  // local, no collective call follows
  double worst = 0;
  int untouched_changed = 0;
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.n; ++i) {
      if (!L.holds(i, j)) continue;
      const bool in_triangle = uplo == Uplo::lower ? i >= j : i <= j;
      const T got = factor[L.local_index(i, j)];
      if (in_triangle)
        worst = std::max(worst, double(std::abs(got - reference[static_cast<std::size_t>(j) * c.n + i])));
      else if (got != T(-7))
        ++untouched_changed;  // export writes the triangle only
    }
  EXPECT_LT(worst, 1e3 * std::numeric_limits<T>::epsilon() * c.n);
  EXPECT_EQ(untouched_changed, 0);
}

TEST(Distributed, ScalapackLayoutFactorMatchesLapack) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const Case& c : {Case{1, 4}, Case{13, 4}, Case{30, 7}}) {
      check_against_lapack<double>(c, uplo);
      check_against_lapack<float>(c, uplo);
    }
}

// Import then export gives the local array back, for symmetric (the triangle) and general matrices.
TEST(Distributed, ImportExportRoundTrip) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    dist::Matrix<double> A(context(), 29, 6, uplo);
    const Layout L = layout_of(A);
    std::vector<double> in = local_array<double>(L);
    for (std::size_t e = 0; e < in.size(); ++e) in[e] = 1.0 + double(e) + 1000.0 * context().rank();
    A.import_local(in.data(), L.lld());
    std::vector<double> out = local_array<double>(L, -1.0);
    A.export_local(out.data(), L.lld());
    for (int j = 0; j < A.cols(); ++j)
      for (int i = 0; i < A.rows(); ++i) {
        if (!L.holds(i, j)) continue;
        const bool in_triangle = uplo == Uplo::lower ? i >= j : i <= j;
        EXPECT_EQ(out[L.local_index(i, j)], in_triangle ? in[L.local_index(i, j)] : -1.0) << i << ", " << j;
      }
  }
  dist::Matrix<float> B(context(), 31, 3, 4);
  const Layout L = layout_of(B);
  const int lld = L.lld() + 3;  // a leading dimension larger than the local rows
  std::vector<float> in(static_cast<std::size_t>(lld) * std::max(1, L.local_cols()));
  for (std::size_t e = 0; e < in.size(); ++e) in[e] = float(e % 97) + 0.5f;
  B.import_local(in.data(), lld);
  std::vector<float> out(in.size(), -1.0f);
  B.export_local(out.data(), lld);
  for (int c = 0; c < L.local_cols(); ++c)
    for (int r = 0; r < L.local_rows(); ++r)
      EXPECT_EQ(out[static_cast<std::size_t>(c) * lld + r], in[static_cast<std::size_t>(c) * lld + r]);
  EXPECT_EQ(B.local_rows(), L.local_rows());
  EXPECT_EQ(B.local_cols(), L.local_cols());
}

// A leading minor fails in tile column k for every k up to the number of ranks: the diagonal
// tiles are then owned by every rank of a 1 x 4 grid, and by both grid rows and columns of a
// 2 x 2 one. Every rank reports the same, global, column.
template <class T>
void check_not_positive_definite(Uplo uplo) {
  const int nb = 6;
  const int n = nb * (context().size() + 1) + 1;
  for (int k = 0; k < context().size(); ++k) {
    const int column = k * nb + (k % nb);  // 0-based
    SCOPED_TRACE("failing column " + std::to_string(column + 1) + ", uplo " + tessera::to_string(uplo));
    dist::Matrix<T> A(context(), n, nb, uplo);
    A.fill([&](int i, int j) { return i == column && j == column ? T(-1) : spd_entry<T>(n, i, j); });
    EXPECT_EQ(dist::potrf(A), column + 1);
  }
}

TEST(Distributed, NotPositiveDefiniteOnEveryRank) {
  check_not_positive_definite<double>(Uplo::lower);
  check_not_positive_definite<double>(Uplo::upper);
  check_not_positive_definite<float>(Uplo::lower);
}

// ||B - A X||_1 / (||A||_1 ||X||_1 n eps) on the gathered matrices.
template <class T>
double solve_residual(int n, int nrhs, const std::vector<T>& X, const std::vector<T>& B) {
  double norm_a = 0;
  for (int j = 0; j < n; ++j) {
    double column = 0;
    for (int i = 0; i < n; ++i) column += std::abs(double(spd_entry<T>(n, i, j)));
    norm_a = std::max(norm_a, column);
  }
  double norm_x = 0;
  double norm_r = 0;
  for (int r = 0; r < nrhs; ++r) {
    double column_x = 0;
    double column_r = 0;
    for (int i = 0; i < n; ++i) {
      double ax = 0;
      for (int k = 0; k < n; ++k) ax += double(spd_entry<T>(n, i, k)) * double(X[static_cast<std::size_t>(r) * n + k]);
      column_r += std::abs(double(B[static_cast<std::size_t>(r) * n + i]) - ax);
      column_x += std::abs(double(X[static_cast<std::size_t>(r) * n + i]));
    }
    norm_x = std::max(norm_x, column_x);
    norm_r = std::max(norm_r, column_r);
  }
  return norm_r / (norm_a * norm_x * n * std::numeric_limits<T>::epsilon());
}

template <class T>
T rhs_entry(int i, int r) {
  return T(1) + T((3 * i + 5 * r) % 11) * T(0.125);
}

template <class T>
void check_solves(const Case& c, int nrhs, Uplo uplo) {
  SCOPED_TRACE("n = " + std::to_string(c.n) + ", nb = " + std::to_string(c.nb) + ", nrhs " + std::to_string(nrhs) +
               ", uplo " + tessera::to_string(uplo));
  std::vector<T> B(static_cast<std::size_t>(c.n) * nrhs);
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < c.n; ++i) B[static_cast<std::size_t>(r) * c.n + i] = rhs_entry<T>(i, r);
  {  // potrf then potrs
    dist::Matrix<T> A(context(), c.n, c.nb, uplo);
    dist::Matrix<T> X(context(), c.n, nrhs, c.nb);
    A.fill([&](int i, int j) { return spd_entry<T>(c.n, i, j); });
    X.fill([&](int i, int r) { return rhs_entry<T>(i, r); });
    EXPECT_EQ(dist::potrf(A), 0);
    dist::potrs(A, X);
    EXPECT_LT(solve_residual<T>(c.n, nrhs, gather_global(X), B), 1.0);
  }
  {  // posv
    dist::Matrix<T> A(context(), c.n, c.nb, uplo);
    dist::Matrix<T> X(context(), c.n, nrhs, c.nb);
    A.fill([&](int i, int j) { return spd_entry<T>(c.n, i, j); });
    X.fill([&](int i, int r) { return rhs_entry<T>(i, r); });
    EXPECT_EQ(dist::posv(A, X), 0);
    EXPECT_LT(solve_residual<T>(c.n, nrhs, gather_global(X), B), 1.0);
  }
}

// potrf_async and potrs_async return at once; wait() gives what the blocking forms give, on every
// rank; one operation at a time on a context.
TEST(Distributed, AsyncOperationsWaitLikeTheBlockingForms) {
  const int n = 53, nb = 8, nrhs = 3;
  tessera::FactorOptions options;
  options.mode = tessera::Mode::cpu;
  dist::Matrix<double> A(context(), n, nb, Uplo::lower);
  dist::Matrix<double> reference(context(), n, nb, Uplo::lower);
  dist::Matrix<double> X(context(), n, nrhs, nb);
  A.fill([&](int i, int j) { return spd_entry<double>(n, i, j); });
  reference.fill([&](int i, int j) { return spd_entry<double>(n, i, j); });
  X.fill([&](int i, int r) { return rhs_entry<double>(i, r); });
  ASSERT_EQ(dist::potrf(reference, options), 0);

  dist::Operation factor = dist::potrf_async(A, options);
  // Every rank refuses the same second operation while the first is in flight.
  EXPECT_THROW(dist::potrs(A, X, options), tessera::InvalidArgument);
  EXPECT_THROW(X.fill([](int, int) { return 0.0; }), tessera::InvalidArgument);
  EXPECT_EQ(factor.wait(), 0);
  EXPECT_TRUE(factor.done());
  EXPECT_EQ(factor.progress().fraction(), 1.0);
  EXPECT_EQ(factor.wait(), 0);  // again the same
  EXPECT_EQ(gather_global(A), gather_global(reference));  // the same tasks, the same factor

  dist::Operation solve = dist::potrs_async(A, X, options);
  EXPECT_EQ(solve.wait(), 0);
  std::vector<double> B(static_cast<std::size_t>(n) * nrhs);
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < n; ++i) B[static_cast<std::size_t>(r) * n + i] = rhs_entry<double>(i, r);
  EXPECT_LT(solve_residual<double>(n, nrhs, gather_global(X), B), 1.0);

  // Not positive definite at a column of the last rank's tiles: the same info everywhere.
  const int column = nb * (context().size() - 1) + 2;
  const auto failing_entry = [&](int i, int j) { return i == column && j == column ? -1.0 : spd_entry<double>(n, i, j); };
  A.fill(failing_entry);
  { dist::Operation unwaited = dist::potrf_async(A, options); }  // its destructor waits, collectively
  A.fill(failing_entry);
  dist::Operation failing = dist::potrf_async(A, options);
  dist::Operation moved = std::move(failing);
  EXPECT_EQ(moved.wait(), column + 1);
}

// log det(A) from the distributed factor, the same on every rank, against 2 sum log diag(L) of
// the factor gathered; 0 and LAPACK's info for a matrix that is not positive definite.
template <class T>
void check_log_determinant(int n, int nb, Uplo uplo) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", nb = " + std::to_string(nb) + ", uplo " + tessera::to_string(uplo));
  dist::Matrix<T> A(context(), n, nb, uplo);
  A.fill([&](int i, int j) { return spd_entry<T>(n, i, j); });
  tessera::FactorOptions options;
  options.mode = tessera::Mode::cpu;
  double log_determinant = -1.0;
  options.log_determinant = &log_determinant;
  ASSERT_EQ(dist::potrf(A, options), 0);
  const std::vector<T> factor = gather_global(A);
  double expected = 0.0;
  for (int i = 0; i < n; ++i) expected += 2.0 * std::log(double(factor[static_cast<std::size_t>(i) * n + i]));
  EXPECT_NEAR(log_determinant, expected, 1e-10 * std::abs(expected) + 1e-12);
  double largest = log_determinant, smallest = log_determinant;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, context().comm());
  MPI_Allreduce(MPI_IN_PLACE, &smallest, 1, MPI_DOUBLE, MPI_MIN, context().comm());
  EXPECT_EQ(largest, smallest);

  const int column = n / 2;
  A.fill([&](int i, int j) { return i == column && j == column ? T(-1) : spd_entry<T>(n, i, j); });
  log_determinant = -1.0;
  EXPECT_EQ(dist::potrf(A, options), column + 1);
  EXPECT_EQ(log_determinant, 0.0);
}

TEST(Distributed, LogDeterminantIsReducedOverTheRanks) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    check_log_determinant<double>(1, 8, uplo);
    check_log_determinant<double>(53, 8, uplo);
    check_log_determinant<float>(37, 6, uplo);
  }
}

// A Hermitian, diagonally dominant (so positive definite) complex matrix with varied entries.
template <class T>
T hpd_entry(int n, int i, int j) {
  using R = typename T::value_type;
  if (i == j) return T(R(n + 1) + R((i % 7) * 0.25), R(0));
  const int lo = std::min(i, j), hi = std::max(i, j);
  const T below(R(1) / R(1 + hi - lo), R(((lo + 2 * hi) % 5) * 0.1 - 0.2));  // entry (hi, lo)
  return i > j ? below : std::conj(below);
}

// Complex Hermitian matrices: posv's factor against LAPACK's on the gathered matrix, and the
// solutions' residual ||B - A X||_max / (||A||_max ||X||_max n eps).
template <class T>
void check_complex(const Case& c, int nrhs, Uplo uplo) {
  SCOPED_TRACE("complex n = " + std::to_string(c.n) + ", nb = " + std::to_string(c.nb) + ", uplo " +
               tessera::to_string(uplo));
  using R = typename T::value_type;
  const auto rhs = [](int i, int r) { return T(R(1) + R((3 * i + 5 * r) % 11) * R(0.125), R((i - r) % 3) * R(0.25)); };
  dist::Matrix<T> A(context(), c.n, c.nb, uplo);
  dist::Matrix<T> X(context(), c.n, nrhs, c.nb);
  A.fill([&](int i, int j) { return hpd_entry<T>(c.n, i, j); });
  X.fill(rhs);
  EXPECT_EQ(dist::posv(A, X), 0);
  dist::Matrix<T> original(context(), c.n, c.nb, uplo);
  original.fill([&](int i, int j) { return hpd_entry<T>(c.n, i, j); });
  EXPECT_LT(dist::backward_error(original, A, tessera::Mode::cpu), kTolerance);
  const std::vector<T> factor = gather_global(A);
  const std::vector<T> x = gather_global(X);

  std::vector<T> reference(static_cast<std::size_t>(c.n) * c.n);
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.n; ++i) reference[static_cast<std::size_t>(j) * c.n + i] = hpd_entry<T>(c.n, i, j);
  const char uplo_letter = uplo == Uplo::lower ? 'L' : 'U';
  int info = 0;
  if constexpr (sizeof(R) == sizeof(double))
    info = LAPACKE_zpotrf(LAPACK_COL_MAJOR, uplo_letter, c.n, reinterpret_cast<lapack_complex_double*>(reference.data()), c.n);
  else
    info = LAPACKE_cpotrf(LAPACK_COL_MAJOR, uplo_letter, c.n, reinterpret_cast<lapack_complex_float*>(reference.data()), c.n);
  EXPECT_EQ(info, 0);
  double worst = 0, amax = 0, xmax = 0, rmax = 0;
  for (int j = 0; j < c.n; ++j)
    for (int i = 0; i < c.n; ++i) {
      const bool in_triangle = uplo == Uplo::lower ? i >= j : i <= j;
      const std::size_t e = static_cast<std::size_t>(j) * c.n + i;
      if (in_triangle) worst = std::max(worst, double(std::abs(factor[e] - reference[e])));
      amax = std::max(amax, double(std::abs(hpd_entry<T>(c.n, i, j))));
    }
  EXPECT_LT(worst, 1e3 * std::numeric_limits<R>::epsilon() * c.n);
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < c.n; ++i) {
      std::complex<double> ax = 0;
      for (int k = 0; k < c.n; ++k)
        ax += std::complex<double>(hpd_entry<T>(c.n, i, k)) * std::complex<double>(x[static_cast<std::size_t>(r) * c.n + k]);
      rmax = std::max(rmax, std::abs(std::complex<double>(rhs(i, r)) - ax));
      xmax = std::max(xmax, double(std::abs(x[static_cast<std::size_t>(r) * c.n + i])));
    }
  EXPECT_LT(rmax / (amax * xmax * c.n * std::numeric_limits<R>::epsilon()), kTolerance);
}

TEST(Distributed, ComplexHermitianFactorsAndSolves) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    check_complex<std::complex<double>>({37, 8}, 3, uplo);
    check_complex<std::complex<double>>({1, 4}, 1, uplo);
    check_complex<std::complex<float>>({23, 5}, 2, uplo);
  }
}

TEST(Distributed, PotrsAndPosvResiduals) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    check_solves<double>({37, 8}, 3, uplo);
    check_solves<double>({9, 8}, 1, uplo);
  }
  check_solves<float>({23, 5}, 7, Uplo::lower);
}

// posv on a matrix that is not positive definite leaves B as it was.
TEST(Distributed, PosvFailureLeavesRhs) {
  const int n = 20;
  dist::Matrix<double> A(context(), n, 4, Uplo::lower);
  dist::Matrix<double> X(context(), n, 2, 4);
  A.fill([&](int i, int j) { return i == 13 && j == 13 ? -1.0 : spd_entry<double>(n, i, j); });
  X.fill([&](int i, int r) { return rhs_entry<double>(i, r); });
  EXPECT_EQ(dist::posv(A, X), 14);
  const std::vector<double> x = gather_global(X);
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < n; ++i) EXPECT_EQ(x[static_cast<std::size_t>(r) * n + i], rhs_entry<double>(i, r));
}

TEST(Distributed, Misuse) {
  const int ranks = context().size();
  EXPECT_THROW(dist::Context(context().runtime(), context().comm(), {ranks + 1, 1}), tessera::InvalidArgument);
  EXPECT_THROW(dist::Context(context().runtime(), context().comm(), {0, ranks}), tessera::InvalidArgument);
  // A second context while one runs: StarPU-MPI is one per process.
  EXPECT_THROW(dist::Context(context().runtime(), context().comm(), context().grid()), tessera::RuntimeError);
  EXPECT_THROW(dist::Matrix<double>(context(), -1, 4, Uplo::lower), tessera::InvalidArgument);
  EXPECT_THROW(dist::Matrix<double>(context(), 8, 0, Uplo::lower), tessera::InvalidArgument);
  dist::Matrix<double> A(context(), 10, 4, Uplo::lower);
  dist::Matrix<double> B(context(), 12, 1, 4);
  EXPECT_THROW(dist::potrs(A, B), tessera::InvalidArgument);
  EXPECT_THROW(dist::potrf(B), tessera::InvalidArgument);
  std::vector<double> local(1);
  EXPECT_THROW(A.import_local(local.data(), 0), tessera::InvalidArgument);
}

// Only rank 0 prints the usual report; the other ranks print their failures, with their rank.
class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

 private:
  int rank_;
};

dist::Grid parse_grid(const std::string& text) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos) throw std::invalid_argument("--grid must be PxQ: " + text);
  return {std::stoi(text.substr(0, x)), std::stoi(text.substr(x + 1))};
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  testing::InitGoogleTest(&argc, argv);
  dist::Grid grid{1, 0};
  for (int a = 1; a < argc; ++a)
    if (std::strncmp(argv[a], "--grid=", 7) == 0) grid = parse_grid(argv[a] + 7);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (grid.cols == 0) grid = {1, size};
  if (rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  int failed = 0;
  {
    tessera::Runtime runtime;
    dist::Context distributed(runtime, MPI_COMM_WORLD, grid);
    g_context = &distributed;
    failed = RUN_ALL_TESTS();
    g_context = nullptr;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
