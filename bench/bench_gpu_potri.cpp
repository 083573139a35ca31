// The inverse from a Cholesky factor on a GPU, one process and one run (a warm process: one
// warm-up call per row before the timed ones), in double and float:
//   cuSOLVER's potri with the factor on the GPU (resident), and with copies from and to pinned
//   and pageable host memory (the caller's plain array);
//   Tessera's potri end to end from the caller's array (pageable), in gpu and hybrid modes, and on
//   the factor in GPU memory (tessera::device::potri, the factor resident as cuSOLVER's).
// Each figure is the median of --repetitions calls; TFLOP/s count n^3 flops (triangular inverse
// and its product, n^3 / 3 each, as LAPACK's operation counts have it, plus the symmetric
// product's second third). Each result's inverse is checked against the matrix
// (||I - A X||_1 / (n ||A||_1 ||X||_1 eps), LAPACK's test ratio) up to --check-max-n.
// And the log-determinant's cost (FactorOptions::log_determinant) against the factorization
// alone, on a matrix in GPU memory (tessera::device) and end to end from a host array, double.
//   bench_gpu_potri [--sizes 8192,16384] [--precisions d,s] [--repetitions 3] [--modes gpu,hybrid]
//                   [--logdet-sizes 4096,8192,16384] [--logdet-repetitions 9]
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "kernels/cuda/check.hpp"
#include "tessera/tessera.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
double tflops(int n, double seconds) { return double(n) * n * n / seconds * 1e-12; }

template <class Run>
double median_of(int repetitions, Run&& run) {
  run();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) times.push_back(run());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

cusolverStatus_t potri_workspace(cusolverDnHandle_t h, int n, double* a, int* lwork) {
  return cusolverDnDpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
cusolverStatus_t potri_workspace(cusolverDnHandle_t h, int n, float* a, int* lwork) {
  return cusolverDnSpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
cusolverStatus_t potri_call(cusolverDnHandle_t h, int n, double* a, double* work, int lwork, int* info) {
  return cusolverDnDpotri(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info);
}
cusolverStatus_t potri_call(cusolverDnHandle_t h, int n, float* a, float* work, int lwork, int* info) {
  return cusolverDnSpotri(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info);
}

// LAPACK's ratio of an inverse X (lower triangle) of A (lower triangle), in double on the host.
template <class T>
double inverse_ratio(int n, const std::vector<T>& A, const std::vector<T>& X) {
  std::vector<double> a(static_cast<std::size_t>(n) * n), x(a.size()), r(a.size(), 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      a[i + std::size_t(j) * n] = a[j + std::size_t(i) * n] = A[i + std::size_t(j) * n];
      x[i + std::size_t(j) * n] = x[j + std::size_t(i) * n] = X[i + std::size_t(j) * n];
    }
  for (int i = 0; i < n; ++i) r[i + std::size_t(i) * n] = 1.0;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, -1.0, a.data(), n, x.data(), n, 1.0, r.data(), n);
  auto norm1 = [n](const std::vector<double>& m) {
    double best = 0;
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int i = 0; i < n; ++i) s += std::abs(m[i + std::size_t(j) * n]);
      best = std::max(best, s);
    }
    return best;
  };
  return norm1(r) / (n * norm1(a) * norm1(x) * std::numeric_limits<T>::epsilon());
}

struct Settings {
  std::vector<int> sizes{8192, 16384};
  std::vector<std::string> precisions{"d"};
  std::vector<std::string> modes{"gpu", "hybrid"};
  int repetitions = 3;
  int check_max_n = 4096;
  std::vector<int> logdet_sizes{4096, 8192, 16384};
  int logdet_repetitions = 9;
};

// potrf with and without the log-determinant, alternating, each the median of its calls; the
// matrix restored before each call outside the timed region.
void run_logdet_overhead(tessera::Runtime& runtime, const Settings& s, int n) {
  const std::size_t count = static_cast<std::size_t>(n) * n;
  const std::vector<double> A =
      tessera::testkit::dominant_spd<double>(n, [](int j) { return 29ull * 7919ull + unsigned(j); });
  double *d_a = nullptr, *d_source = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&d_a, count * sizeof(double)));
  TESSERA_CUDA_CHECK(cudaMalloc(&d_source, count * sizeof(double)));
  TESSERA_CUDA_CHECK(cudaMemcpy(d_source, A.data(), count * sizeof(double), cudaMemcpyHostToDevice));
  std::vector<double> host(count);
  double logdet = 0;
  const auto device_call = [&](bool with_logdet) {
    TESSERA_CUDA_CHECK(cudaMemcpy(d_a, d_source, count * sizeof(double), cudaMemcpyDeviceToDevice));
    tessera::FactorOptions options;
    if (with_logdet) options.log_determinant = &logdet;
    const auto start = Clock::now();
    tessera::potrf(runtime, tessera::MatrixView<double>::on_device(n, n, d_a, n, nullptr), options);
    return seconds_since(start);
  };
  const auto host_call = [&](bool with_logdet) {
    host = A;
    tessera::FactorOptions options;
    options.mode = tessera::Mode::gpu;
    if (with_logdet) options.log_determinant = &logdet;
    const auto start = Clock::now();
    tessera::potrf(runtime, n, host.data(), n, options);
    return seconds_since(start);
  };
  for (const auto& [name, call] : {std::pair<const char*, std::function<double(bool)>>{"device array", device_call},
                                   {"host array, gpu mode", host_call}}) {
    std::vector<double> without, with;
    call(false), call(true);  // warm-up
    for (int r = 0; r < s.logdet_repetitions; ++r) {
      without.push_back(call(false));
      with.push_back(call(true));
    }
    std::sort(without.begin(), without.end());
    std::sort(with.begin(), with.end());
    const double a = without[without.size() / 2], b = with[with.size() / 2];
    fmt::print("{:>6} d  potrf {:<21}: {:8.4f} s, with the log-determinant {:8.4f} s ({:+.2f}%; log det {:.6g})\n", n,
               name, a, b, 100.0 * (b - a) / a, logdet);
  }
  std::fflush(stdout);
  cudaFree(d_source);
  cudaFree(d_a);
}

template <class T>
void run_size(tessera::Runtime& runtime, const Settings& s, int n, cusolverDnHandle_t solver) {
  const std::size_t count = static_cast<std::size_t>(n) * n;
  const std::vector<T> A = tessera::testkit::dominant_spd<T>(n, [](int j) { return 17ull * 7919ull + unsigned(j); });
  std::vector<T> factor = A;
  if (tessera::potrf(runtime, n, factor.data(), n) != 0) throw std::runtime_error("the test matrix did not factor");
  T* d_a = nullptr;
  int* d_info = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&d_a, count * sizeof(T)));
  TESSERA_CUDA_CHECK(cudaMalloc(&d_info, sizeof(int)));
  int lwork = 0;
  TESSERA_CUSOLVER_CHECK(potri_workspace(solver, n, d_a, &lwork));
  T* d_work = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&d_work, std::max<std::size_t>(1, std::size_t(lwork)) * sizeof(T)));
  T* pinned = nullptr;
  TESSERA_CUDA_CHECK(cudaMallocHost(&pinned, count * sizeof(T)));
  std::copy(factor.begin(), factor.end(), pinned);
  std::vector<T> x(count);
  const auto cusolver_potri = [&] {
    TESSERA_CUSOLVER_CHECK(potri_call(solver, n, d_a, d_work, lwork, d_info));
  };
  const double resident = median_of(s.repetitions, [&] {
    TESSERA_CUDA_CHECK(cudaMemcpy(d_a, factor.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    const auto start = Clock::now();
    cusolver_potri();
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    return seconds_since(start);
  });
  const double with_pinned = median_of(s.repetitions, [&] {
    std::copy(factor.begin(), factor.end(), pinned);
    const auto start = Clock::now();
    TESSERA_CUDA_CHECK(cudaMemcpy(d_a, pinned, count * sizeof(T), cudaMemcpyHostToDevice));
    cusolver_potri();
    TESSERA_CUDA_CHECK(cudaMemcpy(pinned, d_a, count * sizeof(T), cudaMemcpyDeviceToHost));
    return seconds_since(start);
  });
  const double with_pageable = median_of(s.repetitions, [&] {
    x = factor;
    const auto start = Clock::now();
    TESSERA_CUDA_CHECK(cudaMemcpy(d_a, x.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    cusolver_potri();
    TESSERA_CUDA_CHECK(cudaMemcpy(x.data(), d_a, count * sizeof(T), cudaMemcpyDeviceToHost));
    return seconds_since(start);
  });
  int info = -1;
  TESSERA_CUDA_CHECK(cudaMemcpy(&info, d_info, sizeof(int), cudaMemcpyDeviceToHost));
  const double cusolver_ratio = n <= s.check_max_n ? inverse_ratio(n, A, x) : nan_value;
  fmt::print("{:>6} {}  cuSOLVER potri: resident {:7.3f} s {:6.2f} TFLOP/s, pinned {:7.3f} s, pageable {:7.3f} s "
             "(info {}, ratio {:.2g})\n",
             n, tessera::ScalarTraits<T>::letter, resident, tflops(n, resident), with_pinned, with_pageable, info,
             cusolver_ratio);
  for (const std::string& mode_name : s.modes) {
    tessera::FactorOptions options;
    options.mode = tessera::parse_mode(mode_name);
    int tessera_info = -1;
    const double seconds = median_of(s.repetitions, [&] {
      x = factor;
      const auto start = Clock::now();
      tessera_info = tessera::potri(runtime, n, x.data(), n, options);
      return seconds_since(start);
    });
    const double ratio = n <= s.check_max_n ? inverse_ratio(n, A, x) : nan_value;
    fmt::print("{:>6} {}  Tessera potri {:<6}: {:7.3f} s {:6.2f} TFLOP/s (info {}, ratio {:.2g}); x{:.2f} cuSOLVER "
               "pageable, x{:.2f} pinned, x{:.2f} resident\n",
               n, tessera::ScalarTraits<T>::letter, mode_name, seconds, tflops(n, seconds), tessera_info, ratio,
               with_pageable / seconds, with_pinned / seconds, resident / seconds);
  }
  // The device API as the plan runs it, and as tile tasks (the tile size chosen, the whole-matrix
  // path declined).
  for (const bool as_tiles : {false, true}) {
    tessera::FactorOptions options;
    if (as_tiles) options.grain = tessera::TaskGrain::tiles;
    int device_info = -1;
    const double on_device = median_of(s.repetitions, [&] {
      TESSERA_CUDA_CHECK(cudaMemcpy(d_a, factor.data(), count * sizeof(T), cudaMemcpyHostToDevice));
      const auto start = Clock::now();
      device_info = tessera::device::potri(runtime, n, d_a, n, nullptr, options);
      return seconds_since(start);
    });
    TESSERA_CUDA_CHECK(cudaMemcpy(x.data(), d_a, count * sizeof(T), cudaMemcpyDeviceToHost));
    const double device_ratio = n <= s.check_max_n ? inverse_ratio(n, A, x) : nan_value;
    fmt::print(
        "{:>6} {}  Tessera device::potri (resident{}): {:7.3f} s {:6.2f} TFLOP/s (info {}, ratio {:.2g}); "
        "x{:.2f} cuSOLVER resident\n",
        n, tessera::ScalarTraits<T>::letter, as_tiles ? ", tiles" : "", on_device, tflops(n, on_device), device_info,
        device_ratio, resident / on_device);
  }
  std::fflush(stdout);
  cudaFreeHost(pinned);
  cudaFree(d_work);
  cudaFree(d_info);
  cudaFree(d_a);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string option = args.option();
      if (option == "--sizes") s.sizes = tessera::bench::parse_int_list(args.value());
      else if (option == "--precisions") s.precisions = tessera::bench::split_commas(args.value());
      else if (option == "--modes") s.modes = tessera::bench::split_commas(args.value());
      else if (option == "--repetitions") s.repetitions = std::stoi(args.value());
      else if (option == "--check-max-n") s.check_max_n = std::stoi(args.value());
      else if (option == "--logdet-sizes") s.logdet_sizes = tessera::bench::parse_int_list(args.value());
      else if (option == "--logdet-repetitions") s.logdet_repetitions = std::max(1, std::stoi(args.value()));
      else throw std::runtime_error("unknown option " + option);
    }
    tessera::Runtime runtime(tessera::RuntimeOptions::from_environment());
    if (runtime.cuda_workers() == 0) throw std::runtime_error("no CUDA worker: this benchmark needs a GPU");
    cudaDeviceProp props{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
    fmt::print("{}; Tessera runtime: {} CPU + {} CUDA workers, scheduler {}; warm process, medians of {} calls after "
               "a warm-up, TFLOP/s counting n^3\n",
               props.name, runtime.cpu_workers(), runtime.cuda_workers(), runtime.scheduler(), s.repetitions);
    cusolverDnHandle_t solver = nullptr;
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    for (const std::string& p : s.precisions)
      for (int n : s.sizes) {
        if (p == "d") run_size<double>(runtime, s, n, solver);
        else if (p == "s") run_size<float>(runtime, s, n, solver);
        else throw std::runtime_error("unknown precision '" + p + "' (d or s)");
      }
    cusolverDnDestroy(solver);
    for (int n : s.logdet_sizes) run_logdet_overhead(runtime, s, n);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_gpu_potri: {}\n", e.what());
    return 1;
  }
  return 0;
}
