// Times symmetric_residual against cuBLAS dsymv (b - A x), n given, median of reps.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <complex>
#include "refinement.hpp"
namespace tk = tessera::kernels::cuda;
template <class F> float time_ms(F f, int reps) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
__global__ void fill(double* p, size_t count, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    p[i] = (h % 2001) / 1000.0 - 1.0;
  }
}
int main(int argc, char** argv) {
  const int reps = 21;
  cublasHandle_t h; cublasCreate(&h);
  for (int ai = 1; ai < argc; ++ai) {
    const int n = atoi(argv[ai]);
    const size_t nn = (size_t)n * n;
    double *A, *x, *b, *r, *r2, *w;
    cudaMalloc(&A, nn * 8); cudaMalloc(&x, n * 8); cudaMalloc(&b, n * 8); cudaMalloc(&r, n * 8); cudaMalloc(&r2, n * 8);
    cudaMalloc(&w, tk::symmetric_residual_workspace(n) * 8);
    fill<<<1024, 256>>>(A, nn, 1); fill<<<64, 256>>>(x, n, 2); fill<<<64, 256>>>(b, n, 3);
    const double one = 1, minus = -1;
    const double bytes = (double)n * (n + 1) / 2 * 8;
    for (char uplo : {'L', 'U'}) {
      float t_cublas = time_ms([&] { cudaMemcpyAsync(r2, b, n * 8, cudaMemcpyDeviceToDevice);
        cublasDsymv(h, uplo == 'L' ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER, n, &minus, A, n, x, 1, &one, r2, 1); }, reps);
      float t_ours = time_ms([&] { tk::symmetric_residual(uplo, n, A, n, x, b, r, w, nullptr); }, reps);
      std::vector<double> h1(n), h2(n); cudaMemcpy(h1.data(), r, n * 8, cudaMemcpyDeviceToHost); cudaMemcpy(h2.data(), r2, n * 8, cudaMemcpyDeviceToHost);
      double diff = 0, mag = 0; for (int i = 0; i < n; ++i) { diff = std::max(diff, std::abs(h1[i] - h2[i])); mag = std::max(mag, std::abs(h2[i])); }
      printf("n %6d uplo %c  cublas dsymv %.3f ms (%.2f TB/s)  residual %.3f ms (%.2f TB/s)  %.2fx  max diff %.1e of %.1e\n", n, uplo,
             t_cublas, bytes / t_cublas / 1e9, t_ours, bytes / t_ours / 1e9, t_cublas / t_ours, diff, mag);
    }
    cudaFree(A); cudaFree(x); cudaFree(b); cudaFree(r); cudaFree(r2); cudaFree(w);
  }
  cudaError_t e = cudaDeviceSynchronize(); printf("status %s\n", cudaGetErrorString(e));
  return 0;
}
