// Fresh-process CUDA start against the bytes the process touched before it.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <sys/mman.h>
using C = std::chrono::steady_clock;
static double s(C::time_point a) { return std::chrono::duration<double>(C::now() - a).count(); }
int main(int argc, char** argv) {
  double gb = atof(argv[1]);
  int mode = argc > 2 ? atoi(argv[2]) : 0;  // 0 vector touched, 1 vector + MADV_NOHUGEPAGE, 2 untouched malloc
  size_t bytes = size_t(gb * 1e9);
  auto t0 = C::now();
  char* p = nullptr;
  std::vector<char> v;
  if (mode == 2) { p = (char*)malloc(bytes + 1); }
  else { v.resize(bytes); p = v.data(); if (mode == 1) madvise(p, bytes, MADV_NOHUGEPAGE); for (size_t i = 0; i < bytes; i += 4096) p[i] = 1; }
  double touch = s(t0);
  auto t1 = C::now();
  cuInit(0);
  double init = s(t1);
  auto t2 = C::now();
  cudaFree(0);
  double ctx = s(t2);
  auto t3 = C::now();
  cublasHandle_t h; cublasCreate(&h);
  double blas = s(t3);
  printf("{\"gb\": %.1f, \"mode\": %d, \"touch\": %.3f, \"cuInit\": %.3f, \"context\": %.3f, \"cublasCreate\": %.3f, \"first_byte\": %d}\n", gb, mode, touch, init, ctx, blas, p[bytes/2]);
  return 0;
}
