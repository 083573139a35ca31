// Residual R = B - A X (A lower-stored double, n x n) by cuBLAS's symm, symv and a blocked form of
// two gemms per block column; and FP32 tall-skinny products of the block solves.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>
#define CK(x) do { auto e_ = (x); if ((int)e_ != 0) { std::printf("%s:%d %d\n", __FILE__, __LINE__, (int)e_); std::exit(1);} } while (0)
__global__ void fill(double* a, size_t n, double v) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) a[i] = v * ((i * 2654435761u) % 1000) / 1000.0; }
__global__ void fillf(float* a, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) a[i] = ((i * 2654435761u) % 1000) / 1000.0f; }
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 30000;
  cublasHandle_t h; CK(cublasCreate(&h));
  double *A, *X, *R; float *Lf, *Xf, *Rf;
  const size_t nn = (size_t)n * n;
  CK(cudaMalloc(&A, nn * 8)); CK(cudaMalloc(&X, (size_t)n * 16 * 8)); CK(cudaMalloc(&R, (size_t)n * 16 * 8));
  CK(cudaMalloc(&Lf, nn * 4)); CK(cudaMalloc(&Xf, (size_t)n * 16 * 4)); CK(cudaMalloc(&Rf, (size_t)n * 16 * 4));
  fill<<<(nn + 255) / 256, 256>>>(A, nn, 1.0); fill<<<(n * 16 + 255) / 256, 256>>>(X, (size_t)n * 16, 1.0);
  fillf<<<(nn + 255) / 256, 256>>>(Lf, nn); fillf<<<(n * 16 + 255) / 256, 256>>>(Xf, (size_t)n * 16);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto timeit = [&](const char* name, double bytes, std::function<void()> f) {
    std::vector<float> t;
    for (int r = 0; r < 7; ++r) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms); }
    std::sort(t.begin(), t.end());
    std::printf("%-44s %8.3f ms  %6.2f TB/s (of the triangle once)\n", name, t[3], bytes / (t[3] * 1e-3) / 1e12);
  };
  const double one = 1, m1 = -1;
  const double tri8 = 8.0 * n * (n + 1) / 2, tri4 = 4.0 * n * (n + 1) / 2;
  for (int k : {1, 16}) {
    char name[64];
    std::snprintf(name, 64, "dsymm nrhs %d", k);
    timeit(name, tri8, [&] { CK(cublasDsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, n, k, &m1, A, n, X, n, &one, R, n)); });
    if (k == 1) timeit("dsymv", tri8, [&] { CK(cublasDsymv(h, CUBLAS_FILL_MODE_LOWER, n, &m1, A, n, X, 1, &one, R, 1)); });
    for (int b : {1024, 2048, 4096}) {
      std::snprintf(name, 64, "blocked symm b %d nrhs %d", b, k);
      timeit(name, tri8, [&] {
        for (int j0 = 0; j0 < n; j0 += b) {
          const int jb = std::min(b, n - j0), rest = n - j0 - jb;
          const double* D = A + j0 + (size_t)j0 * n;
          CK(cublasDsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, jb, k, &m1, D, n, X + j0, n, &one, R + j0, n));
          if (rest > 0) {
            const double* P = D + jb;
            if (k == 1) {
              CK(cublasDgemv(h, CUBLAS_OP_N, rest, jb, &m1, P, n, X + j0, 1, &one, R + j0 + jb, 1));
              CK(cublasDgemv(h, CUBLAS_OP_T, rest, jb, &m1, P, n, X + j0 + jb, 1, &one, R + j0, 1));
            } else {
              CK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, rest, k, jb, &m1, P, n, X + j0, n, &one, R + j0 + jb, n));
              CK(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, jb, k, rest, &m1, P, n, X + j0 + jb, n, &one, R + j0, n));
            }
          }
        }
      });
    }
    // FP32 panel products of the block solves, as now (blocks of 1024): forward (N) and backward (T).
    for (int b : {1024, 2048}) {
      std::snprintf(name, 64, "solve panels fwd+bwd b %d nrhs %d", b, k);
      const float onef = 1, m1f = -1;
      timeit(name, 2 * tri4, [&] {
        for (int t = 0; t < 2; ++t)
          for (int j0 = 0; j0 < n; j0 += b) {
            const int jb = std::min(b, n - j0), rest = n - j0 - jb;
            const float* P = Lf + j0 + jb + (size_t)j0 * n;
            if (k == 1) {
              CK(cublasSgemv(h, CUBLAS_OP_N, jb, jb, &onef, Lf, b, Xf, 1, &onef, Rf + j0, 1));
              if (rest > 0) CK(cublasSgemv(h, t ? CUBLAS_OP_T : CUBLAS_OP_N, rest, jb, &m1f, P, n, t ? Xf + j0 + jb : Xf + j0, 1, &onef, t ? Rf + j0 : Rf + j0 + jb, 1));
            } else {
              CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, jb, k, jb, &onef, Lf, b, Xf, n, &onef, Rf + j0, n));
              if (rest > 0) {
                if (t) CK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, jb, k, rest, &m1f, P, n, Xf + j0 + jb, n, &onef, Rf + j0, n));
                else CK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, rest, k, jb, &m1f, P, n, Xf + j0, n, &onef, Rf + j0 + jb, n));
              }
            }
          }
      });
    }
  }
  return 0;
}
