// One small matrix in GPU memory: Tessera's one-block factorization (kernels::cuda::potrf_one_block,
// what the device API runs for one matrix up to the plan's one-block orders) against cuSOLVER's
// potrf on the same matrix, in one process. cuSOLVER: the legacy {D,S,Z,C}potrf and the 64-bit
// Xpotrf with their workspaces allocated once, the faster of the two reported. Every call is preceded by the same device-to-device copy that restores the
// matrix, timed alone too ("copy"). "stream": 200 back-to-back calls (copy + factorization) timed
// with CUDA events, the median of 5 rounds, per call; "one": the median of 50 calls each followed
// by a synchronisation, host clock. Each factor is checked: info 0 and the backward error
// max|A - L L^H| / (n max|A|). Complex matrices: Hermitian, G G^H / n + I.
//
// With --batches, stacks of that many matrices instead (run_stacks).
//
//   bench_one_block_potrf [--sizes 32,48,...] [--precisions d,s,z,c] [--batches 8,100,...]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/check.hpp"
#include "cuda/batched_kernels.hpp"
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
  static cusolverStatus_t batched(cusolverDnHandle_t h, int n, double** a, int* info, int batch) {
    return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, batch);
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
  static cusolverStatus_t batched(cusolverDnHandle_t h, int n, float** a, int* info, int batch) {
    return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, batch);
  }
};

template <>
struct Solver<std::complex<double>> {
  using Z = std::complex<double>;
  static constexpr cudaDataType type = CUDA_C_64F;
  static cusolverStatus_t buffer(cusolverDnHandle_t h, int n, Z* a, int* lwork) {
    return cusolverDnZpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex*>(a), n, lwork);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, Z* a, Z* w, int lwork, int* info) {
    return cusolverDnZpotrf(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex*>(a), n,
                            reinterpret_cast<cuDoubleComplex*>(w), lwork, info);
  }
  static cusolverStatus_t batched(cusolverDnHandle_t h, int n, Z** a, int* info, int batch) {
    return cusolverDnZpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuDoubleComplex**>(a), n, info,
                                   batch);
  }
};
template <>
struct Solver<std::complex<float>> {
  using C = std::complex<float>;
  static constexpr cudaDataType type = CUDA_C_32F;
  static cusolverStatus_t buffer(cusolverDnHandle_t h, int n, C* a, int* lwork) {
    return cusolverDnCpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuComplex*>(a), n, lwork);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, C* a, C* w, int lwork, int* info) {
    return cusolverDnCpotrf(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuComplex*>(a), n,
                            reinterpret_cast<cuComplex*>(w), lwork, info);
  }
  static cusolverStatus_t batched(cusolverDnHandle_t h, int n, C** a, int* info, int batch) {
    return cusolverDnCpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, reinterpret_cast<cuComplex**>(a), n, info, batch);
  }
};

std::complex<double> widened(double x) { return x; }
std::complex<double> widened(float x) { return double(x); }
template <class R>
std::complex<double> widened(std::complex<R> x) {
  return {double(x.real()), double(x.imag())};
}

// max|A - L L^H| / (n max|A|) of the lower factor in `factor` (n x n) against A.
template <class T>
double backward_error(int n, const std::vector<T>& a, const std::vector<T>& factor) {
  double worst = 0, largest = 0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      std::complex<double> sum = 0;
      for (int k = 0; k <= j; ++k)
        sum += widened(factor[i + std::size_t(k) * n]) * std::conj(widened(factor[j + std::size_t(k) * n]));
      worst = std::max(worst, std::abs(sum - widened(a[i + std::size_t(j) * n])));
      largest = std::max(largest, std::abs(widened(a[i + std::size_t(j) * n])));
    }
  return worst / (n * largest);
}

// G G^H / n + I, column-major; real G for the real types.
template <class T>
std::vector<T> test_matrix(int n) {
  constexpr bool complex = !std::is_floating_point_v<T>;
  std::mt19937_64 rng(n);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::complex<double>> g(std::size_t(n) * n);
  for (auto& x : g) x = complex ? std::complex<double>(u(rng), u(rng)) : std::complex<double>(u(rng));
  std::vector<T> a(std::size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      std::complex<double> sum = i == j ? 1.0 : 0.0;
      for (int p = 0; p < n; ++p) sum += g[i + std::size_t(p) * n] * std::conj(g[j + std::size_t(p) * n]) / double(n);
      if constexpr (complex)
        a[i + std::size_t(j) * n] = T(sum);
      else
        a[i + std::size_t(j) * n] = T(sum.real());
    }
  return a;
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, double>) return "double";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, std::complex<double>>) return "complex double";
  return "complex float";
}

template <class T>
void run(const std::vector<int>& sizes, cusolverDnHandle_t solver, cudaStream_t stream) {
  const char* name = type_name<T>();
  fmt::print("\n{}: microseconds per call (the restoring copy included); ratio = cuSOLVER's time / Tessera's\n", name);
  fmt::print("{:>5} | {:>9} {:>9} | {:>9} {:>9} {:>7} | {:>7} {:>7} | {:>6} {:>6} | {}\n", "n", "stream", "one",
             "cusolver", "one", "form", "copy", "one", "ratio", "one", "Tessera's check");
  for (const int n : sizes) {
    if (!tk::potrf_one_block_fits<T>(n)) {
      fmt::print("{:5d} | past this GPU's shared memory for the one-block kernel\n", n);
      continue;
    }
    const std::vector<T> a = test_matrix<T>(n);
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

// Stacks of `batch` matrices of order n (the same matrix repeated), microseconds per stack (the
// restoring copy of the stack included), in a stream of calls: the one-block kernel on each matrix
// (potrf_one_block_stack), the batched kernels (potrf_batched: a thread block per matrix, its
// built-in shape) and cuSOLVER's batched potrf (an array of pointers, made once).
template <class T>
void run_stacks(const std::vector<int>& sizes, const std::vector<int>& batches, cusolverDnHandle_t solver,
                cudaStream_t stream) {
  fmt::print("\n{} stacks: microseconds per stack (the restoring copy included), in a stream of calls\n",
             type_name<T>());
  fmt::print("{:>5} {:>6} | {:>9} {:>9} {:>9} {:>7} | {:>8} {:>8} | {}\n", "n", "batch", "one-block", "batched",
             "cusolver", "copy", "/batched", "/cusolver", "one-block check");
  for (const int n : sizes) {
    if (!tk::potrf_one_block_fits<T>(n)) continue;
    const std::vector<T> a = test_matrix<T>(n);
    const std::size_t elems = a.size(), bytes = elems * sizeof(T);
    for (const int batch : batches) {
      T *pristine, *work;
      int* info;
      TESSERA_CUDA_CHECK(cudaMalloc(&pristine, bytes * batch));
      TESSERA_CUDA_CHECK(cudaMalloc(&work, bytes * batch));
      TESSERA_CUDA_CHECK(cudaMalloc(&info, sizeof(int) * batch));
      for (int b = 0; b < batch; ++b)
        TESSERA_CUDA_CHECK(cudaMemcpy(pristine + b * elems, a.data(), bytes, cudaMemcpyHostToDevice));
      const auto restore = [&] {
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(work, pristine, bytes * batch, cudaMemcpyDeviceToDevice, stream));
      };
      const Times mine = time_calls(
          [&] {
            restore();
            tk::potrf_one_block_stack(n, batch, work, 1, n, (long long)elems, work, 1, n, (long long)elems, false,
                                      info, stream);
          },
          stream);
      std::vector<int> infos(batch, -1);
      TESSERA_CUDA_CHECK(cudaMemcpy(infos.data(), info, sizeof(int) * batch, cudaMemcpyDeviceToHost));
      std::vector<T> last(elems);
      TESSERA_CUDA_CHECK(cudaMemcpy(last.data(), work + (batch - 1) * elems, bytes, cudaMemcpyDeviceToHost));
      const double berr = backward_error(n, a, last);
      const int bad = int(std::count_if(infos.begin(), infos.end(), [](int i) { return i != 0; }));
      const Times kernels = time_calls(
          [&] {
            restore();
            tk::potrf_batched(tk::BatchUplo::lower, n, work, n, (long long)elems, batch, info, stream);
          },
          stream);
      std::vector<T*> pointers(batch);
      for (int b = 0; b < batch; ++b) pointers[b] = work + b * elems;
      T** device_pointers;
      TESSERA_CUDA_CHECK(cudaMalloc(&device_pointers, sizeof(T*) * batch));
      TESSERA_CUDA_CHECK(cudaMemcpy(device_pointers, pointers.data(), sizeof(T*) * batch, cudaMemcpyHostToDevice));
      const Times vendor = time_calls(
          [&] {
            restore();
            TESSERA_CUSOLVER_CHECK(Solver<T>::batched(solver, n, device_pointers, info, batch));
          },
          stream);
      const Times copy = time_calls(restore, stream);
      fmt::print("{:5d} {:6d} | {:9.2f} {:9.2f} {:9.2f} {:7.2f} | {:8.2f} {:8.2f} | {} info != 0, berr {:.1e}\n", n,
                 batch, mine.stream_us, kernels.stream_us, vendor.stream_us, copy.stream_us,
                 kernels.stream_us / mine.stream_us, vendor.stream_us / mine.stream_us, bad, berr);
      cudaFree(device_pointers);
      cudaFree(info);
      cudaFree(work);
      cudaFree(pristine);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {32, 48, 64, 80, 96, 128, 160, 192};
  std::vector<std::string> precisions = {"d", "s"};
  std::vector<int> batches;
  for (tessera::bench::Arguments args(argc, argv); args.next();) {
    const std::string option = args.option();
    if (option == "--sizes")
      sizes = tessera::bench::parse_int_list(args.value());
    else if (option == "--batches")
      batches = tessera::bench::parse_int_list(args.value());
    else if (option == "--precisions")
      precisions = tessera::bench::split_commas(args.value());
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
  const auto each = [&](auto zero) {
    using T = decltype(zero);
    if (batches.empty())
      run<T>(sizes, solver, stream);
    else
      run_stacks<T>(sizes, batches, solver, stream);
  };
  for (const std::string& p : precisions) {
    if (p == "d")
      each(double{});
    else if (p == "s")
      each(float{});
    else if (p == "z")
      each(std::complex<double>{});
    else if (p == "c")
      each(std::complex<float>{});
    else
      throw std::runtime_error("--precisions: d, s, z or c, not " + p);
  }
  cusolverDnDestroy(solver);
  cudaStreamDestroy(stream);
  return 0;
}
