// Prototype: one potrf on the caller's stream, direct launches against a graph replayed with
// updated load/store nodes.
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <functional>

#define CK(x) do { auto s_ = (x); if (s_ != 0) { printf("error %d at %s:%d\n", (int)s_, __FILE__, __LINE__); exit(1);} } while (0)

template <class T>
__global__ void load_k(int n, const T* src, long long rs, long long cs, T* dst, int ldd) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && j < n) dst[i + (long long)j * ldd] = i >= j ? src[i * rs + j * cs] : T(0);
}
template <class T>
__global__ void store_k(int n, const T* W, int ldw, T* L, int ldl, const int* winfo, int* info) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && j < n) L[i + (long long)j * ldl] = i >= j ? W[i + (long long)j * ldw] : T(0);
  if (i == 0 && j == 0) {
    int r = *winfo;
    if (r >= 0) {
      int f = r > 0 ? r - 1 : n;
      for (int k = 0; k < f; ++k) if (!(W[k + (long long)k * ldw] > T(0))) { r = k + 1; break; }
    }
    *info = r;
  }
}
template <class T>
__global__ void check_k(int n, const T* A, int ld, int* info) {
  int r = *info;
  if (r < 0) return;
  int f = r > 0 ? r - 1 : n;
  for (int k = threadIdx.x; k < f; k += blockDim.x) if (!(A[k + (long long)k * ld] > T(0))) { atomicMin(info, k + 1); }
}

cusolverStatus_t bs(cusolverDnHandle_t h, int n, double* A, int ld, int* lw) { return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, ld, lw); }
cusolverStatus_t bs(cusolverDnHandle_t h, int n, float* A, int ld, int* lw) { return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, ld, lw); }
cusolverStatus_t pf(cusolverDnHandle_t h, int n, double* A, int ld, double* w, int lw, int* info) { return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, ld, w, lw, info); }
cusolverStatus_t pf(cusolverDnHandle_t h, int n, float* A, int ld, float* w, int lw, int* info) { return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, ld, w, lw, info); }

using clk = std::chrono::steady_clock;
double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }
double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <class T>
void run(int n, const char* name) {
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cusolverDnHandle_t h; CK(cusolverDnCreate(&h)); CK(cusolverDnSetStream(h, s));
  std::vector<T> ha(n * n);
  for (int j = 0; j < n; ++j) for (int i = 0; i < n; ++i) ha[i + j * n] = (i == j ? T(n) : T(1) / T(1 + i + j));
  T *A, *L, *W, *work; int *info, *winfo;
  CK(cudaMalloc(&A, sizeof(T) * n * n)); CK(cudaMalloc(&L, sizeof(T) * n * n)); CK(cudaMalloc(&W, sizeof(T) * n * n));
  CK(cudaMalloc(&info, 4)); CK(cudaMalloc(&winfo, 4));
  CK(cudaMemcpy(A, ha.data(), sizeof(T) * n * n, cudaMemcpyHostToDevice));
  int lw = 0; CK(bs(h, n, W, n, &lw)); CK(cudaMalloc(&work, sizeof(T) * std::max(lw, 1)));
  dim3 grid((n + 127) / 128, n), block(128);
  auto direct = [&]() {
    load_k<T><<<grid, block, 0, s>>>(n, A, 1, n, L, n);
    int l2; CK(bs(h, n, L, n, &l2));
    CK(pf(h, n, L, n, work, lw, info));
    check_k<T><<<1, 256, 0, s>>>(n, L, n, info);
  };
  // The graph: load (A -> W), potrf on W, store (W -> L, info).
  cudaStream_t cs; CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  CK(cusolverDnSetStream(h, cs));
  cudaGraph_t potrf_graph;
  CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
  CK(pf(h, n, W, n, work, lw, winfo));
  CK(cudaStreamEndCapture(cs, &potrf_graph));
  CK(cusolverDnSetStream(h, s));
  size_t count = 0; CK(cudaGraphGetNodes(potrf_graph, nullptr, &count));
  cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
  int nn = n; long long rs = 1, csd = n; int ldd = n; const T* a_arg = A; T* w_arg = W; T* l_arg = L; int* i_arg = info; const int* wi_arg = winfo;
  void* load_args[] = {&nn, &a_arg, &rs, &csd, &w_arg, &ldd};
  cudaKernelNodeParams lp{}; lp.func = (void*)load_k<T>; lp.gridDim = grid; lp.blockDim = block; lp.kernelParams = load_args;
  cudaGraphNode_t load_node, potrf_node, store_node;
  CK(cudaGraphAddKernelNode(&load_node, g, nullptr, 0, &lp));
  CK(cudaGraphAddChildGraphNode(&potrf_node, g, &load_node, 1, potrf_graph));
  const T* wc = W;
  void* store_args[] = {&nn, &wc, &ldd, &l_arg, &ldd, &wi_arg, &i_arg};
  cudaKernelNodeParams sp{}; sp.func = (void*)store_k<T>; sp.gridDim = grid; sp.blockDim = block; sp.kernelParams = store_args;
  CK(cudaGraphAddKernelNode(&store_node, g, &potrf_node, 1, &sp));
  cudaGraphExec_t exec; CK(cudaGraphInstantiate(&exec, g, 0));
  auto graphed = [&]() {
    CK(cudaGraphExecKernelNodeSetParams(exec, load_node, &lp));
    CK(cudaGraphExecKernelNodeSetParams(exec, store_node, &sp));
    CK(cudaGraphLaunch(exec, s));
  };
  auto only_potrf = [&]() { CK(pf(h, n, L, n, work, lw, info)); };
  struct Way { const char* name; std::function<void()> f; };
  for (int rep = 0; rep < 3; ++rep) { direct(); graphed(); only_potrf(); }
  CK(cudaStreamSynchronize(s));
  std::vector<double> hd, sd, hg, sg, hp, sp2;
  for (int r = 0; r < 400; ++r) {
    auto t0 = clk::now(); direct(); auto t1 = clk::now(); CK(cudaStreamSynchronize(s)); auto t2 = clk::now();
    hd.push_back(us(t0, t1)); sd.push_back(us(t0, t2));
    t0 = clk::now(); graphed(); t1 = clk::now(); CK(cudaStreamSynchronize(s)); t2 = clk::now();
    hg.push_back(us(t0, t1)); sg.push_back(us(t0, t2));
    t0 = clk::now(); only_potrf(); t1 = clk::now(); CK(cudaStreamSynchronize(s)); t2 = clk::now();
    hp.push_back(us(t0, t1)); sp2.push_back(us(t0, t2));
  }
  // Check results agree.
  std::vector<T> r1(n * n), r2(n * n);
  direct(); CK(cudaMemcpyAsync(r1.data(), L, sizeof(T) * n * n, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s));
  CK(cudaMemset(L, 0, sizeof(T) * n * n)); graphed(); CK(cudaMemcpyAsync(r2.data(), L, sizeof(T) * n * n, cudaMemcpyDeviceToHost, s));
  int hi = -7; CK(cudaMemcpyAsync(&hi, info, 4, cudaMemcpyDeviceToHost, s)); CK(cudaStreamSynchronize(s));
  double diff = 0; for (int k = 0; k < n * n; ++k) diff = std::max(diff, (double)std::abs(r1[k] - r2[k]));
  printf("%s n=%4d nodes=%zu | host us: direct %6.1f graph %6.1f potrf-only %6.1f | sync us: direct %6.1f graph %6.1f potrf-only %6.1f | diff %.1e info %d\n",
         name, n, count, median(hd), median(hg), median(hp), median(sd), median(sg), median(sp2), diff, hi);
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s\n", p.name);
  for (int n : {32, 64, 96, 128, 192, 256, 512}) { run<double>(n, "double"); run<float>(n, "float "); }
}
