// Diagnostic: the cost of gathering a lower tile matrix into one matrix on the GPU, by 2-D memcpy and by a kernel.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void copy_block(int m, int n, const double* __restrict__ s, int lds, double* __restrict__ d, int ldd) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = blockIdx.y; j < n; j += gridDim.y) if (i < m) d[i + (long)j * ldd] = s[i + (long)j * lds];
}
int main(int argc, char** argv) {
  for (int n : {8192, 16384}) {
    int nb = n == 8192 ? 1024 : 2048, nt = n / nb;
    std::vector<double*> tiles;
    for (int j = 0; j < nt; ++j) for (int i = j; i < nt; ++i) { double* p; CK(cudaMalloc(&p, sizeof(double) * nb * nb)); CK(cudaMemset(p, 0, sizeof(double)*nb*nb)); tiles.push_back(p); }
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    double* M; CK(cudaMalloc(&M, sizeof(double) * (size_t)n * n));
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    auto gather = [&](int how) {
      int t = 0;
      for (int j = 0; j < nt; ++j) for (int i = j; i < nt; ++i, ++t) {
        double* dst = M + (long)i * nb + (long)j * nb * n;
        if (how == 0) cudaMemcpy2DAsync(dst, sizeof(double) * n, tiles[t], sizeof(double) * nb, sizeof(double) * nb, nb, cudaMemcpyDeviceToDevice, st);
        else copy_block<<<dim3((nb + 255) / 256, 256), 256, 0, st>>>(nb, nb, tiles[t], nb, dst, n);
      }
    };
    for (int how = 0; how < 2; ++how) {
      gather(how); cudaStreamSynchronize(st);
      cudaEventRecord(a, st); for (int r = 0; r < 5; ++r) gather(how); cudaEventRecord(b, st); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      double bytes = 2.0 * tiles.size() * nb * (double)nb * 8;
      printf("n %d nb %d gather by %s: %.3f ms (%.0f GB/s read+write)\n", n, nb, how ? "kernel" : "cudaMemcpy2DAsync", ms / 5, bytes / (ms / 5 * 1e-3) * 1e-9);
    }
    // A fresh stream-ordered allocation per call, default pool (release threshold 0), then kept.
    for (int keep = 0; keep < 2; ++keep) {
      cudaMemPool_t pool; cudaDeviceGetDefaultMemPool(&pool, 0);
      unsigned long long thr = keep ? ~0ull : 0; cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
      double* X; cudaMallocAsync(&X, sizeof(double) * (size_t)n * n, st); cudaFreeAsync(X, st); cudaStreamSynchronize(st);
      cudaEventRecord(a, st);
      for (int r = 0; r < 5; ++r) { cudaMallocAsync(&X, sizeof(double) * (size_t)n * n, st); cudaMemsetAsync(X, 0, 8, st); cudaFreeAsync(X, st); cudaStreamSynchronize(st); }
      cudaEventRecord(b, st); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      printf("n %d cudaMallocAsync+free+sync, release threshold %s: %.3f ms\n", n, keep ? "max" : "0", ms / 5);
    }
    cudaFree(M); for (auto p : tiles) cudaFree(p); cudaStreamDestroy(st);
  }
  return 0;
}
