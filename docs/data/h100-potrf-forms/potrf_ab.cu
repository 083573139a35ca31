// cuSOLVER's legacy potrf against Xpotrf, direct and as a replayed graph: per call wall time
// (synchronised before and after, as the Python benchmark times) and GPU time by events.
#include <cuComplex.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <functional>
#define CK(x) do { auto e_ = (x); if (e_ != 0) { std::printf("error %d at %s:%d\n", (int)e_, __FILE__, __LINE__); std::exit(1); } } while (0)

template <class T> struct Kind;
template <> struct Kind<double> { static constexpr cudaDataType t = CUDA_R_64F; static constexpr const char* name = "d"; };
template <> struct Kind<float> { static constexpr cudaDataType t = CUDA_R_32F; static constexpr const char* name = "s"; };
template <> struct Kind<std::complex<double>> { static constexpr cudaDataType t = CUDA_C_64F; static constexpr const char* name = "z"; };
template <> struct Kind<std::complex<float>> { static constexpr cudaDataType t = CUDA_C_32F; static constexpr const char* name = "c"; };

int legacy_ws(cusolverDnHandle_t h, int n, double* A) { int l; CK(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, n, &l)); return l; }
int legacy_ws(cusolverDnHandle_t h, int n, float* A) { int l; CK(cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, n, &l)); return l; }
int legacy_ws(cusolverDnHandle_t h, int n, std::complex<double>* A) { int l; CK(cusolverDnZpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, (cuDoubleComplex*)A, n, &l)); return l; }
int legacy_ws(cusolverDnHandle_t h, int n, std::complex<float>* A) { int l; CK(cusolverDnCpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, (cuComplex*)A, n, &l)); return l; }
void legacy(cusolverDnHandle_t h, int n, double* A, double* w, int l, int* i) { CK(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, n, w, l, i)); }
void legacy(cusolverDnHandle_t h, int n, float* A, float* w, int l, int* i) { CK(cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, n, w, l, i)); }
void legacy(cusolverDnHandle_t h, int n, std::complex<double>* A, std::complex<double>* w, int l, int* i) { CK(cusolverDnZpotrf(h, CUBLAS_FILL_MODE_LOWER, n, (cuDoubleComplex*)A, n, (cuDoubleComplex*)w, l, i)); }
void legacy(cusolverDnHandle_t h, int n, std::complex<float>* A, std::complex<float>* w, int l, int* i) { CK(cusolverDnCpotrf(h, CUBLAS_FILL_MODE_LOWER, n, (cuComplex*)A, n, (cuComplex*)w, l, i)); }

double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
double lowest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

template <class T> struct is_complex : std::false_type {};
template <class R> struct is_complex<std::complex<R>> : std::true_type {};
template <class T> void set_spd(std::vector<T>& a, int n, std::mt19937& g) {
  std::uniform_real_distribution<double> u(-1, 1);
  for (int j = 0; j < n; ++j) for (int i = j; i < n; ++i) {
    T v;
    if constexpr (is_complex<T>::value) {
      using R = typename T::value_type; v = i == j ? T(R(n + 1.0), 0) : T(R(u(g)), R(u(g)));
      a[i + (size_t)j * n] = v; a[j + (size_t)i * n] = std::conj(v);
    } else { v = i == j ? T(n + 1.0) : T(u(g)); a[i + (size_t)j * n] = v; a[j + (size_t)i * n] = v; }
  }
}

template <class T> void run(int n, int reps, cudaStream_t s, cusolverDnHandle_t h, cusolverDnParams_t p) {
  const size_t bytes = sizeof(T) * (size_t)n * n;
  std::vector<T> host((size_t)n * n); std::mt19937 g(7 + n); set_spd(host, n, g);
  T *orig, *A; int* info;
  CK(cudaMalloc(&orig, bytes)); CK(cudaMalloc(&A, bytes)); CK(cudaMalloc(&info, sizeof(int)));
  CK(cudaMemcpy(orig, host.data(), bytes, cudaMemcpyHostToDevice));
  const int lwork = legacy_ws(h, n, A);
  T* work; CK(cudaMalloc(&work, sizeof(T) * std::max(lwork, 1)));
  size_t xd = 0, xh = 0;
  CK(cusolverDnXpotrf_bufferSize(h, p, CUBLAS_FILL_MODE_LOWER, n, Kind<T>::t, A, n, Kind<T>::t, &xd, &xh));
  void* xdev; CK(cudaMalloc(&xdev, std::max<size_t>(xd, 1))); std::vector<char> xhost(std::max<size_t>(xh, 1));
  auto call_legacy = [&] { legacy(h, n, A, work, lwork, info); };
  auto call_x = [&] { CK(cusolverDnXpotrf(h, p, CUBLAS_FILL_MODE_LOWER, n, Kind<T>::t, A, n, Kind<T>::t, xdev, xd, xhost.data(), xh, info)); };
  auto capture = [&](auto&& f) {
    cudaStream_t cs; CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)); CK(cusolverDnSetStream(h, cs));
    cudaGraph_t gr; CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal)); f(); CK(cudaStreamEndCapture(cs, &gr));
    cudaGraphExec_t ex; CK(cudaGraphInstantiate(&ex, gr, 0)); CK(cudaGraphDestroy(gr)); CK(cusolverDnSetStream(h, s));
    return ex;
  };
  cudaGraphExec_t gl = capture(call_legacy), gx = capture(call_x);
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  struct Way { const char* name; std::function<void()> f; std::vector<double> wall, gpu; };
  std::vector<Way> ways = {{"legacy", call_legacy}, {"X", call_x},
                           {"legacy_graph", [&] { CK(cudaGraphLaunch(gl, s)); }}, {"X_graph", [&] { CK(cudaGraphLaunch(gx, s)); }}};
  for (int r = 0; r < reps + 3; ++r)
    for (auto& w : ways) {
      CK(cudaMemcpyAsync(A, orig, bytes, cudaMemcpyDeviceToDevice, s)); CK(cudaStreamSynchronize(s));
      auto t0 = std::chrono::steady_clock::now();
      CK(cudaEventRecord(e0, s)); w.f(); CK(cudaEventRecord(e1, s)); CK(cudaStreamSynchronize(s));
      auto t1 = std::chrono::steady_clock::now();
      int hi; CK(cudaMemcpy(&hi, info, sizeof(int), cudaMemcpyDeviceToHost)); if (hi != 0) { std::printf("info %d\n", hi); std::exit(1); }
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) { w.wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count()); w.gpu.push_back(ms * 1e3); }
    }
  std::printf("%s %5d", Kind<T>::name, n);
  for (auto& w : ways) std::printf("  %s wall %7.1f (min %7.1f) gpu %7.1f", w.name, median(w.wall), lowest(w.wall), median(w.gpu));
  std::printf("  X/legacy wall %.3f graph %.3f\n", median(ways[1].wall) / median(ways[0].wall), median(ways[3].wall) / median(ways[2].wall));
  cudaGraphExecDestroy(gl); cudaGraphExecDestroy(gx); cudaFree(orig); cudaFree(A); cudaFree(info); cudaFree(work); cudaFree(xdev);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 60;
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cusolverDnHandle_t h; CK(cusolverDnCreate(&h)); CK(cusolverDnSetStream(h, s));
  cusolverDnParams_t p; CK(cusolverDnCreateParams(&p));
  for (int n : {96, 128, 160, 200, 256, 300, 384, 500, 1000, 2000}) {
    run<std::complex<double>>(n, reps, s, h, p); run<std::complex<float>>(n, reps, s, h, p);
    run<double>(n, reps, s, h, p); run<float>(n, reps, s, h, p);
  }
}
