// Times the pieces of a blocked triangular solve by diagonal-block inverses (FP32, one column):
// cuBLAS sgemv on a 2048 x 2048 block (N and T) and on the panels below (N and T), n = 16384.
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
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 16384, b = 2048;
  cublasHandle_t h; cublasCreate(&h);
  float *L, *inv, *x, *y;
  cudaMalloc(&L, (size_t)n * n * 4); cudaMalloc(&inv, (size_t)b * b * 4); cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
  cudaMemset(L, 0, (size_t)n * n * 4); cudaMemset(inv, 0, (size_t)b * b * 4); cudaMemset(x, 0, n * 4); cudaMemset(y, 0, n * 4);
  const float one = 1, zero = 0, minus = -1;
  for (int rep = 0; rep < 2; ++rep) {
    float t;
    t = time_us([&] { cublasSgemv(h, CUBLAS_OP_N, b, b, &one, inv, b, x, 1, &zero, y, 1); }, 21);
    printf("inverse block gemv N %d: %.1f us (%.2f TB/s)\n", b, t, 4.0 * b * b / t / 1e6);
    t = time_us([&] { cublasSgemv(h, CUBLAS_OP_T, b, b, &one, inv, b, x, 1, &zero, y, 1); }, 21);
    printf("inverse block gemv T %d: %.1f us (%.2f TB/s)\n", b, t, 4.0 * b * b / t / 1e6);
    for (int k = 0; k < n / b - 1; k += 3) {
      const int rest = n - (k + 1) * b;
      t = time_us([&] { cublasSgemv(h, CUBLAS_OP_N, rest, b, &minus, L, n, x, 1, &one, y, 1); }, 21);
      float t2 = time_us([&] { cublasSgemv(h, CUBLAS_OP_T, rest, b, &minus, L, n, x, 1, &one, y, 1); }, 21);
      printf("panel %5d x %d gemv N %.1f us (%.2f TB/s)  T %.1f us (%.2f TB/s)\n", rest, b, t, 4.0 * rest * b / t / 1e6, t2, 4.0 * rest * b / t2 / 1e6);
    }
    // The whole forward + backward sequence as the library runs it.
    t = time_us([&] {
      for (int k = 0; k < n / b; ++k) { const int rest = n - (k + 1) * b;
        cublasSgemv(h, CUBLAS_OP_N, b, b, &one, inv, b, x, 1, &zero, y, 1);
        if (rest) cublasSgemv(h, CUBLAS_OP_N, rest, b, &minus, L, n, x, 1, &one, y, 1); }
      for (int k = n / b - 1; k >= 0; --k) { const int rest = n - (k + 1) * b;
        if (rest) cublasSgemv(h, CUBLAS_OP_T, rest, b, &minus, L, n, x, 1, &one, y, 1);
        cublasSgemv(h, CUBLAS_OP_T, b, b, &one, inv, b, x, 1, &zero, y, 1); } }, 21);
    printf("forward + backward sequence: %.1f us\n", t);
  }
  printf("status %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
