// Request::cancel: the tasks not yet started return at once, wait() throws Cancelled, and the
// runtime serves the next request.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

TEST(Cancel, ARequestInFlightStopsAndTheRuntimeGoesOn) {
  Runtime& rt = test::runtime();
  const int n = 2000;
  const std::vector<double> A = test::random_spd<double>(n, n, 8);
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = 64;  // many tasks: most have not started when the request is cancelled
  std::vector<double> F = A;
  Request request = potrf_async(rt, n, F.data(), n, options);
  const bool cancelled = request.cancel();
  EXPECT_TRUE(cancelled || request.done());
  if (cancelled) {
    EXPECT_THROW(request.wait(), Cancelled);
    EXPECT_THROW(request.wait(), Cancelled);  // the same answer again
    EXPECT_FALSE(request.cancel());           // done now
  }
  // The next request runs in full.
  std::vector<double> G = A;
  EXPECT_EQ(potrf(rt, n, G.data(), n, options), 0);
  EXPECT_LT(test::factor_backward_error(Uplo::lower, n, A, G, n), test::kResidualThreshold);
}

TEST(Cancel, ADoneRequestKeepsItsResult) {
  Runtime& rt = test::runtime();
  const int n = 300;
  const std::vector<double> A = test::random_spd<double>(n, n, 9);
  std::vector<double> F = A;
  FactorOptions options;
  options.nb = 100;
  Request request = potrf_async(rt, n, F.data(), n, options);
  EXPECT_EQ(request.wait(), 0);
  EXPECT_FALSE(request.cancel());
  EXPECT_EQ(request.wait(), 0);
  EXPECT_FALSE(Request().cancel());  // an empty request has nothing to stop
}

TEST(Cancel, BatchesStopToo) {
  Runtime& rt = test::runtime();
  const int n = 64, count = 4000;
  std::vector<double> A(std::size_t(n) * n * count, 0.0);
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i) A[std::size_t(k) * n * n + i + std::size_t(i) * n] = 2.0;
  std::vector<int> info(count, -1);
  BatchOptions options;
  options.mode = Mode::cpu;
  options.chunk = 8;
  Request request = potrf_batched_async(rt, n, A.data(), n, (long long)n * n, count, info.data(), options);
  if (request.cancel()) EXPECT_THROW(request.wait(), Cancelled);
  std::vector<double> one(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i) one[i + std::size_t(i) * n] = 4.0;
  EXPECT_EQ(potrf(rt, n, one.data(), n), 0);
  EXPECT_DOUBLE_EQ(one[0], 2.0);
}

}  // namespace
}  // namespace tessera
