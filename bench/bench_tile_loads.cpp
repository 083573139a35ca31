// The load of a column-major array into tiles on the host, as the load tasks do it (copy a tile,
// find its first NaN or infinity), on several threads at once: the scan as a second pass over
// the copied tile against the scan of each column right after its copy. Each thread copies its
// own tiles out of its own array of `rows` rows, so that nothing comes from the caches.
//   bench_tile_loads [--threads 1,4,8,12,16] [--nb 2048] [--rows 30000] [--tiles 6] [--rounds 3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "bench_support.hpp"
#include "kernels/cpu/blas.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  std::vector<int> threads = {1, 4, 8, 12, 16};
  int nb = 2048;
  int rows = 30000;
  int tiles = 6;
  int rounds = 3;
};

// Seconds for every thread to load its tiles, one pass or two.
double time_loads(const Settings& s, std::vector<std::vector<double>>& arrays, std::vector<std::vector<double>>& tiles,
                  int nthreads, bool one_pass) {
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < nthreads; ++t)
    workers.emplace_back([&, t] {
      const int tiles_down = s.rows / s.nb;
      for (int k = 0; k < s.tiles; ++k) {
        const double* src = arrays[t].data() + static_cast<long>(k % tiles_down) * s.nb;
        double* dst = tiles[t].data() + static_cast<long>(k) * s.nb * s.nb;
        int bad = -1;
        if (one_pass) {
          bad = tessera::kernels::cpu::copy_block_and_find_non_finite_row(false, s.nb, s.nb, src, s.rows, dst, s.nb);
        } else {
          tessera::kernels::cpu::copy_block(false, false, s.nb, s.nb, src, s.rows, dst, s.nb);
          bad = tessera::kernels::cpu::first_non_finite_row(false, s.nb, s.nb, dst, s.nb);
        }
        if (bad >= 0) std::fprintf(stderr, "unexpected non-finite value\n");
      }
    });
  for (auto& w : workers) w.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string option = args.option();
      if (option == "--threads") s.threads = tessera::bench::parse_int_list(args.value());
      else if (option == "--nb") s.nb = std::stoi(args.value());
      else if (option == "--rows") s.rows = std::stoi(args.value());
      else if (option == "--tiles") s.tiles = std::stoi(args.value());
      else if (option == "--rounds") s.rounds = std::stoi(args.value());
      else throw std::runtime_error("unknown option " + option);
    }
    if (s.nb < 1 || s.rows < s.nb || s.tiles < 1 || s.rounds < 1) throw std::runtime_error("need 1 <= nb <= rows");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\nusage: %s [--threads 1,4,8,12,16] [--nb 2048] [--rows 30000] [--tiles 6] [--rounds 3]\n",
                 e.what(), argv[0]);
    return 2;
  }
  const int most = *std::max_element(s.threads.begin(), s.threads.end());
  std::vector<std::vector<double>> arrays(most), tiles(most);
  for (int t = 0; t < most; ++t) {
    arrays[t].assign(static_cast<std::size_t>(s.rows) * s.nb, 1.0);
    tiles[t].assign(static_cast<std::size_t>(s.nb) * s.nb * s.tiles, 0.0);
  }
  fmt::print("Loads of {0} x {0} tiles from a {1}-row array, {2} per thread; GB/s per thread, best of {3}\n",
             s.nb, s.rows, s.tiles, s.rounds);
  fmt::print("{:>8} | {:>10} {:>10} | {:>6}\n", "threads", "two passes", "one pass", "ratio");
  for (int nthreads : s.threads) {
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < s.rounds; ++round)
      for (int one_pass = 0; one_pass < 2; ++one_pass)
        best[one_pass] = std::min(best[one_pass], time_loads(s, arrays, tiles, nthreads, one_pass == 1));
    const double gigabytes = s.tiles * 8.0 * s.nb * s.nb / 1e9;  // copied per thread
    fmt::print("{:>8} | {:>10.2f} {:>10.2f} | {:>6.2f}\n", nthreads, gigabytes / best[0], gigabytes / best[1],
               best[0] / best[1]);
  }
}
