// GPU Cholesky benchmark, double precision, one process and one run: Tessera gpu and hybrid modes
// end to end (host matrix in, factor in the host matrix out), Tessera with the tiles already on
// the GPU, cuSOLVER dpotrf on the same matrix (device-resident, and with its host-device copies),
// and the cuBLAS DGEMM rate as the roofline. Prints a table; --json FILE writes the rows.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "kernels/cuda/check.hpp"
#include "tessera/tessera.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Symmetric, strictly diagonally dominant: SPD. Only the lower triangle is filled (the only one
// either library reads). Columns in parallel, each from its own seed.
std::vector<double> spd(int n, unsigned seed) {
  std::vector<double> A(static_cast<std::size_t>(n) * n);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int j = static_cast<int>(t); j < n; j += static_cast<int>(threads)) {
        std::mt19937_64 gen(seed * 7919ull + static_cast<unsigned long long>(j));
        std::uniform_real_distribution<double> dist(-1.0, 1.0);
        for (int i = j + 1; i < n; ++i) A[i + static_cast<std::size_t>(j) * n] = dist(gen);
        A[j + static_cast<std::size_t>(j) * n] = n;
      }
    });
  for (auto& th : pool) th.join();
  return A;
}

double tflops(int n, double seconds) { return double(n) * n * n / 3.0 / seconds * 1e-12; }

struct CusolverTimes {
  double resident = 0;     // potrf alone, matrix on the device
  double with_copies = 0;  // H2D + potrf + D2H
};

CusolverTimes time_cusolver(int n, const std::vector<double>& A, std::vector<double>& out) {
  cusolverDnHandle_t handle;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  double* dA = nullptr;
  int* dinfo = nullptr;
  const std::size_t bytes = sizeof(double) * A.size();
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf_bufferSize(handle, CUBLAS_FILL_MODE_LOWER, n, dA, n, &lwork));
  double* work = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&work, sizeof(double) * static_cast<std::size_t>(lwork)));
  CusolverTimes best{1e30, 1e30};
  for (int rep = 0; rep < 3; ++rep) {  // the first is the warm-up; keep the best of the others
    const auto start = Clock::now();
    TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const auto factor_start = Clock::now();
    TESSERA_CUSOLVER_CHECK(cusolverDnDpotrf(handle, CUBLAS_FILL_MODE_LOWER, n, dA, n, work, lwork, dinfo));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const double resident = seconds_since(factor_start);
    TESSERA_CUDA_CHECK(cudaMemcpy(out.data(), dA, bytes, cudaMemcpyDeviceToHost));
    const double total = seconds_since(start);
    int info = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
    if (info != 0) throw std::runtime_error("cuSOLVER dpotrf info " + std::to_string(info));
    if (rep > 0) best = {std::min(best.resident, resident), std::min(best.with_copies, total)};
  }
  cudaFree(work);
  cudaFree(dinfo);
  cudaFree(dA);
  cusolverDnDestroy(handle);
  return best;
}

double dgemm_tflops() {
  const int n = 8192;
  cublasHandle_t handle;
  TESSERA_CUBLAS_CHECK(cublasCreate(&handle));
  double *a, *b, *c;
  const std::size_t bytes = sizeof(double) * n * n;
  TESSERA_CUDA_CHECK(cudaMalloc(&a, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&b, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&c, bytes));
  std::vector<double> h(static_cast<std::size_t>(n) * n);
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (double& x : h) x = dist(gen);
  TESSERA_CUDA_CHECK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(c, h.data(), bytes, cudaMemcpyHostToDevice));
  const double one = 1.0;
  double best = 1e30;
  for (int rep = 0; rep < 4; ++rep) {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const auto start = Clock::now();
    TESSERA_CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, n, b, n, &one, c, n));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    if (rep > 0) best = std::min(best, seconds_since(start));
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cublasDestroy(handle);
  return 2.0 * n * n * n / best * 1e-12;
}

// The GPU's memory node, where resident tiles are fetched to.
unsigned gpu_memory_node() {
  int workers[STARPU_NMAXWORKERS];
  const int count = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, workers, STARPU_NMAXWORKERS);
  if (count <= 0) throw std::runtime_error("no CUDA worker");
  return starpu_worker_get_memory_node(static_cast<unsigned>(workers[0]));
}

// Tessera's factorization with every tile already on the GPU (and left there).
double time_resident(tessera::Runtime& runtime, int n, int nb, const std::vector<double>& A,
                     const tessera::FactorOptions& options) {
  tessera::TileMatrix<double> tiles(runtime, n, nb);
  tessera::load_async(tiles, tessera::Uplo::lower, A.data(), n).wait();
  const unsigned node = gpu_memory_node();
  for (int j = 0; j < tiles.tile_cols(); ++j)
    for (int i = j; i < tiles.tile_rows(); ++i) {
      starpu_data_acquire_on_node(tiles.handle(i, j), static_cast<int>(node), STARPU_R);
      starpu_data_release_on_node(tiles.handle(i, j), static_cast<int>(node));
    }
  const auto start = Clock::now();
  const int info = tessera::potrf_async(tiles, options).wait();
  const double seconds = seconds_since(start);
  if (info != 0) throw std::runtime_error("resident factorization info " + std::to_string(info));
  return seconds;
}

// Median over `repetitions` runs after one that warms up (and calibrates the perf models of the
// implementations `options.gpu_kernels` allows).
double time_resident_median(tessera::Runtime& runtime, int n, int nb, const std::vector<double>& A,
                            const tessera::FactorOptions& options, int repetitions) {
  std::vector<double> times;
  for (int rep = 0; rep < repetitions + 1; ++rep) {
    const double t = time_resident(runtime, n, nb, A, options);
    if (rep > 0) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct ModeResult {
  double seconds = 0;
  double backward_error = 0;
};

ModeResult time_mode(tessera::Runtime& runtime, int n, int nb, const std::vector<double>& A, tessera::Mode mode,
                     int repetitions) {
  tessera::FactorOptions options;
  options.mode = mode;
  options.nb = nb;
  std::vector<double> work;
  std::vector<double> times;
  for (int rep = 0; rep < repetitions + 1; ++rep) {  // the first run warms up and calibrates
    work = A;
    const auto start = Clock::now();
    const int info = tessera::potrf(runtime, n, work.data(), n, options);
    const double t = seconds_since(start);
    if (info != 0) throw std::runtime_error("Tessera potrf info " + std::to_string(info));
    if (rep > 0) times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  ModeResult result;
  result.seconds = times[times.size() / 2];
  tessera::TileMatrix<double> a(runtime, n, nb), l(runtime, n, nb);
  tessera::load_async(a, tessera::Uplo::lower, A.data(), n).wait();
  tessera::load_async(l, tessera::Uplo::lower, work.data(), n).wait();
  result.backward_error = tessera::backward_error(a, l, tessera::Mode::gpu);
  return result;
}

using tessera::bench::parse_int_list;
using tessera::bench::split_commas;

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {4096, 8192, 16384, 30000, 40000};
  std::vector<int> tile_sizes;  // 0: Tessera's default per n
  int repetitions = 2;
  std::string json_path;
  std::string modes = "gpu,hybrid,resident";
  std::vector<tessera::GpuKernels> kernel_choices;  // compared with tiles resident, gpu mode
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) sizes = parse_int_list(argv[++i]);
    else if (arg == "--nb" && i + 1 < argc) tile_sizes = parse_int_list(argv[++i]);
    else if (arg == "--repetitions" && i + 1 < argc) repetitions = std::stoi(argv[++i]);
    else if (arg == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (arg == "--modes" && i + 1 < argc) modes = argv[++i];
    else if (arg == "--gpu-kernels" && i + 1 < argc) {
      try {
        for (const std::string& name : split_commas(argv[++i])) kernel_choices.push_back(tessera::parse_gpu_kernels(name));
      } catch (const std::exception& e) {
        fmt::print(stderr, "bench_gpu_potrf: {}\n", e.what());
        return 2;
      }
    } else {
      fmt::print(stderr,
                 "usage: {} [--sizes N,...] [--nb NB,...] [--repetitions R] [--modes gpu,hybrid,resident] "
                 "[--gpu-kernels vendor,custom,any] [--json FILE]\n",
                 argv[0]);
      return 2;
    }
  }
  try {
    const double gemm = dgemm_tflops();
    tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
    if (runtime.cuda_workers() == 0) throw std::runtime_error("no CUDA worker: this benchmark needs a GPU");
    fmt::print("cuBLAS DGEMM (8192, N/T): {:.1f} TFLOP/s; Tessera runtime: {} CPU + {} CUDA workers, scheduler {}\n",
               gemm, runtime.cpu_workers(), runtime.cuda_workers(), runtime.scheduler());
    fmt::print("{:>6} {:>5} | {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>8} {:>8} | {:>8} {:>8}\n", "n", "nb", "cuSOLVER",
               "+copies", "T-gpu", "T-hybrid", "T-resid", "gpu/cus+", "hyb/gpu", "err-gpu", "err-hyb");
    json rows = json::array();
    for (int n : sizes) {
      const std::vector<double> A = spd(n, 11u + static_cast<unsigned>(n));
      std::vector<double> out(A.size());
      const CusolverTimes cus = time_cusolver(n, A, out);
      const std::vector<int> nbs = tile_sizes.empty() ? std::vector<int>{0} : tile_sizes;
      for (int nb_choice : nbs) {
        const int nb = nb_choice > 0 ? nb_choice : tessera::default_tile_size(n, true, tessera::Mode::gpu);
        auto wanted = [&](const char* mode) { return modes.find(mode) != std::string::npos; };
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const ModeResult gpu = wanted("gpu") ? time_mode(runtime, n, nb, A, tessera::Mode::gpu, repetitions) : ModeResult{nan, nan};
        const ModeResult hybrid =
            wanted("hybrid") ? time_mode(runtime, n, nb, A, tessera::Mode::hybrid, repetitions) : ModeResult{nan, nan};
        tessera::FactorOptions resident_options;
        resident_options.mode = tessera::Mode::gpu;
        const double resident = wanted("resident") ? std::min(time_resident(runtime, n, nb, A, resident_options),
                                                              time_resident(runtime, n, nb, A, resident_options))
                                                   : nan;
        fmt::print("{:>6} {:>5} | {:>9.2f} {:>9.2f} | {:>9.2f} {:>9.2f} {:>9.2f} | {:>8.2f} {:>8.2f} | {:>8.2g} {:>8.2g}\n", n,
                   nb, tflops(n, cus.resident), tflops(n, cus.with_copies), tflops(n, gpu.seconds),
                   tflops(n, hybrid.seconds), tflops(n, resident), cus.with_copies / gpu.seconds,
                   gpu.seconds / hybrid.seconds, gpu.backward_error, hybrid.backward_error);
        rows.push_back({{"n", n}, {"nb", nb}, {"cusolver_resident_s", cus.resident}, {"cusolver_with_copies_s", cus.with_copies},
                        {"tessera_gpu_s", gpu.seconds}, {"tessera_hybrid_s", hybrid.seconds}, {"tessera_resident_s", resident},
                        {"tessera_gpu_tflops", tflops(n, gpu.seconds)}, {"tessera_hybrid_tflops", tflops(n, hybrid.seconds)},
                        {"tessera_resident_tflops", tflops(n, resident)}, {"cusolver_resident_tflops", tflops(n, cus.resident)},
                        {"cusolver_with_copies_tflops", tflops(n, cus.with_copies)}, {"dgemm_tflops", gemm},
                        {"backward_error_gpu", gpu.backward_error}, {"backward_error_hybrid", hybrid.backward_error}});
        // The same resident factorization with each choice of GPU kernels, against the first.
        double first = nan;
        for (tessera::GpuKernels kernels : kernel_choices) {
          tessera::FactorOptions options;
          options.mode = tessera::Mode::gpu;
          options.gpu_kernels = kernels;
          const double t = time_resident_median(runtime, n, nb, A, options, repetitions);
          if (std::isnan(first)) first = t;
          fmt::print("{:>6} {:>5} | tiles on GPU, gpu kernels {:<6}: {:>7.2f} TFLOP/s, {:.3f}x {}\n", n, nb,
                     tessera::to_string(kernels), tflops(n, t), first / t, tessera::to_string(kernel_choices.front()));
          rows.push_back({{"n", n}, {"nb", nb}, {"gpu_kernels", tessera::to_string(kernels)}, {"tessera_resident_s", t},
                          {"tessera_resident_tflops", tflops(n, t)}, {"speedup_over_first_choice", first / t}});
        }
      }
    }
    fmt::print("(TFLOP/s with n^3/3 flops; T- = Tessera end to end from host memory; T-resid = tiles already on the GPU)\n");
    if (!json_path.empty()) std::ofstream(json_path) << rows.dump(2) << "\n";
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_gpu_potrf: {}\n", e.what());
    return 1;
  }
  return 0;
}
