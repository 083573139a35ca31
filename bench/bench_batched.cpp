// Batched mode through the runtime, one process and one run: Tessera gpu, hybrid and cpu modes
// (host arrays in, results in the host arrays out) against cuSOLVER potrfBatched/potrsBatched on
// the same matrices (device-resident, and with its host-device copies). Factorization alone and
// factor + solve (nrhs = 1). With --inverse, the inverse from the factors (potri_batched) in the
// three modes against LAPACKE's potri per matrix on as many threads as the runtime has CPU
// workers (cuSOLVER has no batched potri). Prints a table; --json FILE writes the rows.
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench_support.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cuda/check.hpp"
#include "tessera/batched.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Diagonally dominant symmetric matrices (SPD), each from its own seed, both triangles.
template <class T>
std::vector<T> spd_batch(int n, int count, unsigned seed) {
  std::vector<T> A(static_cast<std::size_t>(n) * n * count);
  tessera::testkit::parallel_for(count, [&](int k) {
    std::mt19937_64 gen(seed * 7919ull + static_cast<unsigned long long>(k));
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    T* M = A.data() + static_cast<std::size_t>(k) * n * n;
    for (int j = 0; j < n; ++j) {
      M[j + static_cast<std::size_t>(j) * n] = static_cast<T>(n);
      for (int i = j + 1; i < n; ++i)
        M[i + static_cast<std::size_t>(j) * n] = M[j + static_cast<std::size_t>(i) * n] = static_cast<T>(dist(gen));
    }
  });
  return A;
}

// cuSOLVER's batched potrf and potrs in precision T.
template <class T>
struct CusolverBatched {
  cusolverStatus_t(CUSOLVERAPI* potrf)(cusolverDnHandle_t, cublasFillMode_t, int, T**, int, int*, int);
  cusolverStatus_t(CUSOLVERAPI* potrs)(cusolverDnHandle_t, cublasFillMode_t, int, int, T**, int, T**, int, int*, int);
};

template <class T>
CusolverBatched<T> cusolver_batched() {
  if constexpr (std::is_same_v<T, double>)
    return {cusolverDnDpotrfBatched, cusolverDnDpotrsBatched};
  else
    return {cusolverDnSpotrfBatched, cusolverDnSpotrsBatched};
}

struct Times {
  double factor = 0;  // best of the repetitions
  double solve = 0;   // factor + solve
};

// cuSOLVER on the device (resident) and with the copies of A (and b) in and out.
template <class T>
Times cusolver_times(int n, int count, const std::vector<T>& A, int reps, Times& with_copies) {
  const CusolverBatched<T> cusolver = cusolver_batched<T>();
  cusolverDnHandle_t handle;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  const std::size_t elements = A.size();
  T *dA = nullptr, *dB = nullptr;
  T **dAp = nullptr, **dBp = nullptr;
  int* dinfo = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, sizeof(T) * elements));
  TESSERA_CUDA_CHECK(cudaMalloc(&dB, sizeof(T) * static_cast<std::size_t>(n) * count));
  TESSERA_CUDA_CHECK(cudaMalloc(&dAp, sizeof(T*) * count));
  TESSERA_CUDA_CHECK(cudaMalloc(&dBp, sizeof(T*) * count));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int) * count));
  std::vector<T*> ptrs(count), bptrs(count);
  for (int k = 0; k < count; ++k) {
    ptrs[k] = dA + static_cast<std::size_t>(k) * n * n;
    bptrs[k] = dB + static_cast<std::size_t>(k) * n;
  }
  TESSERA_CUDA_CHECK(cudaMemcpy(dAp, ptrs.data(), sizeof(T*) * count, cudaMemcpyHostToDevice));
  TESSERA_CUDA_CHECK(cudaMemcpy(dBp, bptrs.data(), sizeof(T*) * count, cudaMemcpyHostToDevice));
  std::vector<T> out(A.size()), b(static_cast<std::size_t>(n) * count, T(1));
  Times resident{1e30, 1e30};
  with_copies = {1e30, 1e30};
  for (int rep = 0; rep <= reps; ++rep) {
    for (int solve = 0; solve < 2; ++solve) {
      const auto start = Clock::now();
      TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), sizeof(T) * elements, cudaMemcpyHostToDevice));
      if (solve) TESSERA_CUDA_CHECK(cudaMemcpy(dB, b.data(), sizeof(T) * b.size(), cudaMemcpyHostToDevice));
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      const auto compute = Clock::now();
      TESSERA_CUSOLVER_CHECK(cusolver.potrf(handle, CUBLAS_FILL_MODE_LOWER, n, dAp, n, dinfo, count));
      if (solve) TESSERA_CUSOLVER_CHECK(cusolver.potrs(handle, CUBLAS_FILL_MODE_LOWER, n, 1, dAp, n, dBp, n, dinfo, count));
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      const double t = seconds_since(compute);
      TESSERA_CUDA_CHECK(cudaMemcpy(out.data(), dA, sizeof(T) * elements, cudaMemcpyDeviceToHost));
      if (solve) TESSERA_CUDA_CHECK(cudaMemcpy(b.data(), dB, sizeof(T) * b.size(), cudaMemcpyDeviceToHost));
      const double total = seconds_since(start);
      if (rep == 0) continue;  // warm-up
      (solve ? resident.solve : resident.factor) = std::min(solve ? resident.solve : resident.factor, t);
      (solve ? with_copies.solve : with_copies.factor) = std::min(solve ? with_copies.solve : with_copies.factor, total);
    }
  }
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dAp);
  cudaFree(dBp);
  cudaFree(dinfo);
  cusolverDnDestroy(handle);
  return resident;
}

template <class T>
Times tessera_times(tessera::Runtime& runtime, int n, int count, const std::vector<T>& A, tessera::Mode mode, int reps,
                    int& failed) {
  tessera::BatchOptions options;
  options.mode = mode;
  std::vector<int> info(count);
  std::vector<T> work(A.size()), b(static_cast<std::size_t>(n) * count);
  Times best{1e30, 1e30};
  failed = 0;
  for (int rep = 0; rep <= reps + 1; ++rep) {  // two warm-ups: calibration and first-use costs
    for (int solve = 0; solve < 2; ++solve) {
      std::copy(A.begin(), A.end(), work.begin());
      std::fill(b.begin(), b.end(), T(1));
      const auto start = Clock::now();
      if (solve)
        tessera::posv_batched(runtime, n, 1, work.data(), n, static_cast<long long>(n) * n, b.data(), n, n, count, info.data(),
                              options);
      else
        tessera::potrf_batched(runtime, n, work.data(), n, static_cast<long long>(n) * n, count, info.data(), options);
      const double t = seconds_since(start);
      failed = std::max<int>(failed, static_cast<int>(std::count_if(info.begin(), info.end(), [](int i) { return i != 0; })));
      if (rep < 2) continue;
      (solve ? best.solve : best.factor) = std::min(solve ? best.solve : best.factor, t);
    }
  }
  return best;
}

// The factors of A's matrices (lower), for the inverse's runs.
template <class T>
std::vector<T> lower_factors(int n, int count, const std::vector<T>& A) {
  std::vector<T> F = A;
  tessera::testkit::parallel_for(count, [&](int k) {
    if (tessera::kernels::cpu::potrf('L', n, F.data() + static_cast<std::size_t>(k) * n * n, n) != 0)
      throw std::runtime_error("a benchmark matrix is not positive definite");
  });
  return F;
}

// LAPACKE's potri on each matrix, `threads` threads taking matrices in turn, one BLAS thread each.
template <class T>
double lapacke_inverse_time(int n, int count, const std::vector<T>& F, int threads, int reps) {
  std::vector<T> work(F.size());
  double best = 1e30;
  for (int rep = 0; rep <= reps; ++rep) {
    std::copy(F.begin(), F.end(), work.begin());
    const auto start = Clock::now();
    std::atomic<int> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (int k = next++; k < count; k = next++)
          tessera::kernels::cpu::potri('L', n, work.data() + static_cast<std::size_t>(k) * n * n, n);
      });
    for (auto& thread : pool) thread.join();
    if (rep > 0) best = std::min(best, seconds_since(start));
  }
  return best;
}

int inverse_count(int n, int batch) { return n >= 256 ? std::min(batch, 1000) : batch; }

template <class T>
std::vector<T> inverse_factors(int n, int batch) {
  return lower_factors<T>(n, inverse_count(n, batch), spd_batch<T>(n, inverse_count(n, batch), 5u + static_cast<unsigned>(n)));
}

// The peer's times per order, measured before the runtime starts: its idle CPU workers would
// share the cores with LAPACKE's threads.
template <class T>
std::vector<double> lapacke_inverse_times(const std::vector<int>& sizes, int batch, int threads, int reps) {
  openblas_set_num_threads(1);
  std::vector<double> times;
  for (int n : sizes) times.push_back(lapacke_inverse_time<T>(n, inverse_count(n, batch), inverse_factors<T>(n, batch), threads, reps));
  return times;
}

template <class T>
double tessera_inverse_time(tessera::Runtime& runtime, int n, int count, const std::vector<T>& F, tessera::Mode mode,
                            int reps, int& failed) {
  tessera::BatchOptions options;
  options.mode = mode;
  std::vector<int> info(count);
  std::vector<T> work(F.size());
  double best = 1e30;
  for (int rep = 0; rep <= reps + 1; ++rep) {  // two warm-ups: calibration and first-use costs
    std::copy(F.begin(), F.end(), work.begin());
    const auto start = Clock::now();
    tessera::potri_batched(runtime, n, work.data(), n, static_cast<long long>(n) * n, count, info.data(), options);
    const double t = seconds_since(start);
    failed = std::max<int>(failed, static_cast<int>(std::count_if(info.begin(), info.end(), [](int i) { return i != 0; })));
    if (rep >= 2) best = std::min(best, t);
  }
  return best;
}

template <class T>
void run_inverse(tessera::Runtime& runtime, const std::vector<int>& sizes, const std::vector<double>& lapacke,
                 int threads, int batch, int reps, nlohmann::json& rows) {
  const char precision = sizeof(T) == 8 ? 'd' : 's';
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const int n = sizes[i], count = inverse_count(n, batch);
    const std::vector<T> F = inverse_factors<T>(n, batch);
    int failed = 0;
    const double gpu = tessera_inverse_time<T>(runtime, n, count, F, tessera::Mode::gpu, reps, failed);
    const double hybrid = tessera_inverse_time<T>(runtime, n, count, F, tessera::Mode::hybrid, reps, failed);
    const double cpu = tessera_inverse_time<T>(runtime, n, count, F, tessera::Mode::cpu, reps, failed);
    const double flop = count * 2.0 * n * n * n / 3.0;
    auto gf = [&](double s) { return flop / s * 1e-9; };
    fmt::print("{:>2} {:>4} {:>6} | {:>9.1f} | {:>9.1f} {:>9.1f} {:>9.1f} | {:>7.2f} {:>7.2f} {}\n", precision, n, count,
               gf(lapacke[i]), gf(gpu), gf(hybrid), gf(cpu), lapacke[i] / std::min(gpu, hybrid), lapacke[i] / cpu,
               failed == 0 ? "ok" : "FAILED");
    rows.push_back({{"operation", "potri"}, {"precision", std::string(1, precision)}, {"n", n}, {"count", count},
                    {"lapacke_threads", threads}, {"lapacke_s", lapacke[i]}, {"tessera_gpu_s", gpu},
                    {"tessera_hybrid_s", hybrid}, {"tessera_cpu_s", cpu}, {"failed", failed}});
  }
}

using tessera::bench::parse_int_list;

template <class T>
void run(tessera::Runtime& runtime, const std::vector<int>& sizes, int batch, int reps, nlohmann::json& rows) {
  const char precision = sizeof(T) == 8 ? 'd' : 's';
  for (int n : sizes) {
    const int count = n >= 256 ? std::min(batch, 1000) : batch;
    const std::vector<T> A = spd_batch<T>(n, count, 5u + static_cast<unsigned>(n));
    Times cus_copies;
    const Times cus = cusolver_times<T>(n, count, A, reps, cus_copies);
    int failed_gpu = 0, failed_hybrid = 0, failed_cpu = 0;
    const Times gpu = tessera_times<T>(runtime, n, count, A, tessera::Mode::gpu, reps, failed_gpu);
    const Times hybrid = tessera_times<T>(runtime, n, count, A, tessera::Mode::hybrid, reps, failed_hybrid);
    const Times cpu = tessera_times<T>(runtime, n, count, A, tessera::Mode::cpu, reps, failed_cpu);
    const double flop = count * double(n) * n * n / 3.0, solve_flop = flop + count * 2.0 * n * n;
    auto gf = [](double f, double s) { return f / s * 1e-9; };
    fmt::print("{:>2} {:>4} {:>6} | {:>9.1f} {:>9.1f} | {:>9.1f} {:>9.1f} {:>9.1f} | {:>9.1f} {:>9.1f} {:>9.1f} | {:>7.2f} {}\n",
               precision, n, count, gf(flop, cus.factor), gf(flop, cus_copies.factor), gf(flop, gpu.factor),
               gf(flop, hybrid.factor), gf(flop, cpu.factor), gf(solve_flop, cus_copies.solve), gf(solve_flop, gpu.solve),
               gf(solve_flop, hybrid.solve), cus_copies.factor / gpu.factor,
               failed_gpu + failed_hybrid + failed_cpu == 0 ? "ok" : "FAILED");
    rows.push_back({{"precision", std::string(1, precision)}, {"n", n}, {"count", count},
                    {"cusolver_resident_s", cus.factor}, {"cusolver_with_copies_s", cus_copies.factor},
                    {"cusolver_posv_resident_s", cus.solve}, {"cusolver_posv_with_copies_s", cus_copies.solve},
                    {"tessera_gpu_s", gpu.factor}, {"tessera_hybrid_s", hybrid.factor}, {"tessera_cpu_s", cpu.factor},
                    {"tessera_gpu_posv_s", gpu.solve}, {"tessera_hybrid_posv_s", hybrid.solve}, {"tessera_cpu_posv_s", cpu.solve},
                    {"failed", failed_gpu + failed_hybrid + failed_cpu}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {5, 8, 16, 24, 32, 48, 64, 100, 128, 256, 512};
  int batch = 10000, reps = 3;
  std::string json_path, precisions = "d,s";
  bool inverse = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) sizes = parse_int_list(argv[++i]);
    else if (arg == "--batch" && i + 1 < argc) batch = std::stoi(argv[++i]);
    else if (arg == "--repetitions" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (arg == "--precision" && i + 1 < argc) precisions = argv[++i];
    else if (arg == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (arg == "--inverse") inverse = true;
    else {
      fmt::print(stderr, "usage: {} [--sizes N,...] [--batch B] [--repetitions R] [--precision d,s] [--inverse] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  try {
    const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const bool doubles = precisions.find('d') != std::string::npos, floats = precisions.find('s') != std::string::npos;
    std::vector<double> lapacke_d, lapacke_s;
    if (inverse && doubles) lapacke_d = lapacke_inverse_times<double>(sizes, batch, threads, reps);
    if (inverse && floats) lapacke_s = lapacke_inverse_times<float>(sizes, batch, threads, reps);
    tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
    if (runtime.cuda_workers() == 0) throw std::runtime_error("no CUDA worker: this benchmark needs a GPU");
    nlohmann::json rows = nlohmann::json::array();
    if (inverse) {
      fmt::print("Batched inverse from the factors (potri), GFLOP/s (2 n^3/3 per matrix), best of {} runs; {} CPU + {} "
                 "CUDA workers; LAPACKE on {} threads, one BLAS thread each, before the runtime started\n",
                 reps, runtime.cpu_workers(), runtime.cuda_workers(), threads);
      fmt::print("{:>2} {:>4} {:>6} | {:>9} | {:>9} {:>9} {:>9} | {:>7} {:>7}\n", "p", "n", "batch", "LAPACKE", "T-gpu",
                 "T-hybrid", "T-cpu", "best/L", "cpu/L");
      if (doubles) run_inverse<double>(runtime, sizes, lapacke_d, threads, batch, reps, rows);
      if (floats) run_inverse<float>(runtime, sizes, lapacke_s, threads, batch, reps, rows);
      fmt::print("(T- = Tessera through the runtime from host arrays to host arrays; best/L = LAPACKE's time over the "
                 "faster of T-gpu and T-hybrid)\n");
      if (!json_path.empty()) std::ofstream(json_path) << rows.dump(2) << "\n";
      return 0;
    }
    fmt::print("Batched Cholesky, GFLOP/s (n^3/3 per matrix; posv adds 2 n^2), best of {} runs; {} CPU + {} CUDA workers\n",
               reps, runtime.cpu_workers(), runtime.cuda_workers());
    fmt::print("{:>2} {:>4} {:>6} | {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>7}\n", "p", "n", "batch",
               "cuS-dev", "cuS+copy", "T-gpu", "T-hybrid", "T-cpu", "posv-cuS+", "posv-Tgpu", "posv-Thyb", "gpu/cuS+");
    if (precisions.find('d') != std::string::npos) run<double>(runtime, sizes, batch, reps, rows);
    if (precisions.find('s') != std::string::npos) run<float>(runtime, sizes, batch, reps, rows);
    fmt::print("(T- = Tessera through the runtime from host arrays to host arrays; cuS-dev = cuSOLVER with the batch on the GPU)\n");
    if (!json_path.empty()) std::ofstream(json_path) << rows.dump(2) << "\n";
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_batched: {}\n", e.what());
    return 1;
  }
  return 0;
}
