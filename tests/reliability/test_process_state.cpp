// The process-wide settings Tessera changes (src/runtime/host/process_state.hpp), seen from the
// program: BLAS runs single-threaded while Tessera's workers may run tasks and with the
// program's own thread count otherwise; StarPU's profiling is on while a traced request runs and
// off again afterwards. Each TEST runs in its own process (CTest).
#include <cblas.h>
#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "../test_support.hpp"
#include "process_state.hpp"
#include "tessera/tessera.h"
#include "tessera/tessera.hpp"

namespace tessera::test {
namespace {

// The program's own BLAS thread count in these tests (CI machines have at least 2 cores).
constexpr int kProgramThreads = 2;

RuntimeOptions two_cpu_workers() {
  RuntimeOptions options;
  options.ncpus = 2;
  options.ncuda = 0;
  return options;
}

// What the process looked like while the request's tasks were being inserted: the hints
// function runs then, with the request in flight.
struct SeenDuringRequest {
  int blas_threads = -1;
  int profiling = -1;
};

int factor_watching(Runtime& runtime, SeenDuringRequest& seen, std::shared_ptr<Trace> trace = nullptr) {
  const int n = 96;
  std::vector<double> A = random_spd<double>(n, n, 11);
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = 32;
  options.trace = std::move(trace);
  options.hints = [&seen](TaskKind kind, int k, int i, int j, int nt) {
#ifdef TESSERA_BLAS_HAS_OPENBLAS_THREADS
    seen.blas_threads = openblas_get_num_threads();
#endif
    seen.profiling = starpu_profiling_status_get();
    return critical_path_hints(kind, k, i, j, nt);
  };
  return potrf(runtime, n, A.data(), n, options);
}

#ifdef TESSERA_BLAS_HAS_OPENBLAS_THREADS
TEST(BlasThreads, SingleThreadedDuringRequestsAndTheProgramsBetweenThem) {
  openblas_set_num_threads(kProgramThreads);
  ASSERT_EQ(openblas_get_num_threads(), kProgramThreads) << "this test needs a BLAS with at least 2 threads";
  Runtime runtime(two_cpu_workers());
  EXPECT_EQ(openblas_get_num_threads(), kProgramThreads) << "idle after start: the workers sleep";
  for (int request = 0; request < 2; ++request) {
    SeenDuringRequest seen;
    ASSERT_EQ(factor_watching(runtime, seen), 0);
    EXPECT_EQ(seen.blas_threads, 1) << "request " << request;
    EXPECT_EQ(openblas_get_num_threads(), kProgramThreads) << "after request " << request;
  }
}

TEST(BlasThreads, SingleThreadedForTheRuntimesLifeWhenItsWorkersStayAwake) {
  openblas_set_num_threads(kProgramThreads);
  ASSERT_EQ(openblas_get_num_threads(), kProgramThreads) << "this test needs a BLAS with at least 2 threads";
  {
    RuntimeOptions options = two_cpu_workers();
    options.pause_when_idle = false;
    Runtime runtime(options);
    SeenDuringRequest seen;
    ASSERT_EQ(factor_watching(runtime, seen), 0);
    EXPECT_EQ(seen.blas_threads, 1);
    EXPECT_EQ(openblas_get_num_threads(), 1) << "awake workers may run an application's tasks at any time";
  }
  EXPECT_EQ(openblas_get_num_threads(), kProgramThreads) << "after the runtime ended";
}

// Threads that spin until stopped, as a BLAS's pool does after its call.
class Spinners {
 public:
  explicit Spinners(int count) {
    for (int i = 0; i < count; ++i)
      threads_.emplace_back([this] {
        started_.fetch_add(1);
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    while (started_.load() < count) std::this_thread::yield();
  }
  ~Spinners() {
    stop_ = true;
    for (std::thread& thread : threads_) thread.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> started_{0};
  std::vector<std::thread> threads_;
};

TEST(BlasThreads, TheCallingThreadsBlasLeavesTheCpusOtherThreadsHold) {
  using detail::blas_threads_with_a_cpu;
  openblas_set_num_threads(kProgramThreads);
  ASSERT_EQ(openblas_get_num_threads(), kProgramThreads) << "this test needs a BLAS with at least 2 threads";
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // OpenBLAS's workers asleep since the load
  EXPECT_EQ(blas_threads_with_a_cpu(), kProgramThreads) << "no other thread runs";
  {
    const Spinners others(kProgramThreads - 1);
    EXPECT_EQ(blas_threads_with_a_cpu(), 1) << "the other threads hold every CPU but the caller's";
  }
  EXPECT_EQ(blas_threads_with_a_cpu(), kProgramThreads) << "the other threads ended";
  detail::note_threaded_blas_call_end();
  {
    const Spinners own_workers(kProgramThreads - 1);
    EXPECT_EQ(blas_threads_with_a_cpu(), kProgramThreads)
        << "as many as Tessera's own BLAS workers, which spin for a while after its threaded call";
  }
  {
    const Spinners others(kProgramThreads);
    EXPECT_EQ(blas_threads_with_a_cpu(), 1) << "more than Tessera's own workers";
  }
  // The calling thread's factorization is right with either count.
  const int n = 600;
  std::vector<double> A = random_spd<double>(n, n, 5);
  const std::vector<double> original = A;
  {
    const Spinners others(kProgramThreads - 1);
    ASSERT_EQ(tessera_dpotrf('L', n, A.data(), n), 0);
  }
  EXPECT_LT(factor_backward_error(Uplo::lower, n, original, A, n), 30.0);
}
#else
TEST(BlasThreads, SingleThreadedDuringRequestsAndTheProgramsBetweenThem) {
  GTEST_SKIP() << "this BLAS has no thread control Tessera uses (built with a BLA_VENDOR other than OpenBLAS)";
}
#endif

TEST(Profiling, OnWhileATracedRequestRunsAndOffAgainAfter) {
  Runtime runtime(two_cpu_workers());
  ASSERT_EQ(starpu_profiling_status_get(), 0);
  SeenDuringRequest untraced;
  ASSERT_EQ(factor_watching(runtime, untraced), 0);
  EXPECT_EQ(untraced.profiling, 0) << "an untraced request needs no profiling";
  auto trace = std::make_shared<Trace>();
  SeenDuringRequest traced;
  ASSERT_EQ(factor_watching(runtime, traced, trace), 0);
  EXPECT_EQ(traced.profiling, 1);
  EXPECT_FALSE(trace->events().empty()) << "the traced request recorded its tasks";
  EXPECT_EQ(starpu_profiling_status_get(), 0) << "no request traces any more";
}

TEST(Profiling, AProgramThatTurnedItOnKeepsIt) {
  Runtime runtime(two_cpu_workers());
  starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
  SeenDuringRequest seen;
  ASSERT_EQ(factor_watching(runtime, seen, std::make_shared<Trace>()), 0);
  EXPECT_EQ(starpu_profiling_status_get(), 1);
  starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
}

}  // namespace
}  // namespace tessera::test
