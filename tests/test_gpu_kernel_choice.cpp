// The factorization with each GPU implementation forced (Tessera's kernels, the vendor's), on
// sizes whose last tile is partial, so that every kernel variant runs inside the task graph.
#include <gtest/gtest.h>

#include "test_support.hpp"

#ifdef TESSERA_HAVE_CUDA
#include "codelet_support.hpp"
#endif

namespace tessera::test {
namespace {

void check_with_kernels(GpuKernels kernels, int n, int nb, Uplo uplo) {
  const std::vector<double> A = random_spd<double>(n, n, 900u + n + nb);
  std::vector<double> F = A;
  FactorOptions options;
  options.mode = Mode::gpu;
  options.gpu_kernels = kernels;
  options.nb = nb;
  options.uplo = uplo;
  ASSERT_EQ(potrf(runtime(), n, F.data(), n, options), 0) << "n=" << n << " nb=" << nb;
  EXPECT_LT(factor_backward_error(uplo, n, A, F, n), 1.0) << to_string(kernels) << " n=" << n << " nb=" << nb;
  std::vector<float> As(A.begin(), A.end()), Fs = As;
  ASSERT_EQ(potrf(runtime(), n, Fs.data(), n, options), 0) << "float n=" << n << " nb=" << nb;
  EXPECT_LT(factor_backward_error(uplo, n, As, Fs, n), 1.0) << to_string(kernels) << " float n=" << n << " nb=" << nb;
}

class GpuKernelChoice : public ::testing::TestWithParam<GpuKernels> {};

TEST_P(GpuKernelChoice, PartialTilesOfEverySize) {
  TESSERA_SKIP_WITHOUT_GPU();
  const struct {
    int n, nb;
  } cases[] = {{2000, 512}, {1000, 400}, {1500, 384}, {700, 256}, {3000, 1024}, {333, 128}, {129, 64}, {97, 32}};
  for (const auto& c : cases) check_with_kernels(GetParam(), c.n, c.nb, c.n % 2 ? Uplo::upper : Uplo::lower);
}

INSTANTIATE_TEST_SUITE_P(Forced, GpuKernelChoice, ::testing::Values(GpuKernels::custom, GpuKernels::vendor),
                         [](const auto& info) { return std::string(to_string(info.param)); });

#ifdef TESSERA_HAVE_CUDA
// No device needed: which CUDA implementation a worker may run (0 the vendor's, 1 Tessera's) for
// each choice of GPU kernels, custom kernel support and tuning-table verdict.
TEST(GpuKernelChoiceRule, AnyRunsTheFasterImplementationWhereTheTableKnowsIt) {
  using detail::FasterKernel;
  constexpr unsigned vendor = 0, custom = 1;
  detail::TaskHeader header{};
  const auto allowed = [&](GpuKernels kernels, unsigned implementation, bool supported, FasterKernel faster) {
    header.gpu_kernels = kernels;
    return detail::cuda_implementation_allowed(header, implementation, supported, faster);
  };
  for (FasterKernel faster : {FasterKernel::unknown, FasterKernel::vendor, FasterKernel::custom}) {
    const int f = static_cast<int>(faster);
    // any: both where the table does not know, else the faster one only.
    EXPECT_EQ(allowed(GpuKernels::any, vendor, true, faster), faster != FasterKernel::custom) << f;
    EXPECT_EQ(allowed(GpuKernels::any, custom, true, faster), faster != FasterKernel::vendor) << f;
    // A custom kernel that does not support the task's arguments leaves the vendor's.
    EXPECT_TRUE(allowed(GpuKernels::any, vendor, false, faster)) << f;
    EXPECT_FALSE(allowed(GpuKernels::any, custom, false, faster)) << f;
    // Forced choices ignore the table.
    EXPECT_TRUE(allowed(GpuKernels::vendor, vendor, true, faster)) << f;
    EXPECT_FALSE(allowed(GpuKernels::vendor, custom, true, faster)) << f;
    EXPECT_FALSE(allowed(GpuKernels::custom, vendor, true, faster)) << f;
    EXPECT_TRUE(allowed(GpuKernels::custom, custom, true, faster)) << f;
    EXPECT_TRUE(allowed(GpuKernels::custom, vendor, false, faster)) << f;
    EXPECT_FALSE(allowed(GpuKernels::custom, custom, false, faster)) << f;
  }
}
#endif

}  // namespace
}  // namespace tessera::test
