// The trailing update C -= A B^T of a tile Cholesky in each arithmetic cuBLAS offers on this GPU:
// FP64, FP32, FP32 operands rounded to TF32, BF16 or FP16 inside the product (the compute types
// CUBLAS_COMPUTE_32F_FAST_*), and operands already stored in BF16 or FP16; FP32 accumulation in
// all but FP64. Random operands in [-1, 1] (tensor cores run faster on zeros). Prints TFLOP/s per
// shape: square tiles of order nb, and the large update of a right-looking step (m = n = 16384,
// k = nb).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <fmt/core.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "device_support.hpp"

namespace {

using tessera::bench::Device;
using tessera::bench::Timer;

struct Arithmetic {
  const char* name;
  cudaDataType_t operands;
  cudaDataType_t result;
  cublasComputeType_t compute;
};

}  // namespace

int main(int argc, char** argv) {
  if (!tessera::bench::cuda_device_present()) {
    fmt::print("no CUDA device\n");
    return 0;
  }
  const int reps = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaDeviceProp prop{};
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  fmt::print("device: {}\n", prop.name);
  cublasHandle_t h;
  TESSERA_CUBLAS_CHECK(cublasCreate(&h));
  Timer timer;
  const Arithmetic kinds[] = {
      {"fp64", CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F},
      {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
      {"fp32>tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
      {"fp32>bf16", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16BF},
      {"fp32>fp16", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16F},
      {"bf16", CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F},
      {"fp16", CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
  };
  struct Shape {
    int m, n, k;
  };
  const Shape shapes[] = {{512, 512, 512},       {1024, 1024, 1024},   {2048, 2048, 2048},  {4096, 4096, 4096},
                          {16384, 16384, 512},   {16384, 16384, 1024}, {16384, 16384, 2048}};
  fmt::print("{:>6} {:>6} {:>6} |", "m", "n", "k");
  for (const auto& a : kinds) fmt::print(" {:>10}", a.name);
  fmt::print("   (TFLOP/s)\n");
  for (const Shape& s : shapes) {
    fmt::print("{:>6} {:>6} {:>6} |", s.m, s.n, s.k);
    for (const Arithmetic& a : kinds) {
      const std::size_t ab = std::size_t(s.m) * s.k, bb = std::size_t(s.n) * s.k, cb = std::size_t(s.m) * s.n;
      const std::size_t op_size = a.operands == CUDA_R_64F ? 8 : a.operands == CUDA_R_32F ? 4 : 2;
      const std::size_t c_size = a.result == CUDA_R_64F ? 8 : 4;
      Device<char> A(ab * op_size), B(bb * op_size), C(cb * c_size);
      // Random bytes are not random values; fill through the element types.
      auto fill = [&](Device<char>& d, std::size_t count, std::size_t size, unsigned seed) {
        std::mt19937 gen(seed);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        std::vector<char> hbuf(count * size);
        for (std::size_t e = 0; e < count; ++e) {
          const float v = u(gen);
          if (size == 8) reinterpret_cast<double*>(hbuf.data())[e] = v;
          else if (size == 4) reinterpret_cast<float*>(hbuf.data())[e] = v;
          else if (a.operands == CUDA_R_16BF) reinterpret_cast<__nv_bfloat16*>(hbuf.data())[e] = __float2bfloat16(v);
          else reinterpret_cast<__half*>(hbuf.data())[e] = __float2half(v);
        }
        TESSERA_CUDA_CHECK(cudaMemcpy(d.get(), hbuf.data(), hbuf.size(), cudaMemcpyHostToDevice));
      };
      fill(A, ab, op_size, 1);
      fill(B, bb, op_size, 2);
      fill(C, cb, c_size, 3);
      const double alpha64 = -1, beta64 = 1;
      const float alpha32 = -1, beta32 = 1;
      const void* alpha = a.compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&alpha64) : &alpha32;
      const void* beta = a.compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&beta64) : &beta32;
      const double ms = timer.median_ms(reps, [] {}, [&] {
        TESSERA_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_T, s.m, s.n, s.k, alpha, A.get(), a.operands, s.m,
                                          B.get(), a.operands, s.n, beta, C.get(), a.result, s.m, a.compute,
                                          CUBLAS_GEMM_DEFAULT));
      });
      fmt::print(" {:>10.1f}", 2.0 * s.m * s.n * double(s.k) / (ms * 1e9));
    }
    fmt::print("\n");
  }
  cublasDestroy(h);
  return 0;
}
