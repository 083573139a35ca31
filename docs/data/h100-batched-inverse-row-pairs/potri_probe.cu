// The batched inverse kernel alone: in place (lower) and out of place with both triangles written
// (the Python path), CUDA-event median of 15 launches after 3, microseconds, with a checksum.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <complex>
#include <string>
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
template <class T> void run(const std::vector<int>& ns, const std::vector<int>& bs, int reps) {
  for (int n : ns) for (int b : bs) {
    T *a0, *a, *x; int* info;
    const size_t bytes = sizeof(T) * size_t(n) * n * b;
    cudaMalloc(&a0, bytes); cudaMalloc(&a, bytes); cudaMalloc(&x, bytes); cudaMalloc(&info, 4 * b);
    fill_factors<typename Real<T>::type><<<1024, 256>>>(reinterpret_cast<typename Real<T>::type*>(a0), n, b, Real<T>::parts);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int form = 0; form < 2; ++form) {
      std::vector<float> t;
      for (int rep = 0; rep < reps + 3; ++rep) {
        cudaMemcpy(a, a0, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e0);
        if (form == 0)
          tk::potri_batched<T>(tk::BatchUplo::lower, n, a, n, (long long)n * n, b, info, nullptr);
        else
          tk::potri_batched<T>(tk::BatchUplo::lower, n, a, 1, n, (long long)n * n, x, n, (long long)n * n, b, nullptr, nullptr);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (rep >= 3) t.push_back(ms * 1000);
      }
      std::sort(t.begin(), t.end());
      std::vector<T> h(size_t(n) * n * b); cudaMemcpy(h.data(), form == 0 ? a : x, bytes, cudaMemcpyDeviceToHost);
      double sum = 0; for (T v : h) sum += std::abs(v);
      printf("%-10s %-5s n %3d b %6d  %9.1f us  checksum %.12e\n", name<T>(), form == 0 ? "inpl" : "full", n, b, t[t.size() / 2], sum);
    }
    cudaError_t err = cudaGetLastError(); if (err != cudaSuccess) printf("error %s\n", cudaGetErrorString(err));
    cudaFree(a0); cudaFree(a); cudaFree(x); cudaFree(info);
  }
}
std::vector<int> list(const char* s) { std::vector<int> v; std::string t(s); size_t p = 0; while (p < t.size()) { size_t q = t.find(',', p); if (q == std::string::npos) q = t.size(); v.push_back(std::atoi(t.substr(p, q - p).c_str())); p = q + 1; } return v; }
int main(int argc, char** argv) {
  // potri_probe TYPES NS BATCHES REPS
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf("%s\n", p.name);
  std::string types = argc > 1 ? argv[1] : "d,s,z,c";
  std::vector<int> ns = list(argc > 2 ? argv[2] : "33,48,64,96,128"), bs = list(argc > 3 ? argv[3] : "512,4096");
  int reps = argc > 4 ? std::atoi(argv[4]) : 15;
  if (types.find('d') != std::string::npos) run<double>(ns, bs, reps);
  if (types.find('s') != std::string::npos) run<float>(ns, bs, reps);
  if (types.find('z') != std::string::npos) run<std::complex<double>>(ns, bs, reps);
  if (types.find('c') != std::string::npos) run<std::complex<float>>(ns, bs, reps);
}
