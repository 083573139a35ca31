// The mixed-precision solve on matrices in GPU memory (device::posv_refined): LAPACK's DSPOSV's
// INFO and ITER, the solution's backward error in double precision, A unchanged when the
// refinement converges (and never read outside its triangle: the other one holds NaN), B never
// written, both triangles, padded leading dimensions, odd orders against the tile size, FP32 and
// TF32 tensor-core factorizations. The argument checks run without a GPU; the rest skips where
// the runtime has no CUDA worker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

#include "callers_stream.hpp"
#include "cuda/kernel_test_support.hpp"
#include "cuda/vendor.hpp"
#include "device_factor.hpp"
#endif

namespace tessera::test {
namespace {

// ---- argument checks: no GPU needed ---------------------------------------------------------------


TEST(DeviceRefinedSolveArguments, RefusedWithLapackPositions) {
  // Stands for device memory: never read or written, since every call here is refused.
  std::vector<double> storage(64, 1.0);
  double* A = storage.data();
  double* B = storage.data() + 32;
  double* X = storage.data() + 48;
  Runtime& rt = runtime();
  const FactorOptions o;
  expect_refused_at(2, "n < 0", [&] { device::posv_refined(rt, -1, 1, A, 4, B, 4, X, 4, nullptr, o); });
  expect_refused_at(3, "nrhs < 0", [&] { device::posv_refined(rt, 4, -1, A, 4, B, 4, X, 4, nullptr, o); });
  expect_refused_at(4, "null A", [&] { device::posv_refined(rt, 4, 1, nullptr, 4, B, 4, X, 4, nullptr, o); });
  expect_refused_at(5, "lda < n", [&] { device::posv_refined(rt, 4, 1, A, 3, B, 4, X, 4, nullptr, o); });
  expect_refused_at(6, "null B", [&] { device::posv_refined(rt, 4, 1, A, 4, nullptr, 4, X, 4, nullptr, o); });
  expect_refused_at(7, "ldb < n", [&] { device::posv_refined(rt, 4, 1, A, 4, B, 3, X, 4, nullptr, o); });
  expect_refused_at(8, "null X", [&] { device::posv_refined(rt, 4, 1, A, 4, B, 4, nullptr, 4, nullptr, o); });
  expect_refused_at(9, "ldx < n", [&] { device::posv_refined(rt, 4, 1, A, 4, B, 4, X, 3, nullptr, o); });
  expect_refused_at(8, "X inside A", [&] { device::posv_refined(rt, 4, 1, A, 4, B, 4, A + 4, 4, nullptr, o); });
  expect_refused_at(8, "X is B", [&] { device::posv_refined(rt, 4, 1, A, 4, B, 4, B, 4, nullptr, o); });
  double log_det = 0;
  FactorOptions with_log_det;
  with_log_det.log_determinant = &log_det;
#ifdef TESSERA_HAVE_CUDA
  EXPECT_THROW(device::posv_refined(rt, 4, 1, A, 4, B, 4, X, 4, nullptr, with_log_det), InvalidArgument);
#endif
}

// The C form: LAPACK's positions as negative returns, before anything touches CUDA.
TEST(DeviceRefinedSolveArguments, CApiReturnsMinusPosition) {
  std::vector<double> storage(64, 1.0);
  double* A = storage.data();
  double* B = storage.data() + 32;
  double* X = storage.data() + 48;
  int iter = 5;
  EXPECT_EQ(tessera_dsposv_device('X', 4, 1, A, 4, B, 4, X, 4, &iter, 0, nullptr), -1);
  EXPECT_EQ(tessera_dsposv_device('L', -1, 1, A, 4, B, 4, X, 4, &iter, 0, nullptr), -2);
  EXPECT_EQ(tessera_dsposv_device('L', 4, 1, A, 3, B, 4, X, 4, &iter, 0, nullptr), -5);
  EXPECT_EQ(tessera_dsposv_device('L', 4, 1, A, 4, B, 4, A, 4, &iter, 0, nullptr), -8);
  EXPECT_EQ(tessera_dsposv_device('L', 4, 1, A, 4, B, 4, X, 4, nullptr, 0, nullptr), -10);
  EXPECT_EQ(tessera_dsposv_device('L', 4, 1, A, 4, B, 4, X, 4, &iter, 4, nullptr), -11);
  EXPECT_EQ(tessera_dsposv_device('L', 4, 1, A, 4, B, 4, X, 4, &iter, -1, nullptr), -11);
  EXPECT_EQ(iter, 5) << "iter written on a refused call";
  EXPECT_EQ(tessera_dsposv_device('L', 0, 1, A, 1, B, 1, X, 1, &iter, 1, nullptr), 0);
  EXPECT_EQ(iter, 0);
}

// Tensor cores take single-precision real factorizations only, and tile tasks.
TEST(DeviceRefinedSolveArguments, TensorCoresRefusedWhereTheyCannotApply) {
  FactorOptions options;
  options.tensor_cores = TensorCores::tf32;
  options.mode = Mode::cpu;
  std::vector<double> A = random_spd<double>(8, 8, 1);
  EXPECT_THROW(potrf(runtime(), MatrixView<double>::host(8, 8, A.data(), 8), options), InvalidArgument);
  std::vector<float> As = random_spd<float>(8, 8, 1);
  options.grain = TaskGrain::block_columns;
  EXPECT_THROW(potrf(runtime(), MatrixView<float>::host(8, 8, As.data(), 8), options), InvalidArgument);
  options.grain = TaskGrain::tiles;
  EXPECT_EQ(potrf(runtime(), MatrixView<float>::host(8, 8, As.data(), 8), options), 0)
      << "on CPU workers a tensor-core factorization computes in FP32";
  EXPECT_EQ(parse_tensor_cores("TF32"), TensorCores::tf32);
  EXPECT_EQ(parse_tensor_cores("bf16"), TensorCores::bf16);
  EXPECT_EQ(parse_tensor_cores("FP16"), TensorCores::fp16);
  EXPECT_STREQ(to_string(TensorCores::fp16), "fp16");
  EXPECT_STREQ(to_string(TensorCores::off), "off");
  EXPECT_THROW(parse_tensor_cores("fp8"), InvalidArgument);
}

// A tensor-core factorization on CPU workers computes in FP32, its panel solves by the diagonal
// factor's inverse included (over several tile steps, partial tiles at the end): a factor as
// accurate as FP32's, and the first failing minor's info.
TEST(DeviceRefinedSolveArguments, TensorCoreFactorizationOnCpuWorkers) {
  const int n = 301, ld = 305;
  for (TensorCores cores : {TensorCores::tf32, TensorCores::fp16}) {
    SCOPED_TRACE(to_string(cores));
    FactorOptions options;
    options.tensor_cores = cores;
    options.mode = Mode::cpu;
    options.grain = TaskGrain::tiles;
    options.nb = 64;
    const std::vector<float> A = random_spd<float>(n, ld, 41);
    std::vector<float> L = A;
    ASSERT_EQ(potrf(runtime(), MatrixView<float>::host(n, n, L.data(), ld), options), 0);
    EXPECT_LT(factor_backward_error(Uplo::lower, n, A, L, ld), 10.0);
    std::vector<float> bad = A;
    bad[at(200, 200, ld)] = -1;
    EXPECT_EQ(potrf(runtime(), MatrixView<float>::host(n, n, bad.data(), ld), options), 201);
  }
}

// The host refined solve with tensor cores refines S A S (S = diag(1 / sqrt(a_ii)), for FP16's
// range): on CPU workers (FP32 there) a matrix whose diagonal spans 1e-8 to 1e8 still converges to
// a double-precision solution of A x = b, with A, B unchanged; a wrong scale on either side of the
// low-precision solve would leave it far off. Both triangles.
TEST(DeviceRefinedSolveArguments, HostTensorCoreRefinementScalesToAUnitDiagonal) {
  const int n = 130, ld = 133;
  std::vector<double> A = random_spd<double>(n, ld, 17);
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = std::pow(10.0, -4.0 + 8.0 * i / (n - 1));  // D A D: diagonal 1e-8 .. 1e8
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A[at(i, j, ld)] *= d[i] * d[j];
  const std::vector<double> B = random_matrix<double>(n, 2, ld, 5);
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    SCOPED_TRACE(to_string(uplo));
    FactorOptions options;
    options.uplo = uplo;
    options.mode = Mode::cpu;
    options.nb = 32;  // tasks, with the tensor-core codelets' CPU implementations
    options.tensor_cores = TensorCores::fp16;
    std::vector<double> A_in = A, B_in = B, X(std::size_t(ld) * 2);
    const RefinedSolve r = posv_refined(runtime(), MatrixView<double>::host(n, n, A_in.data(), ld),
                                        MatrixView<double>::host(n, 2, B_in.data(), ld),
                                        MatrixView<double>::host(n, 2, X.data(), ld), options);
    EXPECT_EQ(r.info, 0);
    EXPECT_GE(r.iter, 0) << "fell back to double precision";
    EXPECT_EQ(A_in, A);
    EXPECT_EQ(B_in, B);
    EXPECT_LT(solve_backward_error(n, 2, A, ld, X, B, ld), kResidualThreshold);
  }
}

#ifdef TESSERA_HAVE_CUDA

// ---- on the GPU --------------------------------------------------------------------------------

// The triangle opposite `uplo` (strict) := NaN: a solve that read it would fail.
std::vector<double> poisoned(Uplo uplo, int n, int ld, std::vector<double> A) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (uplo == Uplo::lower ? i < j : i > j) A[at(i, j, ld)] = std::numeric_limits<double>::quiet_NaN();
  return A;
}

struct Solved {
  RefinedSolve result;
  std::vector<double> A;  // after the call
  std::vector<double> X;
};

// One device::posv_refined on copies of A (its opposite triangle poisoned) and B in GPU memory.
// B must come back unchanged.
Solved solve_on_device(int n, int nrhs, const std::vector<double>& A, int lda, const std::vector<double>& B, int ld,
                       const FactorOptions& options) {
  const std::vector<double> A_in = poisoned(options.uplo, n, lda, A);
  DeviceBuffer<double> dA(A_in), dB(B), dX(std::vector<double>(B.size(), -5.0));
  Solved s;
  s.result = device::posv_refined(runtime(), n, nrhs, dA.get(), lda, dB.get(), ld, dX.get(), ld, nullptr, options);
  s.A = dA.to_host();
  s.X = dX.to_host();
  EXPECT_EQ(std::memcmp(dB.to_host().data(), B.data(), B.size() * sizeof(double)), 0) << "B was written";
  if (s.result.iter >= 0)
    EXPECT_EQ(std::memcmp(s.A.data(), A_in.data(), A_in.size() * sizeof(double)), 0) << "A changed, iter >= 0";
  return s;
}

FactorOptions gpu_options(Uplo uplo, int nb, TensorCores cores) {
  FactorOptions options;
  options.uplo = uplo;
  options.nb = nb;
  options.mode = Mode::gpu;
  options.tensor_cores = cores;
  return options;
}

// Every arithmetic of the single-precision factor's trailing updates.
constexpr TensorCores kArithmetics[] = {TensorCores::off, TensorCores::tf32, TensorCores::bf16, TensorCores::fp16};

struct SolveCase {
  int n;
  int nb;  // 0: Tessera's choice
  int extra_ld;
  int nrhs;
};

// One tile, partial tiles either side of a boundary, a prime order over many tiles, tiles of the
// corrections' blocks (a tensor-core tile DAG's diagonal inverses kept for them); one to 17
// right-hand sides (several: one residual pass up to 4, the blocked products past them, and with
// a tensor-core factor the solves' products on the tensor cores).
const SolveCase kSolveCases[] = {{1, 64, 0, 1},    {63, 64, 3, 2},   {65, 64, 1, 1},         {300, 64, 2, 17},
                                 {997, 128, 5, 3}, {1500, 0, 0, 1},  {4100, 2048, 1, 2}};

TEST(DeviceRefinedSolve, ConvergesToDoublePrecisionAccuracyGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (const SolveCase& c : kSolveCases)
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (TensorCores cores : kArithmetics) {
        const int ld = c.n + c.extra_ld;
        SCOPED_TRACE(testing::Message() << "n=" << c.n << " nb=" << c.nb << " ld=" << ld << " nrhs=" << c.nrhs << " "
                                        << to_string(uplo) << " " << to_string(cores));
        const std::vector<double> A = random_spd<double>(c.n, ld, 11 + c.n);
        const std::vector<double> B = random_matrix<double>(c.n, c.nrhs, ld, 12 + c.n);
        const Solved s = solve_on_device(c.n, c.nrhs, A, ld, B, ld, gpu_options(uplo, c.nb, cores));
        EXPECT_EQ(s.result.info, 0);
        EXPECT_GE(s.result.iter, 0);
        EXPECT_LE(s.result.iter, 10);
        EXPECT_LT(solve_backward_error(c.n, c.nrhs, A, ld, s.X, B, ld), kResidualThreshold);
      }
}

// Beyond what LAPACK's steps take from the single-precision factor, GMRES-IR on GPU memory
// (Refinement::classical_then_gmres) converges from the same factor: an FP32 factor at condition
// 3e8 (LAPACK's steps end in the double-precision factorization there), and FP16 tensor-core
// factors over a range of conditions, of which those whose factorization succeeds and whose
// LAPACK steps do not converge must converge through GMRES (at least one must); A unchanged, the
// Krylov steps counted, X as accurate as a double-precision solve; both triangles, one right-hand
// side and three.
TEST(DeviceRefinedSolve, IllConditionedConvergesThroughGmresGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  struct Case {
    TensorCores cores;
    int n, nb;
    double condition;
  };
  const Case cases[] = {{TensorCores::off, 480, 0, 3e8},  {TensorCores::fp16, 1100, 256, 1e3},
                        {TensorCores::fp16, 1100, 256, 1e4}, {TensorCores::fp16, 1100, 256, 1e5},
                        {TensorCores::fp16, 1100, 256, 1e6}};
  int rescued_fp16 = 0;
  for (const Case& c : cases)
    for (Uplo uplo : {Uplo::lower, Uplo::upper})
      for (int nrhs : {1, 3}) {
        SCOPED_TRACE(testing::Message() << to_string(c.cores) << " cond=" << c.condition << " " << to_string(uplo)
                                        << " nrhs=" << nrhs);
        const std::vector<double> A = spd_with_condition<double>(c.n, c.condition, 41);
        const std::vector<double> B = random_matrix<double>(c.n, nrhs, c.n, 42);
        FactorOptions options = gpu_options(uplo, c.nb, c.cores);
        const Solved lapack = solve_on_device(c.n, nrhs, A, c.n, B, c.n, options);
        EXPECT_EQ(lapack.result.krylov_iterations, 0);
        options.refinement = Refinement::classical_then_gmres;
        const Solved s = solve_on_device(c.n, nrhs, A, c.n, B, c.n, options);
        EXPECT_EQ(s.result.info, 0);
        EXPECT_LT(solve_backward_error(c.n, nrhs, A, c.n, s.X, B, c.n), kResidualThreshold);
        if (lapack.result.iter == -3) {
          EXPECT_EQ(s.result.iter, -3) << "the same factorization failed";
          continue;
        }
        if (c.cores == TensorCores::off) EXPECT_EQ(lapack.result.iter, -31);
        if (lapack.result.iter == -31) {
          EXPECT_GE(s.result.iter, 1);
          EXPECT_LE(s.result.iter, 30);
          EXPECT_GT(s.result.krylov_iterations, 0);
          if (c.cores == TensorCores::fp16 && s.result.iter >= 0) ++rescued_fp16;
        } else {
          EXPECT_LE(s.result.iter, lapack.result.iter) << "LAPACK's steps converged: GMRES-IR is not slower";
        }
      }
  EXPECT_GT(rescued_fp16, 0) << "no FP16 case that LAPACK's steps could not converge";
}

// Too ill-conditioned for single precision (the Hilbert matrix of order 10, condition about
// 1.6e13): the refinement cannot converge or the factorization fails, A then holds the
// double-precision factor and X its solution.
TEST(DeviceRefinedSolve, IllConditionedFallsBackToDoublePrecisionGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 10;
  std::vector<double> A(n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) A[at(i, j, n)] = 1.0 / (i + j + 1);
  const std::vector<double> B = random_matrix<double>(n, 1, n, 9);
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    for (TensorCores cores : kArithmetics) {
      const Solved s = solve_on_device(n, 1, A, n, B, n, gpu_options(uplo, 0, cores));
      EXPECT_EQ(s.result.info, 0);
      EXPECT_TRUE(s.result.iter == -3 || s.result.iter == -31) << s.result.iter;
      const double l21 = uplo == Uplo::lower ? s.A[at(1, 0, n)] : s.A[at(0, 1, n)];
      EXPECT_NEAR(s.A[0], 1.0, 1e-15);
      EXPECT_NEAR(l21, 0.5, 1e-15) << "A must hold the double-precision factor";
      // The Hilbert matrix's solve is only as good as its condition allows: the backward error,
      // not the forward one, is what double precision bounds.
      EXPECT_LT(solve_backward_error(n, 1, A, n, s.X, B, n), kResidualThreshold);
    }
}

// Not positive definite (a negative diagonal entry at the first, a middle and the last column, or a
// negative pivot with a positive diagonal): INFO is the double-precision factorization's; X is not
// computed.
TEST(DeviceRefinedSolve, NotPositiveDefiniteReportsTheDoublePrecisionInfoGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 131;
  for (int bad : {0, 65, n - 1})
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      std::vector<double> A = random_spd<double>(n, n, 7);
      A[at(bad, bad, n)] = -1;
      const std::vector<double> B = random_matrix<double>(n, 1, n, 8);
      const Solved s = solve_on_device(n, 1, A, n, B, n, gpu_options(uplo, 64, TensorCores::tf32));
      EXPECT_EQ(s.result.info, bad + 1) << "bad=" << bad;
      EXPECT_EQ(s.result.iter, -3);
      EXPECT_EQ(s.X, std::vector<double>(n, -5.0)) << "X written although A is not positive definite";
    }
  // [[1, 2], [2, 1]]: positive diagonal, second pivot 1 - 4 < 0.
  const std::vector<double> A = {1, 2, 2, 1}, B = {1, 1};
  const Solved s = solve_on_device(2, 1, A, 2, B, 2, gpu_options(Uplo::lower, 0, TensorCores::off));
  EXPECT_EQ(s.result.info, 2);
  EXPECT_EQ(s.result.iter, -3);
}

// A right-hand side beyond single precision's range: ITER -2, the double-precision solve. A beyond
// it is scaled to a unit diagonal first, so it converges (where LAPACK's DSPOSV gives -2).
TEST(DeviceRefinedSolve, ValuesBeyondSinglePrecisionGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 70;
  for (int nrhs : {1, 2})  // one right-hand side's residual by its own kernel, several by cuBLAS
    for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
      SCOPED_TRACE(testing::Message() << "nrhs=" << nrhs << " " << to_string(uplo));
      std::vector<double> A = random_spd<double>(n, n, 5), B = random_matrix<double>(n, nrhs, n, 6);
      for (double& b : B) b *= 1e40;
      Solved s = solve_on_device(n, nrhs, A, n, B, n, gpu_options(uplo, 32, TensorCores::tf32));
      EXPECT_EQ(s.result.info, 0);
      EXPECT_EQ(s.result.iter, -2);
      EXPECT_LT(solve_backward_error(n, nrhs, A, n, s.X, B, n), kResidualThreshold);

      B = random_matrix<double>(n, nrhs, n, 6);
      for (double& a : A) a *= 1e40;
      for (TensorCores cores : {TensorCores::tf32, TensorCores::fp16}) {
        s = solve_on_device(n, nrhs, A, n, B, n, gpu_options(uplo, 32, cores));
        EXPECT_EQ(s.result.info, 0);
        EXPECT_GE(s.result.iter, 0) << to_string(cores);
        EXPECT_LT(solve_backward_error(n, nrhs, A, n, s.X, B, n), kResidualThreshold);
      }
    }
}

// SPD in double precision, singular once rounded to single (1 - 1e-9 rounds to 1): ITER -3.
TEST(DeviceRefinedSolve, SingularInSinglePrecisionFactorsInDoubleGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const std::vector<double> A = {1, 1 - 1e-9, 1 - 1e-9, 1}, B = {1, -1};
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const Solved s = solve_on_device(2, 1, A, 2, B, 2, gpu_options(uplo, 0, TensorCores::off));
    EXPECT_EQ(s.result.info, 0);
    EXPECT_EQ(s.result.iter, -3);
    EXPECT_LT(solve_backward_error(2, 1, A, 2, s.X, B, 2), kResidualThreshold);
  }
}

// factor(A, cores): LAPACK's info of a float factorization in place of A (n x n, ld, GPU memory)
// by the arithmetic `cores`.
using FloatFactorization = std::function<int(float*, TensorCores)>;

// ||A - L L^T||_1 / ||A||_1 of the float factor of an SPD matrix (n x n, ld; its opposite triangle
// NaN) by each arithmetic; info 0 and every element outside the triangle, padding included,
// bit-identical after the call.
std::map<TensorCores, double> float_factor_errors(Uplo uplo, int n, int ld, unsigned seed,
                                                  const FloatFactorization& factor) {
  std::map<TensorCores, double> relative;
  for (TensorCores cores : kArithmetics) {
    SCOPED_TRACE(testing::Message() << to_string(uplo) << " " << to_string(cores));
    const std::vector<float> A = random_spd<float>(n, ld, seed);
    std::vector<float> before = A;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (uplo == Uplo::lower ? i < j : i > j) before[at(i, j, ld)] = std::numeric_limits<float>::quiet_NaN();
    DeviceBuffer<float> dA(before);
    EXPECT_EQ(factor(dA.get(), cores), 0);
    const std::vector<float> after = dA.to_host();
    int written_outside = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < ld; ++i)
        if (i >= n || (uplo == Uplo::lower ? i < j : i > j))
          written_outside += std::memcmp(&after[at(i, j, ld)], &before[at(i, j, ld)], sizeof(float)) != 0;
    EXPECT_EQ(written_outside, 0);
    relative[cores] = factor_backward_error(uplo, n, A, after, ld) * n * std::numeric_limits<float>::epsilon();
  }
  return relative;
}

// A float factorization with its trailing updates on the tensor cores, through the tile DAG on a
// matrix in GPU memory: a factor as accurate as the operands' format allows and no more (the
// arithmetic asked for is the one that ran: less accurate than FP32's, BF16's than FP16's where
// the updates dominate the error), and
// nothing written outside the triangle (the diagonal tiles' products go through a workspace).
TEST(DeviceRefinedSolve, TensorCoreFactorizationKeepsToItsTriangleGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    std::map<TensorCores, double> relative = float_factor_errors(uplo, 997, 1000, 21, [&](float* A, TensorCores cores) {
      return device::potrf(runtime(), 997, A, 1000, nullptr, gpu_options(uplo, 128, cores));
    });
    SCOPED_TRACE(to_string(uplo));
    // TF32 and FP16 operands (unit roundoff 2^-11) bound it near 1e-3, BF16 (2^-8) 8x that.
    EXPECT_LT(relative[TensorCores::tf32], 5e-3);
    EXPECT_LT(relative[TensorCores::fp16], 5e-3);
    EXPECT_LT(relative[TensorCores::bf16], 4e-2);
    EXPECT_GT(relative[TensorCores::tf32], 2 * relative[TensorCores::off]) << "TF32 as accurate as FP32";
    EXPECT_GT(relative[TensorCores::fp16], 2 * relative[TensorCores::off]) << "FP16 as accurate as FP32";
    // In lower storage the panel solves (TF32 products with the diagonal factor's inverse) dominate
    // this diagonally dominant matrix's error; in upper storage (solved by substitution) the
    // updates' format shows.
    if (uplo == Uplo::upper)
      EXPECT_GT(relative[TensorCores::bf16], 3 * relative[TensorCores::fp16]) << "BF16 as accurate as FP16";
  }
}

// The same by the recursive factorization on the caller's stream (the plan's path for large
// matrices on one GPU; here through the runtime layer's entry at an order a test can check), whose
// panel solves are tensor-core products too (every arithmetic less accurate than FP32's); and
// LAPACK's info at a failing column either side of its first split (1500 = 768 + 732).
TEST(DeviceRefinedSolve, RecursiveTensorCoreFactorizationGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 1500, ld = 1503;
  for (Uplo uplo : {Uplo::lower, Uplo::upper}) {
    const auto recursive = [&](float* A, TensorCores cores) {
      return detail::potrf_on_callers_stream(runtime(), 0, uplo, n, A, ld, nullptr, cores);
    };
    std::map<TensorCores, double> relative = float_factor_errors(uplo, n, ld, 23, recursive);
    SCOPED_TRACE(to_string(uplo));
    EXPECT_LT(relative[TensorCores::tf32], 5e-3);
    EXPECT_LT(relative[TensorCores::fp16], 5e-3);
    EXPECT_LT(relative[TensorCores::bf16], 4e-2);
    for (TensorCores cores : {TensorCores::tf32, TensorCores::bf16, TensorCores::fp16})
      EXPECT_GT(relative[cores], 2 * relative[TensorCores::off]) << to_string(cores) << " as accurate as FP32";
    for (const int k : {700, 1000}) {
      std::vector<float> A = random_spd<float>(n, ld, 23);
      A[at(k - 1, k - 1, ld)] = -1;
      DeviceBuffer<float> dA(A);
      EXPECT_EQ(recursive(dA.get(), TensorCores::fp16), k);
    }
  }
}

// A tensor-core tile DAG keeps the inverses of its diagonal tiles' factors for the refined solve's
// corrections (device::potrf_keeping_diagonal_inverses): tiles of 2048 and a last one of 4, each
// block's inverse times its factor block the identity (on a random vector, in double on the host),
// zeros above its diagonal. The FP32 tile DAG solves its panels by trsm: nothing kept or written.
TEST(DeviceRefinedSolve, TensorCoreTileDagKeepsItsDiagonalInversesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  namespace vendor = kernels::cuda::vendor;
  constexpr int b = vendor::kInverseBlock;
  const int n = 2 * b + 4;
  std::mt19937 gen(31);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(static_cast<std::size_t>(n) * n);
  const float off_diagonal = 1 / std::sqrt(float(n));  // eigenvalues about 2 +- 1.2: L far from I
  for (int j = 0; j < n; ++j) {
    A[at(j, j, n)] = 2;
    for (int i = j + 1; i < n; ++i) A[at(i, j, n)] = A[at(j, i, n)] = off_diagonal * u(gen);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (TensorCores cores : {TensorCores::fp16, TensorCores::tf32, TensorCores::off}) {
    SCOPED_TRACE(to_string(cores));
    DeviceBuffer<float> dA(A), dX(std::vector<float>(vendor::inverse_blocks_elements(n), nan));
    FactorOptions options;
    options.mode = Mode::gpu;
    options.nb = b;
    options.tensor_cores = cores;
    bool kept = false;
    EXPECT_EQ(device::potrf_keeping_diagonal_inverses(runtime(), n, dA.get(), n, dX.get(), &kept, nullptr, options), 0);
    const std::vector<float> L = dA.to_host(), X = dX.to_host();
    if (cores == TensorCores::off) {
      EXPECT_FALSE(kept);
      EXPECT_TRUE(std::all_of(X.begin(), X.end(), [](float x) { return std::isnan(x); })) << "inverses written";
      continue;
    }
    ASSERT_TRUE(kept);
    for (int k = 0; k < vendor::inverse_blocks(n); ++k) {
      const int k0 = k * b, kb = std::min(b, n - k0);
      const float* Xk = X.data() + vendor::inverse_block_offset(k);
      std::vector<double> v(kb), w(kb, 0.0);
      for (double& e : v) e = u(gen);
      for (int j = 0; j < kb; ++j)
        for (int i = 0; i < kb; ++i) {
          if (i < j) ASSERT_EQ(Xk[at(i, j, b)], 0.0f) << "block " << k << " above its diagonal at " << i << ", " << j;
          w[i] += double(Xk[at(i, j, b)]) * v[j];
        }
      double worst = 0, largest = 0;
      for (int i = 0; i < kb; ++i) {
        double y = 0;  // (L_kk w)_i
        for (int j = 0; j <= i; ++j) y += double(L[at(k0 + i, k0 + j, n)]) * w[j];
        worst = std::max(worst, std::abs(y - v[i]));
        largest = std::max(largest, std::abs(v[i]));
      }
      EXPECT_LT(worst / largest, 1e-2) << "block " << k << ": L_kk X_k v differs from v";
    }
  }
}

// FP16 operands overflow beyond 65504: a factor whose entries below the diagonal reach about 5e5
// (a diagonally dominant matrix, diagonal 4e15, the others up to 1e13) fails (info > 0) instead of
// coming back wrong, while BF16 (FP32's range) factors it.
// Host arrays too: a matrix whose factor's entries pass FP16's range converges through its scaled
// copy (unscaled, the FP16 factorization overflowed and the solve fell back to double precision).
TEST(DeviceRefinedSolve, HostArraysScaledForFp16Gpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 401;
  std::vector<double> A = random_spd<double>(n, n, 31);
  for (double& a : A) a *= 1e13;
  const std::vector<double> B = random_matrix<double>(n, 1, n, 3);
  std::vector<double> A_in = A, X(n);
  const RefinedSolve r = posv_refined(runtime(), MatrixView<double>::host(n, n, A_in.data(), n),
                                      MatrixView<double>::host(n, 1, const_cast<double*>(B.data()), n),
                                      MatrixView<double>::host(n, 1, X.data(), n),
                                      gpu_options(Uplo::lower, 64, TensorCores::fp16));
  EXPECT_EQ(r.info, 0);
  EXPECT_GE(r.iter, 0) << "fell back to double precision";
  EXPECT_EQ(A_in, A);
  EXPECT_LT(solve_backward_error(n, 1, A, n, X, B, n), kResidualThreshold);
}

TEST(DeviceRefinedSolve, Fp16OverflowFailsTheFactorizationGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  const int n = 401;
  std::vector<float> A = random_spd<float>(n, n, 31);
  for (float& a : A) a *= 1e13f;
  for (TensorCores cores : {TensorCores::fp16, TensorCores::bf16}) {
    DeviceBuffer<float> dA(A);
    const int info = device::potrf(runtime(), n, dA.get(), n, nullptr, gpu_options(Uplo::lower, 64, cores));
    if (cores == TensorCores::fp16) {
      EXPECT_GT(info, 64) << "the first diagonal tile has no update to overflow";
    } else {
      EXPECT_EQ(info, 0);
    }
  }
}

#endif

}  // namespace
}  // namespace tessera::test
