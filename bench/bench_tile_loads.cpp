// The loads of a column-major array into tiles on the host, as the load tasks do them (copy a
// tile, find its first NaN or infinity), and the stores of tiles back into the array, on several
// threads at once: the scan as a second pass over the copied tile, or of each column right after
// its copy; plain stores against streaming stores (kernels::cpu::Stores). Each thread copies its
// own tiles out of (into) its own array of `rows` rows, so that nothing comes from the caches.
//   bench_tile_loads [--threads 1,4,8,12,16] [--nb 2048] [--rows 30000] [--tiles 6] [--rounds 3]
#include <algorithm>
#include <chrono>
#include <iterator>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "bench_support.hpp"
#include "kernels/cpu/blas.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using tessera::kernels::cpu::Stores;

struct Settings {
  std::vector<int> threads = {1, 4, 8, 12, 16};
  int nb = 2048;
  int rows = 30000;
  int tiles = 6;
  int rounds = 3;
};

enum class Way { load_two_passes, load_one_pass, load_one_pass_streaming, store, store_streaming };
constexpr Way kWays[] = {Way::load_two_passes, Way::load_one_pass, Way::load_one_pass_streaming, Way::store,
                         Way::store_streaming};

// One tile of a thread: loaded from `array` into `tile`, or stored back.
void move_tile(const Settings& s, Way way, double* array, double* tile) {
  namespace cpu = tessera::kernels::cpu;
  int bad = -1;
  switch (way) {
    case Way::load_two_passes:
      cpu::copy_block(false, false, s.nb, s.nb, array, s.rows, tile, s.nb);
      bad = cpu::first_non_finite_row(false, s.nb, s.nb, tile, s.nb);
      break;
    case Way::load_one_pass:
      bad = cpu::copy_block_and_find_non_finite_row(false, s.nb, s.nb, array, s.rows, tile, s.nb);
      break;
    case Way::load_one_pass_streaming:
      bad = cpu::copy_block_and_find_non_finite_row(false, s.nb, s.nb, array, s.rows, tile, s.nb, Stores::streaming);
      break;
    case Way::store: cpu::copy_block(false, false, s.nb, s.nb, tile, s.nb, array, s.rows); break;
    case Way::store_streaming:
      cpu::copy_block(false, false, s.nb, s.nb, tile, s.nb, array, s.rows, Stores::streaming);
      break;
  }
  if (bad >= 0) std::fprintf(stderr, "unexpected non-finite value\n");
}

// Seconds for every thread to move its tiles one way.
double time_moves(const Settings& s, std::vector<std::vector<double>>& arrays, std::vector<std::vector<double>>& tiles,
                  int nthreads, Way way) {
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < nthreads; ++t)
    workers.emplace_back([&, t] {
      const int tiles_down = s.rows / s.nb;
      for (int k = 0; k < s.tiles; ++k)
        move_tile(s, way, arrays[t].data() + static_cast<long>(k % tiles_down) * s.nb,
                  tiles[t].data() + static_cast<long>(k) * s.nb * s.nb);
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
  fmt::print("{0} x {0} tiles from (loads) and into (stores) a {1}-row array, {2} per thread; GB/s per thread, "
             "best of {3}\n", s.nb, s.rows, s.tiles, s.rounds);
  fmt::print("{:>8} | {:>10} {:>10} {:>10} {:>6} | {:>10} {:>10} {:>6}\n", "threads", "load 2 pass", "1 pass",
             "1 p stream", "ratio", "store", "streaming", "ratio");
  for (int nthreads : s.threads) {
    double best[std::size(kWays)];
    std::fill(std::begin(best), std::end(best), 1e30);
    for (int round = 0; round < s.rounds; ++round)
      for (std::size_t w = 0; w < std::size(kWays); ++w)
        best[w] = std::min(best[w], time_moves(s, arrays, tiles, nthreads, kWays[w]));
    const double gigabytes = s.tiles * 8.0 * s.nb * s.nb / 1e9;  // copied per thread
    fmt::print("{:>8} | {:>10.2f} {:>10.2f} {:>10.2f} {:>6.2f} | {:>10.2f} {:>10.2f} {:>6.2f}\n", nthreads,
               gigabytes / best[0], gigabytes / best[1], gigabytes / best[2], best[1] / best[2], gigabytes / best[3],
               gigabytes / best[4], best[3] / best[4]);
  }
}
