// Adaptive precision (FactorOptions::accuracy): the rule that chooses each tile's arithmetic, and
// factorizations of covariance matrices whose far tiles are small, in both triangles and every
// mode the machine has (hybrid mode's updates read FP16 copies of the panel tiles made once per
// step, even on CPU workers alone; cpu mode's round their operands to FP32 themselves): the
// backward error within the accuracy asked for, the map's reduced tiles,
// LAPACK's info, the log-determinant, and the options refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "adaptive_precision.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/reduced_precision.hpp"
#include "tessera/device.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace tessera::test {
namespace {

// An exponential covariance over points spread along [0, 1] in order, plus a nugget on the
// diagonal: the tiles far from the diagonal hold entries exp(-distance / range), tiny for
// distant blocks of points, as a geostatistics covariance ordered along space has.
std::vector<double> covariance(int n, double range) {
  std::vector<double> A(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      A[i + static_cast<std::size_t>(j) * n] = std::exp(-std::abs(i - j) / (range * n)) + (i == j ? 1e-2 : 0.0);
  return A;
}

// ||A - L L^T||_F / ||A||_F for the factor in the triangle `uplo` of F (the other ignored).
double backward_error(int n, const std::vector<double>& A, std::vector<double> F, Uplo uplo) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const bool other = uplo == Uplo::lower ? i < j : i > j;
      if (other) F[i + static_cast<std::size_t>(j) * n] = 0.0;
    }
  std::vector<double> R = A;  // R := A - L L^T (or U^T U), both triangles
  if (uplo == Uplo::lower)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, -1.0, F.data(), n, F.data(), n, 1.0, R.data(), n);
  else
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, -1.0, F.data(), n, F.data(), n, 1.0, R.data(), n);
  return kernels::cpu::frobenius_norm(kernels::TilePart::whole, n, n, R.data(), n) /
         kernels::cpu::frobenius_norm(kernels::TilePart::whole, n, n, A.data(), n);
}

TEST(AdaptivePrecisionRule, EachTileTakesTheLowestArithmeticItsNormAllows) {
  // Three tiles a side: ||A||_F^2 = 3 * 1 + 2 * (a^2 + b^2 + c^2).
  const double a = 3e-3, b = 1e-9, c = 0.5;
  std::vector<double> norms(6);
  norms[detail::packed_tile(0, 0)] = norms[detail::packed_tile(1, 1)] = norms[detail::packed_tile(2, 2)] = 1.0;
  norms[detail::packed_tile(1, 0)] = a;
  norms[detail::packed_tile(2, 0)] = b;
  norms[detail::packed_tile(2, 1)] = c;
  const double total = std::sqrt(3.0 + 2.0 * (a * a + b * b + c * c));
  const double accuracy = 1e-6;
  const TileArithmeticMap map = detail::choose_tile_arithmetic(norms, 3, accuracy);
  ASSERT_EQ(map.tiles, 3);
  // ratios a * 3 / total ~ 5e-3 (FP32: below 1e-6 / 2^-24, not below 1e-6 / 2^-11), b ~ 2e-9 (FP16),
  // c ~ 0.9 (FP32 too: 1e-6 / 2^-24 is about 16.8).
  EXPECT_LT(a * 3 / total, accuracy / detail::kFp32UnitRoundoff);
  EXPECT_GT(a * 3 / total, accuracy / detail::kFp16UnitRoundoff);
  EXPECT_EQ(map.at(1, 0), TileArithmetic::fp32);
  EXPECT_EQ(map.at(2, 0), TileArithmetic::fp16);
  EXPECT_EQ(map.at(2, 1), TileArithmetic::fp32);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(map.at(k, k), TileArithmetic::fp64);
  EXPECT_EQ(map.count(TileArithmetic::fp32), 2);
  EXPECT_EQ(map.count(TileArithmetic::fp16), 1);
  EXPECT_EQ(map.count(TileArithmetic::fp64), 0);
  // A tighter accuracy keeps c in FP64; a NaN norm keeps its tile there; a zero matrix keeps all.
  EXPECT_EQ(detail::choose_tile_arithmetic(norms, 3, 1e-9).at(2, 1), TileArithmetic::fp64);
  norms[detail::packed_tile(2, 0)] = std::nan("");
  EXPECT_EQ(detail::choose_tile_arithmetic(norms, 3, accuracy).at(2, 0), TileArithmetic::fp64);
  EXPECT_EQ(detail::choose_tile_arithmetic(std::vector<double>(6, 0.0), 3, accuracy).count(TileArithmetic::fp64), 3);
  EXPECT_THROW(map.at(0, 1), std::out_of_range);
}

TEST(AdaptivePrecisionRule, TheMapDrawsEveryTileInItsArithmetic) {
  TileArithmeticMap map;
  map.tiles = 3;
  map.lower = {TileArithmetic::fp64, TileArithmetic::fp16, TileArithmetic::fp64, TileArithmetic::fp32,
               TileArithmetic::fp16, TileArithmetic::fp64};  // (0,0) (1,0) (1,1) (2,0) (2,1) (2,2)
  const std::string svg = map.svg();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  for (const char* tile : {"tile (0, 0): fp64", "tile (1, 0): fp16", "tile (1, 1): fp64", "tile (2, 0): fp32",
                           "tile (2, 1): fp16", "tile (2, 2): fp64"})
    EXPECT_NE(svg.find(tile), std::string::npos) << tile;
  EXPECT_EQ(svg.find("tile (0, 1)"), std::string::npos) << "the upper triangle is not drawn";
  for (const char* legend : {">fp64 3<", ">fp32 1<", ">fp16 2<"}) EXPECT_NE(svg.find(legend), std::string::npos) << legend;
}

TEST(AdaptivePrecisionKernels, Fp16ConversionRoundsToNearestEvenOverEveryValue) {
  for (unsigned bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const float x = kernels::cpu::from_fp16_bits(b);
    if (std::isnan(x)) {
      EXPECT_TRUE(((bits >> 10) & 0x1f) == 0x1f && (bits & 0x3ff) != 0) << bits;
      continue;
    }
    ASSERT_EQ(kernels::cpu::to_fp16_bits(x), b) << bits;  // every value round-trips
    // The midpoint to the next value up rounds to whichever of the two is even.
    if ((bits & 0x7fff) < 0x7bff) {
      const float next = kernels::cpu::from_fp16_bits(static_cast<std::uint16_t>(b + 1));
      const double midpoint = 0.5 * (double(x) + double(next));
      EXPECT_EQ(kernels::cpu::to_fp16_bits(midpoint), (bits & 1) ? b + 1 : b) << bits;
    }
  }
  EXPECT_EQ(kernels::cpu::from_fp16_bits(kernels::cpu::to_fp16_bits(65519.0)), 65504.0f);
  EXPECT_TRUE(std::isinf(kernels::cpu::from_fp16_bits(kernels::cpu::to_fp16_bits(65520.0))));
  EXPECT_EQ(kernels::cpu::from_fp16_bits(kernels::cpu::to_fp16_bits(1.0 + 0x1p-11)), 1.0f);  // a tie: to even
  EXPECT_EQ(kernels::cpu::from_fp16_bits(kernels::cpu::to_fp16_bits(0x1p-25)), 0.0f);         // a tie with zero
  EXPECT_EQ(kernels::cpu::from_fp16_bits(kernels::cpu::to_fp16_bits(0x1.8p-25)), 0x1p-24f);
}

TEST(AdaptivePrecisionKernels, FrobeniusNormOfASymmetricTriangleAndTheFloatProduct) {
  const std::vector<double> S = {4, 2, 0, 99, 3, 1, 99, 99, 5};  // lower triangle of [[4 2 0] [2 3 1] [0 1 5]]
  EXPECT_DOUBLE_EQ(kernels::cpu::frobenius_norm(kernels::TilePart::lower_symmetric, 3, 3, S.data(), 3),
                   std::sqrt(16.0 + 9 + 25 + 2 * (4 + 0 + 1)));
  const std::vector<double> U = {4, 99, 99, 2, 3, 99, 0, 1, 5};  // its upper triangle
  EXPECT_DOUBLE_EQ(kernels::cpu::frobenius_norm(kernels::TilePart::upper_symmetric, 3, 3, U.data(), 3),
                   std::sqrt(16.0 + 9 + 25 + 2 * (4 + 0 + 1)));
  // Tiny operands keep their relative accuracy: each is scaled into FP32's range first.
  const int m = 5, k = 7;
  std::vector<double> A = random_matrix<double>(m, k, m, 3), C(m * m, 1.0), expected(m * m, 1.0);
  for (double& a : A) a *= 1e-30;
  kernels::cpu::gemm(Trans::no, Trans::transpose, m, m, k, -1.0, A.data(), m, A.data(), m, 1.0, expected.data(), m);
  for (int i = 0; i < m * m; ++i) expected[i] = (expected[i] - 1.0) * 1e60;
  kernels::cpu::gemm_in_float(Trans::no, Trans::transpose, m, m, k, -1.0, A.data(), m, A.data(), m, C.data(), m);
  for (int i = 0; i < m * m; ++i) EXPECT_NEAR((C[i] - 1.0) * 1e60, expected[i], 1e-5) << i;
  // The FP16 pieces (what GPU workers multiply, and hybrid mode's CPU workers read): tiny values
  // scaled into FP16's range; hi alone holds them to 2^-11, hi + 2^-11 lo to about 2^-22.
  std::vector<std::uint16_t> ahi(m * k), alo(m * k), bhi(m * k), blo(m * k);
  short ea = 0, eb = 0;
  kernels::cpu::split_to_fp16(m, k, A.data(), m, ahi.data(), alo.data(), &ea);
  EXPECT_GE(ea, 100);  // 1e-30 is about 2^-100: scaled up
  const std::vector<double> B = random_matrix<double>(m, k, m, 4);
  kernels::cpu::split_to_fp16(m, k, B.data(), m, bhi.data(), blo.data(), &eb);
  std::vector<double> exact(m * m, 0.0);
  kernels::cpu::gemm(Trans::no, Trans::transpose, m, m, k, -1.0, A.data(), m, B.data(), m, 0.0, exact.data(), m);
  for (bool low : {false, true}) {
    std::vector<double> D(m * m, 0.0);
    kernels::cpu::add_float_product(Trans::no, Trans::transpose, m, m, k, -1.0,
                                    kernels::cpu::widen_fp16(m, k, ahi.data(), alo.data(), m, low), ea,
                                    kernels::cpu::widen_fp16(m, k, bhi.data(), blo.data(), m, low), eb, D.data(), m);
    const double bound = 2 * k * (low ? 0x1p-20 : 0x1p-10);  // |a| < 1e-30, |b| < 1: two roundings per product
    double worst = 0;
    for (int i = 0; i < m * m; ++i) {
      EXPECT_NEAR(D[i] * 1e30, exact[i] * 1e30, bound) << i << (low ? " hi + lo" : " hi");
      worst = std::max(worst, std::abs(D[i] - exact[i]) * 1e30);
    }
    EXPECT_GT(worst, 0.0);  // rounded: not the double product
    if (low) EXPECT_LT(worst, 2 * k * 0x1p-18);
  }
}

struct Case {
  Mode mode;
  Uplo uplo;
};

class AdaptivePrecision : public ::testing::TestWithParam<Case> {};

TEST_P(AdaptivePrecision, BackwardErrorWithinTheAccuracyAskedFor) {
  const Case c = GetParam();
  if (c.mode == Mode::gpu) TESSERA_SKIP_WITHOUT_GPU();
  const int n = 601, nb = 40;  // 16 tiles a side, the last one short
  const std::vector<double> A = covariance(n, 0.02);
  for (double accuracy : {1e-5, 1e-8}) {
    std::vector<double> F = A;
    TileArithmeticMap map;
    FactorOptions options;
    options.mode = c.mode;
    options.uplo = c.uplo;
    options.nb = nb;
    options.accuracy = accuracy;
    options.tile_arithmetic = &map;
    ASSERT_EQ(potrf(runtime(), n, F.data(), n, options), 0);
    ASSERT_EQ(map.tiles, 16);
    EXPECT_GT(map.count(TileArithmetic::fp16), 0) << accuracy;
    EXPECT_GT(map.count(TileArithmetic::fp16) + map.count(TileArithmetic::fp32), map.tiles) << accuracy;
    const double error = backward_error(n, A, F, c.uplo);
    EXPECT_LT(error, 4 * accuracy) << "accuracy " << accuracy;
    EXPECT_GT(error, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndTriangles, AdaptivePrecision,
                         ::testing::Values(Case{Mode::cpu, Uplo::lower}, Case{Mode::cpu, Uplo::upper},
                                           Case{Mode::hybrid, Uplo::lower}, Case{Mode::hybrid, Uplo::upper},
                                           Case{Mode::gpu, Uplo::lower}, Case{Mode::gpu, Uplo::upper}));

TEST(AdaptivePrecisionFactor, AnAccuracyBeyondFp64KeepsEveryTileAndTheFp64Factor) {
  const int n = 97, nb = 16;
  const std::vector<double> A = covariance(n, 0.05);
  std::vector<double> adaptive = A, fp64 = A;
  TileArithmeticMap map;
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = nb;
  ASSERT_EQ(potrf(runtime(), n, fp64.data(), n, options), 0);
  options.accuracy = 1e-30;
  options.tile_arithmetic = &map;
  ASSERT_EQ(potrf(runtime(), n, adaptive.data(), n, options), 0);
  EXPECT_EQ(map.count(TileArithmetic::fp64), map.tiles * (map.tiles - 1) / 2);
  EXPECT_EQ(adaptive, fp64);
}

TEST(AdaptivePrecisionFactor, LapacksInfoAndTheLogDeterminant) {
  const int n = 203, nb = 20;
  const std::vector<double> A = covariance(n, 0.02);
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = nb;
  options.accuracy = 1e-8;
  double logdet = 0, fp64_logdet = 0;
  std::vector<double> F = A, G = A;
  options.log_determinant = &logdet;
  ASSERT_EQ(potrf(runtime(), n, F.data(), n, options), 0);
  FactorOptions fp64 = options;
  fp64.accuracy = 0;
  fp64.log_determinant = &fp64_logdet;
  ASSERT_EQ(potrf(runtime(), n, G.data(), n, fp64), 0);
  // d log det = tr(A^{-1} dA): within n * cond-free multiples of the accuracy for this matrix.
  EXPECT_NEAR(logdet, fp64_logdet, 1e-8 * n * 100);
  for (int failing : {0, 19, 20, 150, n - 1}) {  // a leading minor fails at every position that matters
    std::vector<double> B = A;
    B[failing + static_cast<std::size_t>(failing) * n] = -1.0;
    EXPECT_EQ(potrf(runtime(), n, B.data(), n, options), failing + 1) << failing;
  }
}

TEST(AdaptivePrecisionFactor, SmallMatricesRunAsTilesAndPosvSolvesWithTheFactor) {
  FactorOptions options;
  options.mode = Mode::cpu;
  options.accuracy = 1e-6;
  const PlanExplanation plan = explain_potrf<double>(runtime(), 50, options);
  EXPECT_EQ(plan.path, "tiles");  // the norms are tasks: never the calling thread's LAPACK
  EXPECT_NE(std::find_if(plan.reasons.begin(), plan.reasons.end(),
                         [](const std::string& r) { return r.find("adaptive precision") != std::string::npos; }),
            plan.reasons.end());
  const int n = 301, nb = 32;
  const std::vector<double> A = covariance(n, 0.02);
  std::vector<double> F = A, x(n, 1.0), b(n, 0.0);
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, A.data(), n, x.data(), 1, 0.0, b.data(), 1);
  options.nb = nb;
  std::vector<double> solution = b;
  ASSERT_EQ(posv(runtime(), n, 1, F.data(), n, solution.data(), n, options), 0);
  double worst = 0;
  for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(solution[i] - 1.0));
  EXPECT_LT(worst, 1e-3);  // the condition number (about 1e3 here) times the accuracy
}

TEST(AdaptivePrecisionFactor, TheCApiReportsTheTilesAndTheLogDeterminant) {
  const int n = 1500;  // tiles of Tessera's choice, several a side
  const std::vector<double> A = covariance(n, 0.01);
  std::vector<double> F = A, G = A;
  long long tiles[3] = {-1, -1, -1};
  double logdet = std::nan(""), fp64_logdet = std::nan("");
  ASSERT_EQ(tessera_dpotrf_adaptive('U', n, F.data(), n, 1e-6, tiles, &logdet), 0) << tessera_last_error();
  ASSERT_EQ(tessera_dpotrf_logdet('U', n, G.data(), n, &fp64_logdet), 0);
  EXPECT_GT(tiles[0] + tiles[1], 0);
  EXPECT_GE(tiles[2], 0);
  EXPECT_LT(backward_error(n, A, F, Uplo::upper), 4e-6);
  EXPECT_NEAR(logdet, fp64_logdet, 1e-6 * n * 100);
  G = A;
  ASSERT_EQ(tessera_dpotrf_adaptive('L', n, G.data(), n, 1e-6, nullptr, nullptr), 0);
  EXPECT_LT(backward_error(n, A, G, Uplo::lower), 4e-6);

  std::vector<double> B = A;
  B[700 + static_cast<std::size_t>(700) * n] = -1.0;
  EXPECT_EQ(tessera_dpotrf_adaptive('L', n, B.data(), n, 1e-6, nullptr, &logdet), 701);
  EXPECT_EQ(logdet, 0.0);
  for (double bad : {0.0, 1.0, -1e-3, std::nan("")}) {
    EXPECT_EQ(tessera_dpotrf_adaptive('L', n, F.data(), n, bad, tiles, nullptr), -5) << bad;
    EXPECT_NE(std::string(tessera_last_error()).find("accuracy (argument 5)"), std::string::npos);
  }
  EXPECT_EQ(tessera_dpotrf_adaptive('X', n, F.data(), n, 0.0, tiles, nullptr), -1);  // LAPACK's arguments first
  EXPECT_EQ(tessera_dpotrf_adaptive('L', n, F.data(), n - 1, 1e-6, tiles, nullptr), -4);
  logdet = 3.0;
  EXPECT_EQ(tessera_dpotrf_adaptive('L', 0, nullptr, 1, 1e-6, tiles, &logdet), 0);
  EXPECT_EQ(logdet, 0.0);
  EXPECT_EQ(tiles[0] + tiles[1] + tiles[2], 0);
}

#ifdef TESSERA_HAVE_CUDA
// A matrix in GPU memory (tessera::device) is factored where it lies, as the tile graph on its
// GPU: in place in either triangle, and out of place from a triangle read through transposed
// strides, with a host array's error bound, map and info.
TEST(AdaptivePrecisionFactor, DeviceArraysAreFactoredWhereTheyLie) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 1201, nb = 100;  // 13 tiles a side, the last one short
  const std::vector<double> A = covariance(n, 0.02);
  const std::size_t bytes = A.size() * sizeof(double);
  double* matrix = nullptr;
  double* factor = nullptr;
  int* info = nullptr;
  ASSERT_EQ(cudaMalloc(&matrix, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&factor, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&info, sizeof(int)), cudaSuccess);
  const auto to_host = [&](const double* device) {
    std::vector<double> host(A.size());
    EXPECT_EQ(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  };
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    FactorOptions options;
    options.mode = Mode::gpu;
    options.uplo = uplo;
    options.nb = nb;
    options.accuracy = 1e-6;
    TileArithmeticMap in_place, out_of_place;
    options.tile_arithmetic = &in_place;
    ASSERT_EQ(cudaMemcpy(matrix, A.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(device::potrf(runtime(), n, matrix, n, nullptr, options), 0);
    EXPECT_EQ(in_place.tiles, 13);
    EXPECT_GT(in_place.count(TileArithmetic::fp16) + in_place.count(TileArithmetic::fp32), 0);
    double error = backward_error(n, A, to_host(matrix), uplo);
    EXPECT_LT(error, 4e-6);
    EXPECT_GT(error, 0.0);

    options.tile_arithmetic = &out_of_place;
    ASSERT_EQ(cudaMemcpy(matrix, A.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    device::potrf_ex(runtime(), n, matrix, n, 1, factor, n, info, nullptr, options);  // read row by row
    int host_info = -1;
    ASSERT_EQ(cudaMemcpy(&host_info, info, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(host_info, 0);
    EXPECT_EQ(out_of_place.lower, in_place.lower);
    error = backward_error(n, A, to_host(factor), uplo);
    EXPECT_LT(error, 4e-6);
    EXPECT_GT(error, 0.0);
  }
  std::vector<double> B = A;
  B[700 + static_cast<std::size_t>(700) * n] = -1.0;
  ASSERT_EQ(cudaMemcpy(matrix, B.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  FactorOptions options;
  options.mode = Mode::gpu;
  options.accuracy = 1e-6;
  EXPECT_EQ(device::potrf(runtime(), n, matrix, n, nullptr, options), 701);
  cudaFree(info);
  cudaFree(factor);
  cudaFree(matrix);
}
#endif

TEST(AdaptivePrecisionFactor, RefusedWhereItDoesNotApply) {
  std::vector<float> A(9, 0.0f);
  A[0] = A[4] = A[8] = 1.0f;
  FactorOptions options;
  options.mode = Mode::cpu;
  options.accuracy = 1e-4;
  EXPECT_THROW(potrf(runtime(), 3, A.data(), 3, options), InvalidArgument);
  std::vector<double> D = covariance(3, 0.5);
  for (double bad : {-1e-3, 1.0, std::nan("")}) {
    options.accuracy = bad;
    EXPECT_THROW(potrf(runtime(), 3, D.data(), 3, options), InvalidArgument) << bad;
  }
  options.accuracy = 1e-4;
  std::vector<int> info(2, -1);
  std::vector<double> pair(18, 0.0);
  std::copy(D.begin(), D.end(), pair.begin());
  std::copy(D.begin(), D.end(), pair.begin() + 9);
  EXPECT_THROW(potrf_async(runtime(), MatrixView<double>::host_batch(3, 3, pair.data(), 3, 9, 2, info.data()), options)
                   .wait(),
               InvalidArgument);
  options.grain = TaskGrain::block_columns;
  EXPECT_THROW(potrf(runtime(), 3, D.data(), 3, options), InvalidArgument);
}

}  // namespace
}  // namespace tessera::test
