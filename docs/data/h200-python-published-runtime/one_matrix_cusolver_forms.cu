// One matrix of order n on the GPU, factored by cuSOLVER: host time per call, synced time per
// call and back-to-back time per call for direct and graphed forms.
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <functional>
#include <string>
#define CK(x) do { auto e_ = (x); if (e_ != 0) { printf("err %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(1);} } while (0)
using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

template <class T> __global__ void load(int n, const T* a, T* l, int ld, T** slot) {
  if (slot && blockIdx.x == 0 && threadIdx.x == 0) slot[0] = l;
  for (int j = blockIdx.x; j < n; j += gridDim.x)
    for (int i = threadIdx.x; i < n; i += blockDim.x) l[i + (size_t)j * ld] = i >= j ? a[i + (size_t)j * n] : T(0);
}
template <class T> __global__ void copyk(int n, const T* w, int ldw, T* l, int ld) {
  for (int j = blockIdx.x; j < n; j += gridDim.x)
    for (int i = threadIdx.x; i < n; i += blockDim.x) l[i + (size_t)j * ld] = w[i + (size_t)j * ldw];
}
template <class T> __global__ void checkk(int n, const T* l, int ld, int* info) {
  // stand-in for the NaN check of the diagonal
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) if (!(l[i + (size_t)i * ld] > 0)) atomicMin(&bad, i + 1);
  __syncthreads();
  if (threadIdx.x == 0 && bad && *info == 0) *info = bad;
}

cusolverStatus_t bs(cusolverDnHandle_t h, int n, double* a, int ld, int* lw) { return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, ld, lw); }
cusolverStatus_t bs(cusolverDnHandle_t h, int n, float* a, int ld, int* lw) { return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, ld, lw); }
cusolverStatus_t po(cusolverDnHandle_t h, int n, double* a, int ld, double* w, int lw, int* info) { return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, ld, w, lw, info); }
cusolverStatus_t po(cusolverDnHandle_t h, int n, float* a, int ld, float* w, int lw, int* info) { return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, ld, w, lw, info); }
cusolverStatus_t pb(cusolverDnHandle_t h, int n, double** a, int ld, int* info) { return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, ld, info, 1); }
cusolverStatus_t pb(cusolverDnHandle_t h, int n, float** a, int ld, int* info) { return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, ld, info, 1); }

struct Times { double host, synced, stream; };
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class F> Times measure(F&& call, cudaStream_t s) {
  for (int i = 0; i < 50; ++i) call();
  CK(cudaStreamSynchronize(s));
  std::vector<double> host, synced;
  for (int i = 0; i < 300; ++i) {
    auto t0 = clk::now(); call(); auto t1 = clk::now();
    CK(cudaStreamSynchronize(s)); auto t2 = clk::now();
    host.push_back(us(t0, t1)); synced.push_back(us(t0, t2));
  }
  std::vector<double> stream;
  for (int r = 0; r < 5; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < 200; ++i) call();
    CK(cudaStreamSynchronize(s));
    stream.push_back(us(t0, clk::now()) / 200);
  }
  return {median(host), median(synced), median(stream)};
}

template <class T> double error(int n, const std::vector<T>& a, const T* dl, int ld) {
  std::vector<T> l((size_t)ld * n);
  CK(cudaMemcpy(l.data(), dl, sizeof(T) * l.size(), cudaMemcpyDeviceToHost));
  double e = 0, m = 0;
  for (int j = 0; j < n; ++j) for (int i = j; i < n; ++i) {
    double s = 0; for (int k = 0; k <= j; ++k) s += (double)l[i + (size_t)k * ld] * l[j + (size_t)k * ld];
    e = std::max(e, std::abs(s - (double)a[i + (size_t)j * n])); m = std::max(m, std::abs((double)a[i + (size_t)j * n]));
  }
  return e / m;
}

template <class T> void run(const char* name, int n) {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cusolverDnHandle_t h; CK(cusolverDnCreate(&h)); CK(cusolverDnSetStream(h, s));
  std::vector<T> a((size_t)n * n);
  srand(7);
  std::vector<double> r((size_t)n * n); for (auto& x : r) x = rand() / (double)RAND_MAX - 0.5;
  for (int j = 0; j < n; ++j) for (int i = 0; i < n; ++i) { double v = 0.5 * (r[i + (size_t)j * n] + r[j + (size_t)i * n]); a[i + (size_t)j * n] = (T)(v + (i == j ? n : 0)); }
  T *da, *dl, *dw, *work; int *info; T** slot;
  const int ld = n;
  CK(cudaMalloc(&da, sizeof(T) * n * n)); CK(cudaMalloc(&dl, sizeof(T) * n * n)); CK(cudaMalloc(&dw, sizeof(T) * n * n));
  CK(cudaMalloc(&info, sizeof(int) * 4)); CK(cudaMalloc(&slot, sizeof(T*) * 2));
  CK(cudaMemcpy(da, a.data(), sizeof(T) * n * n, cudaMemcpyHostToDevice));
  int lw = 0; CK(bs(h, n, dl, ld, &lw)); CK(cudaMalloc(&work, sizeof(T) * std::max(lw, 1)));
  const int grid = std::min(n, 64), block = 128;
  auto direct = [&] {
    load<<<grid, block, 0, s>>>(n, da, dl, ld, (T**)nullptr);
    int q = 0; bs(h, n, dl, ld, &q);
    CK(po(h, n, dl, ld, work, lw, info));
    checkk<<<1, 128, 0, s>>>(n, dl, ld, info);
  };
  auto batched = [&] {
    load<<<grid, block, 0, s>>>(n, da, dl, ld, slot);
    CK(pb(h, n, slot, ld, info));
    checkk<<<1, 128, 0, s>>>(n, dl, ld, info);
  };
  // graph of dense potrf on a fixed W, copies in and out
  cudaStream_t cs; CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  auto capture = [&](auto&& body) {
    CK(cusolverDnSetStream(h, cs));
    cudaGraph_t g; cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    body(cs);
    CK(cudaStreamEndCapture(cs, &g)); CK(cudaGraphInstantiate(&e, g, 0));
    size_t nodes = 0; cudaGraphGetNodes(g, nullptr, &nodes);
    cudaGraphDestroy(g);
    CK(cusolverDnSetStream(h, s));
    return std::make_pair(e, nodes);
  };
  auto [gdense, nd] = capture([&](cudaStream_t c) { CK(po(h, n, dw, ld, work, lw, info + 1)); checkk<<<1, 128, 0, c>>>(n, dw, ld, info + 1); });
  auto graph_dense = [&] {
    load<<<grid, block, 0, s>>>(n, da, dw, ld, (T**)nullptr);
    CK(cudaGraphLaunch(gdense, s));
    copyk<<<grid, block, 0, s>>>(n, dw, ld, dl, ld);
    CK(cudaMemcpyAsync(info, info + 1, sizeof(int), cudaMemcpyDeviceToDevice, s));
  };
  auto [gbatch, nb] = capture([&](cudaStream_t c) { CK(pb(h, n, slot, ld, info + 2)); });
  auto graph_batched = [&] {
    load<<<grid, block, 0, s>>>(n, da, dl, ld, slot);
    CK(cudaGraphLaunch(gbatch, s));
    CK(cudaMemcpyAsync(info, info + 2, sizeof(int), cudaMemcpyDeviceToDevice, s));
    checkk<<<1, 128, 0, s>>>(n, dl, ld, info);
  };
  auto potrf_only = [&] { CK(po(h, n, dl, ld, work, lw, info)); };
  auto load_only = [&] { load<<<grid, block, 0, s>>>(n, da, dl, ld, (T**)nullptr); };
  struct V { const char* name; std::function<void()> f; };
  std::vector<V> vs = {{"direct", direct}, {"batched1", batched}, {"graph_dense", graph_dense}, {"graph_batched1", graph_batched},
                       {"potrf_alone", potrf_only}, {"load_alone", load_only}};
  for (auto& v : vs) {
    Times t = measure(v.f, s);
    double e = -1;
    if (std::string(v.name) != "load_alone" && std::string(v.name) != "potrf_alone") {
      CK(cudaMemset(dl, 0, sizeof(T) * n * n)); v.f(); CK(cudaStreamSynchronize(s)); e = error(n, a, dl, ld);
    }
    int hi = -9; CK(cudaMemcpy(&hi, info, sizeof(int), cudaMemcpyDeviceToHost));
    printf("%-6s n=%4d %-15s host %7.2f  synced %7.2f  back-to-back %7.2f us  err %.1e info %d\n", name, n, v.name, t.host, t.synced, t.stream, e, hi);
  }
  printf("%-6s n=%4d graph nodes: dense %zu, batched %zu\n", name, n, nd, nb);
  fflush(stdout);
  cudaFree(da); cudaFree(dl); cudaFree(dw); cudaFree(work); cudaFree(info); cudaFree(slot);
  cudaGraphExecDestroy(gdense); cudaGraphExecDestroy(gbatch);
  cusolverDnDestroy(h); cudaStreamDestroy(s); cudaStreamDestroy(cs);
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s\n", p.name);
  for (int n : {32, 48, 64, 80, 96, 128, 160, 192, 256, 384, 512}) run<double>("double", n);
  for (int n : {64, 96, 128, 192, 256}) run<float>("float", n);
}
