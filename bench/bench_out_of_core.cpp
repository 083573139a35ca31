// Factorization of a matrix larger than the GPU's memory, in gpu mode from host tiles, with its
// backward error. The matrix is never held whole: each element is a function of (seed, i, j)
// (uniform in (-1, 1) off the diagonal, n on it: diagonally dominant, hence SPD), written straight
// into the host tiles and computed again for the check. So the host needs only the lower tiles
// (n (n + nb) / 2 elements) and n = 150000 in double fits a 128 GiB host.
//
// Per size: fill the tiles, time potrf_async in gpu mode (--mode) (the tiles start in host memory; StarPU
// moves them to the GPU and evicts them to host memory when the GPU is full), then solve
// A x = b for b = A x0 with potrs_async and report ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf).
// --panel-percents compares out-of-core panel sizes (FactorOptions::out_of_core_panel_percent; 0:
// StarPU's eviction under the right-looking order). STARPU_LIMIT_CUDA_MEM (MiB) caps the GPU memory StarPU uses, to take a smaller GPU's place;
// STARPU_BUS_STATS=1 makes StarPU print the bytes moved at exit. Rows print as they finish;
// --json FILE writes them.
#include <fmt/core.h>
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "tessera/starpu_interop.hpp"
#include "tessera/tessera.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using tessera::testkit::parallel_for;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Element (i, j) of the matrix, i and j 0-based, from a SplitMix64 hash of (seed, min, max).
struct GeneratedSpd {
  int n;
  std::uint64_t seed;
  double operator()(int i, int j) const {
    if (i == j) return n;
    const std::uint64_t lo = static_cast<std::uint64_t>(std::min(i, j)), hi = static_cast<std::uint64_t>(std::max(i, j));
    std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + (hi << 32 | lo);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;  // uniform in [-1, 1)
  }
};

// Writes the generated matrix into the lower tiles, in host memory.
template <class T>
void fill_tiles(tessera::TileMatrix<T>& A, const GeneratedSpd& value) {
  parallel_for(A.tile_cols(), [&](int j) {
    for (int i = j; i < A.tile_rows(); ++i) {
      starpu_data_handle_t h = tessera::starpu_interop::tile_handle(A, i, j);
      if (starpu_data_acquire(h, STARPU_W) != 0) throw std::runtime_error("cannot acquire a tile");
      T* tile = reinterpret_cast<T*>(starpu_matrix_get_local_ptr(h));
      const int ld = static_cast<int>(starpu_matrix_get_local_ld(h));
      for (int c = 0; c < A.tile_width(j); ++c)
        for (int r = 0; r < A.tile_height(i); ++r)
          tile[r + static_cast<std::size_t>(c) * ld] = static_cast<T>(value(i * A.nb() + r, j * A.nb() + c));
      starpu_data_release(h);
    }
  });
}

// y = A x and the row sums of |A|, A generated again element by element.
struct Product {
  std::vector<double> y;
  double norm_inf = 0;
};

Product multiply(const GeneratedSpd& A, const std::vector<double>& x) {
  const int n = A.n;
  Product p;
  p.y.assign(n, 0.0);
  std::vector<double> row_norm(n, 0.0);
  parallel_for(n, [&](int i) {
    double sum = 0, abs_sum = 0;
    for (int j = 0; j < n; ++j) {
      const double a = A(i, j);
      sum += a * x[j];
      abs_sum += std::fabs(a);
    }
    p.y[i] = sum;
    row_norm[i] = abs_sum;
  });
  p.norm_inf = *std::max_element(row_norm.begin(), row_norm.end());
  return p;
}

double norm_inf(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::fabs(e));
  return m;
}

// Solves with the factor in L, in the options' mode; b and x in double.
template <class T>
std::vector<double> solve(tessera::Runtime& runtime, const tessera::TileMatrix<T>& L, const std::vector<double>& b,
                          const tessera::FactorOptions& options) {
  const int n = L.rows();
  tessera::TileMatrix<T> B(runtime, n, 1, L.nb(), tessera::TileStructure::general);
  std::vector<T> column(b.begin(), b.end());
  tessera::load_async(B, column.data(), n).wait();
  tessera::potrs_async(L, B, options).wait();
  tessera::store_async(B, column.data(), n).wait();
  return std::vector<double>(column.begin(), column.end());
}

json run_size(tessera::Runtime& runtime, int n, int nb, bool check, tessera::Mode mode, int panel_percent) {
  const GeneratedSpd A{n, 20261124u + static_cast<std::uint64_t>(n)};
  tessera::FactorOptions options = tessera::FactorOptions::from_environment();
  options.mode = mode;
  options.nb = nb;
  if (panel_percent >= 0) options.out_of_core_panel_percent = panel_percent;
  json row{{"n", n}, {"nb", nb}, {"panel_percent", options.out_of_core_panel_percent}, {"lower_tiles_gib", double(n) * (n + nb) / 2 * sizeof(double) / (1 << 30)}};

  auto start = Clock::now();
  tessera::TileMatrix<double> L(runtime, n, nb);
  fill_tiles(L, A);
  row["fill_s"] = seconds_since(start);

  start = Clock::now();
  const int info = tessera::potrf_async(L, options).wait();
  const double seconds = seconds_since(start);
  row["potrf_s"] = seconds;
  row["tflops"] = double(n) * n * n / 3.0 / seconds * 1e-12;
  row["info"] = info;
  if (check && info == 0) {
    start = Clock::now();
    std::vector<double> x0(n);
    for (int i = 0; i < n; ++i) x0[i] = 1.0 + double(i % 7) / 7.0;
    const std::vector<double> b = multiply(A, x0).y;
    const std::vector<double> x = solve(runtime, L, b, options);
    const Product ax = multiply(A, x);
    std::vector<double> r(n);
    for (int i = 0; i < n; ++i) r[i] = b[i] - ax.y[i];
    row["backward_error"] = norm_inf(r) / (ax.norm_inf * norm_inf(x) + norm_inf(b));
    row["check_s"] = seconds_since(start);
  }
  return row;
}

int usage(const char* program) {
  fmt::print(stderr, "usage: {} --sizes N[,N...] [--nb NB] [--mode gpu|cpu|hybrid] [--panel-percents P[,P...]] [--no-check] [--json FILE]\n", program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int nb = 2048;
  bool check = true;
  tessera::Mode mode = tessera::Mode::gpu;
  std::vector<int> panel_percents{-1};  // -1: the environment's (FactorOptions::from_environment)
  std::string json_path;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string arg = args.option();
      if (arg == "--sizes") sizes = tessera::bench::parse_int_list(args.value());
      else if (arg == "--nb") nb = std::stoi(args.value());
      else if (arg == "--mode") mode = tessera::parse_mode(args.value());
      else if (arg == "--panel-percents") panel_percents = tessera::bench::parse_int_list(args.value());
      else if (arg == "--no-check") check = false;
      else if (arg == "--json") json_path = args.value();
      else return usage(argv[0]);
    }
    if (sizes.empty()) return usage(argv[0]);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_out_of_core: {}\n", e.what());
    return 2;
  }
  try {
    tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
    if (mode == tessera::Mode::gpu && runtime.cuda_workers() == 0) throw std::runtime_error("no CUDA worker: this benchmark needs a GPU");
    const char* limit = std::getenv("STARPU_LIMIT_CUDA_MEM");
    fmt::print("{} CUDA worker(s); GPU memory limit: {}\n", runtime.cuda_workers(),
               limit ? std::string(limit) + " MiB" : std::string("none"));
    fmt::print("{:>7} {:>5} {:>5} {:>9} {:>8} {:>9} {:>8} {:>12} {:>5}\n", "n", "nb", "panel%", "tiles GiB", "fill s",
               "potrf s", "TFLOP/s", "bwd error", "info");
    std::fflush(stdout);
    json rows = json::array();
    for (int n : sizes)
    for (int percent : panel_percents) {
      json row = run_size(runtime, n, nb, check, mode, percent);
      fmt::print("{:>7} {:>5} {:>5} {:>9.1f} {:>8.2f} {:>9.2f} {:>8.2f} {:>12.3e} {:>5}\n", n, nb, row["panel_percent"].get<int>(),
                 row["lower_tiles_gib"].get<double>(), row["fill_s"].get<double>(), row["potrf_s"].get<double>(),
                 row["tflops"].get<double>(), row.value("backward_error", std::nan("")), row["info"].get<int>());
      std::fflush(stdout);
      rows.push_back(std::move(row));
    }
    if (!json_path.empty()) std::ofstream(json_path) << rows.dump(2) << "\n";
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_out_of_core: {}\n", e.what());
    return 1;
  }
  return 0;
}
