// A factorization in gpu mode whose tiles do not fit in GPU memory at once: StarPU must evict
// tiles to host memory and bring them back, and the result must be right; a tile that cannot fit
// at all must give a clear error or a right result, never a hang. GPU memory is limited with
// STARPU_LIMIT_CUDA_MEM (MiB; TESSERA_TEST_CUDA_MEM_MIB, 256 by default) so that the test is
// cheap on a large GPU.
// Skips where no GPU is present. This binary starts its own runtime (the limit is read when
// StarPU starts).
#include <gtest/gtest.h>
#include <starpu.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "reliability_support.hpp"
#include "tessera/tessera.hpp"

namespace tessera::test {
namespace {

long gpu_memory_limit_mib() { return env_long("TESSERA_TEST_CUDA_MEM_MIB", 256); }

Runtime& limited_runtime() {
  static std::unique_ptr<Runtime> rt = [] {
    setenv("STARPU_LIMIT_CUDA_MEM", std::to_string(gpu_memory_limit_mib()).c_str(), 1);
    return std::make_unique<Runtime>(RuntimeOptions::from_environment());
  }();
  return *rt;
}

#define SKIP_WITHOUT_GPU()                                                                      \
  do {                                                                                          \
    if (limited_runtime().cuda_workers() == 0) GTEST_SKIP() << "no CUDA worker: this machine has no usable GPU"; \
  } while (0)

// A well-conditioned SPD matrix made in O(n^2): symmetric entries in [-1, 1] plus n on the
// diagonal (strictly diagonally dominant).
std::vector<double> dominant_spd(int n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> A(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = i == j ? n + dist(gen) : dist(gen);
      A[i + static_cast<std::size_t>(j) * n] = v;
      A[j + static_cast<std::size_t>(i) * n] = v;
    }
  return A;
}

// Waits for the request, failing (and ending the process: a hung runtime cannot be shut down)
// if it has not finished within `seconds`.
int wait_or_fail(Request& request, double seconds, const std::string& what) {
  const Clock::time_point start = Clock::now();
  while (!request.done()) {
    if (seconds_since(start) > seconds) {
      ADD_FAILURE() << what << ": not finished after " << seconds << " s (hang)";
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return request.wait();
}

TEST(GpuMemory, FactorizationLargerThanGpuMemoryEvictsAndCompletes) {
  SKIP_WITHOUT_GPU();
  Runtime& rt = limited_runtime();
  ASSERT_FALSE(rt.attached()) << "the memory limit only applies to a runtime Tessera starts";
  const double limit_bytes = static_cast<double>(gpu_memory_limit_mib()) * 1024 * 1024;
  // Lower tiles of 3x the limit: n^2 / 2 * 8 bytes = 3 * limit.
  const int nb = 512;
  const int n = static_cast<int>(std::ceil(std::sqrt(6.0 * limit_bytes / sizeof(double)) / nb)) * nb;
  std::printf("[ GPU MEM  ] limit %ld MiB, n = %d, nb = %d: %.0f MiB of lower tiles\n", gpu_memory_limit_mib(), n, nb,
              double(n) * n / 2 * sizeof(double) / (1024 * 1024));
  const std::vector<double> A = dominant_spd(n, 1);
  TileMatrix<double> original(rt, n, nb), factor(rt, n, nb);
  load_async(original, Uplo::lower, A.data(), n).wait();
  load_async(factor, Uplo::lower, A.data(), n).wait();
  FactorOptions options;
  options.mode = Mode::gpu;
  Request request = potrf_async(factor, options);
  ASSERT_EQ(wait_or_fail(request, 300, "gpu factorization over the memory limit"), 0);
  // Checked on the CPU workers, independently of the GPU kernels.
  const double error = backward_error(original, factor, Mode::cpu);
  std::printf("[ GPU MEM  ] backward error %.3g\n", error);
  EXPECT_LT(error, 1.0);
}

// The out-of-core order (panels of tile columns, FactorOptions::out_of_core_panel_percent) and
// StarPU's eviction under the right-looking order (percent 0) give right factors, and LAPACK's
// info for a pivot that fails in the first, a middle or the last panel.
TEST(GpuMemory, OutOfCorePanelsFactorAndReportTheFailingColumn) {
  SKIP_WITHOUT_GPU();
  Runtime& rt = limited_runtime();
  const double limit_bytes = static_cast<double>(gpu_memory_limit_mib()) * 1024 * 1024;
  ASSERT_LE(static_cast<double>(rt.gpu_memory_bytes()), limit_bytes);
  const int nb = 256;
  const int n = static_cast<int>(std::ceil(std::sqrt(5.0 * limit_bytes / sizeof(double)) / nb)) * nb - 37;  // partial last tile
  const std::vector<double> A = dominant_spd(n, 6);
  TileMatrix<double> original(rt, n, nb);
  load_async(original, Uplo::lower, A.data(), n).wait();
  for (int percent : {30, 60, 0}) {
    TileMatrix<double> factor(rt, n, nb);
    load_async(factor, Uplo::lower, A.data(), n).wait();
    FactorOptions options;
    options.mode = Mode::gpu;
    options.out_of_core_panel_percent = percent;
    Request request = potrf_async(factor, options);
    ASSERT_EQ(wait_or_fail(request, 300, "gpu factorization in panels"), 0) << percent;
    const double error = backward_error(original, factor, Mode::cpu);
    std::printf("[ GPU MEM  ] n = %d, panels of %d%%: backward error %.3g\n", n, percent, error);
    EXPECT_LT(error, 1.0) << percent;
  }
  for (int failing : {3, n / 2, n - 1}) {
    std::vector<double> F = A;
    F[failing + static_cast<std::size_t>(failing) * n] = -1;
    FactorOptions options;
    options.mode = Mode::gpu;
    options.nb = nb;
    Request request = potrf_async(rt, n, F.data(), n, options);
    EXPECT_EQ(wait_or_fail(request, 300, "gpu factorization in panels, not SPD"), failing + 1);
  }
}

TEST(GpuMemory, SolveLargerThanGpuMemoryEvictsAndCompletes) {
  SKIP_WITHOUT_GPU();
  Runtime& rt = limited_runtime();
  const double limit_bytes = static_cast<double>(gpu_memory_limit_mib()) * 1024 * 1024;
  const int n = static_cast<int>(std::sqrt(4.0 * limit_bytes / sizeof(double)));  // A alone: 2x the limit
  const int nrhs = 64;
  const std::vector<double> A = dominant_spd(n, 2);
  std::vector<double> B(static_cast<std::size_t>(n) * nrhs);
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& b : B) b = dist(gen);
  std::vector<double> F = A, X = B;
  FactorOptions options;
  options.mode = Mode::gpu;
  options.nb = 512;
  Request request = posv_async(rt, n, nrhs, F.data(), n, X.data(), n, options);
  ASSERT_EQ(wait_or_fail(request, 300, "gpu posv over the memory limit"), 0);
  // ||A X - B||_inf on a sample of rows (the whole product would dominate the test's time).
  double worst = 0;
  for (int i = 0; i < n; i += std::max(1, n / 64))
    for (int r = 0; r < nrhs; ++r) {
      double ax = 0, row_norm = 0;
      for (int k = 0; k < n; ++k) {
        ax += A[i + static_cast<std::size_t>(k) * n] * X[k + static_cast<std::size_t>(r) * n];
        row_norm += std::abs(A[i + static_cast<std::size_t>(k) * n]);
      }
      worst = std::max(worst, std::abs(ax - B[i + static_cast<std::size_t>(r) * n]) / row_norm);
    }
  EXPECT_LT(worst, 1e-12);
}

TEST(GpuMemory, TileLargerThanGpuMemoryIsRefusedOrCompletesNeverHangs) {
  SKIP_WITHOUT_GPU();
  Runtime& rt = limited_runtime();
  // One tile of twice the limit: no eviction can make room for it.
  const double limit_bytes = static_cast<double>(gpu_memory_limit_mib()) * 1024 * 1024;
  const int n = static_cast<int>(std::sqrt(2.0 * limit_bytes / sizeof(double))) + 1;
  const std::vector<double> A = dominant_spd(n, 4);
  std::vector<double> F = A;
  FactorOptions options;
  options.mode = Mode::gpu;
  options.nb = n;
  int info = -1;
  try {
    Request request = potrf_async(rt, n, F.data(), n, options);
    info = wait_or_fail(request, 120, "gpu factorization of a tile larger than GPU memory");
  } catch (const Error& e) {
    std::printf("[ GPU MEM  ] refused: %s\n", e.what());
    return;
  }
  // Completing is acceptable only with a right factor: (L L^T)(i, j) on a sample of entries.
  ASSERT_EQ(info, 0);
  std::mt19937 gen(5);
  double worst = 0;
  for (int s = 0; s < 400; ++s) {
    int i = std::uniform_int_distribution<int>(0, n - 1)(gen), j = std::uniform_int_distribution<int>(0, n - 1)(gen);
    if (i < j) std::swap(i, j);
    double llt = 0;
    for (int k = 0; k <= j; ++k) llt += F[i + static_cast<std::size_t>(k) * n] * F[j + static_cast<std::size_t>(k) * n];
    worst = std::max(worst, std::abs(llt - A[i + static_cast<std::size_t>(j) * n]) / n);
  }
  EXPECT_LT(worst, 1e-12);
}

}  // namespace
}  // namespace tessera::test
