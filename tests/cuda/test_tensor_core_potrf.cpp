// The recursive Cholesky factorization whose products run on the tensor cores
// (tensor_core_potrf.hpp), against the same matrix's product L L^T in double on the host: odd
// orders, leaves small enough that every recursion runs several levels deep, a padded leading
// dimension whose padding and upper triangle must come back bit-identical, the operands' accuracy
// (and no better than it: the asked arithmetic is the one that ran), LAPACK's info at the first
// failing column across the leaves, and FP16's overflow. Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/tensor_core_potrf.hpp"
#include "kernel_test_support.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

std::size_t at(int i, int j, int ld) { return static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * ld; }

// S (G G^T / n + I) S with S making the diagonal 1 (the refined solve's scaled matrix), in the
// lower triangle; the upper triangle and the padding rows hold NaN.
std::vector<float> unit_diagonal_spd(int n, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<double> G(static_cast<std::size_t>(n) * n);
  for (double& g : G) g = normal(gen);
  std::vector<double> A(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double sum = i == j ? 1.0 : 0.0;
      for (int k = 0; k < n; ++k) sum += G[at(i, k, n)] * G[at(j, k, n)] / n;
      A[at(i, j, n)] = sum;
    }
  std::vector<float> stored(static_cast<std::size_t>(ld) * n, poison<float>());
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i)
      stored[at(i, j, ld)] = static_cast<float>(A[at(i, j, n)] / std::sqrt(A[at(i, i, n)] * A[at(j, j, n)]));
  return stored;
}

// ||A - L L^T||_F / ||A||_F over the lower triangles, in double.
double relative_residual(int n, const std::vector<float>& A, const std::vector<float>& L, int ld) {
  double residual = 0, norm = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double product = 0;
      for (int k = 0; k <= j; ++k) product += double(L[at(i, k, ld)]) * double(L[at(j, k, ld)]);
      const double a = A[at(i, j, ld)];
      residual += (a - product) * (a - product);
      norm += a * a;
    }
  return std::sqrt(residual / norm);
}

class Handles {
 public:
  Handles() {
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
  }
  ~Handles() {
    cusolverDnDestroy(solver);
    cublasDestroy(blas);
  }
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
};

constexpr tk::RecursionLeaves kSmallLeaves{16, 16, 32};

struct Factored {
  std::vector<float> L;
  int info;
};

// The factor of A (n x n, ld) by potrf_lower_on_tensor_cores, or by cuSOLVER's FP32 potrf where
// `operands` is null.
Factored factor(const Handles& h, const tk::ProductOperands* operands, int n, const std::vector<float>& A, int ld,
                tk::RecursionLeaves leaves = kSmallLeaves) {
  DeviceBuffer<float> dA(A);
  DeviceBuffer<int> info{std::vector<int>{-7}};
  if (operands) {
    DeviceBuffer<unsigned char> work{
        std::vector<unsigned char>(tk::potrf_lower_on_tensor_cores_workspace(h.solver, *operands, n, leaves))};
    tk::potrf_lower_on_tensor_cores(h.blas, h.solver, *operands, n, dA.get(), ld, work.get(), info.get(), nullptr,
                                    leaves);
  } else {
    int lwork = 0;
    TESSERA_CUSOLVER_CHECK(cusolverDnSpotrf_bufferSize(h.solver, CUBLAS_FILL_MODE_LOWER, n, dA.get(), ld, &lwork));
    DeviceBuffer<float> work{std::vector<float>(std::max(lwork, 1))};
    TESSERA_CUSOLVER_CHECK(
        cusolverDnSpotrf(h.solver, CUBLAS_FILL_MODE_LOWER, n, dA.get(), ld, work.get(), lwork, info.get()));
  }
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  return {dA.to_host(), info.to_host()[0]};
}

constexpr tk::ProductOperands kOperands[] = {tk::ProductOperands::tf32, tk::ProductOperands::bf16,
                                             tk::ProductOperands::fp16};

double accuracy_bound(tk::ProductOperands operands) {
  // TF32 and FP16 operands carry 11 bits (unit roundoff 2^-11), BF16 8.
  return operands == tk::ProductOperands::bf16 ? 4e-2 : 5e-3;
}

// Both forms of the triangular solve's leaves: cuBLAS's FP32 solve and products with the
// leaves' inverses.
TEST(TensorCorePotrf, FactorsToTheOperandsAccuracyWithinTheLowerTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const Handles h;
  tk::RecursionLeaves by_inverse = kSmallLeaves;
  by_inverse.trsm_by_inverse = true;
  for (const int n : {1, 2, 15, 17, 31, 33, 100, 257})
    for (const tk::RecursionLeaves& leaves : {kSmallLeaves, by_inverse}) {
      const int ld = n + 3;
      const std::vector<float> A = unit_diagonal_spd(n, ld, 40 + n);
      const double fp32 = relative_residual(n, A, factor(h, nullptr, n, A, ld).L, ld);
      for (const tk::ProductOperands operands : kOperands) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " operands=" << static_cast<int>(operands)
                                        << " by inverse=" << leaves.trsm_by_inverse);
        const Factored f = factor(h, &operands, n, A, ld, leaves);
        EXPECT_EQ(f.info, 0);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < ld; ++i)
            if (i >= n || i < j) ASSERT_TRUE(same_bits(f.L[at(i, j, ld)], A[at(i, j, ld)])) << i << "," << j;
        const double residual = relative_residual(n, A, f.L, ld);
        EXPECT_LT(residual, accuracy_bound(operands));
        // From n = 100 the products hold most of the work: their operands' rounding shows.
        if (n >= 100) EXPECT_GT(residual, 4 * fp32) << "as accurate as FP32 (" << fp32 << ")";
      }
    }
}

// The default leaves: one leaf of cuSOLVER's (n <= 1024), then one split of 768 + 732.
TEST(TensorCorePotrf, DefaultLeaves) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const Handles h;
  for (const int n : {1000, 1500}) {
    const int ld = n + 1;
    const std::vector<float> A = unit_diagonal_spd(n, ld, 7);
    for (const tk::ProductOperands operands : kOperands) {
      const Factored f = factor(h, &operands, n, A, ld, tk::RecursionLeaves{});
      EXPECT_EQ(f.info, 0);
      EXPECT_LT(relative_residual(n, A, f.L, ld), accuracy_bound(operands)) << n;
    }
  }
}

// A negative diagonal entry at column k makes the k-th leading minor the first that is not
// positive definite: info k wherever k falls (the first and last columns, either side of a
// split, inside a leaf).
TEST(TensorCorePotrf, InfoIsTheFirstFailingColumn) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const Handles h;
  const int n = 100, ld = 101;
  for (const int k : {1, 2, 16, 17, 32, 33, 50, 99, 100}) {
    std::vector<float> A = unit_diagonal_spd(n, ld, 9);
    A[at(k - 1, k - 1, ld)] = -1;
    for (const tk::ProductOperands operands : kOperands) {
      SCOPED_TRACE(testing::Message() << "k=" << k << " operands=" << static_cast<int>(operands));
      EXPECT_EQ(factor(h, &operands, n, A, ld).info, k);
    }
    tk::RecursionLeaves by_inverse = kSmallLeaves;
    by_inverse.trsm_by_inverse = true;
    EXPECT_EQ(factor(h, &kOperands[2], n, A, ld, by_inverse).info, k) << "by inverse, k=" << k;
  }
  std::vector<float> A = unit_diagonal_spd(n, ld, 9);
  A[at(60, 60, ld)] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(factor(h, &kOperands[2], n, A, ld).info, 61) << "a NaN pivot";
}

// Entries up to about 3e6 in the factor: beyond FP16's range (65504) in the products' operands,
// which fails the factorization past the first leaf (columns 1 to 12: 100 is split into 50, 25,
// then 12); BF16 and TF32 keep FP32's range.
TEST(TensorCorePotrf, Fp16OverflowFailsTheFactorization) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const Handles h;
  const int n = 100, ld = 100;
  std::vector<float> A = unit_diagonal_spd(n, ld, 5);
  for (float& a : A) a *= 1e13f;
  for (const tk::ProductOperands operands : kOperands) {
    const int info = factor(h, &operands, n, A, ld).info;
    if (operands == tk::ProductOperands::fp16)
      EXPECT_GT(info, 12) << "the first leaf has no product to overflow";
    else
      EXPECT_EQ(info, 0) << static_cast<int>(operands);
  }
}

}  // namespace
