// The element-wise kernels of the refined solve on the GPU (refinement.hpp) and update_triangle
// (matrix_utils.hpp), against the same arithmetic on the host: the scaled narrowing from either
// triangle (the other one NaN, never read; As's strict upper triangle never written), the row sums
// of |A| for its infinity norm, the flags for a non-positive diagonal and for overflow, IxAMAX's
// NaN rule, the scaled right-hand sides and corrections. Odd orders across the kernels' 32 x 32
// tiles, padded leading dimensions; the triangular solves by the inverses of the factor's diagonal
// blocks (their products in FP32 and on the tensor cores). Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <type_traits>
#include <limits>
#include <random>
#include <vector>

#include "cuda/matrix_utils.hpp"
#include "cuda/refinement.hpp"
#include "cuda/vendor.hpp"
#include "kernel_test_support.hpp"
#include "tessera/error.hpp"

namespace tk = tessera::kernels::cuda;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

std::size_t at(int i, int j, int ld) { return static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * ld; }

// A symmetric matrix with a positive diagonal in the triangle uplo, NaN in the other one and in the
// padding rows.
std::vector<double> stored_symmetric(char uplo, int n, int ld, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> A(static_cast<std::size_t>(ld) * n, std::numeric_limits<double>::quiet_NaN());
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = i == j ? 2 + 10 * std::abs(u(gen)) : u(gen);
      A[uplo == 'L' ? at(i, j, ld) : at(j, i, ld)] = v;
    }
  return A;
}

double stored(char uplo, const std::vector<double>& A, int ld, int i, int j) {
  const bool lower_part = i >= j;
  return uplo == 'L' ? (lower_part ? A[at(i, j, ld)] : A[at(j, i, ld)]) : (lower_part ? A[at(j, i, ld)] : A[at(i, j, ld)]);
}

TEST(RefinementKernels, ScaleAndNarrowFromEitherTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  for (char uplo : {'L', 'U'})
    for (int n : {1, 31, 33, 100}) {
      SCOPED_TRACE(testing::Message() << "uplo=" << uplo << " n=" << n);
      const int lda = n + 3, lds = n + 1;
      const std::vector<double> A = stored_symmetric(uplo, n, lda, 3 + n);
      DeviceBuffer<double> dA(A), scale{std::vector<double>(n)}, sums{std::vector<double>(n, -1)};
      DeviceBuffer<float> As{std::vector<float>(static_cast<std::size_t>(lds) * n, poison<float>())};
      DeviceBuffer<int> flags{std::vector<int>{0}};
      tk::scale_and_narrow(uplo, n, dA.get(), lda, scale.get(), As.get(), lds, sums.get(), flags.get(), nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(flags.to_host()[0], 0);
      const std::vector<double> s = scale.to_host(), row_sums = sums.to_host();
      const std::vector<float> single = As.to_host();
      for (int i = 0; i < n; ++i) {
        EXPECT_DOUBLE_EQ(s[i], 1 / std::sqrt(stored(uplo, A, lda, i, i)));
        double expected_sum = 0;
        for (int j = 0; j < n; ++j) expected_sum += std::abs(stored(uplo, A, lda, i, j));
        EXPECT_NEAR(row_sums[i], expected_sum, 1e-12 * expected_sum);
      }
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < lds; ++i) {
          const float got = single[at(i, j, lds)];
          if (i < j || i >= n) {
            EXPECT_TRUE(same_bits(got, poison<float>())) << "written outside the lower triangle at " << i << "," << j;
            continue;
          }
          EXPECT_EQ(got, static_cast<float>(stored(uplo, A, lda, i, j) * s[i] * s[j])) << i << "," << j;
        }
    }
}

TEST(RefinementKernels, FlagsANonPositiveDiagonalAndOverflow) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int n = 40;
  for (double bad_diagonal : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    std::vector<double> A = stored_symmetric('L', n, n, 5);
    A[at(17, 17, n)] = bad_diagonal;
    DeviceBuffer<double> dA(A), scale{std::vector<double>(n)}, sums{std::vector<double>(n)};
    DeviceBuffer<float> As{std::vector<float>(static_cast<std::size_t>(n) * n)};
    DeviceBuffer<int> flags{std::vector<int>{0}};
    tk::scale_and_narrow('L', n, dA.get(), n, scale.get(), As.get(), n, sums.get(), flags.get(), nullptr);
    EXPECT_TRUE(flags.to_host()[0] & tk::kDiagonalNotPositive) << bad_diagonal;
  }
  // An off-diagonal entry far beyond what an SPD matrix allows: its scaled value overflows FP32.
  std::vector<double> A = stored_symmetric('U', n, n, 6);
  A[at(3, 30, n)] = 1e300;
  DeviceBuffer<double> dA(A), scale{std::vector<double>(n)}, sums{std::vector<double>(n)};
  DeviceBuffer<float> As{std::vector<float>(static_cast<std::size_t>(n) * n)};
  DeviceBuffer<int> flags{std::vector<int>{0}};
  tk::scale_and_narrow('U', n, dA.get(), n, scale.get(), As.get(), n, sums.get(), flags.get(), nullptr);
  EXPECT_EQ(flags.to_host()[0], tk::kScaledOverflow);
}

TEST(RefinementKernels, LargestMagnitudesFollowIamaxOnNaN) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int n = 700, ld = 703;
  std::vector<double> M(static_cast<std::size_t>(ld) * 3, 0.5);
  M[at(400, 0, ld)] = -9;        // column 0: the largest magnitude inside
  M[at(0, 1, ld)] = nan;         // column 1: a NaN first is kept
  M[at(5, 2, ld)] = nan;         // column 2: a later NaN is passed over
  M[at(699, 2, ld)] = 3;
  M[at(701, 0, ld)] = 100;       // padding: not read
  DeviceBuffer<double> dM(M), largest{std::vector<double>(3)};
  tk::largest_magnitudes(n, 3, dM.get(), ld, largest.get(), nullptr);
  const std::vector<double> got = largest.to_host();
  EXPECT_EQ(got[0], 9);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_EQ(got[2], 3);
}

TEST(RefinementKernels, ScaledRightHandSidesAndCorrections) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int n = 77, nrhs = 3, ldr = 80, ldx = 79;
  std::vector<double> scale(n), R(static_cast<std::size_t>(ldr) * nrhs), X(static_cast<std::size_t>(ldx) * nrhs, 2.0);
  for (int i = 0; i < n; ++i) scale[i] = 0.5 + i * 0.01;
  for (std::size_t e = 0; e < R.size(); ++e) R[e] = std::sin(double(e));
  DeviceBuffer<double> dscale(scale), dR(R), dX(X);
  DeviceBuffer<float> Z{std::vector<float>(static_cast<std::size_t>(n) * nrhs)};
  DeviceBuffer<int> flags{std::vector<int>{0}};
  tk::narrow_scaled(n, nrhs, dscale.get(), dR.get(), ldr, Z.get(), n, flags.get(), nullptr);
  tk::widen_scaled(true, n, nrhs, dscale.get(), Z.get(), n, dX.get(), ldx, nullptr);
  const std::vector<float> z = Z.to_host();
  const std::vector<double> x = dX.to_host();
  EXPECT_EQ(flags.to_host()[0], 0);
  for (int j = 0; j < nrhs; ++j)
    for (int i = 0; i < n; ++i) {
      const float zi = static_cast<float>(scale[i] * R[at(i, j, ldr)]);
      EXPECT_EQ(z[at(i, j, n)], zi);
      EXPECT_EQ(x[at(i, j, ldx)], 2.0 + scale[i] * double(zi));
    }
  for (int j = 0; j < nrhs; ++j) EXPECT_EQ(x[at(n + 1, j, ldx)], 2.0) << "padding written";
  tk::widen_scaled(false, n, nrhs, dscale.get(), Z.get(), n, dX.get(), ldx, nullptr);
  EXPECT_EQ(dX.to_host()[at(5, 1, ldx)], scale[5] * double(z[at(5, 1, n)]));
  R[at(10, 2, ldr)] = 1e300;
  DeviceBuffer<double> dR_big(R);
  tk::narrow_scaled(n, nrhs, dscale.get(), dR_big.get(), ldr, Z.get(), n, flags.get(), nullptr);
  EXPECT_EQ(flags.to_host()[0], tk::kScaledOverflow);
}

TEST(RefinementKernels, UpdateTriangleWritesOnlyItsTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int n = 45, ldw = 47, ldc = 50;
  std::vector<float> W(static_cast<std::size_t>(ldw) * n), C(static_cast<std::size_t>(ldc) * n);
  for (std::size_t e = 0; e < W.size(); ++e) W[e] = float(std::cos(double(e)));
  for (std::size_t e = 0; e < C.size(); ++e) C[e] = float(e % 13);
  for (tk::Triangle t : {tk::Triangle::lower, tk::Triangle::upper}) {
    DeviceBuffer<float> dW(W), dC(C);
    tk::update_triangle(t, n, -1.0f, dW.get(), ldw, 1.0f, dC.get(), ldc, nullptr);
    const std::vector<float> got = dC.to_host();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < ldc; ++i) {
        const bool inside = i < n && (t == tk::Triangle::lower ? i >= j : i <= j);
        const float expected = inside ? -1.0f * W[at(i, j, ldw)] + 1.0f * C[at(i, j, ldc)] : C[at(i, j, ldc)];
        ASSERT_EQ(got[at(i, j, ldc)], expected) << i << "," << j;
      }
  }
}

// The triangular solves of the refined solve on the GPU: the diagonal blocks' inverses
// (vendor::invert_lower_diagonal_blocks) and the block solves with them, forward and transposed,
// one right-hand side (gemv) and several (gemm), against a substitution on the host in double:
// one block, a last block of one row, a last block one short of full, several full blocks, and a
// padded leading dimension; the triangle above L's diagonal NaN, never read.
TEST(RefinementKernels, TriangularSolvesByBlockInverses) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  namespace vendor = tk::vendor;
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  constexpr int b = vendor::kInverseBlock;
  for (int n : {1, 37, b + 1, 2 * b - 1, 2 * b + 300})
    for (int nrhs : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " nrhs=" << nrhs);
      const int ld = n + 3;
      std::mt19937 gen(n + nrhs);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<float> L(static_cast<std::size_t>(ld) * n, std::numeric_limits<float>::quiet_NaN());
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) L[at(i, j, ld)] = i == j ? float(1 + std::abs(u(gen))) : float(u(gen) / std::sqrt(n));
      std::vector<float> R(static_cast<std::size_t>(n) * nrhs);
      for (float& r : R) r = float(u(gen));
      DeviceBuffer<float> dL(L), inverses(std::vector<float>(vendor::inverse_blocks_elements(n)));
      DeviceBuffer<float> work(std::vector<float>(std::max<std::size_t>(1, vendor::inverse_by_levels_elements(n, b))));
      DeviceBuffer<float*> pointers(std::vector<float*>(std::max(1, vendor::inverse_by_levels_pointers(n))));
      vendor::invert_lower_diagonal_blocks(handle, false, n, dL.get(), ld, inverses.get(), work.get(), pointers.get(),
                                           nullptr);
      for (tessera::Trans trans : {tessera::Trans::no, tessera::Trans::transpose}) {
        double worst_fp32 = 0;
        for (bool tf32 : {false, true}) {
          DeviceBuffer<float> dR(R), dX(std::vector<float>(R.size()));
          vendor::solve_lower_by_block_inverses(handle, trans, n, nrhs, dL.get(), ld, inverses.get(), dR.get(), n,
                                                dX.get(), n, tf32);
          const std::vector<float> X = dX.to_host();
          // TF32 products only for several columns (one takes gemv in FP32).
          const bool tensor_cores = tf32 && nrhs > 1;
          double worst = 0;
          for (int c = 0; c < nrhs; ++c) {
            // Substitution in double: op(L) y = r.
            std::vector<double> y(n);
            for (int step = 0; step < n; ++step) {
              const int i = trans == tessera::Trans::no ? step : n - 1 - step;
              double sum = R[at(i, c, n)];
              if (trans == tessera::Trans::no)
                for (int j = 0; j < i; ++j) sum -= double(L[at(i, j, ld)]) * y[j];
              else
                for (int j = i + 1; j < n; ++j) sum -= double(L[at(j, i, ld)]) * y[j];
              y[i] = sum / L[at(i, i, ld)];
            }
            double largest = 0, error = 0;
            for (int i = 0; i < n; ++i) {
              largest = std::max(largest, std::abs(y[i]));
              error = std::max(error, std::abs(y[i] - double(X[at(i, c, n)])));
            }
            EXPECT_LT(error, (tensor_cores ? 5e-3 : 1e-4) * largest)
                << (trans == tessera::Trans::no ? "L" : "L^T") << " column " << c << " tf32 " << tf32;
            worst = std::max(worst, error / largest);
          }
          if (!tf32) worst_fp32 = worst;
          // The TF32 products ran: their operands' rounding shows in the solution.
          if (tensor_cores && n > 1) EXPECT_GT(worst, 10 * worst_fp32) << "no less accurate than FP32";
        }
      }
    }
  cublasDestroy(handle);
}

// vendor::invert_lower_by_levels: X L = I in double on the host for whole triangles (orders around
// the leaves of 64 and the levels' short pairs: 1, 63, 64, 65, 127, 129, 200, 1000, 2048, 2100),
// in FP32 and with TF32 products; X's strict upper triangle zero; L's strict upper triangle NaN,
// never read; and blocks of 128 of an order of 300: each block's inverse, the elements of X outside
// the blocks left as they were.
TEST(RefinementKernels, TriangularInversesByLevels) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  namespace vendor = tk::vendor;
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  const float sentinel = 12345.0f;
  struct Case {
    int n, block;
  };
  for (const Case c : {Case{1, 1}, Case{63, 63}, Case{64, 64}, Case{65, 65}, Case{127, 127}, Case{129, 129},
                       Case{200, 200}, Case{1000, 1000}, Case{2048, 2048}, Case{2100, 2100}, Case{300, 128}})
    for (bool tf32 : {false, true}) {
      const int n = c.n, ld = n + 5, ldx = c.block < n ? c.block : n + 2;
      SCOPED_TRACE(testing::Message() << "n=" << n << " block=" << c.block << " tf32=" << tf32);
      std::mt19937 gen(n + c.block);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<float> L(static_cast<std::size_t>(ld) * n, std::numeric_limits<float>::quiet_NaN());
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) L[at(i, j, ld)] = i == j ? float(1 + std::abs(u(gen))) : float(u(gen) / std::sqrt(n));
      const std::size_t x_elements = static_cast<std::size_t>(ldx) * n + n;
      DeviceBuffer<float> dL(L), dX(std::vector<float>(x_elements, sentinel));
      DeviceBuffer<float> work(std::vector<float>(std::max<std::size_t>(1, vendor::inverse_by_levels_elements(n, c.block))));
      DeviceBuffer<float*> pointers(std::vector<float*>(std::max(1, vendor::inverse_by_levels_pointers(n))));
      vendor::invert_lower_by_levels(handle, tf32, n, c.block, dL.get(), ld, dX.get(), ldx, work.get(), pointers.get(),
                                     nullptr);
      const std::vector<float> X = dX.to_host();
      const int block = std::min(c.block, n);
      std::vector<bool> in_block(x_elements, false);
      double worst = 0;
      for (int k0 = 0; k0 < n; k0 += block) {
        const int kb = std::min(block, n - k0);
        const float* Xk = X.data() + static_cast<std::size_t>(k0) * (ldx + 1);
        const float* Lk = L.data() + static_cast<std::size_t>(k0) * (ld + 1);
        for (int j = 0; j < kb; ++j)
          for (int i = 0; i < kb; ++i) {
            in_block[static_cast<std::size_t>(k0) * (ldx + 1) + at(i, j, ldx)] = true;
            if (i < j) {
              ASSERT_EQ(Xk[at(i, j, ldx)], 0.0f) << "above the diagonal of block " << k0 / block;
              continue;
            }
            double sum = 0;  // (X L)(i, j)
            for (int m = j; m <= i; ++m) sum += double(Xk[at(i, m, ldx)]) * Lk[at(m, j, ld)];
            worst = std::max(worst, std::abs(sum - (i == j ? 1.0 : 0.0)));
          }
      }
      EXPECT_LT(worst, tf32 ? 1e-2 : 1e-4) << "max |X L - I|";
      for (std::size_t e = 0; e < x_elements; ++e)
        if (!in_block[e]) ASSERT_EQ(X[e], sentinel) << "written outside the blocks at " << e;
    }
  cublasDestroy(handle);
}

// vendor::subtract_symmetric_product: R - A X against the host's sum in double, A symmetric
// (complex: Hermitian, its diagonal's imaginary parts NaN-free but not read as such) in either
// triangle with NaN in the other one, blocks of 64 over orders that end on and off a block, one
// column (symv) and three (the blocked form); padded leading dimensions.
template <class T>
void check_subtract_symmetric_product() {
  namespace vendor = tk::vendor;
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  constexpr bool complex = !std::is_same_v<T, double>;
  for (int n : {1, 64, 100, 333})
    for (char uplo : {'L', 'U'})
      for (int nrhs : {1, 3}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " uplo=" << uplo << " nrhs=" << nrhs << " complex=" << complex);
        const int lda = n + 2, ldx = n + 1, ldr = n + 3;
        std::mt19937 gen(n * 7 + nrhs + (uplo == 'L'));
        std::uniform_real_distribution<double> u(-1, 1);
        const auto draw = [&] {
          if constexpr (complex) return T(u(gen), u(gen)); else return T(u(gen));
        };
        std::vector<T> full(static_cast<std::size_t>(n) * n);  // the Hermitian matrix, both triangles
        for (int j = 0; j < n; ++j)
          for (int i = j; i < n; ++i) {
            T v = draw();
            if (i == j) v = T(std::real(v));
            full[at(i, j, n)] = v;
            if constexpr (complex) full[at(j, i, n)] = std::conj(v); else full[at(j, i, n)] = v;
          }
        std::vector<T> A(static_cast<std::size_t>(lda) * n, T(std::numeric_limits<double>::quiet_NaN()));
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (uplo == 'L' ? i >= j : i <= j) A[at(i, j, lda)] = full[at(i, j, n)];
        std::vector<T> X(static_cast<std::size_t>(ldx) * nrhs), R(static_cast<std::size_t>(ldr) * nrhs);
        for (T& x : X) x = draw();
        for (T& r : R) r = draw();
        DeviceBuffer<T> dA(A), dX(X), dR(R);
        vendor::subtract_symmetric_product(handle, uplo, n, nrhs, dA.get(), lda, dX.get(), ldx, dR.get(), ldr, 64);
        const std::vector<T> got = dR.to_host();
        double worst = 0;
        for (int c = 0; c < nrhs; ++c)
          for (int i = 0; i < n; ++i) {
            T sum = R[at(i, c, ldr)];
            for (int k = 0; k < n; ++k) sum -= full[at(i, k, n)] * X[at(k, c, ldx)];
            worst = std::max(worst, std::abs(sum - got[at(i, c, ldr)]));
          }
        EXPECT_LT(worst, 1e-12 * n) << "max |R - A X - got|";
        for (int c = 0; c < nrhs; ++c)
          for (int i = n; i < ldr; ++i) EXPECT_EQ(got[at(i, c, ldr)], R[at(i, c, ldr)]) << "padding written";
      }
  cublasDestroy(handle);
}

TEST(RefinementKernels, ResidualsByBlocksOfTheSymmetricMatrix) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  check_subtract_symmetric_product<double>();
  check_subtract_symmetric_product<std::complex<double>>();
}

// symmetric_residual: B - A X against the host's sum in double, A symmetric (complex: Hermitian,
// its diagonal's imaginary parts set and not to be read) in either triangle with NaN in the other
// one; every column count one pass takes; orders across the kernel's tiles of 64 and runs of tiles
// (4100: several tiles per run, the last run short); padded leading dimensions; R written over B;
// the same bits on a second run; a column more than a pass takes refused.
template <class T>
void check_symmetric_residual() {
  constexpr bool complex = !std::is_same_v<T, double>;
  for (int nrhs = 1; nrhs <= tk::symmetric_residual_most_columns<T>(); ++nrhs)
    for (int n : {1, 63, 64, 65, 257, 4100})
      for (char uplo : {'L', 'U'}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " nrhs=" << nrhs << " uplo=" << uplo << " complex=" << complex);
        const int lda = n + 3, ldx = n + 1, ldb = n + 2;
        std::mt19937 gen(n * 5 + (uplo == 'L') + 17 * nrhs);
        std::uniform_real_distribution<double> u(-1, 1);
        const auto draw = [&] {
          if constexpr (complex) return T(u(gen), u(gen)); else return T(u(gen));
        };
        std::vector<T> A(static_cast<std::size_t>(lda) * n, T(std::numeric_limits<double>::quiet_NaN()));
        for (int j = 0; j < n; ++j)
          for (int i = j; i < n; ++i) A[uplo == 'L' ? at(i, j, lda) : at(j, i, lda)] = draw();
        const auto value = [&](int i, int j) -> T {  // the Hermitian matrix's (i, j)
          if (i == j) return T(std::real(A[at(i, i, lda)]));
          const bool stored_here = uplo == 'L' ? i > j : i < j;
          if constexpr (complex) return stored_here ? A[at(i, j, lda)] : std::conj(A[at(j, i, lda)]);
          else return stored_here ? A[at(i, j, lda)] : A[at(j, i, lda)];
        };
        std::vector<T> X(static_cast<std::size_t>(ldx) * nrhs), B(static_cast<std::size_t>(ldb) * nrhs);
        for (T& v : X) v = draw();
        for (T& v : B) v = draw();
        DeviceBuffer<T> dA(A), dX(X), dB(B), dR{std::vector<T>(static_cast<std::size_t>(ldb) * nrhs)};
        DeviceBuffer<T> work{std::vector<T>(std::max<std::size_t>(1, tk::symmetric_residual_workspace(n, nrhs)))};
        tk::symmetric_residual(uplo, n, nrhs, dA.get(), lda, dX.get(), ldx, dB.get(), ldb, dR.get(), ldb, work.get(),
                               nullptr);
        const std::vector<T> got = dR.to_host();
        double worst = 0, scale = 0;
        for (int k = 0; k < nrhs; ++k)
          for (int i = 0; i < n; ++i) {
            T sum = B[at(i, k, ldb)];
            for (int c = 0; c < n; ++c) sum -= value(i, c) * X[at(c, k, ldx)];
            worst = std::max(worst, std::abs(sum - got[at(i, k, ldb)]));
            scale = std::max(scale, std::abs(sum));
          }
        EXPECT_LT(worst, 1e-14 * n) << "max |B - A X - got| (largest |B - A X| " << scale << ")";
        // In place, twice: the same bits as the first run; the rows past n not written.
        for (int run = 0; run < 2; ++run) {
          DeviceBuffer<T> in_place(B);
          tk::symmetric_residual(uplo, n, nrhs, dA.get(), lda, dX.get(), ldx, in_place.get(), ldb, in_place.get(), ldb,
                                 work.get(), nullptr);
          const std::vector<T> again = in_place.to_host();
          for (int k = 0; k < nrhs; ++k) {
            for (int i = 0; i < n; ++i)
              ASSERT_EQ(again[at(i, k, ldb)], got[at(i, k, ldb)]) << "run " << run << " row " << i << " column " << k;
            for (int i = n; i < ldb; ++i) ASSERT_EQ(again[at(i, k, ldb)], B[at(i, k, ldb)]) << "padding written";
          }
        }
      }
  const int more = tk::symmetric_residual_most_columns<T>() + 1;
  DeviceBuffer<T> scratch{std::vector<T>(64 * more)};
  EXPECT_THROW(tk::symmetric_residual('L', 8, more, scratch.get(), 8, scratch.get(), 8, scratch.get(), 8,
                                      scratch.get(), 8, scratch.get(), nullptr),
               tessera::InvalidArgument);
}

TEST(RefinementKernels, ResidualReadsTheStoredTriangleOnceInAFixedOrder) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  check_symmetric_residual<double>();
  check_symmetric_residual<std::complex<double>>();
}

}  // namespace
