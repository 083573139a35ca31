// The products of potrf_batched_blocked (one cuBLAS strided batched gemm per block of columns from
// the second), timed alone in several call forms; `products once T N W BATCH l|u` runs each once
// (for Nsight Compute). Built with: nvcc -O2 -std=c++17 -arch=sm_90 products.cu -lcublas
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x) do { auto e_ = (x); if (e_ != cudaSuccess) { std::printf("cuda %d line %d\n", (int)e_, __LINE__); std::exit(1);} } while (0)
#define CB(x) do { auto e_ = (x); if (e_ != CUBLAS_STATUS_SUCCESS) { std::printf("cublas %d line %d\n", (int)e_, __LINE__); std::exit(1);} } while (0)

template <class T> struct Info;
template <> struct Info<double> { static constexpr cudaDataType dt = CUDA_R_64F; static constexpr cublasComputeType_t ct = CUBLAS_COMPUTE_64F; static constexpr bool cplx = false; static constexpr int scalars = 1; static constexpr const char* name = "d"; };
template <> struct Info<float> { static constexpr cudaDataType dt = CUDA_R_32F; static constexpr cublasComputeType_t ct = CUBLAS_COMPUTE_32F; static constexpr bool cplx = false; static constexpr int scalars = 1; static constexpr const char* name = "s"; };
template <> struct Info<std::complex<double>> { static constexpr cudaDataType dt = CUDA_C_64F; static constexpr cublasComputeType_t ct = CUBLAS_COMPUTE_64F; static constexpr bool cplx = true; static constexpr int scalars = 2; static constexpr const char* name = "z"; };
template <> struct Info<std::complex<float>> { static constexpr cudaDataType dt = CUDA_C_32F; static constexpr cublasComputeType_t ct = CUBLAS_COMPUTE_32F; static constexpr bool cplx = true; static constexpr int scalars = 2; static constexpr const char* name = "c"; };

__global__ void fill(float* f, double* d, long long count, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)(i * 2654435761u) ^ seed; x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15;
    const double v = (x & 0xffff) / 65536.0 - 0.5;
    if (f) f[i] = (float)v * 0.01f; else d[i] = v * 0.01;
  }
}

struct Product { bool upper; int rows, size, k; long long off_a, off_c; };

enum Strategy { kDefault, kPointers, kSplit, kPedantic, kSplitRows4, kCount };
const char* kNames[] = {"default", "pointers", "split-diag", "pedantic", "rows/4"};

template <class T>
void run_product(cublasHandle_t h, Strategy s, const Product& p, T* A, int lda, long long stride, int batch, T** ptrs) {
  using I = Info<T>;
  const cublasOperation_t C = I::cplx ? CUBLAS_OP_C : CUBLAS_OP_T;
  const T one(1), minus_one(-1);
  const long long ld = lda;
  auto gemm = [&](int m, int n, int k, long long oa, long long ob, long long oc) {
    // lower: C(m x n) at oc -= A(oa: m x k) * A(ob: n x k)^H ; upper: C(m x n) -= A(oa: k x m)^H A(ob: k x n)
    if (!p.upper)
      CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, C, m, n, k, &minus_one, A + oa, I::dt, lda, stride, A + ob, I::dt, lda,
                                    stride, &one, A + oc, I::dt, lda, stride, batch, I::ct, CUBLAS_GEMM_DEFAULT));
    else
      CB(cublasGemmStridedBatchedEx(h, C, CUBLAS_OP_N, m, n, k, &minus_one, A + oa, I::dt, lda, stride, A + ob, I::dt, lda,
                                    stride, &one, A + oc, I::dt, lda, stride, batch, I::ct, CUBLAS_GEMM_DEFAULT));
  };
  const int j0 = p.k;
  if (s == kDefault || s == kPedantic) {
    if (s == kPedantic) CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    if (!p.upper) gemm(p.rows, p.size, j0, j0, j0, j0 + j0 * ld);
    else gemm(p.size, p.rows, j0, j0 * ld, j0 * ld, j0 + j0 * ld);
    if (s == kPedantic) CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  } else if (s == kPointers) {
    T** a = ptrs; T** c = ptrs + batch;
    if (!p.upper)
      CB(cublasGemmBatchedEx(h, CUBLAS_OP_N, C, p.rows, p.size, j0, &minus_one, (const void* const*)a, I::dt, lda,
                             (const void* const*)a, I::dt, lda, &one, (void* const*)c, I::dt, lda, batch, I::ct, CUBLAS_GEMM_DEFAULT));
    else
      CB(cublasGemmBatchedEx(h, C, CUBLAS_OP_N, p.size, p.rows, j0, &minus_one, (const void* const*)a, I::dt, lda,
                             (const void* const*)a, I::dt, lda, &one, (void* const*)c, I::dt, lda, batch, I::ct, CUBLAS_GEMM_DEFAULT));
  } else if (s == kSplit) {  // the diagonal square and the rest below (right of) it
    if (!p.upper) {
      gemm(p.size, p.size, j0, j0, j0, j0 + j0 * ld);
      if (p.rows > p.size) gemm(p.rows - p.size, p.size, j0, j0 + p.size, j0, j0 + p.size + j0 * ld);
    } else {
      gemm(p.size, p.size, j0, j0 * ld, j0 * ld, j0 + j0 * ld);
      if (p.rows > p.size) gemm(p.size, p.rows - p.size, j0, j0 * ld, (j0 + p.size) * ld, j0 + (j0 + p.size) * ld);
    }
  } else if (s == kSplitRows4) {  // rows in chunks of 32
    for (int r = 0; r < p.rows; r += 32) {
      const int m = std::min(32, p.rows - r);
      if (!p.upper) gemm(m, p.size, j0, j0 + r, j0, j0 + r + j0 * ld);
      else gemm(p.size, m, j0, j0 * ld, (j0 + r) * ld, j0 + (j0 + r) * ld);
    }
  }
}

template <class F>
float median_ms(int reps, F f) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  f(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a); cudaEventDestroy(b);
  return t[t.size() / 2];
}

template <class T>
void run(cublasHandle_t h, int n, int width, int batch, bool upper, int reps, bool once) {
  using I = Info<T>;
  const long long stride = (long long)n * n;
  T* A; CK(cudaMalloc(&A, sizeof(T) * stride * batch));
  const long long scalars = stride * batch * I::scalars;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>) fill<<<1024, 256>>>((float*)A, nullptr, scalars, 7);
  else fill<<<1024, 256>>>(nullptr, (double*)A, scalars, 7);
  CK(cudaDeviceSynchronize());
  T** ptrs; CK(cudaMalloc(&ptrs, sizeof(T*) * 2 * batch));
  std::vector<Product> products;
  for (int j0 = width; j0 < n; j0 += width) products.push_back({upper, n - j0, std::min(width, n - j0), j0, 0, 0});
  if (once) {
    for (const Product& p : products) run_product<T>(h, kDefault, p, A, n, stride, batch, ptrs);
    CK(cudaDeviceSynchronize());
    cudaFree(A); cudaFree(ptrs);
    return;
  }
  std::vector<double> total(kCount, 0.0);
  std::printf("%s %4d w%2d batch %5d %s\n", I::name, n, width, batch, upper ? "upper" : "lower");
  for (const Product& p : products) {
    std::vector<T*> host(2 * batch);
    const long long ld = n;
    for (int k = 0; k < batch; ++k) {
      host[k] = A + k * stride + (upper ? p.k * ld : p.k);
      host[batch + k] = A + k * stride + p.k + p.k * ld;
    }
    CK(cudaMemcpy(ptrs, host.data(), sizeof(T*) * 2 * batch, cudaMemcpyHostToDevice));
    std::printf("  block %4d (m %4d n %3d k %4d):", p.k, upper ? p.size : p.rows, upper ? p.rows : p.size, p.k);
    for (int s = 0; s < kCount; ++s) {
      const float ms = median_ms(reps, [&] { run_product<T>(h, (Strategy)s, p, A, n, stride, batch, ptrs); });
      total[s] += ms;
      std::printf("  %s %.4f", kNames[s], ms);
    }
    std::printf("\n");
  }
  std::printf("  sum:");
  for (int s = 0; s < kCount; ++s) std::printf("  %s %.4f", kNames[s], total[s]);
  std::printf("\n");
  fflush(stdout);
  cudaFree(A); cudaFree(ptrs);
}

int main(int argc, char** argv) {
  cublasHandle_t h; CB(cublasCreate(&h));
  const int reps = 9;
  if (argc > 1 && std::string(argv[1]) == "once") {  // once TYPE N WIDTH BATCH UPLO
    const char t = argv[2][0]; const int n = atoi(argv[3]), w = atoi(argv[4]), b = atoi(argv[5]); const bool up = argv[6][0] == 'u';
    if (t == 'z') run<std::complex<double>>(h, n, w, b, up, reps, true);
    if (t == 'c') run<std::complex<float>>(h, n, w, b, up, reps, true);
    if (t == 'd') run<double>(h, n, w, b, up, reps, true);
    if (t == 's') run<float>(h, n, w, b, up, reps, true);
    return 0;
  }
  for (bool up : {false, true}) {
    run<std::complex<double>>(h, 128, 32, 10000, up, reps, false);
    run<std::complex<double>>(h, 96, 32, 10000, up, reps, false);
    run<std::complex<double>>(h, 192, 32, 10000, up, reps, false);
    run<std::complex<float>>(h, 128, 32, 10000, up, reps, false);
    run<std::complex<float>>(h, 192, 32, 10000, up, reps, false);
    run<double>(h, 128, 32, 10000, up, reps, false);
    run<double>(h, 256, 32, 1000, up, reps, false);
    run<double>(h, 384, 32, 1000, up, reps, false);
    run<double>(h, 512, 64, 1000, up, reps, false);
    run<float>(h, 256, 32, 1000, up, reps, false);
    run<float>(h, 512, 64, 1000, up, reps, false);
    run<std::complex<double>>(h, 512, 64, 2000, up, reps, false);
  }
  return 0;
}
