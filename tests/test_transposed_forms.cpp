// The BLAS forms of tile tasks on transposed tiles (transposed_forms.hpp), run with the CPU tile
// kernels: for every task of the factorization and the solves and every combination of stored
// orientations, the form on the stored tiles gives the tile the task stands for, as the lower
// form does on untransposed tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "transposed_forms.hpp"

namespace tessera::detail {
namespace {

// A column-major matrix (leading dimension = rows).
struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<double> a;
  double& operator()(int i, int j) { return a[i + static_cast<std::size_t>(j) * rows]; }
  double operator()(int i, int j) const { return a[i + static_cast<std::size_t>(j) * rows]; }
};

Matrix random_matrix(int rows, int cols, std::mt19937& random) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Matrix m{rows, cols, std::vector<double>(static_cast<std::size_t>(rows) * cols)};
  for (double& x : m.a) x = value(random);
  return m;
}

Matrix transposed(const Matrix& m) {
  Matrix t{m.cols, m.rows, std::vector<double>(m.a.size())};
  for (int j = 0; j < m.cols; ++j)
    for (int i = 0; i < m.rows; ++i) t(j, i) = m(i, j);
  return t;
}

// A lower triangular matrix with a dominant diagonal (well conditioned), zeros above.
Matrix lower_factor(int n, std::mt19937& random) {
  Matrix l = random_matrix(n, n, random);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) l(i, j) = 0;
  for (int i = 0; i < n; ++i) l(i, i) = 3.0 + std::abs(l(i, i));
  return l;
}

// One operand: the matrix it stands for, and its storage (the matrix or its transpose).
struct Operand {
  Operand(Matrix logical, bool transposed_storage)
      : stored(transposed_storage ? transposed(logical) : std::move(logical)) {
    ref.handle = stored.a.data();
    ref.transposed = transposed_storage;
  }
  Matrix stored;
  TileRef ref;
  // The matrix it stands for, from the storage.
  Matrix logical() const { return ref.transposed ? transposed(stored) : stored; }
};

const Matrix& stored_of(const TileRef* ref, const Operand& x, const Operand& y) {
  return ref == &x.ref ? x.stored : y.stored;
}

void expect_near(const Matrix& got, const Matrix& want, const char* what, int combination) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.cols, want.cols);
  for (int j = 0; j < want.cols; ++j)
    for (int i = 0; i < want.rows; ++i)
      ASSERT_NEAR(got(i, j), want(i, j), 1e-12) << what << " combination " << combination << " at (" << i << ", " << j << ")";
}

constexpr bool transposes(Trans t) { return t != Trans::no; }

TEST(TransposedForms, GemmOnEveryOrientationIsTheLowerForm) {
  std::mt19937 random(11);
  const int m = 5, n = 4, k = 3;
  // The factorization's C -= A B^T and the solves' C -= A B, C -= A^T B.
  constexpr Trans H = Trans::conjugate_transpose;
  for (const auto& [transa, transb] : {std::pair{Trans::no, H}, {Trans::no, Trans::no}, {H, Trans::no}})
    for (int combination = 0; combination < 8; ++combination) {
      const Matrix a = random_matrix(transposes(transa) ? k : m, transposes(transa) ? m : k, random);
      const Matrix b = random_matrix(transposes(transb) ? n : k, transposes(transb) ? k : n, random);
      const Matrix c = random_matrix(m, n, random);
      Matrix want = c;
      kernels::cpu::gemm(transa, transb, m, n, k, -1.0, a.a.data(), a.rows, b.a.data(), b.rows, 1.0,
                         want.a.data(), m);
      Operand A(a, combination & 1), B(b, combination & 2), C(c, combination & 4);
      const GemmForm form = gemm_form(transa, transb, A.ref, B.ref, C.ref);
      const Matrix& sa = stored_of(form.a, A, B);
      const Matrix& sb = stored_of(form.b, A, B);
      kernels::cpu::gemm(form.transa, form.transb, C.stored.rows, C.stored.cols,
                         transposes(form.transa) ? sa.rows : sa.cols, -1.0, sa.a.data(), sa.rows, sb.a.data(), sb.rows, 1.0,
                         C.stored.a.data(), C.stored.rows);
      expect_near(C.logical(), want, "gemm", combination);
    }
}

TEST(TransposedForms, TrsmOnEveryOrientationIsTheLowerForm) {
  std::mt19937 random(12);
  const int n = 5, m = 3;
  // The factorization's B := B L^{-T} and the solves' B := L^{-1} B, B := L^{-T} B.
  constexpr Trans H = Trans::conjugate_transpose;
  for (const auto& [side, trans] : {std::pair{Side::right, H}, {Side::left, Trans::no}, {Side::left, H}})
    for (int combination = 0; combination < 4; ++combination) {
      const Matrix l = lower_factor(n, random);
      const Matrix b = side == Side::left ? random_matrix(n, m, random) : random_matrix(m, n, random);
      Matrix want = b;
      kernels::cpu::trsm(side == Side::left, 'L', trans, b.rows, b.cols, 1.0, l.a.data(), n, want.a.data(), b.rows);
      Operand L(l, combination & 1), B(b, combination & 2);
      const TrsmForm form = trsm_form(side, trans, L.ref, B.ref);
      kernels::cpu::trsm(form.side == Side::left, uplo_letter(form.uplo), form.trans, B.stored.rows, B.stored.cols,
                         1.0, L.stored.a.data(), n, B.stored.a.data(), B.stored.rows);
      expect_near(B.logical(), want, "trsm", combination);
    }
}

TEST(TransposedForms, SyrkOnEveryOrientationIsTheLowerForm) {
  std::mt19937 random(13);
  const int n = 5, k = 3;
  for (int combination = 0; combination < 4; ++combination) {
    const Matrix a = random_matrix(n, k, random);
    Matrix c = random_matrix(n, n, random);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < j; ++i) c(i, j) = c(j, i);  // symmetric: either triangle holds it
    Matrix want = c;
    kernels::cpu::syrk('L', Trans::no, n, k, -1.0, a.a.data(), n, 1.0, want.a.data(), n);
    Operand A(a, combination & 1), C(c, combination & 2);
    const SyrkForm form = syrk_form(A.ref, C.ref);
    kernels::cpu::syrk(uplo_letter(form.uplo), form.trans, n, k, -1.0, A.stored.a.data(), A.stored.rows, 1.0,
                       C.stored.a.data(), n);
    // The lower triangle of the tile C stands for; the other one is not part of the task.
    Matrix got = C.logical();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < j; ++i) got(i, j) = want(i, j);
    expect_near(got, want, "syrk", combination);
  }
}

TEST(TransposedForms, PotrfOnATransposedTileLeavesTheTransposedFactor) {
  std::mt19937 random(14);
  const int n = 6;
  const Matrix l = lower_factor(n, random);
  Matrix spd(Matrix{n, n, std::vector<double>(static_cast<std::size_t>(n) * n)});
  kernels::cpu::gemm(Trans::no, Trans::conjugate_transpose, n, n, n, 1.0, l.a.data(), n, l.a.data(), n, 0.0, spd.a.data(), n);
  for (bool stored_transposed : {false, true}) {
    Operand A(spd, stored_transposed);
    ASSERT_EQ(kernels::cpu::potrf(uplo_letter(diagonal_form(A.ref)), n, A.stored.a.data(), n), 0);
    Matrix got = A.logical();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < j; ++i) got(i, j) = 0;  // the factor is the lower triangle
    expect_near(got, l, "potrf", stored_transposed);
  }
}

}  // namespace
}  // namespace tessera::detail
