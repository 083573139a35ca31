// Progress of a request: Request::progress, Request::wait with a report, FactorOptions::progress
// in the synchronous forms, and the C API's tessera_set_progress.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessera/batched.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "tessera/tessera.h"
#include "test_support.hpp"

namespace tessera {
namespace {

using std::chrono::milliseconds;

// Work that runs as many tasks (an explicit tile size keeps it off the calling thread).
FactorOptions many_tasks() {
  FactorOptions options;
  options.mode = Mode::cpu;
  options.nb = 64;
  return options;
}

struct Reports {
  std::vector<Progress> seen;
  std::vector<std::thread::id> threads;
  ProgressReport report() {
    return [this](const Progress& p) {
      seen.push_back(p);
      threads.push_back(std::this_thread::get_id());
    };
  }
};

void expect_complete_and_increasing(const Reports& reports) {
  ASSERT_FALSE(reports.seen.empty());
  for (std::size_t i = 1; i < reports.seen.size(); ++i)
    EXPECT_GE(reports.seen[i].tasks_finished, reports.seen[i - 1].tasks_finished);
  const Progress& last = reports.seen.back();
  EXPECT_GT(last.tasks_submitted, 0);
  EXPECT_EQ(last.tasks_finished, last.tasks_submitted);
  EXPECT_DOUBLE_EQ(last.fraction(), 1.0);
  for (const std::thread::id id : reports.threads) EXPECT_EQ(id, std::this_thread::get_id()) << "reported on a worker";
}

TEST(Progress, WaitReportsOnTheWaitingThreadUpToTheLastTask) {
  Runtime& rt = test::runtime();
  const int n = 1000;
  const std::vector<double> A = test::random_spd<double>(n, n, 21);
  std::vector<double> F = A;
  Reports reports;
  Request request = potrf_async(rt, n, F.data(), n, many_tasks());
  const Progress early = request.progress();
  EXPECT_LE(early.tasks_finished, early.tasks_submitted);
  EXPECT_EQ(request.wait(reports.report(), milliseconds(1)), 0);
  expect_complete_and_increasing(reports);
  EXPECT_GT(reports.seen.back().tasks_submitted, 16) << "16 x 16 tiles: more tasks than tile columns";
  EXPECT_LT(test::factor_backward_error(Uplo::lower, n, A, F, n), test::kResidualThreshold);
  EXPECT_EQ(request.progress().fraction(), 1.0);
}

TEST(Progress, SynchronousFormsReportThroughTheirOptions) {
  Runtime& rt = test::runtime();
  const int n = 600, nrhs = 3;
  const std::vector<double> A = test::random_spd<double>(n, n, 22);
  std::vector<double> F = A, B(std::size_t(n) * nrhs, 1.0);
  Reports factor_reports, solve_reports;
  FactorOptions options = many_tasks();
  options.progress_interval = milliseconds(1);
  options.progress = factor_reports.report();
  EXPECT_EQ(potrf(rt, n, F.data(), n, options), 0);
  expect_complete_and_increasing(factor_reports);
  options.progress = solve_reports.report();
  EXPECT_EQ(potrs(rt, n, nrhs, F.data(), n, B.data(), n, options), 0);
  expect_complete_and_increasing(solve_reports);
}

TEST(Progress, BatchesReportThroughTheirOptions) {
  Runtime& rt = test::runtime();
  const int n = 32, count = 64;
  std::vector<double> A(std::size_t(n) * n * count, 0.0);
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i) A[std::size_t(k) * n * n + i + std::size_t(i) * n] = 4.0;
  std::vector<int> info(count, -1);
  Reports reports;
  BatchOptions options;
  options.mode = Mode::cpu;
  options.chunk = 4;
  options.progress = reports.report();
  options.progress_interval = milliseconds(1);
  potrf_batched(rt, n, A.data(), n, (long long)n * n, count, info.data(), options);
  expect_complete_and_increasing(reports);
  EXPECT_GE(reports.seen.back().tasks_submitted, count / 4) << "a task per chunk of 4 matrices";
  for (int k = 0; k < count; ++k) EXPECT_EQ(info[k], 0);
}

TEST(Progress, AReportThatThrowsCancelsTheRequestAndTheRuntimeGoesOn) {
  Runtime& rt = test::runtime();
  const int n = 2000;
  const std::vector<double> A = test::random_spd<double>(n, n, 23);
  std::vector<double> F = A;
  Request request = potrf_async(rt, n, F.data(), n, many_tasks());
  int calls = 0;
  const ProgressReport stop = [&calls](const Progress&) {
    ++calls;
    throw std::runtime_error("stop here");
  };
  EXPECT_THROW(request.wait(stop, milliseconds(1)), std::runtime_error);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(request.done());
  std::vector<double> G = A;
  EXPECT_EQ(potrf(rt, n, G.data(), n, many_tasks()), 0);
  EXPECT_LT(test::factor_backward_error(Uplo::lower, n, A, G, n), test::kResidualThreshold);
}

TEST(Progress, RequestsWithoutTasksAreWholeAtOnce) {
  EXPECT_DOUBLE_EQ(Request().progress().fraction(), 1.0);
  Reports reports;
  EXPECT_EQ(Request().wait(reports.report(), milliseconds(1)), 0);
  EXPECT_EQ(Progress{}.fraction(), 1.0);
  EXPECT_DOUBLE_EQ((Progress{1, 4}).fraction(), 0.25);
}

// ---- the C API ---------------------------------------------------------------------------------

struct CReports {
  std::vector<double> fractions;
  static void record(double fraction, void* self) { static_cast<CReports*>(self)->fractions.push_back(fraction); }
};

TEST(Progress, CApiReportsThisThreadsCallsUntilTurnedOff) {
  CReports reports;
  EXPECT_EQ(tessera_set_progress(&CReports::record, &reports, 0), -3);
  EXPECT_NE(std::string(tessera_last_error()).find("interval_ms"), std::string::npos);
  ASSERT_EQ(tessera_set_progress(&CReports::record, &reports, 1), 0);
  const int n = test::kOrderThatRunsTasks;  // runs as tasks (beyond what the calling thread takes)
  std::vector<double> A = test::random_spd<double>(n, n, 24);
  EXPECT_EQ(tessera_dpotrf('L', n, A.data(), n), 0);
  ASSERT_FALSE(reports.fractions.empty());
  EXPECT_DOUBLE_EQ(reports.fractions.back(), 1.0);
  for (std::size_t i = 1; i < reports.fractions.size(); ++i) EXPECT_GE(reports.fractions[i], reports.fractions[i - 1]);

  // Another thread's calls report nothing: the setting is this thread's.
  std::vector<double> other = test::random_spd<double>(n, n, 25);
  const std::size_t before = reports.fractions.size();
  std::thread([&] { EXPECT_EQ(tessera_dpotrf('L', n, other.data(), n), 0); }).join();
  EXPECT_EQ(reports.fractions.size(), before);

  ASSERT_EQ(tessera_set_progress(nullptr, nullptr, 100), 0);
  std::vector<double> B = test::random_spd<double>(n, n, 26);
  EXPECT_EQ(tessera_dpotrf('L', n, B.data(), n), 0);
  EXPECT_EQ(reports.fractions.size(), before);
}

}  // namespace
}  // namespace tessera
