// The mixed-precision solve (tessera::posv_refined, LAPACK's DSPOSV) against LAPACKE_dsposv and
// LAPACKE_dposv (multithreaded OpenBLAS on every core) and Tessera's double-precision posv, on the
// same matrices and right-hand sides, in one run; CPU mode. Each column is the median wall time of
// a whole solve (for Tessera's refined solve: narrowing, the single-precision factorization, the
// refinement); the ratios are the peers' times over Tessera's refined solve's. Also printed: the
// refinement's iterations (LAPACK's ITER) and the solution's backward error
// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) of both refined solves.
//   bench_refined_solve [--sizes N,N,...] [--nrhs K] [--repetitions R] [--json FILE]
#include <cblas.h>
#include <fmt/core.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "tessera/tessera.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The matrix of `tessera potrf --n N --seed SEED`: symmetric, diagonally dominant, so positive
// definite and well conditioned.
std::vector<double> spd(int n, unsigned seed) { return tessera::testkit::potrf_input_matrix<double>(n, seed); }

std::vector<double> rhs(int n, int nrhs, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> B(static_cast<std::size_t>(n) * nrhs);
  for (double& b : B) b = dist(gen);
  return B;
}

// The worst column's ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf).
double backward_error(int n, int nrhs, const std::vector<double>& A, const std::vector<double>& X,
                      const std::vector<double>& B) {
  std::vector<double> R = B;
  cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, n, nrhs, -1.0, A.data(), n, X.data(), n, 1.0, R.data(), n);
  std::vector<double> work(n);
  const double a_norm = LAPACKE_dlansy_work(LAPACK_COL_MAJOR, 'I', 'L', n, A.data(), n, work.data());
  double worst = 0;
  for (int j = 0; j < nrhs; ++j) {
    double r = 0, x = 0, b = 0;
    for (int i = 0; i < n; ++i) {
      const std::size_t k = i + static_cast<std::size_t>(j) * n;
      r = std::max(r, std::abs(R[k]));
      x = std::max(x, std::abs(X[k]));
      b = std::max(b, std::abs(B[k]));
    }
    worst = std::max(worst, r / (a_norm * x + b));
  }
  return worst;
}

// Median seconds of `solve(A copy, X)` over the repetitions; the last run's X stays in `X`.
template <class F>
double median_seconds(int repetitions, const std::vector<double>& A, std::vector<double>& X, F&& solve) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    std::vector<double> work = A;
    const auto start = Clock::now();
    solve(work, X);
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {1000, 2000, 4000, 6000};
  int nrhs = 1, repetitions = 3;
  std::string json_path;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string a = args.option();
      if (a == "--sizes") sizes = tessera::bench::parse_int_list(args.value());
      else if (a == "--nrhs") nrhs = std::stoi(args.value());
      else if (a == "--repetitions") repetitions = std::stoi(args.value());
      else if (a == "--json") json_path = args.value();
      else throw std::runtime_error("unknown argument " + a);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\nusage: {} [--sizes N,N,...] [--nrhs K] [--repetitions R] [--json FILE]\n", e.what(), argv[0]);
    return 2;
  }
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  struct Row {
    int n;
    double lapack_refined, lapack_double, lapack_error;
    int lapack_iter;
  };
  std::vector<Row> rows;
  // LAPACKE first, with no runtime started: StarPU's idle workers would otherwise compete with
  // OpenBLAS's threads for the cores.
  openblas_set_num_threads(threads);
  for (int n : sizes) {
    const std::vector<double> A = spd(n, 7u + n), B = rhs(n, nrhs, 11u + n);
    std::vector<double> X(static_cast<std::size_t>(n) * nrhs);
    lapack_int iter = 0;
    const double refined = median_seconds(repetitions, A, X, [&](std::vector<double>& a, std::vector<double>& x) {
      std::vector<double> b = B;
      if (LAPACKE_dsposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), n, b.data(), n, x.data(), n, &iter) != 0)
        throw std::runtime_error("LAPACKE_dsposv failed");
    });
    const double error = backward_error(n, nrhs, A, X, B);
    const double plain = median_seconds(repetitions, A, X, [&](std::vector<double>& a, std::vector<double>& x) {
      x = B;
      if (LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a.data(), n, x.data(), n) != 0)
        throw std::runtime_error("LAPACKE_dposv failed");
    });
    rows.push_back({n, refined, plain, error, static_cast<int>(iter)});
  }

  tessera::RuntimeOptions runtime_options;
  runtime_options.ncuda = 0;
  tessera::Runtime runtime(runtime_options);
  tessera::FactorOptions options;
  options.mode = tessera::Mode::cpu;
  fmt::print("Mixed-precision SPD solve (DSPOSV), nrhs = {}: LAPACKE on {} threads, Tessera on {} CPU workers, "
             "median of {} runs\n",
             nrhs, threads, runtime.cpu_workers(), repetitions);
  fmt::print("{:>6} | {:>10} {:>10} {:>10} {:>10} | {:>9} {:>9} {:>9} | {:>5} {:>5} | {:>9} {:>9}\n", "n",
             "T refined", "T posv", "L dsposv", "L dposv", "L-dsposv", "L-dposv", "T-posv", "iter", "L it", "T error",
             "L error");
  nlohmann::json json = nlohmann::json::array();
  for (const Row& row : rows) {
    const int n = row.n;
    const std::vector<double> A = spd(n, 7u + n), B = rhs(n, nrhs, 11u + n);
    std::vector<double> X(static_cast<std::size_t>(n) * nrhs);
    tessera::RefinedSolve result;
    const auto refined_solve = [&](std::vector<double>& a, std::vector<double>& x) {
      result = tessera::posv_refined(runtime, tessera::MatrixView<double>::host(n, n, a.data(), n),
                                     tessera::MatrixView<double>::host(n, nrhs, const_cast<double*>(B.data()), n),
                                     tessera::MatrixView<double>::host(n, nrhs, x.data(), n), options);
      if (result.info != 0) throw std::runtime_error("tessera::posv_refined failed");
    };
    const auto double_solve = [&](std::vector<double>& a, std::vector<double>& x) {
      x = B;
      if (tessera::posv(runtime, n, nrhs, a.data(), n, x.data(), n, options) != 0)
        throw std::runtime_error("tessera::posv failed");
    };
    for (int w = 0; w < 2; ++w) {  // warm-up, which also calibrates the perf models for this size
      std::vector<double> a = A, b = A;
      refined_solve(a, X);
      double_solve(b, X);
    }
    const double refined = median_seconds(repetitions, A, X, refined_solve);
    const double error = backward_error(n, nrhs, A, X, B);
    const double plain = median_seconds(repetitions, A, X, double_solve);
    fmt::print("{:>6} | {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} | {:>8.2f}x {:>8.2f}x {:>8.2f}x | {:>5} {:>5} | {:>9.1e} "
               "{:>9.1e}\n",
               n, refined, plain, row.lapack_refined, row.lapack_double, row.lapack_refined / refined,
               row.lapack_double / refined, plain / refined, result.iter, row.lapack_iter, error, row.lapack_error);
    json.push_back({{"n", n}, {"nrhs", nrhs}, {"threads", threads}, {"cpu_workers", runtime.cpu_workers()},
                    {"tessera_refined_seconds", refined}, {"tessera_posv_seconds", plain},
                    {"lapacke_dsposv_seconds", row.lapack_refined}, {"lapacke_dposv_seconds", row.lapack_double},
                    {"tessera_iter", result.iter}, {"lapacke_iter", row.lapack_iter},
                    {"tessera_backward_error", error}, {"lapacke_backward_error", row.lapack_error}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << json.dump(2) << "\n";
  return 0;
}
