// Soak: eight threads submit factorizations and solves of random sizes, precisions, triangles,
// tile sizes and APIs at once, for TESSERA_SOAK_SECONDS (20 by default); every result is checked,
// and resident memory must stay flat while the same operations repeat.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"
#include "reliability_support.hpp"
#include "tessera/tessera.h"

namespace tessera::test {
namespace {

int random_int(std::mt19937& gen, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }

// A tile size that keeps the task graph small enough for a soak (at most ~12 tiles a side), or
// 0 to let Tessera choose.
int random_nb(std::mt19937& gen, int n) {
  if (random_int(gen, 0, 3) == 0) return 0;
  return random_int(gen, std::max(1, (n + 11) / 12), n + 4);
}

Mode random_mode(std::mt19937& gen) {
  if (!have_gpu()) return Mode::cpu;
  const Mode modes[] = {Mode::cpu, Mode::gpu, Mode::hybrid};
  return modes[random_int(gen, 0, 2)];
}

FactorOptions random_options(std::mt19937& gen, int n) {
  FactorOptions options;
  options.nb = random_nb(gen, n);
  options.uplo = random_int(gen, 0, 1) ? Uplo::upper : Uplo::lower;
  options.mode = random_mode(gen);
  return options;
}

std::string describe(const std::string& what, int n, const FactorOptions& o) {
  return what + " n=" + std::to_string(n) + " nb=" + std::to_string(o.nb) + " uplo=" + to_string(o.uplo) +
         " mode=" + to_string(o.mode);
}

// Each operation returns "" when its result is right, else what went wrong.

template <class T>
std::string factor_and_check(std::mt19937& gen) {
  const int n = random_int(gen, 1, 160);
  const FactorOptions options = random_options(gen, n);
  const int ld = n + random_int(gen, 0, 3);
  const std::vector<T> A = random_spd<T>(n, ld, gen());
  std::vector<T> F = A;
  const int info = potrf(runtime(), n, F.data(), ld, options);
  if (info != 0) return describe("potrf info " + std::to_string(info), n, options);
  if (!(factor_backward_error(options.uplo, n, A, F, ld) < kResidualThreshold)) return describe("potrf residual", n, options);
  return "";
}

std::string c_api_solve_and_check(std::mt19937& gen) {
  const int n = random_int(gen, 1, 160), nrhs = random_int(gen, 1, 4);
  const std::vector<float> A = random_spd<float>(n, n, gen());
  const std::vector<float> B = random_matrix<float>(n, nrhs, n, gen());
  std::vector<float> F = A, X = B;
  const int info = tessera_sposv(random_int(gen, 0, 1) ? 'U' : 'L', n, nrhs, F.data(), n, X.data(), n);
  if (info != 0) return "sposv info " + std::to_string(info) + " n=" + std::to_string(n);
  if (!(solve_backward_error(n, nrhs, A, n, X, B, n) < kResidualThreshold)) return "sposv residual n=" + std::to_string(n);
  return "";
}

std::string async_factor_then_solve(std::mt19937& gen) {
  const int n = random_int(gen, 1, 160), nrhs = random_int(gen, 1, 6);
  const FactorOptions options = random_options(gen, n);
  const std::vector<double> A = random_spd<double>(n, n, gen());
  const std::vector<double> B = random_matrix<double>(n, nrhs, n + 1, gen());
  std::vector<double> F = A, X = B;
  Request factor = potrf_async(runtime(), n, F.data(), n, options);
  if (const int info = factor.wait(); info != 0) return describe("potrf_async info " + std::to_string(info), n, options);
  Request solve = potrs_async(runtime(), n, nrhs, F.data(), n, X.data(), n + 1, options);
  if (const int info = solve.wait(); info != 0) return describe("potrs_async info " + std::to_string(info), n, options);
  if (!(solve_backward_error(n, nrhs, A, n, X, B, n + 1) < kResidualThreshold)) return describe("potrs residual", n, options);
  return "";
}

std::string failure_reports_its_column(std::mt19937& gen) {
  const int n = random_int(gen, 2, 120);
  const int column = random_int(gen, 1, n);
  std::vector<double> A = random_spd<double>(n, n, gen());
  A[(column - 1) + static_cast<std::size_t>(column - 1) * n] = -1.0;
  const int info = tessera_dpotrf('L', n, A.data(), n);
  if (info != column) return "dpotrf on a matrix failing at " + std::to_string(column) + " gave " + std::to_string(info);
  return "";
}

std::string tiles_factor_and_solve(std::mt19937& gen) {
  const int n = random_int(gen, 1, 140), nrhs = random_int(gen, 1, 5);
  const int nb = random_int(gen, std::max(1, (n + 9) / 10), n + 3);
  const std::vector<double> A = random_spd<double>(n, n, gen());
  const std::vector<double> B = random_matrix<double>(n, nrhs, n, gen());
  TileMatrix<double> L(runtime(), n, nb);
  TileMatrix<double> X(runtime(), n, nrhs, nb, TileStructure::general);
  load_async(L, Uplo::lower, A.data(), n).wait();
  load_async(X, B.data(), n).wait();
  FactorOptions options;
  options.mode = random_mode(gen);
  if (const int info = potrf_async(L, options).wait(); info != 0) return "tile potrf info " + std::to_string(info);
  if (const int info = potrs_async(L, X, options).wait(); info != 0) return "tile potrs info " + std::to_string(info);
  std::vector<double> x(B.size());
  store_async(X, x.data(), n).wait();
  if (!(solve_backward_error(n, nrhs, A, n, x, B, n) < kResidualThreshold)) return "tile solve residual n=" + std::to_string(n);
  return "";
}

std::string several_requests_in_flight(std::mt19937& gen) {
  constexpr int kRequests = 3;
  std::vector<std::vector<double>> originals, factors;
  std::vector<int> sizes;
  std::vector<Request> requests;
  for (int r = 0; r < kRequests; ++r) {
    sizes.push_back(random_int(gen, 1, 100));
    originals.push_back(random_spd<double>(sizes.back(), sizes.back(), gen()));
    factors.push_back(originals.back());
  }
  FactorOptions options;
  for (int r = 0; r < kRequests; ++r) {
    options.nb = random_nb(gen, sizes[r]);
    requests.push_back(potrf_async(runtime(), sizes[r], factors[r].data(), sizes[r], options));
  }
  for (int r = kRequests - 1; r >= 0; --r) {  // waited in reverse order of submission
    if (const int info = requests[r].wait(); info != 0) return "request info " + std::to_string(info);
    if (!(factor_backward_error(Uplo::lower, sizes[r], originals[r], factors[r], sizes[r]) < kResidualThreshold))
      return "request residual n=" + std::to_string(sizes[r]);
  }
  return "";
}

std::string random_operation(std::mt19937& gen) {
  switch (random_int(gen, 0, 6)) {
    case 0: return factor_and_check<double>(gen);
    case 1: return factor_and_check<float>(gen);
    case 2: return c_api_solve_and_check(gen);
    case 3: return async_factor_then_solve(gen);
    case 4: return failure_reports_its_column(gen);
    case 5: return tiles_factor_and_solve(gen);
    default: return several_requests_in_flight(gen);
  }
}

struct ThreadReport {
  long operations = 0;
  long failures = 0;
  std::string first_failure;
};

// Waits until `at` seconds into the run, then reads resident memory.
double resident_mib_at(Clock::time_point start, double at) {
  while (seconds_since(start) < at) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return resident_mib();
}

// Two phases of TESSERA_SOAK_SECONDS / 2 each. First every operation draws new sizes: caches keyed
// by size (the pinned-memory pool, StarPU's perf-model histories) keep growing as new sizes
// appear. Then each thread repeats a fixed set of 6 operations (same kinds, sizes and data each
// time): once those caches hold them, resident memory must stay flat, so that memory lost per
// operation shows as growth.
TEST(Soak, EightThreadsFactorAndSolveRandomSizes) {
  constexpr int kThreads = 8;
  constexpr unsigned kRepeatedOperations = 6;
  const double seconds = static_cast<double>(env_long("TESSERA_SOAK_SECONDS", 20));
  const double repeat_from = seconds / 2;
  runtime();  // started before the threads
  const Clock::time_point start = Clock::now();
  std::vector<ThreadReport> reports(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, seconds, repeat_from, start, &reports] {
      std::mt19937 gen(1000u + static_cast<unsigned>(t));
      ThreadReport& report = reports[t];
      for (unsigned count = 0; seconds_since(start) < seconds; ++count) {
        std::string failure;
        try {
          if (seconds_since(start) < repeat_from) {
            failure = random_operation(gen);
          } else {
            std::mt19937 repeated(100u * static_cast<unsigned>(t) + count % kRepeatedOperations);
            failure = random_operation(repeated);
          }
        } catch (const std::exception& e) {
          failure = std::string("exception: ") + e.what();
        }
        ++report.operations;
        if (!failure.empty() && report.failures++ == 0) report.first_failure = failure;
      }
    });

  const double rss_start = resident_mib();
  const double rss_random_end = resident_mib_at(start, repeat_from);
  // The repeated operations' first passes fill the caches for their sizes.
  const double settled_at = repeat_from + std::max(2.0, seconds / 10);
  const double rss_settled = resident_mib_at(start, settled_at);
  for (auto& th : threads) th.join();
  const double rss_end = resident_mib();
  const double elapsed = seconds_since(start);

  long operations = 0;
  for (int t = 0; t < kThreads; ++t) {
    operations += reports[t].operations;
    EXPECT_GT(reports[t].operations, 0) << "thread " << t << " never finished an operation";
    EXPECT_EQ(reports[t].failures, 0) << "thread " << t << ": " << reports[t].first_failure;
  }
  std::printf("[ SOAK     ] %d threads, %.1f s, %ld operations checked; RSS %.1f MiB at the start, %.1f MiB after "
              "%.0f s of random sizes, %.1f MiB at %.0f s into repeated sizes, %.1f MiB at the end\n",
              kThreads, elapsed, operations, rss_start, rss_random_end, repeat_from, rss_settled, settled_at - repeat_from,
              rss_end);
  // Under AddressSanitizer resident memory also holds its quarantine (filling up to 256 MiB) and
  // fake stacks, so only LeakSanitizer's check at exit applies there.
  if (!under_address_sanitizer()) {
    EXPECT_LT(rss_end - rss_settled, 16.0) << "resident memory grows while the same operations repeat";
  }
}

}  // namespace
}  // namespace tessera::test
