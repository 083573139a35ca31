// Tessera's CPU mode against LAPACKE_dpotrf (multithreaded OpenBLAS) on the same cores (Tessera
// with its default CPU workers: every core, less the calling thread's from 16 cores), on the same
// matrices, in one run. Prints one row per n and the ratio; --json FILE
// writes the rows as JSON. Tessera's column is its plan's choice (small work on the calling thread
// with LAPACK, the tile graph above: tessera::runs_on_calling_thread); a second column forces the
// tile graph (the plan's tile size asked for), so that the two sides of the threshold show.
#include <cblas.h>
#include <fmt/core.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> spd(int n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> A(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j) {
    A[j + static_cast<std::size_t>(j) * n] = n;
    for (int i = j + 1; i < n; ++i) A[i + static_cast<std::size_t>(j) * n] = A[j + static_cast<std::size_t>(i) * n] = dist(gen);
  }
  return A;
}

template <class F>
double median_seconds(int repetitions, const std::vector<double>& A, F&& factor) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    std::vector<double> work = A;
    const auto start = Clock::now();
    factor(work);
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {2000, 4000, 6000, 8000};
  int repetitions = 3;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      for (std::size_t p = 0; p < list.size();) {
        const std::size_t q = list.find(',', p);
        sizes.push_back(std::stoi(list.substr(p, q - p)));
        p = q == std::string::npos ? list.size() : q + 1;
      }
    } else if (arg == "--repetitions" && i + 1 < argc) {
      repetitions = std::stoi(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      fmt::print(stderr, "usage: {} [--sizes N,N,...] [--repetitions R] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::vector<double>> matrices;
  for (int n : sizes) matrices.push_back(spd(n, 7u + static_cast<unsigned>(n)));

  // LAPACKE first, with no runtime started: StarPU's idle workers would otherwise compete with
  // OpenBLAS's threads for the cores.
  openblas_set_num_threads(threads);
  std::vector<double> lapack_seconds;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const int n = sizes[s];
    lapack_seconds.push_back(median_seconds(repetitions, matrices[s], [&](std::vector<double>& w) {
      if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, w.data(), n) != 0) throw std::runtime_error("LAPACKE_dpotrf failed");
    }));
  }

  tessera::RuntimeOptions options;
  options.ncuda = 0;
  tessera::Runtime runtime(options);
  tessera::FactorOptions factor;
  factor.mode = tessera::Mode::cpu;
  fmt::print("CPU Cholesky, double, LAPACKE on {} threads, Tessera on {} CPU workers, median of {} runs (scheduler {})\n",
             threads, runtime.cpu_workers(), repetitions, runtime.scheduler());
  fmt::print("{:>7} {:>5} {:>15} {:>14} {:>14} {:>16} {:>16} {:>8} {:>11}\n", "n", "nb", "Tessera path", "LAPACKE s",
             "Tessera s", "LAPACKE GFLOP/s", "Tessera GFLOP/s", "ratio", "tiles ratio");
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const int n = sizes[s];
    const std::vector<double>& A = matrices[s];
    // Warm-up, which also calibrates Tessera's perf models for this size.
    for (int w = 0; w < 2; ++w) tessera::potrf(runtime, n, std::vector<double>(A).data(), n, factor);
    const double ours = median_seconds(repetitions, A, [&](std::vector<double>& w) {
      if (tessera::potrf(runtime, n, w.data(), n, factor) != 0) throw std::runtime_error("Tessera potrf failed");
    });
    const int nb = tessera::default_tile_size(n, tessera::Precision::double_real, tessera::Mode::cpu, runtime.cpu_workers());
    tessera::FactorOptions tiled = factor;
    tiled.nb = nb;
    for (int w = 0; w < 2; ++w) tessera::potrf(runtime, n, std::vector<double>(A).data(), n, tiled);
    const double tiles = median_seconds(repetitions, A, [&](std::vector<double>& w) {
      if (tessera::potrf(runtime, n, w.data(), n, tiled) != 0) throw std::runtime_error("Tessera potrf failed");
    });
    const std::string path = tessera::explain_potrf<double>(runtime, n, factor).path;
    const double lapack = lapack_seconds[s];
    const double flop = double(n) * n * n / 3.0;
    fmt::print("{:>7} {:>5} {:>15} {:>14.4f} {:>14.4f} {:>16.2f} {:>16.2f} {:>8.3f} {:>11.3f}\n", n, nb, path, lapack, ours,
               flop / lapack * 1e-9, flop / ours * 1e-9, lapack / ours, lapack / tiles);
    rows.push_back({{"n", n}, {"nb", nb}, {"path", path}, {"threads", threads}, {"cpu_workers", runtime.cpu_workers()},
                    {"lapacke_seconds", lapack}, {"tessera_seconds", ours}, {"tessera_tiles_seconds", tiles},
                    {"lapacke_gflops", flop / lapack * 1e-9}, {"tessera_gflops", flop / ours * 1e-9},
                    {"ratio", lapack / ours}, {"tiles_ratio", lapack / tiles}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << rows.dump(2) << "\n";
  return 0;
}
