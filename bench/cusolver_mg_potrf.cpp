// The multi-GPU peer: NVIDIA's cusolverMgPotrf (double, lower) on G GPUs of this node, on the matrix
// that `tessera potrf --n N` factors, in cusolverMg's own layout (1 x G device grid, column blocks
// of T columns dealt cyclically over the GPUs, each GPU's blocks stored side by side with lda = n).
// Per repetition, timed: the copy in from the caller's pageable array, the factorization, the copy
// back ("end to end"), and the factorization alone ("resident"). One warm-up first. Prints one JSON
// line per (n, G) with the medians, and TFLOP/s with n^3/3 flops.
//   cusolver_mg_potrf --sizes N[,N...] --gpus G[,G...] [--block T] [--repetitions R]
#include <cuda_runtime.h>
#include <cusolverMg.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "kernels/cuda/check.hpp"
#include "testkit/spd_matrices.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One matrix spread over the GPUs, with cusolverMg's handles and workspace.
class MgMatrix {
 public:
  MgMatrix(int n, int block, const std::vector<int>& devices) : n_(n), block_(block), devices_(devices) {
    const int g = static_cast<int>(devices.size());
    TESSERA_CUSOLVER_CHECK(cusolverMgCreate(&handle_));
    TESSERA_CUSOLVER_CHECK(cusolverMgDeviceSelect(handle_, g, devices_.data()));
    TESSERA_CUSOLVER_CHECK(cusolverMgCreateDeviceGrid(&grid_, 1, g, devices_.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR));
    TESSERA_CUSOLVER_CHECK(cusolverMgCreateMatrixDesc(&desc_, n, n, n, block, CUDA_R_64F, grid_));
    const int blocks = (n + block - 1) / block;
    for (int d = 0; d < g; ++d) {
      const int local_blocks = blocks / g + (d < blocks % g ? 1 : 0);
      TESSERA_CUDA_CHECK(cudaSetDevice(devices_[d]));
      void* p = nullptr;
      TESSERA_CUDA_CHECK(cudaMalloc(&p, sizeof(double) * static_cast<std::size_t>(n) * std::max(1, local_blocks) * block));
      local_.push_back(p);
    }
    TESSERA_CUSOLVER_CHECK(cusolverMgPotrf_bufferSize(handle_, CUBLAS_FILL_MODE_LOWER, n, local_.data(), 1, 1, desc_,
                                                      CUDA_R_64F, &lwork_));
    for (int d = 0; d < g; ++d) {
      TESSERA_CUDA_CHECK(cudaSetDevice(devices_[d]));
      void* w = nullptr;
      TESSERA_CUDA_CHECK(cudaMalloc(&w, sizeof(double) * static_cast<std::size_t>(std::max<int64_t>(1, lwork_))));
      work_.push_back(w);
    }
  }
  ~MgMatrix() {
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      cudaSetDevice(devices_[d]);
      cudaFree(local_[d]);
      cudaFree(work_[d]);
    }
    cusolverMgDestroyMatrixDesc(desc_);
    cusolverMgDestroyGrid(grid_);
    cusolverMgDestroy(handle_);
  }
  MgMatrix(const MgMatrix&) = delete;
  MgMatrix& operator=(const MgMatrix&) = delete;

  // Column block j of the caller's array (lda = n) <-> its place on GPU j % G.
  void copy(double* host, bool to_gpus) {
    const int g = static_cast<int>(devices_.size());
    for (int j0 = 0, j = 0; j0 < n_; j0 += block_, ++j) {
      const int width = std::min(block_, n_ - j0);
      double* local = static_cast<double*>(local_[j % g]) + static_cast<std::size_t>(j / g) * block_ * n_;
      double* column = host + static_cast<std::size_t>(j0) * n_;
      const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(n_) * width;
      TESSERA_CUDA_CHECK(cudaMemcpy(to_gpus ? local : column, to_gpus ? column : local, bytes,
                                    to_gpus ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
    }
  }

  int factor() {
    int info = 0;
    TESSERA_CUSOLVER_CHECK(cusolverMgPotrf(handle_, CUBLAS_FILL_MODE_LOWER, n_, local_.data(), 1, 1, desc_, CUDA_R_64F,
                                           work_.data(), lwork_, &info));
    for (int d : devices_) {
      TESSERA_CUDA_CHECK(cudaSetDevice(d));
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    }
    return info;
  }

 private:
  int n_, block_;
  std::vector<int> devices_;
  cusolverMgHandle_t handle_ = nullptr;
  cudaLibMgGrid_t grid_ = nullptr;
  cudaLibMgMatrixDesc_t desc_ = nullptr;
  std::vector<void*> local_, work_;
  int64_t lwork_ = 0;
};

// cusolverMg moves data between the GPUs directly: peer access both ways where the GPUs allow it.
void enable_peer_access(int gpus) {
  for (int a = 0; a < gpus; ++a)
    for (int b = 0; b < gpus; ++b) {
      int can = 0;
      if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) continue;
      TESSERA_CUDA_CHECK(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) TESSERA_CUDA_CHECK(e);
      cudaGetLastError();
    }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{40000}, gpu_counts{1, 2};
  int block = 256, repetitions = 2;
  try {
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string arg = args.option();
      if (arg == "--sizes") sizes = tessera::bench::parse_int_list(args.value());
      else if (arg == "--gpus") gpu_counts = tessera::bench::parse_int_list(args.value());
      else if (arg == "--block") block = std::stoi(args.value());
      else if (arg == "--repetitions") repetitions = std::stoi(args.value());
      else throw std::runtime_error("unknown option " + arg);
    }
    int present = 0;
    TESSERA_CUDA_CHECK(cudaGetDeviceCount(&present));
    enable_peer_access(present);
    for (int n : sizes) {
      const std::vector<double> original =
          tessera::testkit::potrf_input_matrix<double>(n, 1);  // tessera potrf --seed 1
      std::vector<double> a(original.size());
      for (int g : gpu_counts) {
        if (g > present) {
          fmt::print("{{\"n\": {}, \"gpus\": {}, \"skipped\": \"{} GPU(s) present\"}}\n", n, g, present);
          continue;
        }
        std::vector<int> devices(static_cast<std::size_t>(g));
        for (int d = 0; d < g; ++d) devices[static_cast<std::size_t>(d)] = d;
        MgMatrix m(n, block, devices);
        std::vector<double> end_to_end, resident;
        int info = 0;
        for (int r = 0; r <= repetitions; ++r) {  // r = 0: warm-up
          a = original;
          auto start = Clock::now();
          m.copy(a.data(), true);
          const auto factor_start = Clock::now();
          info = m.factor();
          const double factor_s = seconds_since(factor_start);
          m.copy(a.data(), false);
          const double total_s = seconds_since(start);
          if (r > 0) {
            end_to_end.push_back(total_s);
            resident.push_back(factor_s);
          }
        }
        const double flops = double(n) * n * n / 3.0;
        fmt::print("{{\"n\": {}, \"gpus\": {}, \"block\": {}, \"info\": {}, \"resident_s\": {:.4f}, \"resident_tflops\": {:.2f}, "
                   "\"end_to_end_s\": {:.4f}, \"end_to_end_tflops\": {:.2f}}}\n",
                   n, g, block, info, median(resident), flops / median(resident) * 1e-12, median(end_to_end),
                   flops / median(end_to_end) * 1e-12);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "cusolver_mg_potrf: {}\n", e.what());
    return 1;
  }
  return 0;
}
