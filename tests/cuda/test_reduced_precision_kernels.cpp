// The CUDA kernels of the adaptive-precision factorization (reduced_precision.hpp) against the CPU
// kernels that define the same arithmetic: the Frobenius norm of a block or of either triangle of
// a symmetric diagonal block (the same value run after run), the range exponent (from the norm's
// largest-modulus pass; 0 for zeros, an infinity or a NaN), the FP16 pieces bit for bit, and the
// unscaled sum added into a double block. Odd sizes, padded leading dimensions, a range of
// magnitudes. Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cpu/reduced_precision.hpp"
#include "cuda/reduced_precision.hpp"
#include "kernel_test_support.hpp"

namespace tk = tessera::kernels::cuda;
namespace cpu = tessera::kernels::cpu;
using tessera::kernels::TilePart;
using namespace tessera::test;  // kernel_test_support.hpp

namespace {

// m x n values of magnitude about `scale` (leading dimension ld; the padding NaN, never read).
std::vector<double> block(int m, int n, int ld, double scale, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> A(static_cast<std::size_t>(ld) * n, poison<double>());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) A[i + static_cast<std::size_t>(j) * ld] = scale * u(gen);
  return A;
}

double gpu_norm(TilePart part, int m, int n, const std::vector<double>& A, int ld) {
  DeviceBuffer<double> dA(A), out{std::vector<double>{-1}};
  DeviceBuffer<double> workspace{std::vector<double>(tk::frobenius_norm_workspace_bytes(n) / sizeof(double))};
  tk::frobenius_norm(part, m, n, dA.get(), ld, workspace.get(), out.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out.to_host()[0];
}

int gpu_exponent(int m, int n, const std::vector<double>& A, int ld) {
  DeviceBuffer<double> dA(A), workspace{std::vector<double>(tk::range_exponent_workspace_bytes() / sizeof(double))};
  DeviceBuffer<short> exponent{std::vector<short>{-99}};
  tk::range_exponent(m, n, dA.get(), ld, workspace.get(), exponent.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return exponent.to_host()[0];
}

TEST(ReducedPrecisionKernels, FrobeniusNormOfABlockAndOfEitherTriangle) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  for (TilePart part : {TilePart::whole, TilePart::lower_symmetric, TilePart::upper_symmetric})
    for (int n : {1, 2, 37, 511, 513, 700})
      for (double scale : {1.0, 1e-200, 1e200}) {
        SCOPED_TRACE(testing::Message() << "part=" << static_cast<int>(part) << " n=" << n << " scale=" << scale);
        const int m = part == TilePart::whole && n > 2 ? n - 1 : n, ld = m + 3;
        const std::vector<double> A = block(m, n, ld, scale, 11 + n);
        const double expected = cpu::frobenius_norm(part, m, n, A.data(), ld);
        const double norm = gpu_norm(part, m, n, A, ld);
        EXPECT_NEAR(norm, expected, 1e-13 * expected);
        EXPECT_TRUE(same_bits(norm, gpu_norm(part, m, n, A, ld)));  // partials combined in a fixed order
      }
}

TEST(ReducedPrecisionKernels, FrobeniusNormOfZerosInfinitiesAndNaN) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int n = 40;
  std::vector<double> A(static_cast<std::size_t>(n) * n, 0.0);
  EXPECT_EQ(gpu_norm(TilePart::whole, n, n, A, n), 0.0);
  A[5 + 7 * n] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(gpu_norm(TilePart::whole, n, n, A, n), std::numeric_limits<double>::infinity());
  A[30 + 2 * n] = std::nan("");
  EXPECT_TRUE(std::isnan(gpu_norm(TilePart::whole, n, n, A, n)));
  // (5, 7) lies above the diagonal, (30, 2) below: each triangle reads one of them.
  EXPECT_EQ(gpu_norm(TilePart::upper_symmetric, n, n, A, n), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(gpu_norm(TilePart::lower_symmetric, n, n, A, n)));
}

TEST(ReducedPrecisionKernels, RangeExponentAndTheFp16PiecesAsOnTheCpu) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  for (int m : {1, 33, 300})
    for (double scale : {1.0, 3e-9, 7e4, 1e-30}) {
      SCOPED_TRACE(testing::Message() << "m=" << m << " scale=" << scale);
      const int n = m + 2, lda = m + 1, ldd = m + 5;
      const std::vector<double> A = block(m, n, lda, scale, 5 + m);
      const int expected = cpu::range_exponent(m, n, A.data(), lda);
      DeviceBuffer<double> dA(A), workspace{std::vector<double>(tk::range_exponent_workspace_bytes() / sizeof(double))};
      DeviceBuffer<short> exponent{std::vector<short>{-99}};
      DeviceBuffer<std::uint16_t> hi{std::vector<std::uint16_t>(static_cast<std::size_t>(ldd) * n, 0xffff)};
      DeviceBuffer<std::uint16_t> lo{std::vector<std::uint16_t>(static_cast<std::size_t>(ldd) * n, 0xffff)};
      tk::range_exponent(m, n, dA.get(), lda, workspace.get(), exponent.get(), nullptr);
      tk::split_to_fp16(m, n, dA.get(), lda, exponent.get(), hi.get(), lo.get(), ldd, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(exponent.to_host()[0], expected);
      std::vector<std::uint16_t> cpu_hi(static_cast<std::size_t>(m) * n), cpu_lo(cpu_hi.size());
      short cpu_exponent = 0;
      cpu::split_to_fp16(m, n, A.data(), lda, cpu_hi.data(), cpu_lo.data(), &cpu_exponent);
      const std::vector<std::uint16_t> h = hi.to_host(), l = lo.to_host();
      int different = 0;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          const std::size_t d = i + static_cast<std::size_t>(j) * ldd, c = i + static_cast<std::size_t>(j) * m;
          different += h[d] != cpu_hi[c] || l[d] != cpu_lo[c];
        }
      EXPECT_EQ(different, 0);
      EXPECT_EQ(h[m], 0xffff) << "the padding rows are not written";
    }
}

TEST(ReducedPrecisionKernels, RangeExponentOfZerosInfinitiesAndNaNIsZero) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int n = 20;
  std::vector<double> A(static_cast<std::size_t>(n) * n, 0.0);
  EXPECT_EQ(gpu_exponent(n, n, A, n), 0);
  EXPECT_EQ(gpu_exponent(0, n, A, n), 0);
  A[3] = 0.75;  // largest modulus in [2^-1, 2^0): 2^15 brings it to [2^14, 2^15)
  EXPECT_EQ(gpu_exponent(n, n, A, n), 15);
  EXPECT_EQ(cpu::range_exponent(n, n, A.data(), n), 15);
  A[50] = std::nan("");
  EXPECT_EQ(gpu_exponent(n, n, A, n), 0);
  EXPECT_EQ(cpu::range_exponent(n, n, A.data(), n), 0);
  A[50] = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(gpu_exponent(n, n, A, n), 0);
  EXPECT_EQ(cpu::range_exponent(n, n, A.data(), n), 0);
}

TEST(ReducedPrecisionKernels, AddUnscaledBringsProductsBackToTheirScale) {
  TESSERA_REQUIRE_CUDA_DEVICE();
  const int m = 45, n = 38, ldw = 50, ldc = 47;
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> W(static_cast<std::size_t>(ldw) * n), W2(W.size());
  for (auto& w : W) w = u(gen) * 1e4f;
  for (auto& w : W2) w = u(gen) * 1e4f;
  const std::vector<double> C0 = block(m, n, ldc, 1.0, 9);
  const short ea = 20, eb = -7;
  for (bool with_low : {false, true}) {
    DeviceBuffer<float> dW(W), dW2(W2);
    DeviceBuffer<double> dC(C0);
    DeviceBuffer<short> dea{std::vector<short>{ea}}, deb{std::vector<short>{eb}};
    tk::add_unscaled(m, n, -1.0, dW.get(), with_low ? dW2.get() : nullptr, ldw, dea.get(), deb.get(), dC.get(), ldc,
                     nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<double> C = dC.to_host();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const std::size_t w = i + static_cast<std::size_t>(j) * ldw, c = i + static_cast<std::size_t>(j) * ldc;
        const double product = double(W[w]) + (with_low ? double(W2[w]) / 2048.0 : 0.0);
        const double expected = C0[c] - std::ldexp(product, -(ea + eb));
        ASSERT_NEAR(C[c], expected, 1e-15 * std::abs(product) * std::ldexp(1.0, -(ea + eb)) + 1e-16) << i << "," << j;
      }
    EXPECT_TRUE(std::isnan(C[m])) << "the padding rows are not written";
  }
}

}  // namespace
