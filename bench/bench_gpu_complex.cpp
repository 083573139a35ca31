// Complex Hermitian Cholesky (zpotrf, cpotrf) on the GPU, one process:
//   cuSOLVER's 64-bit potrf (cusolverDnXpotrf) with the matrix on the GPU (resident), with copies
//   from and to pinned host memory, and from and to the caller's pageable array;
//   Tessera with the tiles already on the GPU (gpu mode), on a matrix in GPU memory (the device
//   API: one vendor call on the caller's stream or tile tasks, as the plan says), and end to end
//   from the caller's array in gpu and auto modes.
// Each figure is the median of --repetitions runs after one warm-up run. TFLOP/s count 4 n^3 / 3
// (a complex multiply-add is four real ones); the ratios are against the peers of the same run.
//   bench_gpu_complex [--sizes 8192,16384,30000] [--precisions z,c] [--uplos L,U] [--repetitions 3] [--nb 0]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "resident_tiles.hpp"
#include "kernels/cuda/check.hpp"
#include "tessera/tessera.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
double tflops(int n, double seconds) { return 4.0 * n * n * n / 3.0 / seconds * 1e-12; }

// One warm-up run, then the median of `repetitions`.
template <class Run>
double median_of(int repetitions, Run&& run) {
  run();
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) times.push_back(run());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Hermitian, strictly diagonally dominant: positive definite. Both triangles filled.
template <class T>
std::vector<T> hpd(int n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-0.5, 0.5);
  std::vector<T> A(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j) {
    A[j + static_cast<std::size_t>(j) * n] = T(n);
    for (int i = j + 1; i < n; ++i) {
      const T v(dist(gen), dist(gen));
      A[i + static_cast<std::size_t>(j) * n] = v;
      A[j + static_cast<std::size_t>(i) * n] = std::conj(v);
    }
  }
  return A;
}

cudaDataType data_type(const std::complex<double>*) { return CUDA_C_64F; }
cudaDataType data_type(const std::complex<float>*) { return CUDA_C_32F; }

struct CusolverTimes {
  double resident = 0, pinned = 0, pageable = 0;
};

// cuSOLVER's 64-bit potrf, resident and with copies.
template <class T>
CusolverTimes time_cusolver(int n, tessera::Uplo uplo, const std::vector<T>& A, int repetitions) {
  cusolverDnHandle_t handle;
  cusolverDnParams_t params;
  TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&handle));
  TESSERA_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  const cublasFillMode_t fill = uplo == tessera::Uplo::lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const std::size_t bytes = sizeof(T) * A.size();
  T *dA = nullptr, *pinned = nullptr;
  int* dinfo = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, bytes));
  TESSERA_CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  TESSERA_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
  std::copy(A.begin(), A.end(), pinned);
  std::vector<T> out(A.size());
  std::size_t device_bytes = 0, host_bytes = 0;
  const cudaDataType type = data_type(dA);
  TESSERA_CUSOLVER_CHECK(
      cusolverDnXpotrf_bufferSize(handle, params, fill, n, type, dA, n, type, &device_bytes, &host_bytes));
  void* device_work = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&device_work, std::max<std::size_t>(device_bytes, 1)));
  std::vector<char> host_work(std::max<std::size_t>(host_bytes, 1));
  auto factor = [&] {
    TESSERA_CUSOLVER_CHECK(cusolverDnXpotrf(handle, params, fill, n, type, dA, n, type, device_work, device_bytes,
                                            host_work.data(), host_bytes, dinfo));
    int info = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
    if (info != 0) throw std::runtime_error("cuSOLVER potrf info " + std::to_string(info));
  };
  auto round_trip = [&](const T* from, T* to) {
    const auto start = Clock::now();
    TESSERA_CUDA_CHECK(cudaMemcpy(dA, from, bytes, cudaMemcpyHostToDevice));
    factor();
    TESSERA_CUDA_CHECK(cudaMemcpy(to, dA, bytes, cudaMemcpyDeviceToHost));
    return seconds_since(start);
  };
  CusolverTimes times;
  times.pageable = median_of(repetitions, [&] { return round_trip(A.data(), out.data()); });
  times.pinned = median_of(repetitions, [&] { return round_trip(pinned, pinned); });
  times.resident = median_of(repetitions, [&] {
    TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
    const auto start = Clock::now();
    factor();
    return seconds_since(start);
  });
  cudaFree(device_work);
  cudaFreeHost(pinned);
  cudaFree(dinfo);
  cudaFree(dA);
  cusolverDnDestroyParams(params);
  cusolverDnDestroy(handle);
  return times;
}

// Tessera's factorization with every tile already on the GPU, gpu mode, in Tessera's tile size.
template <class T>
double time_resident(tessera::Runtime& runtime, int n, const std::vector<T>& A, const tessera::FactorOptions& options) {
  const int nb = options.nb > 0 ? options.nb : tessera::default_tile_size(runtime, n, tessera::precision_of<T>(), options.mode);
  return tessera::bench::time_resident_potrf(runtime, n, nb, A, options);
}

// The device API on the matrix in GPU memory (lda = n); the copy of A there before each run is not
// timed.
template <class T>
double time_device(tessera::Runtime& runtime, int n, const std::vector<T>& A, const tessera::FactorOptions& options) {
  T* dA = nullptr;
  TESSERA_CUDA_CHECK(cudaMalloc(&dA, sizeof(T) * A.size()));
  TESSERA_CUDA_CHECK(cudaMemcpy(dA, A.data(), sizeof(T) * A.size(), cudaMemcpyHostToDevice));
  const auto start = Clock::now();
  const int info = tessera::device::potrf(runtime, n, dA, n, nullptr, options);
  const double seconds = seconds_since(start);
  cudaFree(dA);
  if (info != 0) throw std::runtime_error("device factorization info " + std::to_string(info));
  return seconds;
}

// End to end from the caller's pageable array (the copy of A before each run is not timed).
template <class T>
double time_host_array(tessera::Runtime& runtime, int n, const std::vector<T>& A, const tessera::FactorOptions& options) {
  std::vector<T> work = A;
  const auto start = Clock::now();
  const int info = tessera::potrf(runtime, tessera::MatrixView<T>::host(n, n, work.data(), n), options);
  const double seconds = seconds_since(start);
  if (info != 0) throw std::runtime_error("factorization info " + std::to_string(info));
  return seconds;
}

template <class T>
void run(tessera::Runtime& runtime, int n, tessera::Uplo uplo, int nb, int repetitions) {
  const std::vector<T> A = hpd<T>(n, 17);
  const CusolverTimes cus = time_cusolver(n, uplo, A, repetitions);
  tessera::FactorOptions options;
  options.uplo = uplo;
  options.nb = nb;
  options.mode = tessera::Mode::gpu;
  const double resident =
      uplo == tessera::Uplo::lower ? median_of(repetitions, [&] { return time_resident(runtime, n, A, options); }) : 0;
  const double on_device = median_of(repetitions, [&] { return time_device(runtime, n, A, options); });
  const double gpu = median_of(repetitions, [&] { return time_host_array(runtime, n, A, options); });
  options.mode = tessera::Mode::automatic;
  const double automatic = median_of(repetitions, [&] { return time_host_array(runtime, n, A, options); });
  const char letter = tessera::ScalarTraits<T>::letter;
  fmt::print("{:>6} {} {}  cuSOLVER: resident {:6.2f}, pinned {:6.2f}, pageable {:6.2f} TFLOP/s | Tessera: tiles "
             "resident {:6.2f}, device {:6.2f}, gpu {:6.2f}, auto {:6.2f} TFLOP/s | res/cusR {:5.2f}  dev/cusR {:5.2f}  "
             "gpu/cusR {:5.2f}  gpu/cusPin {:5.2f}  gpu/cusPage {:5.2f}  auto/cusPage {:5.2f}\n",
             n, letter, uplo == tessera::Uplo::lower ? 'L' : 'U', tflops(n, cus.resident), tflops(n, cus.pinned),
             tflops(n, cus.pageable), resident > 0 ? tflops(n, resident) : 0.0, tflops(n, on_device), tflops(n, gpu),
             tflops(n, automatic), resident > 0 ? cus.resident / resident : 0.0, cus.resident / on_device,
             cus.resident / gpu, cus.pinned / gpu, cus.pageable / gpu, cus.pageable / automatic);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{8192, 16384, 30000};
  std::vector<std::string> precisions{"z", "c"}, uplos{"L", "U"};
  int repetitions = 3, nb = 0;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      if (args.option() == "--sizes") sizes = tessera::bench::parse_int_list(args.value());
      else if (args.option() == "--precisions") precisions = tessera::bench::split_commas(args.value());
      else if (args.option() == "--uplos") uplos = tessera::bench::split_commas(args.value());
      else if (args.option() == "--repetitions") repetitions = std::stoi(args.value());
      else if (args.option() == "--nb") nb = std::stoi(args.value());
      else throw std::runtime_error("unknown option " + args.option());
    }
    tessera::Runtime runtime;
    cudaDeviceProp prop{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    fmt::print("{}; {} CPU workers, {} CUDA workers; TFLOP/s count 4 n^3 / 3\n", prop.name, runtime.cpu_workers(),
               runtime.cuda_workers());
    for (const std::string& p : precisions)
      for (int n : sizes)
        for (const std::string& u : uplos) {
          const tessera::Uplo uplo = u == "U" ? tessera::Uplo::upper : tessera::Uplo::lower;
          if (p == "z") run<std::complex<double>>(runtime, n, uplo, nb, repetitions);
          else if (p == "c") run<std::complex<float>>(runtime, n, uplo, nb, repetitions);
          else throw std::runtime_error("--precisions takes z and c");
        }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_gpu_complex: {}\n", e.what());
    return 1;
  }
  return 0;
}
