// What a perfect schedule of vendor kernels reaches, with no runtime at all: blocked right-looking
// Cholesky (lower, matrix resident, lda = n) from cuSOLVER potrf, cuBLAS trsm, syrk and gemm,
//   plain:     one stream, per step the diagonal block, the panel below it, then the trailing
//              update one block column at a time (syrk of its diagonal block, gemm below);
//   lookahead: the diagonal block, the panel and the update of the next block column on a stream
//              of the highest priority, the rest of the trailing update on a second stream, so
//              that the next step's diagonal factorization runs beside this step's update;
// against cuSOLVER potrf on the whole matrix in the same run. Also the time of cuSOLVER potrf on
// one diagonal block alone (the chain every blocked variant pays once per step).
//
//   bench_schedule_bound [--sizes 8192,16384] [--nb 512,1024,2048] [--precisions d,s]
//                        [--repetitions 3]
// Each figure is the median of the repetitions after a warm-up; every result is checked by a
// sampled residual |L L^T - A| / n on 4096 entries.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/vendor.hpp"
#include "device_support.hpp"

namespace {

using tessera::bench::Device;
namespace vendor = tessera::kernels::cuda::vendor;

__device__ double entry(long i, long j, long n) {
  const long a = i < j ? i : j, b = i < j ? j : i;
  unsigned long long h = (a * 2654435761ull) ^ (b * 0x9E3779B97F4A7C15ull);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5 + (i == j ? static_cast<double>(n) : 0.0);
}

// Symmetric, diagonally dominant: SPD.
template <class T>
__global__ void generate(T* A, long n) {
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < n * n;
       idx += static_cast<long>(gridDim.x) * blockDim.x)
    A[idx] = static_cast<T>(entry(idx % n, idx / n, n));
}

// max over 4096 sampled entries (i >= j) of |(L L^T)_ij - A_ij| / n, as the bits of a double.
template <class T>
__global__ void sampled_residual(const T* L, long n, unsigned long long* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= 4096) return;
  unsigned long long h = t * 0x9E3779B97F4A7C15ull + 12345;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  const long a = static_cast<long>(h % n), b = t < 64 ? a : static_cast<long>((h / n) % n);
  const long i = a > b ? a : b, j = a > b ? b : a;
  double s = 0;
  for (long k = 0; k <= j; ++k) s += static_cast<double>(L[i + k * n]) * L[j + k * n];
  const double r = fabs(s - static_cast<double>(static_cast<T>(entry(i, j, n)))) / static_cast<double>(n);
  atomicMax(out, static_cast<unsigned long long>(__double_as_longlong(r)));
}

struct Streams {
  cudaStream_t urgent = nullptr, normal = nullptr;
  cublasHandle_t blas_urgent = nullptr, blas_normal = nullptr;
  cusolverDnHandle_t solver = nullptr;
  Streams() {
    int lowest = 0, highest = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&urgent, cudaStreamNonBlocking, highest));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&normal, cudaStreamNonBlocking, lowest));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_urgent));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_normal));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas_normal, normal));
  }
  ~Streams() {
    cusolverDnDestroy(solver);
    cublasDestroy(blas_urgent);
    cublasDestroy(blas_normal);
    cudaStreamDestroy(urgent);
    cudaStreamDestroy(normal);
  }
};

// Trailing columns [c0, c1) updated by the block column at k0 (width kb), lower triangle only.
template <class T>
void update_columns(cublasHandle_t h, T* A, int n, int k0, int kb, int c0, int c1, int nb) {
  const T* L = A + static_cast<std::size_t>(k0) * n;
  for (int j = c0; j < c1; j += nb) {
    const int w = std::min(nb, c1 - j), below = n - j - w;
    vendor::syrk(h, 'L', false, w, kb, T(-1), L + j, n, T(1), A + j + static_cast<std::size_t>(j) * n, n);
    if (below > 0)
      vendor::gemm(h, false, true, below, w, kb, T(-1), L + j + w, n, L + j, n, T(1),
                   A + j + w + static_cast<std::size_t>(j) * n, n);
  }
}

template <class T>
void blocked_potrf(Streams& s, T* A, int n, int nb, bool lookahead, T* work, int lwork, int* info) {
  const int nt = (n + nb - 1) / nb;
  std::vector<cudaEvent_t> panel_done(nt), rest_done(nt);
  for (int k = 0; k < nt; ++k) {
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&panel_done[k], cudaEventDisableTiming));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&rest_done[k], cudaEventDisableTiming));
  }
  cudaStream_t panel = lookahead ? s.urgent : s.normal;
  TESSERA_CUBLAS_CHECK(cublasSetStream(s.blas_urgent, panel));
  TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(s.solver, panel));
  for (int k = 0; k < nt; ++k) {
    const int k0 = k * nb, kb = std::min(nb, n - k0), below = n - k0 - kb, next = k0 + kb;
    // Block column k has had every update but the one of step k - 1 (on this stream) once the
    // rest of step k - 2 is done.
    if (lookahead && k >= 2) TESSERA_CUDA_CHECK(cudaStreamWaitEvent(panel, rest_done[k - 2]));
    T* Akk = A + k0 + static_cast<std::size_t>(k0) * n;
    vendor::potrf(s.solver, 'L', kb, Akk, n, work, lwork, info);
    if (below > 0) vendor::trsm(s.blas_urgent, false, 'L', true, below, kb, T(1), Akk, n, Akk + kb, n);
    if (!lookahead) {
      update_columns<T>(s.blas_urgent, A, n, k0, kb, next, n, nb);
      continue;
    }
    const int lookahead_end = std::min(n, next + nb);
    update_columns<T>(s.blas_urgent, A, n, k0, kb, next, lookahead_end, nb);
    TESSERA_CUDA_CHECK(cudaEventRecord(panel_done[k], panel));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s.normal, panel_done[k]));
    update_columns<T>(s.blas_normal, A, n, k0, kb, lookahead_end, n, nb);
    TESSERA_CUDA_CHECK(cudaEventRecord(rest_done[k], s.normal));
  }
  if (lookahead) TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s.normal, panel_done[nt - 1]));
  for (int k = 0; k < nt; ++k) {
    cudaEventDestroy(panel_done[k]);
    cudaEventDestroy(rest_done[k]);
  }
}

double tflops(int n, double ms) { return static_cast<double>(n) * n * n / 3.0 / (ms * 1e-3) * 1e-12; }

struct Measurement {
  double ms = 0, residual = 0;
  int info = 0;
};

template <class T>
class Bench {
 public:
  Bench(int n, int repetitions) : n_(n), repetitions_(repetitions), A_(static_cast<std::size_t>(n) * n) {
    TESSERA_CUDA_CHECK(cudaEventCreate(&start_));
    TESSERA_CUDA_CHECK(cudaEventCreate(&stop_));
    lwork_ = vendor::potrf_workspace(s_.solver, 'L', n, A_.get(), n);
    work_ = std::make_unique<Device<T>>(static_cast<std::size_t>(lwork_));
  }
  ~Bench() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  // Median time of `factor` on a freshly generated matrix, after one warm-up call.
  template <class F>
  Measurement measure(F&& factor) {
    std::vector<double> times;
    for (int r = 0; r <= repetitions_; ++r) {
      generate<T><<<4096, 256, 0, s_.normal>>>(A_.get(), n_);
      TESSERA_CUDA_CHECK_LAUNCH();
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      TESSERA_CUDA_CHECK(cudaEventRecord(start_, s_.normal));
      factor();
      TESSERA_CUDA_CHECK(cudaEventRecord(stop_, s_.normal));
      TESSERA_CUDA_CHECK(cudaEventSynchronize(stop_));
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      if (r > 0) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    Measurement m;
    m.ms = times[times.size() / 2];
    TESSERA_CUDA_CHECK(cudaMemcpy(&m.info, info_.get(), sizeof(int), cudaMemcpyDeviceToHost));
    m.residual = residual();
    return m;
  }

  Measurement vendor_potrf() {
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(s_.solver, s_.normal));
    return measure([&] { vendor::potrf(s_.solver, 'L', n_, A_.get(), n_, work_->get(), lwork_, info_.get()); });
  }
  Measurement blocked(int nb, bool lookahead) {
    return measure([&] { blocked_potrf<T>(s_, A_.get(), n_, nb, lookahead, work_->get(), lwork_, info_.get()); });
  }

 private:
  double residual() {
    Device<unsigned long long> bits(1);
    TESSERA_CUDA_CHECK(cudaMemset(bits.get(), 0, sizeof(unsigned long long)));
    sampled_residual<T><<<16, 256>>>(A_.get(), n_, bits.get());
    TESSERA_CUDA_CHECK_LAUNCH();
    unsigned long long raw = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&raw, bits.get(), sizeof raw, cudaMemcpyDeviceToHost));
    double r = 0;
    std::memcpy(&r, &raw, sizeof r);
    return r;
  }

  int n_, repetitions_;
  Streams s_;
  Device<T> A_;
  Device<int> info_{1};
  int lwork_ = 0;
  std::unique_ptr<Device<T>> work_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// cuSOLVER potrf of one nb x nb block alone: best of 5, microseconds.
template <class T>
double diagonal_block_us(int nb) {
  Bench<T> bench(nb, 5);
  return bench.vendor_potrf().ms * 1e3;
}

template <class T>
void run(const std::vector<int>& sizes, const std::vector<int>& nbs, int repetitions) {
  const char letter = sizeof(T) == 8 ? 'd' : 's';
  for (int nb : nbs) {
    const double us = diagonal_block_us<T>(nb);
    fmt::print("{} potrf of one {} block alone: {:.1f} us ({:.0f} ns per column)\n", letter, nb, us, us * 1e3 / nb);
  }
  for (int n : sizes) {
    Bench<T> bench(n, repetitions);
    const Measurement ref = bench.vendor_potrf();
    fmt::print("{} n={:6d} cuSOLVER potrf              {:9.2f} ms {:6.2f} TFLOP/s  info {} residual {:.1e}\n", letter, n,
               ref.ms, tflops(n, ref.ms), ref.info, ref.residual);
    for (int nb : nbs) {
      if (n < 2 * nb) continue;
      for (bool lookahead : {false, true}) {
        const Measurement m = bench.blocked(nb, lookahead);
        fmt::print("{} n={:6d} nb={:4d} {:10s}          {:9.2f} ms {:6.2f} TFLOP/s  {:.2f}x cuSOLVER  info {} residual {:.1e}\n",
                   letter, n, nb, lookahead ? "lookahead" : "plain", m.ms, tflops(n, m.ms), ref.ms / m.ms, m.info,
                   m.residual);
      }
    }
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<int> sizes{8192, 16384, 30000, 40000}, nbs{512, 1024, 2048};
    std::vector<std::string> precisions{"d"};
    int repetitions = 3;
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string opt = args.option();
      if (opt == "--sizes") sizes = tessera::bench::parse_int_list(args.value());
      else if (opt == "--nb") nbs = tessera::bench::parse_int_list(args.value());
      else if (opt == "--precisions") precisions = tessera::bench::split_commas(args.value());
      else if (opt == "--repetitions") repetitions = std::stoi(args.value());
      else throw std::runtime_error("unknown option " + opt);
    }
    if (!tessera::bench::cuda_device_present()) {
      fmt::print("no CUDA device: nothing to measure\n");
      return 0;
    }
    cudaDeviceProp prop{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    fmt::print("{}; medians of {} runs after a warm-up, TFLOP/s with n^3/3 flops\n", prop.name, repetitions);
    for (const std::string& p : precisions) {
      if (p == "d") run<double>(sizes, nbs, repetitions);
      else if (p == "s") run<float>(sizes, nbs, repetitions);
      else throw std::runtime_error("precision must be d or s");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_schedule_bound: %s\n", e.what());
    return 1;
  }
}
