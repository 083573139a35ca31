// The batched inverse kernel alone (potri_batched, lower factors in place, packed stack): CUDA-event
// median of 15 launches after 3, microseconds, and a checksum of the inverses.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <complex>
#include "cuda/batched_inverse.hpp"
#include "tessera/precision.hpp"
namespace tk = tessera::kernels::cuda;
template <class R> __global__ void fill_factors(R* a, int n, long long count, int parts) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < count * n * n; e += (long long)gridDim.x * blockDim.x) {
    const int r = int(e % n), c = int((e / n) % n);
    unsigned x = unsigned(e) * 2654435761u + 7u; x ^= x >> 15;
    a[e * parts] = r == c ? R(2 + (x % 100) / 100.0) : (r > c ? R(((x % 2001) / 1000.0 - 1.0) * 0.3) : R(0));
    if (parts == 2) a[e * parts + 1] = r > c ? R(((x % 997) / 500.0 - 1.0) * 0.2) : R(0);
  }
}
template <class T> struct Real { using type = T; static constexpr int parts = 1; };
template <class R> struct Real<std::complex<R>> { using type = R; static constexpr int parts = 2; };
template <class T> const char* name();
template <> const char* name<double>() { return "double"; }
template <> const char* name<float>() { return "float"; }
template <> const char* name<std::complex<float>>() { return "complex64"; }
template <> const char* name<std::complex<double>>() { return "complex128"; }
template <class T> void run() {
  for (int n : {4, 8, 16, 24, 32}) for (int b : {1, 512, 4096, 16384}) {
    T *a0, *a; int* info;
    const size_t bytes = sizeof(T) * size_t(n) * n * b;
    cudaMalloc(&a0, bytes); cudaMalloc(&a, bytes); cudaMalloc(&info, 4 * b);
    fill_factors<typename Real<T>::type><<<1024, 256>>>(reinterpret_cast<typename Real<T>::type*>(a0), n, b, Real<T>::parts);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    std::vector<float> t;
    for (int rep = 0; rep < 18; ++rep) {
      cudaMemcpy(a, a0, bytes, cudaMemcpyDeviceToDevice);
      cudaEventRecord(e0);
      tk::potri_batched<T>(tk::BatchUplo::lower, n, a, n, (long long)n * n, b, info, nullptr);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (rep >= 3) t.push_back(ms * 1000);
    }
    std::sort(t.begin(), t.end());
    std::vector<T> h(size_t(n) * n * b); cudaMemcpy(h.data(), a, bytes, cudaMemcpyDeviceToHost);
    double sum = 0; for (T v : h) sum += std::abs(v);
    printf("%s n %3d b %6d  %8.1f us  checksum %.12e\n", name<T>(), n, b, t[t.size() / 2], sum);
    cudaFree(a0); cudaFree(a); cudaFree(info);
  }
}
int main(int argc, char**) { cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf("%s\n", p.name); run<double>(); run<float>(); if (argc > 1) { run<std::complex<float>>(); run<std::complex<double>>(); } }
