#include "cuda_warm_up.hpp"

#include <starpu.h>

#ifdef TESSERA_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/vendor.hpp"
#endif

namespace tessera::detail {

#ifdef TESSERA_HAVE_CUDA

namespace {

// Large enough for the libraries to take their blocked paths, as on real tiles.
constexpr int warm_up_order = 512;

// A device buffer freed on every path out.
struct DeviceBuffer {
  void* data = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { TESSERA_CUDA_CHECK(cudaMalloc(&data, bytes)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data); }
};

// Each routine of the tile tasks once, on the identity in A (SPD, so potrf takes its full path).
template <typename T>
void call_vendor_routines(cublasHandle_t blas, cusolverDnHandle_t solver, cudaStream_t stream) {
  const int n = warm_up_order;
  const std::size_t tile = std::size_t(n) * n;
  DeviceBuffer matrices(3 * tile * sizeof(T));
  T* A = static_cast<T*>(matrices.data);
  T* B = A + tile;
  T* C = B + tile;
  std::vector<T> identity(tile, T(0));
  for (int i = 0; i < n; ++i) identity[std::size_t(i) * n + i] = T(1);
  for (T* m : {A, B, C})
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(m, identity.data(), tile * sizeof(T), cudaMemcpyHostToDevice, stream));
  namespace vendor = kernels::cuda::vendor;
  vendor::gemm(blas, Trans::no, Trans::conjugate_transpose, n, n, n, T(-1), A, n, B, n, T(1), C, n);
  vendor::syrk(blas, 'L', Trans::no, n, n, T(-1), A, n, T(1), C, n);
  vendor::trsm(blas, false, 'L', Trans::conjugate_transpose, n, n, T(1), A, n, B, n);
  const int lwork = vendor::potrf_workspace(solver, 'L', n, A, n);
  DeviceBuffer work(std::size_t(std::max(lwork, 1)) * sizeof(T) + sizeof(int));
  int* info = reinterpret_cast<int*>(static_cast<T*>(work.data) + std::max(lwork, 1));
  vendor::potrf(solver, 'L', n, A, n, static_cast<T*>(work.data), lwork, info);
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void warm_up_device(int device) {
  TESSERA_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  try {
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas, stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
    call_vendor_routines<double>(blas, solver, stream);
  } catch (...) {
  }
  if (solver) cusolverDnDestroy(solver);
  if (blas) cublasDestroy(blas);
  if (stream) cudaStreamDestroy(stream);
}

void warm_up(int devices) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return;  // StarPU's start will say why
  if (devices >= 0) count = std::min(count, devices);
  for (int device = 0; device < count; ++device) {
    try {
      warm_up_device(device);
    } catch (...) {
      return;
    }
  }
  cudaGetLastError();  // leave this thread's error state clean
}

}  // namespace

CudaWarmUp::CudaWarmUp(int devices) {
#ifndef STARPU_SIMGRID  // simulated GPUs: no device to warm
  thread_ = std::thread(warm_up, devices);
#else
  (void)devices;
#endif
}

#else

CudaWarmUp::CudaWarmUp(int) {}

#endif

CudaWarmUp::~CudaWarmUp() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace tessera::detail
