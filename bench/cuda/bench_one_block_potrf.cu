// One small real matrix in GPU memory: Tessera's one-block factorization
// (kernels::cuda::potrf_one_block, what the device API runs for a real matrix up to the plan's
// one_block_potrf_max_n) against cuSOLVER's potrf on the same matrix, in one process. cuSOLVER:
// the legacy {D,S}potrf and the 64-bit Xpotrf with their workspaces allocated once, the faster of
// the two reported. Every call is preceded by the same device-to-device copy that restores the
// matrix, timed alone too ("copy"). "stream": 200 back-to-back calls (copy + factorization) timed
// with CUDA events, the median of 5 rounds, per call; "one": the median of 50 calls each followed
// by a synchronisation, host clock. Each factor is checked: info 0 and the backward error
// max|A - L L^T| / (n max|A|).
//
//   bench_one_block_potrf [--sizes 32,48,...] [--precision d|s|both]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/check.hpp"
#include "cuda/one_block_potrf.hpp"
#include "device_support.hpp"

namespace tk = tessera::kernels::cuda;

namespace {

constexpr int kStreamCalls = 200, kRounds = 5, kSingleCalls = 50;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Microseconds per call of call() (after the restoring copy), in a stream and one by one.
struct Times {
  double stream_us, one_us;
};

Times time_calls(const std::function<void()>& call, cudaStream_t stream) {
  cudaEvent_t start, stop;
  TESSERA_CUDA_CHECK(cudaEventCreate(&start));
  TESSERA_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 10; ++i) call();
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) {
    TESSERA_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < kStreamCalls; ++i) call();
    TESSERA_CUDA_CHECK(cudaEventRecord(stop, stream));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    rounds.push_back(1e3 * ms / kStreamCalls);
  }
  std::vector<double> single;
  for (int i = 0; i < kSingleCalls; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
    single.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {median(rounds), median(single)};
}

template <class T>
struct Solver;
template <>
struct Solver<double> {
  static constexpr cudaDataType type = CUDA_R_64F;
  static cusolverStatus_t buffer(cusolverDnHandle_t h, int n, double* a, int* lwork) {
    return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* a, double* w, int lwork, int* info) {
    return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lwork, info);
  }
};
template <>
struct Solver<float> {
  static constexpr cudaDataType type = CUDA_R_32F;
  static cusolverStatus_t buffer(cusolverDnHandle_t h, int n, float* a, int* lwork) {
    return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* a, float* w, int lwork, int* info) {
    return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lwork, info);
  }
};

// max|A - L L^T| / (n max|A|) of the lower factor in `factor` (n x n) against A.
template <class T>
double backward_error(int n, const std::vector<T>& a, const std::vector<T>& factor) {
  double worst = 0, largest = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double sum = 0;
      for (int k = 0; k <= j; ++k) sum += double(factor[i + std::size_t(k) * n]) * double(factor[j + std::size_t(k) * n]);
      worst = std::max(worst, std::abs(sum - double(a[i + std::size_t(j) * n])));
      largest = std::max(largest, std::abs(double(a[i + std::size_t(j) * n])));
    }
  return worst / (n * largest);
}

template <class T>
void run(const std::vector<int>& sizes, cusolverDnHandle_t solver, cudaStream_t stream) {
  const char* name = sizeof(T) == 8 ? "double" : "float";
  fmt::print("\n{}: microseconds per call (the restoring copy included); ratio = cuSOLVER's time / Tessera's\n", name);
  fmt::print("{:>5} | {:>9} {:>9} | {:>9} {:>9} {:>7} | {:>7} {:>7} | {:>6} {:>6} | {}\n", "n", "stream", "one",
             "cusolver", "one", "form", "copy", "one", "ratio", "one", "Tessera's check");
  for (const int n : sizes) {
    std::mt19937_64 rng(n);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> g(std::size_t(n) * n);
    for (double& x : g) x = u(rng);
    std::vector<T> a(std::size_t(n) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double sum = i == j ? 1.0 : 0.0;
        for (int p = 0; p < n; ++p) sum += g[i + std::size_t(p) * n] * g[j + std::size_t(p) * n] / n;
        a[i + std::size_t(j) * n] = T(sum);
      }
    const std::size_t bytes = a.size() * sizeof(T);
    T *pristine, *work;
    int* info;
    TESSERA_CUDA_CHECK(cudaMalloc(&pristine, bytes));
    TESSERA_CUDA_CHECK(cudaMalloc(&work, bytes));
    TESSERA_CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
    TESSERA_CUDA_CHECK(cudaMemcpy(pristine, a.data(), bytes, cudaMemcpyHostToDevice));
    const auto restore = [&] {
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(work, pristine, bytes, cudaMemcpyDeviceToDevice, stream));
    };

    const auto tessera = [&] {
      restore();
      tk::potrf_one_block(n, work, 1, n, work, 1, n, false, info, stream);
    };
    const Times mine = time_calls(tessera, stream);
    int host_info = -1;
    TESSERA_CUDA_CHECK(cudaMemcpy(&host_info, info, sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<T> factor(a.size());
    TESSERA_CUDA_CHECK(cudaMemcpy(factor.data(), work, bytes, cudaMemcpyDeviceToHost));
    const double berr = backward_error(n, a, factor);

    int lwork = 0;
    TESSERA_CUSOLVER_CHECK(Solver<T>::buffer(solver, n, work, &lwork));
    T* legacy_work;
    TESSERA_CUDA_CHECK(cudaMalloc(&legacy_work, sizeof(T) * std::max(lwork, 1)));
    const Times legacy = time_calls(
        [&] {
          restore();
          TESSERA_CUSOLVER_CHECK(Solver<T>::potrf(solver, n, work, legacy_work, lwork, info));
        },
        stream);
    std::size_t device_bytes = 0, host_bytes = 0;
    TESSERA_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(solver, nullptr, CUBLAS_FILL_MODE_LOWER, n, Solver<T>::type,
                                                       work, n, Solver<T>::type, &device_bytes, &host_bytes));
    void* x_device;
    std::vector<unsigned char> x_host(std::max<std::size_t>(host_bytes, 1));
    TESSERA_CUDA_CHECK(cudaMalloc(&x_device, std::max<std::size_t>(device_bytes, 1)));
    const Times x = time_calls(
        [&] {
          restore();
          TESSERA_CUSOLVER_CHECK(cusolverDnXpotrf(solver, nullptr, CUBLAS_FILL_MODE_LOWER, n, Solver<T>::type, work, n,
                                                  Solver<T>::type, x_device, device_bytes, x_host.data(), host_bytes,
                                                  info));
        },
        stream);
    const Times copy = time_calls(restore, stream);
    const bool x_faster = x.stream_us < legacy.stream_us;
    const Times vendor = x_faster ? x : legacy;
    fmt::print("{:5d} | {:9.2f} {:9.2f} | {:9.2f} {:9.2f} {:>7} | {:7.2f} {:7.2f} | {:6.2f} {:6.2f} | info {} berr {:.1e}\n",
               n, mine.stream_us, mine.one_us, vendor.stream_us, vendor.one_us, x_faster ? "Xpotrf" : "legacy",
               copy.stream_us, copy.one_us, vendor.stream_us / mine.stream_us, vendor.one_us / mine.one_us, host_info,
               berr);
    cudaFree(x_device);
    cudaFree(legacy_work);
    cudaFree(info);
    cudaFree(work);
    cudaFree(pristine);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {32, 48, 64, 80, 96, 128, 160, 192};
  std::string precision = "both";
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    const std::string option = args.option();
    if (option == "--sizes")
      sizes = tessera::bench::parse_int_list(args.value());
    else if (option == "--precision")
      precision = args.value();
    else
      throw std::runtime_error("unknown option " + option);
  }
  if (!tessera::bench::cuda_device_present()) {
    fmt::print("bench_one_block_potrf: no CUDA device\n");
    return 0;
  }
  for (const int n : sizes)
    if (n < 1 || n > tk::one_block_potrf_max_n)
      throw std::runtime_error("--sizes: orders from 1 to " + std::to_string(tk::one_block_potrf_max_n));
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  fmt::print("GPU: {}\n", prop.name);
  cudaStream_t stream;
  TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cusolverDnHandle_t solver;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
  TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
  if (precision != "s") run<double>(sizes, solver, stream);
  if (precision != "d") run<float>(sizes, solver, stream);
  cusolverDnDestroy(solver);
  cudaStreamDestroy(stream);
  return 0;
}
