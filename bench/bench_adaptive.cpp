// Adaptive precision (FactorOptions::accuracy) on the geostatistics benchmark of ExaGeoStat: a
// Matérn covariance (smoothness 1/2: the exponential kernel) over n locations on a jittered grid
// of the unit square, ordered along a Morton curve so that far tiles hold small entries. For each
// n, in one process (warm: a first factorization runs untimed): Tessera's FP64 factorization and
// adaptive ones at each accuracy, from and to the caller's host array (end to end), and, with
// CUDA, the same from tiles already in GPU memory (the tile API, "resident"), from an LAPACK array
// in GPU memory (tessera::device::potrf, "device") and from a host array the caller pinned
// ("pinned"), beside cuSOLVER's dpotrf on the matrix in GPU memory (resident) and with copies from
// and to the pinned and the pageable array. Per run: seconds (best of --reps), the FP64-equivalent
// TFLOP/s (n^3 / 3 flops), the share of tiles per arithmetic, the log-determinant's relative error
// against FP64's and the Gaussian-process log-likelihood's (for data z drawn from the FP64 factor;
// host runs), the speed against Tessera's FP64 run of the same state (cuSOLVER's rows against
// resident tiles), and the tile map's bound on that speed: the factorization's flops over those it
// leaves in FP64 (every potrf, trsm and syrk, and the updates of FP64 tiles), the speed-up if the
// reduced updates took no time at all.
//   bench_adaptive [--n 20000,40000] [--range 0.03] [--accuracy 1e-4,1e-8,1e-12] [--reps 1]
//                  [--mode auto|gpu|cpu] [--nb 0] [--json FILE]
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include <cblas.h>

#include "bench_support.hpp"
#include "tessera/tessera.hpp"

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "resident_tiles.hpp"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Interleaves the bits of x and y (16 each): the Morton code of a grid cell.
std::uint32_t morton(std::uint32_t x, std::uint32_t y) {
  std::uint32_t code = 0;
  for (int b = 0; b < 16; ++b) code |= ((x >> b) & 1u) << (2 * b) | ((y >> b) & 1u) << (2 * b + 1);
  return code;
}

struct Point {
  double x, y;
  std::uint32_t code;
};

// n locations: cells of a ceil(sqrt(n))^2 grid, each jittered inside its cell (fixed seed), the
// first n in Morton order.
std::vector<Point> locations(int n) {
  const int side = static_cast<int>(std::ceil(std::sqrt(double(n))));
  std::mt19937 gen(2024);
  std::uniform_real_distribution<double> jitter(-0.4, 0.4);
  std::vector<Point> points;
  for (int i = 0; i < side; ++i)
    for (int j = 0; j < side; ++j)
      points.push_back({(i + 0.5 + jitter(gen)) / side, (j + 0.5 + jitter(gen)) / side,
                        morton(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j))});
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.code < b.code; });
  points.resize(static_cast<std::size_t>(n));
  return points;
}

// Runs body(first, end) over [0, count) on every hardware thread.
template <class Body>
void parallel_for(int count, Body body) {
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      for (int j = t; j < count; j += threads) body(j);
    });
  for (std::thread& th : pool) th.join();
}

// The lower triangle (column-major, n x n) of sigma^2 exp(-r / range) + nugget on the diagonal.
std::vector<double> matern_covariance(const std::vector<Point>& p, double range) {
  const int n = static_cast<int>(p.size());
  std::vector<double> A(static_cast<std::size_t>(n) * n, 0.0);
  parallel_for(n, [&](int j) {
    double* column = A.data() + static_cast<std::size_t>(j) * n;
    for (int i = j; i < n; ++i)
      column[i] = std::exp(-std::hypot(p[i].x - p[j].x, p[i].y - p[j].y) / range) + (i == j ? 1e-4 : 0.0);
  });
  return A;
}

void copy_lower(int n, const std::vector<double>& from, std::vector<double>& to) {
  parallel_for(n, [&](int j) {
    const std::size_t c = static_cast<std::size_t>(j) * n;
    std::copy(from.begin() + static_cast<long>(c + j), from.begin() + static_cast<long>(c + n),
              to.begin() + static_cast<long>(c + j));
  });
}

double log_determinant(int n, const std::vector<double>& L) {
  double sum = 0;
  for (int j = 0; j < n; ++j) sum += 2.0 * std::log(L[j + static_cast<std::size_t>(j) * n]);
  return sum;
}

// The Gaussian-process log-likelihood of z under the covariance whose lower factor is L.
double log_likelihood(int n, const std::vector<double>& L, std::vector<double> z) {
  cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L.data(), n, z.data(), 1);
  const double quadratic = std::inner_product(z.begin(), z.end(), z.begin(), 0.0);
  return -0.5 * (quadratic + log_determinant(n, L) + n * std::log(2 * M_PI));
}

struct Run {
  std::string name;
  double seconds = 0;
  long long tiles[3] = {0, 0, 0};  // fp64, fp32, fp16 below the diagonal
  double bound = 1;                // flops over FP64 flops (reduced_update_bound)
  double logdet_error = 0;
  double likelihood_error = 0;
};

// The factorization's flops over those the map leaves in FP64, for n in tiles of nb (or of the size
// that gives the map's count): the speed-up over FP64 if every reduced update were free (1 for an
// FP64 run, whose map is empty).
double reduced_update_bound(const tessera::TileArithmeticMap& map, int n, int nb) {
  if (map.tiles == 0) return 1;
  if ((n + nb - 1) / nb != map.tiles) nb = (n + map.tiles - 1) / map.tiles;
  const auto rows = [&](int i) { return double(std::min(nb, n - i * nb)); };
  double all = 0, fp64 = 0;
  for (int k = 0; k < map.tiles; ++k) {
    const double mk = rows(k);
    double panel = mk * mk * mk / 3;  // potrf, then each trsm and syrk of the step
    for (int i = k + 1; i < map.tiles; ++i) panel += 2 * rows(i) * mk * mk;
    all += panel;
    fp64 += panel;
    for (int i = k + 1; i < map.tiles; ++i)
      for (int j = k + 1; j < i; ++j) {
        const double gemm = 2 * rows(i) * rows(j) * mk;
        all += gemm;
        if (map.at(i, j) == tessera::TileArithmetic::fp64) fp64 += gemm;
      }
  }
  return all / fp64;
}

#ifdef TESSERA_HAVE_CUDA
// The matrix in GPU memory (an LAPACK array) and in pinned host memory, for the runs that start
// from either; made once per n.
class GpuArrays {
 public:
  GpuArrays(int n, const std::vector<double>& A) : n_(n), bytes_(sizeof(double) * A.size()) {
    if (cudaMalloc(&device_, bytes_) != cudaSuccess || cudaMalloc(&info_, sizeof(int)) != cudaSuccess ||
        cudaMallocHost(&pinned_, bytes_) != cudaSuccess)
      throw std::runtime_error(fmt::format("cannot allocate the n = {} matrix in GPU and pinned memory", n));
    refill_pinned(A);
  }
  ~GpuArrays() {
    cudaFreeHost(pinned_);
    cudaFree(info_);
    cudaFree(device_);
  }
  GpuArrays(const GpuArrays&) = delete;
  GpuArrays& operator=(const GpuArrays&) = delete;

  double* device() const { return device_; }
  double* pinned() const { return pinned_; }
  int* info() const { return info_; }
  std::size_t bytes() const { return bytes_; }
  // A's lower triangle into the pinned array, and from there into the device array.
  void refill_pinned(const std::vector<double>& A) {
    parallel_for(n_, [&](int j) {
      const std::size_t c = static_cast<std::size_t>(j) * n_;
      std::copy(A.begin() + static_cast<long>(c + j), A.begin() + static_cast<long>(c + n_), pinned_ + c + j);
    });
  }
  void refill_device() const { cudaMemcpy(device_, pinned_, bytes_, cudaMemcpyHostToDevice); }

 private:
  int n_;
  std::size_t bytes_;
  double* device_ = nullptr;
  double* pinned_ = nullptr;
  int* info_ = nullptr;
};

struct CusolverTimes {
  double resident = 1e30, pinned = 1e30, pageable = 1e30;
};

// cuSOLVER's dpotrf, best of reps: on the matrix in GPU memory (resident), and end to end with the
// copies from and to the pinned array and from and to the pageable one (`out`, A's size).
CusolverTimes time_cusolver(int n, const std::vector<double>& A, std::vector<double>& out, GpuArrays& gpu,
                            int reps) {
  cusolverDnHandle_t handle;
  cusolverDnCreate(&handle);
  int lwork = 0;
  cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, gpu.device(), n, &lwork);
  double* work = nullptr;
  cudaMalloc(&work, sizeof(double) * std::max(lwork, 1));
  const auto factor = [&] {
    cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, gpu.device(), n, work, lwork, gpu.info());
    int info = 0;
    cudaMemcpy(&info, gpu.info(), sizeof(int), cudaMemcpyDeviceToHost);
    if (info != 0) throw std::runtime_error(fmt::format("cuSOLVER info {}", info));
  };
  CusolverTimes t;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    cudaMemcpy(gpu.device(), A.data(), gpu.bytes(), cudaMemcpyHostToDevice);
    const auto copied = Clock::now();
    factor();
    t.resident = std::min(t.resident, seconds_since(copied));
    cudaMemcpy(out.data(), gpu.device(), gpu.bytes(), cudaMemcpyDeviceToHost);
    t.pageable = std::min(t.pageable, seconds_since(start));
    gpu.refill_pinned(A);
    start = Clock::now();
    cudaMemcpy(gpu.device(), gpu.pinned(), gpu.bytes(), cudaMemcpyHostToDevice);
    factor();
    cudaMemcpy(gpu.pinned(), gpu.device(), gpu.bytes(), cudaMemcpyDeviceToHost);
    t.pinned = std::min(t.pinned, seconds_since(start));
  }
  cudaFree(work);
  cusolverDnDestroy(handle);
  return t;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {20000, 40000};
  std::vector<double> accuracies = {1e-4, 1e-8, 1e-12};
  double range = 0.03;
  int reps = 1, nb = 0;
  std::string json_path, mode_name = "auto";
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    if (args.option() == "--n") sizes = tessera::bench::parse_int_list(args.value());
    else if (args.option() == "--range") range = std::stod(args.value());
    else if (args.option() == "--reps") reps = std::stoi(args.value());
    else if (args.option() == "--nb") nb = std::stoi(args.value());
    else if (args.option() == "--mode") mode_name = args.value();
    else if (args.option() == "--json") json_path = args.value();
    else if (args.option() == "--accuracy") {
      accuracies.clear();
      for (const std::string& a : tessera::bench::split_commas(args.value())) accuracies.push_back(std::stod(a));
    } else {
      fmt::print(stderr, "unknown option {}\n", args.option());
      return 2;
    }
  }
  tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
  tessera::FactorOptions base;
  base.mode = tessera::parse_mode(mode_name);
  base.nb = nb;
  nlohmann::json results = nlohmann::json::array();
  fmt::print("Matérn (smoothness 1/2, range {}) on a jittered grid in Morton order\n", range);
  fmt::print("{:>6} {:>5} {:>18} {:>9} {:>8} {:>7} {:>7} {:>7} {:>11} {:>11} {:>8} {:>7}\n", "n", "nb", "run", "s",
             "TFLOP/s", "fp64%", "fp32%", "fp16%", "logdet err", "loglik err", "/ fp64", "bound");
  for (int n : sizes) {
    const std::vector<double> A = matern_covariance(locations(n), range);
    std::vector<double> F(A.size(), 0.0);
    const double flops = double(n) * n * n / 3;
    const int tile = nb > 0 ? nb : tessera::explain_potrf<double>(runtime, n, base).nb;
    std::vector<Run> runs;
    // Untimed: the runtime's first call (staged or in place), then one that allocates the pool's tiles.
    for (int warm = 0; warm < 2; ++warm) {
      copy_lower(n, A, F);
      tessera::potrf(runtime, n, F.data(), n, base);
    }
    // A run, best of reps: refill() untimed, then factor(options) timed, which returns the info.
    const auto timed_run = [&](const std::string& name, double accuracy, const auto& refill, const auto& factor) {
      Run run{name};
      run.seconds = 1e30;
      tessera::TileArithmeticMap map;
      for (int r = 0; r < reps; ++r) {
        refill();
        tessera::FactorOptions options = base;
        options.accuracy = accuracy;
        options.tile_arithmetic = &map;
        const auto start = Clock::now();
        const int info = factor(options);
        run.seconds = std::min(run.seconds, seconds_since(start));
        if (info != 0) throw std::runtime_error(fmt::format("{}: info {}", name, info));
      }
      for (int a = 0; a < 3; ++a) run.tiles[a] = map.count(static_cast<tessera::TileArithmetic>(a));
      run.bound = reduced_update_bound(map, n, tile);
      return run;
    };
    // Host arrays, end to end: the FP64 factor first, and data z = L w drawn from it.
    const auto host_run = [&](const std::string& name, double accuracy) {
      return timed_run(name, accuracy, [&] { copy_lower(n, A, F); },
                       [&](const tessera::FactorOptions& o) { return tessera::potrf(runtime, n, F.data(), n, o); });
    };
    runs.push_back(host_run("host fp64", 0));
    std::vector<double> z(static_cast<std::size_t>(n));
    std::mt19937 gen(7);
    std::normal_distribution<double> normal;
    for (double& v : z) v = normal(gen);
    cblas_dtrmv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, F.data(), n, z.data(), 1);
    const double logdet64 = log_determinant(n, F), likelihood64 = log_likelihood(n, F, z);
    for (double accuracy : accuracies) {
      Run run = host_run(fmt::format("host {:g}", accuracy), accuracy);
      run.logdet_error = std::abs(log_determinant(n, F) - logdet64) / std::abs(logdet64);
      run.likelihood_error = std::abs(log_likelihood(n, F, z) - likelihood64) / std::abs(likelihood64);
      runs.push_back(run);
    }
#ifdef TESSERA_HAVE_CUDA
    if (runtime.cuda_workers() > 0) {
      // Every tile already in GPU memory (the tile API): the factorization alone.
      const auto resident_run = [&](const std::string& name, double accuracy) {
        Run run{name};
        run.seconds = 1e30;
        tessera::FactorOptions options = base;
        options.accuracy = accuracy;
        tessera::TileArithmeticMap map;
        options.tile_arithmetic = &map;
        for (int r = 0; r < reps; ++r)
          run.seconds = std::min(run.seconds, tessera::bench::time_resident_potrf(runtime, n, tile, A, options));
        for (int a = 0; a < 3; ++a) run.tiles[a] = map.count(static_cast<tessera::TileArithmetic>(a));
        run.bound = reduced_update_bound(map, n, tile);
        return run;
      };
      runs.push_back(resident_run("resident fp64", 0));
      for (double accuracy : accuracies) runs.push_back(resident_run(fmt::format("resident {:g}", accuracy), accuracy));
      GpuArrays gpu(n, A);
      // The matrix in GPU memory as an LAPACK array (tessera::device::potrf), as cuSOLVER takes it.
      const auto device_run = [&](const std::string& name, double accuracy) {
        return timed_run(name, accuracy, [&] { gpu.refill_device(); }, [&](const tessera::FactorOptions& o) {
          return tessera::device::potrf(runtime, n, gpu.device(), n, nullptr, o);
        });
      };
      runs.push_back(device_run("device fp64", 0));
      for (double accuracy : accuracies) runs.push_back(device_run(fmt::format("device {:g}", accuracy), accuracy));
      // A host array the caller pinned: used in place, with no staging copy.
      const auto pinned_run = [&](const std::string& name, double accuracy) {
        return timed_run(name, accuracy, [&] { gpu.refill_pinned(A); },
                         [&](const tessera::FactorOptions& o) { return tessera::potrf(runtime, n, gpu.pinned(), n, o); });
      };
      runs.push_back(pinned_run("pinned fp64", 0));
      for (double accuracy : accuracies) runs.push_back(pinned_run(fmt::format("pinned {:g}", accuracy), accuracy));
      const CusolverTimes cusolver = time_cusolver(n, A, F, gpu, reps);
      runs.push_back({"cusolver resident", cusolver.resident});
      runs.push_back({"cusolver pinned", cusolver.pinned});
      runs.push_back({"cusolver pageable", cusolver.pageable});
    }
#endif
    // Ratios against Tessera's FP64 run of the same state: host, pinned and device arrays against
    // their own, resident tiles and cuSOLVER against resident tiles.
    const auto fp64_of = [&](const Run& r) {
      std::string state = r.name.substr(0, r.name.find(' '));
      if (state == "cusolver") state = "resident";
      for (const Run& f : runs)
        if (f.name == state + " fp64") return f.seconds;
      return runs[0].seconds;
    };
    for (const Run& r : runs) {
      const double total = double(r.tiles[0] + r.tiles[1] + r.tiles[2]);
      const auto share = [&](int a) { return total > 0 ? fmt::format("{:.1f}", 100.0 * r.tiles[a] / total) : std::string("-"); };
      fmt::print("{:>6} {:>5} {:>18} {:>9.4f} {:>8.2f} {:>7} {:>7} {:>7} {:>11.2e} {:>11.2e} {:>7.2f}x {:>6.2f}x\n", n,
                 tile, r.name, r.seconds, flops / r.seconds * 1e-12, share(0), share(1), share(2), r.logdet_error,
                 r.likelihood_error, fp64_of(r) / r.seconds, r.bound);
      results.push_back({{"n", n}, {"nb", tile}, {"run", r.name}, {"seconds", r.seconds}, {"tiles_fp64", r.tiles[0]},
                         {"tiles_fp32", r.tiles[1]}, {"tiles_fp16", r.tiles[2]}, {"reduced_update_bound", r.bound},
                         {"logdet_relative_error", r.logdet_error},
                         {"loglik_relative_error", r.likelihood_error}, {"range", range}});
    }
  }
  if (!json_path.empty()) std::ofstream(json_path) << results.dump(1) << "\n";
  return 0;
}
