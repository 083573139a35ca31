#include "batched_command.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "memory_budget.hpp"
#include "tessera/batched.hpp"
#include "tessera/tessera.hpp"
#include "testkit/residuals.hpp"
#include "testkit/spd_matrices.hpp"

namespace tessera::cli {

using testkit::gram_plus_identity;
using testkit::kBackwardErrorThreshold;
using testkit::parallel_for;
using testkit::solve_backward_error;
using testkit::worker_threads;

namespace {

using Clock = std::chrono::steady_clock;

// Matrix k: G G^T / n + I from its own seed, both triangles.
template <class T>
void random_spd(int n, unsigned seed, int k, T* A) {
  std::mt19937_64 gen(seed * 1000003ull + static_cast<unsigned long long>(k));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> G(static_cast<std::size_t>(n) * n);
  for (double& g : G) g = dist(gen);
  gram_plus_identity(n, G, [&](int i, int j, double value) {
    A[i + static_cast<std::size_t>(j) * n] = A[j + static_cast<std::size_t>(i) * n] = static_cast<T>(value);
  });
}

// ||A - L L^T||_1 / (n ||A||_1 eps) of one matrix from the triangle uplo of its factor F.
template <class T>
double factor_error(bool lower, int n, const T* A, const T* F) {
  auto L = [&](int i, int j) -> double {
    if (i < j) return 0.0;
    return lower ? F[i + static_cast<std::size_t>(j) * n] : F[j + static_cast<std::size_t>(i) * n];
  };
  double nr = 0, na = 0;
  for (int j = 0; j < n; ++j) {
    double r = 0, a = 0;
    for (int i = 0; i < n; ++i) {
      double llt = 0;
      for (int l = 0; l <= std::min(i, j); ++l) llt += L(i, l) * L(j, l);
      r += std::abs(double(A[i + static_cast<std::size_t>(j) * n]) - llt);
      a += std::abs(double(A[i + static_cast<std::size_t>(j) * n]));
    }
    nr = std::isnan(r) ? r : std::max(nr, r);
    na = std::max(na, a);
  }
  return nr / (n * na * std::numeric_limits<T>::epsilon());
}

template <class T>
void require_memory_for(const BatchedCommand& cmd) {
  const BatchedFootprint run{cmd.n, cmd.count, cmd.nrhs, sizeof(T), worker_threads()};
  require_memory(bytes_needed(run),
                 fmt::format("batched: {} matrices of order {} in {} precision", cmd.count, cmd.n,
                             sizeof(T) == 8 ? "double" : "single"),
                 "the matrices and right-hand sides, and their copies for the check");
}

template <class T>
int run(const BatchedCommand& cmd) {
  const RuntimeOptions startup = runtime_options(cmd.runtime, parse_mode(cmd.mode));
  require_memory_for<T>(cmd);
  const int n = cmd.n, count = cmd.count, nrhs = cmd.nrhs;
  const long long stride = static_cast<long long>(n) * n, strideB = static_cast<long long>(n) * std::max(nrhs, 1);
  std::vector<T> A(static_cast<std::size_t>(stride) * count), B(static_cast<std::size_t>(strideB) * count);
  parallel_for(count, [&](int k) { random_spd(n, cmd.seed, k, A.data() + k * stride); });
  std::mt19937_64 gen(cmd.seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (T& b : B) b = static_cast<T>(dist(gen));
  const std::vector<T> A0 = A, B0 = B;
  std::vector<int> info(static_cast<std::size_t>(count), -1);

  Runtime runtime(startup);
  BatchOptions options;
  options.uplo = parse_uplo(cmd.uplo);
  options.mode = parse_mode(cmd.mode);
  options.chunk = cmd.chunk;
  options.fast_math = cmd.fast_math;
  const Mode mode = runtime.resolve(options.mode);

  const auto start = Clock::now();
  if (nrhs > 0)
    posv_batched(runtime, n, nrhs, A.data(), std::max(1, n), stride, B.data(), std::max(1, n), strideB, count, info.data(), options);
  else
    potrf_batched(runtime, n, A.data(), std::max(1, n), stride, count, info.data(), options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<double> errors(static_cast<std::size_t>(count), 0.0);
  parallel_for(count, [&](int k) {
    if (info[k] != 0 || n == 0) return;
    errors[k] = nrhs > 0 ? solve_backward_error(n, nrhs, A0.data() + k * stride, n, B.data() + k * strideB, n,
                                                B0.data() + k * strideB, n)
                         : factor_error(options.uplo == Uplo::lower, n, A0.data() + k * stride, A.data() + k * stride);
  });
  const int failed = static_cast<int>(std::count_if(info.begin(), info.end(), [](int i) { return i != 0; }));
  double worst = 0;
  for (double e : errors) worst = std::isnan(e) || std::isnan(worst) ? std::nan("") : std::max(worst, e);
  const double flops = count * (double(n) * n * n / 3.0 + (nrhs > 0 ? 2.0 * n * n * nrhs : 0.0));
  const double gflops = seconds > 0 ? flops / seconds * 1e-9 : 0.0;
  const bool ok = failed == 0 && worst < kBackwardErrorThreshold;
  if (cmd.json) {
    nlohmann::json row = {{"n", n}, {"count", count}, {"nrhs", nrhs}, {"precision", cmd.precision},
                          {"mode", to_string(mode)}, {"uplo", cmd.uplo}, {"fast_math", cmd.fast_math},
                          {"workers", {{"cpu", runtime.cpu_workers()}, {"cuda", runtime.cuda_workers()}}},
                          {"seconds", seconds}, {"gflops", gflops}, {"failed", failed}, {"ok", ok}};
    row["max_backward_error"] = std::isnan(worst) ? nlohmann::json(nullptr) : nlohmann::json(worst);
    fmt::print("{}\n", row.dump());
  } else {
    fmt::print("{:>5} {:>7} {:>4} {:>4} {:>6} {:>9} {:>9} {:>10} {:>10} {:>6} {}\n", "n", "count", "nrhs", "prec", "mode",
               "workers", "seconds", "GFLOP/s", "max error", "failed", "ok");
    fmt::print("{:>5} {:>7} {:>4} {:>4} {:>6} {:>4}+{:<4} {:>9.4f} {:>10.2f} {:>10.3g} {:>6} {}\n", n, count, nrhs,
               cmd.precision, to_string(mode), runtime.cpu_workers(), runtime.cuda_workers(), seconds, gflops, worst, failed,
               ok ? "ok" : "FAILED");
  }
  return ok ? 0 : 3;
}

}  // namespace

int run_batched(const BatchedCommand& cmd) { return cmd.precision == "d" ? run<double>(cmd) : run<float>(cmd); }

}  // namespace tessera::cli
