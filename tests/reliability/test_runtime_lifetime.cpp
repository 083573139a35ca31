// What outlives the runtime it was made on: a Request, a TileMatrix. The rule: a Runtime's
// destructor waits for every request submitted through it and releases what their tasks used and
// every tile matrix still registered on it, while StarPU still runs; a Request then answers wait()
// with the info (or error) it had, and a released TileMatrix refuses use with RuntimeError and may
// be destroyed. Each TEST runs in its own process (CTest).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"
#include "reliability_support.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

TEST(RuntimeLifetime, RequestsOutliveTheirRuntimeWithTheirInfo) {
  const int n = 300;
  const std::vector<double> A = random_spd<double>(n, n, 11);
  std::vector<double> good = A, failing = A, factor = A, solution = random_matrix<double>(n, 2, n, 12);
  const std::vector<double> rhs = solution;
  failing[77 + static_cast<std::size_t>(77) * n] = -1;
  auto runtime = std::make_unique<Runtime>(two_cpu_workers());
  Request factored = potrf_async(*runtime, n, good.data(), n, cpu_tiles(32));
  Request failed = potrf_async(*runtime, n, failing.data(), n, cpu_tiles(32));
  Request solved = posv_async(*runtime, n, 2, factor.data(), n, solution.data(), n, cpu_tiles(48));
  runtime.reset();  // before anyone waited
  EXPECT_TRUE(factored.done());
  EXPECT_EQ(factored.wait(), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, good, n), 1.0);
  EXPECT_EQ(failed.wait(), 78);
  EXPECT_EQ(failed.wait(), 78);  // again: the same answer
  EXPECT_EQ(solved.wait(), 0);
  std::vector<double> A2 = A;
  std::vector<double> B2 = rhs;
  EXPECT_LT(solve_backward_error(n, 2, A2, n, solution, B2, n), kResidualThreshold);
}

TEST(RuntimeLifetime, RequestWaitedOnByAnotherThreadWhileTheRuntimeEnds) {
  const int n = 400;
  const std::vector<double> A = random_spd<double>(n, n, 13);
  std::vector<double> F = A;
  auto runtime = std::make_unique<Runtime>(two_cpu_workers());
  Request request = potrf_async(*runtime, n, F.data(), n, cpu_tiles(40));
  int info = -1;
  std::thread waiter([&] { info = request.wait(); });
  runtime.reset();
  waiter.join();
  EXPECT_EQ(info, 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
}

TEST(RuntimeLifetime, TileMatricesOutliveTheirRuntimeAndRefuseUse) {
  const int n = 130;
  const std::vector<double> A = random_spd<double>(n, n, 14);
  auto runtime = std::make_unique<Runtime>(two_cpu_workers());
  auto tiles = std::make_unique<TileMatrix<double>>(*runtime, n, 32);
  TileMatrix<double> loaded(*runtime, n, 32);
  ASSERT_EQ(load_async(loaded, Uplo::lower, A.data(), n).wait(), 0);
  Request factor = potrf_async(loaded);
  runtime.reset();
  EXPECT_EQ(factor.wait(), 0);
  EXPECT_THROW(tiles->runtime(), RuntimeError);
  EXPECT_THROW(potrf_async(*tiles).wait(), RuntimeError);
  std::vector<double> out(static_cast<std::size_t>(n) * n);
  EXPECT_THROW(store_async(loaded, Uplo::lower, out.data(), n).wait(), RuntimeError);
  tiles.reset();  // destroyed after its runtime: nothing left to release
  // A new runtime in the same process works.
  Runtime next(two_cpu_workers());
  std::vector<double> F = A;
  EXPECT_EQ(potrf(next, n, F.data(), n, cpu_tiles(32)), 0);
}

// The same with the tiles and the tasks on the GPU: the request's tiles are taken home and freed
// while the CUDA workers still run.
TEST(RuntimeLifetime, GpuModeRequestsOutliveTheirRuntime) {
  auto runtime = std::make_unique<Runtime>();
  if (runtime->cuda_workers() == 0) GTEST_SKIP() << "no CUDA worker: this machine has no usable GPU";
  const int n = 3000;
  const std::vector<double> A = random_spd<double>(n, n, 15);
  std::vector<double> F = A, failing = A;
  failing[1234 + static_cast<std::size_t>(1234) * n] = -1;
  FactorOptions options;
  options.mode = Mode::gpu;
  options.nb = 512;
  Request factored = potrf_async(*runtime, n, F.data(), n, options);
  Request failed = potrf_async(*runtime, n, failing.data(), n, options);
  runtime.reset();
  EXPECT_EQ(factored.wait(), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
  EXPECT_EQ(failed.wait(), 1235);
}

}  // namespace
}  // namespace tessera::test
