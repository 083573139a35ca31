// LAPACK's info for every failing column: a matrix whose leading minor of order c is the first
// that is not positive definite (its diagonal entry c set to -1, so that the pivot is clearly
// negative) must report info = c, as LAPACKE does on the same matrix, for every c = 1..n, one
// tile and many tiles (nb not a multiple of the GPU kernels' inner blocking), both uplo and
// precisions, in gpu mode with each choice of GPU kernels and in hybrid mode. On the H100 gpu
// mode once reported c + 1 where c was the last column of an inner block (64, 128 of n = 200), and
// cuSOLVER's tile potrf reported nothing when c was the last column of a tile of 64 or 128
// (info 0 for n = nb = 64).
#include <gtest/gtest.h>
#include <lapacke.h>

#include <string>
#include <tuple>
#include <vector>

#include "test_support.hpp"

namespace tessera::test {
namespace {

struct SweepCase {
  Mode mode;
  GpuKernels kernels;
  TaskGrain grain = TaskGrain::automatic;
};

class InfoSweep : public ::testing::TestWithParam<SweepCase> {};

template <class T>
int lapack_info(Uplo uplo, int n, std::vector<T> A) {
  const char u = uplo == Uplo::lower ? 'L' : 'U';
  if constexpr (sizeof(T) == 8)
    return LAPACKE_dpotrf(LAPACK_COL_MAJOR, u, n, A.data(), n);
  else
    return LAPACKE_spotrf(LAPACK_COL_MAJOR, u, n, A.data(), n);
}

// Failing columns that go wrong differently: every column of one or two tiles; elsewhere the
// edges of tiles and of 16- and 32-wide inner blocks, and a few in between.
std::vector<int> failing_columns(int n, int nb) {
  std::vector<int> cols;
  for (int c = 1; c <= n; ++c) {
    const bool edge = c % nb <= 1 || c % nb == nb - 1 || c % 16 <= 1 || c % 16 == 15 || c % 37 == 0;
    if (n <= 2 * nb || edge) cols.push_back(c);
  }
  return cols;
}

template <class T>
void sweep(Mode mode, GpuKernels kernels, TaskGrain grain, int n, int nb, Uplo uplo) {
  const std::vector<T> spd = random_spd<T>(n, n, 900u + n + nb);
  FactorOptions options;
  options.mode = mode;
  options.gpu_kernels = kernels;
  options.grain = grain;
  options.nb = nb;
  options.uplo = uplo;
  int mismatches = 0;
  for (const int c : failing_columns(n, nb)) {
    std::vector<T> A = spd;
    A[(c - 1) + static_cast<std::size_t>(c - 1) * n] = T(-1);
    const int expected = lapack_info<T>(uplo, n, A);
    ASSERT_EQ(expected, c) << "the test's matrix does not fail where intended";
    const int info = potrf(runtime(), n, A.data(), n, options);
    if (info != expected && ++mismatches <= 5)
      ADD_FAILURE() << "n=" << n << " nb=" << nb << " uplo=" << to_string(uplo) << " failing column " << c
                    << ": info " << info << ", LAPACK " << expected;
  }
}

TEST_P(InfoSweep, EqualsLapackForEveryFailingColumn) {
  const SweepCase p = GetParam();
  if (p.mode == Mode::gpu && !have_gpu()) GTEST_SKIP() << "no CUDA worker: gpu mode needs a GPU";
  if (p.mode == Mode::hybrid && !have_gpu() && p.kernels != GpuKernels::any)
    GTEST_SKIP() << "no CUDA worker: the GPU kernel choice does not apply";
  for (const Uplo uplo : {Uplo::lower, Uplo::upper})
    for (const auto& [n, nb] : {std::pair{200, 200}, {1, 1}, {97, 97}, {300, 100}, {257, 96}, {64, 64}, {130, 64}, {200, 128}}) {
      sweep<double>(p.mode, p.kernels, p.grain, n, nb, uplo);
      sweep<float>(p.mode, p.kernels, p.grain, n, nb, uplo);
    }
}

INSTANTIATE_TEST_SUITE_P(Modes, InfoSweep,
                         ::testing::Values(SweepCase{Mode::gpu, GpuKernels::vendor},
                                           SweepCase{Mode::gpu, GpuKernels::custom},
                                           SweepCase{Mode::gpu, GpuKernels::any},
                                           SweepCase{Mode::hybrid, GpuKernels::any},
                                           SweepCase{Mode::gpu, GpuKernels::vendor, TaskGrain::block_columns},
                                           SweepCase{Mode::gpu, GpuKernels::custom, TaskGrain::block_columns},
                                           SweepCase{Mode::cpu, GpuKernels::any, TaskGrain::block_columns},
                                           SweepCase{Mode::gpu, GpuKernels::any, TaskGrain::whole_matrix},
                                           SweepCase{Mode::cpu, GpuKernels::any, TaskGrain::whole_matrix}),
                         [](const ::testing::TestParamInfo<SweepCase>& param) {
                           std::string name = std::string(to_string(param.param.mode)) + "_" + to_string(param.param.kernels);
                           if (param.param.grain == TaskGrain::block_columns) name += "_block_columns";
                           if (param.param.grain == TaskGrain::whole_matrix) name += "_whole_matrix";
                           return name;
                         });

}  // namespace
}  // namespace tessera::test
