// Pieces of a pair of block solves by 2048 x 2048 diagonal-block inverses, FP32, nrhs columns:
// cuBLAS sgemm as the library runs it, TF32 products, split-K for the long transposed products.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
template <class F> float time_us(F f, int reps) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
cublasHandle_t h;
void gemm(bool tf32, cublasOperation_t ta, int m, int nr, int k, float alpha, const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  cublasGemmEx(h, ta, CUBLAS_OP_N, m, nr, k, &alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta, C, CUDA_R_32F, ldc,
               tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
// C (m x nr) := beta C + alpha A^T B, A k x m (lda), B k x nr, K split in `parts` (work: parts m nr).
void gemm_t_split(bool tf32, int m, int nr, int k, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                  float* C, int ldc, int parts, float* work, const float* ones) {
  const int kp = (k + parts - 1) / parts;
  const float one = 1, zero = 0;
  cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, nr, kp, &one, A, CUDA_R_32F, lda, kp, B, CUDA_R_32F, ldb, kp,
                             &zero, work, CUDA_R_32F, m, (long long)m * nr, parts,
                             tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  // C := beta C + alpha sum_p work_p: one gemv over the (m nr) x parts matrix (C contiguous, ldc == m).
  cublasSgemv(h, CUBLAS_OP_N, m * nr, parts, &alpha, work, m * nr, ones, 1, &beta, C, 1);
}
int main(int argc, char** argv) {
  const int b = 2048;
  cublasCreate(&h);
  for (int ai = 1; ai < argc; ++ai) {
    const int n = atoi(argv[ai]);
    for (int nr : {1, 16}) {
      float *L, *inv, *x, *y, *work, *ones;
      cudaMalloc(&L, (size_t)n * n * 4); cudaMalloc(&inv, (size_t)b * b * 4); cudaMalloc(&x, (size_t)n * nr * 4); cudaMalloc(&y, (size_t)n * nr * 4);
      cudaMalloc(&work, (size_t)32 * b * nr * 4); cudaMalloc(&ones, 64 * 4);
      cudaMemset(L, 0, (size_t)n * n * 4); cudaMemset(inv, 0, (size_t)b * b * 4); cudaMemset(x, 0, (size_t)n * nr * 4); cudaMemset(y, 0, (size_t)n * nr * 4);
      std::vector<float> h1(64, 1.0f); cudaMemcpy(ones, h1.data(), 64 * 4, cudaMemcpyHostToDevice);
      const float one = 1, zero = 0, minus = -1;
      const int blocks = (n + b - 1) / b;
      printf("n %d nrhs %d\n", n, nr);
      if (nr == 1) {
        printf("  gemv inverse N %.1f us, T %.1f us; trmv N %.1f us, T %.1f us\n",
               time_us([&] { cublasSgemv(h, CUBLAS_OP_N, b, b, &one, inv, b, x, 1, &zero, y, 1); }, 21),
               time_us([&] { cublasSgemv(h, CUBLAS_OP_T, b, b, &one, inv, b, x, 1, &zero, y, 1); }, 21),
               time_us([&] { cublasStrmv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, b, inv, b, y, 1); }, 21),
               time_us([&] { cublasStrmv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, b, inv, b, y, 1); }, 21));
      }
      for (bool tf32 : {false, true}) {
        float t1 = time_us([&] { gemm(tf32, CUBLAS_OP_N, b, nr, b, one, inv, b, x, n, zero, y, n); }, 21);
        float t2 = time_us([&] { gemm(tf32, CUBLAS_OP_T, b, nr, b, one, inv, b, x, n, zero, y, n); }, 21);
        const int rest = n - b;
        float t3 = time_us([&] { gemm(tf32, CUBLAS_OP_N, rest, nr, b, minus, L + b, n, x, n, one, y + b, n); }, 21);
        float t4 = time_us([&] { gemm(tf32, CUBLAS_OP_T, b, nr, rest, minus, L + b, n, x + b, n, one, y, n); }, 21);
        printf("  %s inverse N %.1f us T %.1f us | panel %d x %d N %.1f us (%.2f TB/s) T %.1f us (%.2f TB/s)\n", tf32 ? "tf32" : "fp32",
               t1, t2, rest, b, t3, 4.0 * rest * b / t3 / 1e6, t4, 4.0 * rest * b / t4 / 1e6);
        for (int parts : {4, 8, 16}) {
          float t5 = time_us([&] { gemm_t_split(tf32, b, nr, rest, minus, L + b, n, x + b, n, one, y, n, parts, work, ones); }, 21);
          float t6 = time_us([&] { gemm_t_split(tf32, b, nr, b, one, inv, b, x, n, zero, y, n, parts, work, ones); }, 21);
          printf("    split %2d: panel T %.1f us, inverse T %.1f us\n", parts, t5, t6);
        }
        const auto sequence = [&](int parts) {
          for (int k = 0; k < blocks; ++k) { const int k0 = k * b, kb = std::min(b, n - k0), r = n - k0 - kb;
            gemm(tf32, CUBLAS_OP_N, kb, nr, kb, one, inv, b, x + k0, n, zero, y + k0, n);
            if (r) gemm(tf32, CUBLAS_OP_N, r, nr, kb, minus, L + k0 + kb + (size_t)k0 * n, n, y + k0, n, one, x + k0 + kb, n); }
          for (int k = blocks - 1; k >= 0; --k) { const int k0 = k * b, kb = std::min(b, n - k0), r = n - k0 - kb;
            if (r) { if (parts > 1) gemm_t_split(tf32, kb, nr, r, minus, L + k0 + kb + (size_t)k0 * n, n, y + k0 + kb, n, one, x + k0, n, parts, work, ones);
                     else gemm(tf32, CUBLAS_OP_T, kb, nr, r, minus, L + k0 + kb + (size_t)k0 * n, n, y + k0 + kb, n, one, x + k0, n); }
            if (parts > 1) gemm_t_split(tf32, kb, nr, kb, one, inv, b, x + k0, n, zero, y + k0, n, parts, work, ones);
            else gemm(tf32, CUBLAS_OP_T, kb, nr, kb, one, inv, b, x + k0, n, zero, y + k0, n); } };
        for (int parts : {1, 8})
          printf("  %s sequence fwd+bwd (split %d): %.1f us\n", tf32 ? "tf32" : "fp32", parts, time_us([&] { sequence(parts); }, 11));
      }
      cudaFree(L); cudaFree(inv); cudaFree(x); cudaFree(y); cudaFree(work); cudaFree(ones);
    }
  }
  printf("status %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
