// The CPU tile kernels' recursive trsm against OpenBLAS's own, for every side, triangle and
// transposition, orders around and well above the recursion's leaf (odd ones, a prime), alpha 1
// and another, both precisions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/blas.hpp"

namespace tessera {
namespace {

template <class T>
void check_every_form(double tolerance) {
  std::mt19937 random(21);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  using kernels::cpu::kTrsmLeaf;
  for (int k : {1, kTrsmLeaf - 1, kTrsmLeaf + 1, 100, 257})
    for (int other : {7, 65})
      for (bool left : {true, false})
        for (char uplo : {'L', 'U'})
          for (Trans trans : {Trans::no, Trans::transpose, Trans::conjugate_transpose})
            for (T alpha : {T(1), T(-0.5)}) {
              const int lda = k + 3, m = left ? k : other, n = left ? other : k, ldb = m + 2;
              std::vector<T> A(static_cast<std::size_t>(lda) * k), B(static_cast<std::size_t>(ldb) * n);
              for (T& a : A) a = static_cast<T>(value(random) / k);
              for (int i = 0; i < k; ++i) A[i + static_cast<std::size_t>(i) * lda] = static_cast<T>(2 + value(random));
              for (T& b : B) b = static_cast<T>(value(random));
              std::vector<T> want = B;
              kernels::cpu::blas_trsm(left, uplo, trans, m, n, alpha, A.data(), lda, want.data(), ldb);
              kernels::cpu::trsm(left, uplo, trans, m, n, alpha, A.data(), lda, B.data(), ldb);
              double worst = 0, scale = 0;
              for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                  const std::size_t at = i + static_cast<std::size_t>(j) * ldb;
                  worst = std::max(worst, double(std::abs(B[at] - want[at])));
                  scale = std::max(scale, double(std::abs(want[at])));
                }
              ASSERT_LE(worst, tolerance * std::max(scale, 1.0))
                  << "k=" << k << " other=" << other << " left=" << left << " uplo=" << uplo << " trans=" << static_cast<int>(trans)
                  << " alpha=" << alpha;
              // The padding rows of B are left alone.
              for (int j = 0; j < n; ++j)
                for (int i = m; i < ldb; ++i) ASSERT_EQ(B[i + static_cast<std::size_t>(j) * ldb], want[i + static_cast<std::size_t>(j) * ldb]);
            }
}

TEST(CpuTrsm, RecursiveMatchesOpenBlasForEveryForm) {
  check_every_form<double>(1e-12);
  check_every_form<float>(1e-4);
}

// For real scalars the conjugate transpose is the transpose.
TEST(CpuTrsm, RealConjugateTransposeIsTheTranspose) {
  EXPECT_EQ(kernels::cpu::cblas_trans(Trans::no), CblasNoTrans);
  EXPECT_EQ(kernels::cpu::cblas_trans(Trans::transpose), CblasTrans);
  EXPECT_EQ(kernels::cpu::cblas_trans(Trans::conjugate_transpose), CblasTrans);
}

}  // namespace
}  // namespace tessera
