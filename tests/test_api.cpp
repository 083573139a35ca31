// The tile-matrix API, the C API doing real work, asynchronous submissions from several threads.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "tessera/starpu_interop.hpp"
#include "policy_modes.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

namespace tessera::test {
namespace {

TEST(TileMatrixApi, LoadFactorCheckStore) {
  const int n = 150, nb = 32;
  const std::vector<double> A = random_spd<double>(n, n, 21);
  TileMatrix<double> original(runtime(), n, nb), factor(runtime(), n, nb);
  load_async(original, Uplo::lower, A.data(), n).wait();
  load_async(factor, Uplo::lower, A.data(), n).wait();
  FactorOptions options;
  options.mode = Mode::cpu;
  ASSERT_EQ(potrf_async(factor, options).wait(), 0);
  const double error = backward_error(original, factor, Mode::cpu);
  EXPECT_LT(error, 1.0);
  EXPECT_GE(error, 0.0);
  std::vector<double> F(A.size(), 0.0);
  store_async(factor, Uplo::lower, F.data(), n).wait();
  EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
}

// Every lower tile of A made valid in the memory of the runtime's first GPU.
void make_resident_on_first_gpu(TileMatrix<double>& A) {
  const int node = starpu_worker_get_memory_node(static_cast<unsigned>(starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0)));
  for (int j = 0; j < A.tile_cols(); ++j)
    for (int i = j; i < A.tile_rows(); ++i) {
      starpu_data_handle_t tile = starpu_interop::tile_handle(A, i, j);
      ASSERT_EQ(starpu_data_acquire_on_node(tile, node, STARPU_R), 0);
      starpu_data_release_on_node(tile, node);
    }
}

// Left to choose, a tile matrix of moderate order whose tiles are all on the runtime's one GPU is
// factored by one task, which finds them there: nothing is copied to host memory meanwhile (StarPU
// would otherwise write the tiles back as they turn dirty, and the task would wait for it). Tiles
// still in host memory, or a grain asked for, keep the tile tasks (4 tiles a side: 20).
TEST(TileMatrixApi, ModerateOrderOnTheGpuIsOneTaskWithoutCopiesGpu) {
  TESSERA_SKIP_WITHOUT_GPU();
  if (runtime().cuda_devices() != 1) GTEST_SKIP() << "the one task is chosen on one GPU only";
  if (!policy_runs(Mode::gpu)) GTEST_SKIP() << runtime().scheduler() << " does not run gpu mode";
  const int n = 1000, nb = 250;
  std::vector<double> A = random_spd<double>(n, n, 23);
  for (const bool resident : {false, true})
    for (const TaskGrain grain : {TaskGrain::automatic, TaskGrain::tiles}) {
      TileMatrix<double> tiles(runtime(), n, nb);
      load_async(tiles, Uplo::lower, A.data(), n).wait();
      if (resident) make_resident_on_first_gpu(tiles);
      FactorOptions options;
      options.mode = Mode::gpu;
      options.grain = grain;
      options.trace = std::make_shared<Trace>();
      ASSERT_EQ(potrf_async(tiles, options).wait(), 0);
      const bool one_task = resident && grain == TaskGrain::automatic;
      EXPECT_EQ(options.trace->events().size(), one_task ? 1u : 20u) << "resident " << resident;
      if (one_task)
        for (const TraceTransfer& t : options.trace->transfers())
          EXPECT_EQ(t.bytes, 0) << t.from << " -> " << t.to;
      std::vector<double> F(A.size(), 0.0);
      store_async(tiles, Uplo::lower, F.data(), n).wait();
      EXPECT_LT(factor_backward_error(Uplo::lower, n, A, F, n), 1.0);
    }
  // Its info is LAPACK's: the first minor that is not positive, here in the last tile column.
  A[(n - 10) + static_cast<std::size_t>(n - 10) * n] = -1.0;
  TileMatrix<double> tiles(runtime(), n, nb);
  load_async(tiles, Uplo::lower, A.data(), n).wait();
  make_resident_on_first_gpu(tiles);
  FactorOptions options;
  options.mode = Mode::gpu;
  options.trace = std::make_shared<Trace>();
  EXPECT_EQ(potrf_async(tiles, options).wait(), n - 9);
  EXPECT_EQ(options.trace->events().size(), 1u);
}

// Request::wait_for too: false while no task can run, true as soon as the last task has run,
// without waiting out its timeout; a request with nothing to do is done.
TEST(RuntimeApi, TasksSubmittedWhilePausedRunAfterResume) {
  const int n = 200;
  const std::vector<double> original = random_spd<double>(n, n, 41);
  std::vector<double> A = original;
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = 64;
  runtime().pause_workers();
  Request request = potrf_async(runtime(), n, A.data(), n, options);
  EXPECT_FALSE(request.wait_for(std::chrono::milliseconds(100))) << "done with every worker paused";
  EXPECT_FALSE(request.done());
  runtime().resume_workers();
  const auto woken_from = std::chrono::steady_clock::now();
  ASSERT_TRUE(request.wait_for(std::chrono::hours(1)));
  EXPECT_LT(std::chrono::steady_clock::now() - woken_from, std::chrono::minutes(10)) << "not woken by the last task";
  EXPECT_TRUE(request.done());
  EXPECT_TRUE(Request().wait_for(std::chrono::milliseconds(0)));
  ASSERT_EQ(request.wait(), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, original, A, n), 1.0);
  EXPECT_THROW(runtime().resume_workers(), InvalidArgument);
}

// Without a GPU there is no GPU memory to check tiles against; with one, StarPU knows its size
// (tessera_gpu_memory_test checks the refusal of tiles that cannot fit).
TEST(RuntimeApi, GpuMemoryIsKnownOnlyWhenAGpuIsUsed) {
  if (have_gpu())
    EXPECT_GT(runtime().gpu_memory_bytes(), std::size_t{256} << 20);
  else
    EXPECT_EQ(runtime().gpu_memory_bytes(), 0u);
}

TEST(TileMatrixApi, BackwardErrorDetectsAWrongFactor) {
  const int n = 64, nb = 16;
  const std::vector<double> A = random_spd<double>(n, n, 22);
  std::vector<double> wrong = A;
  wrong[5 + 3 * n] += 1e-6;  // a perturbed entry of the would-be factor
  TileMatrix<double> original(runtime(), n, nb), factor(runtime(), n, nb);
  load_async(original, Uplo::lower, A.data(), n).wait();
  load_async(factor, Uplo::lower, wrong.data(), n).wait();
  ASSERT_EQ(potrf_async(factor).wait(), 0);
  EXPECT_GT(backward_error(original, factor, Mode::cpu), 100.0);
}

TEST(TileMatrixApi, SolveWithTiles) {
  const int n = 90, nrhs = 7, nb = 25;
  const std::vector<double> A = random_spd<double>(n, n, 23);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 24);
  TileMatrix<double> L(runtime(), n, nb);
  TileMatrix<double> X(runtime(), n, nrhs, nb, TileStructure::general);
  load_async(L, Uplo::upper, A.data(), n).wait();
  load_async(X, B.data(), n).wait();
  ASSERT_EQ(potrf_async(L).wait(), 0);
  ASSERT_EQ(potrs_async(L, X).wait(), 0);
  std::vector<double> x(B.size());
  store_async(X, x.data(), n).wait();
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, x, B, n), kResidualThreshold);
}

TEST(TileMatrixApi, TileHandlesAreExposed) {
  TileMatrix<float> A(runtime(), 10, 4);
  EXPECT_EQ(A.tile_rows(), 3);
  EXPECT_EQ(A.tile_height(2), 2);
  EXPECT_NE(starpu_interop::tile_handle(A, 2, 1), nullptr);
  EXPECT_THROW(starpu_interop::tile_handle(A, 1, 2), InvalidArgument);  // upper tiles are not stored
}

TEST(CApi, FactorsAndSolvesBothPrecisions) {
  const int n = 123, nrhs = 4;
  const std::vector<double> A = random_spd<double>(n, n, 31);
  std::vector<double> F = A;
  ASSERT_EQ(tessera_dpotrf('U', n, F.data(), n), 0);
  EXPECT_LT(factor_backward_error(Uplo::upper, n, A, F, n), 1.0);
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, 32);
  std::vector<double> X = B;
  ASSERT_EQ(tessera_dpotrs('U', n, nrhs, F.data(), n, X.data(), n), 0);
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, X, B, n), kResidualThreshold);
  std::vector<double> G = A, Y = B;
  ASSERT_EQ(tessera_dposv('L', n, nrhs, G.data(), n, Y.data(), n), 0);
  EXPECT_LT(solve_backward_error(n, nrhs, A, n, Y, B, n), kResidualThreshold);

  const std::vector<float> As = random_spd<float>(n, n + 3, 33);
  std::vector<float> Fs = As;
  ASSERT_EQ(tessera_spotrf('L', n, Fs.data(), n + 3), 0);
  EXPECT_LT(factor_backward_error(Uplo::lower, n, As, Fs, n + 3), 1.0);
  const std::vector<float> Bs = random_matrix<float>(n, 2, n, 34);
  std::vector<float> Xs = Bs, Gs = As;
  ASSERT_EQ(tessera_sposv('L', n, 2, Gs.data(), n + 3, Xs.data(), n), 0);
  EXPECT_LT(solve_backward_error(n, 2, As, n + 3, Xs, Bs, n), kResidualThreshold);
}

TEST(CApi, NotPositiveDefinite) {
  double A[9] = {4, 2, 0, 2, 1, 0, 0, 0, 1};  // second minor singular
  EXPECT_EQ(tessera_dpotrf('L', 3, A, 3), 2);
}

// A child made by fork() has none of the runtime's threads: its call is refused with the reason,
// although the runtime served the parent before the fork and serves it after (the process id the
// check compares is read again in the child).
TEST(RuntimeApi, ACallFromAForkedChildIsRefused) {
  std::vector<double> A = random_spd<double>(40, 40, 5);
  ASSERT_EQ(potrf(runtime(), 40, A.data(), 40), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a call let through would wait for workers that are not there
    int outcome = 1;  // called through
    try {
      std::vector<double> B = random_spd<double>(40, 40, 6);
      potrf(runtime(), 40, B.data(), 40);
    } catch (const RuntimeError& e) {
      outcome = std::string(e.what()).find("fork()") != std::string::npos ? 0 : 2;
    } catch (...) {
      outcome = 3;
    }
    _exit(outcome);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the call ran in the child, 2: another RuntimeError, 3: another exception";
  A = random_spd<double>(40, 40, 7);
  EXPECT_EQ(potrf(runtime(), 40, A.data(), 40), 0);
}

TEST(Concurrency, FourThreadsFactorAtOnce) {
  std::vector<std::thread> threads;
  std::vector<double> errors(4, -1.0);
  std::vector<int> infos(4, -1);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &errors, &infos] {
      const int n = 100 + 37 * t;
      const std::vector<double> A = random_spd<double>(n, n, 50u + t);
      std::vector<double> F = A;
      infos[t] = t % 2 ? tessera_dpotrf('L', n, F.data(), n) : potrf(runtime(), n, F.data(), n);
      errors[t] = factor_backward_error(Uplo::lower, n, A, F, n);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(infos[t], 0) << "thread " << t;
    EXPECT_LT(errors[t], 1.0) << "thread " << t;
  }
}

TEST(Concurrency, SeveralRequestsInFlight) {
  const int n = 120;
  std::vector<std::vector<double>> originals, factors;
  std::vector<Request> requests;
  FactorOptions options;
  options.nb = 24;
  for (int r = 0; r < 6; ++r) {
    originals.push_back(random_spd<double>(n, n, 60u + r));
    factors.push_back(originals.back());
  }
  for (int r = 0; r < 6; ++r) requests.push_back(potrf_async(runtime(), n, factors[r].data(), n, options));
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(requests[r].wait(), 0);
    EXPECT_LT(factor_backward_error(Uplo::lower, n, originals[r], factors[r], n), 1.0);
  }
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

// The CLI's and benchmarks' matrix: symmetric to the last bit (the upper triangle is mirrored in
// blocks), diagonal n, at orders around the mirror's block size.
TEST(CliMatrices, DominantSpdIsExactlySymmetric) {
  for (int n : {1, 2, 63, 64, 65, 130, 257}) {
    const std::vector<double> A = testkit::potrf_input_matrix<double>(n, 7);
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(A[j + static_cast<std::size_t>(j) * n], n) << "n=" << n;
      for (int i = j + 1; i < n; ++i)
        ASSERT_EQ(A[i + static_cast<std::size_t>(j) * n], A[j + static_cast<std::size_t>(i) * n])
            << "n=" << n << " (" << i << "," << j << ")";
    }
  }
}

}  // namespace
}  // namespace tessera::test
