// Probe: the diagonal step of a tensor-core tile Cholesky (FP32 tile of order n): factor and the
// factor's inverse, by cuSOLVER + identity solve (as now) and by recursive halving with TF32
// products. Timed alone and beside a stream of FP16 GEMMs (the trailing updates).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                      \
  do {                                                                             \
    auto e_ = (x);                                                                 \
    if ((int)e_ != 0) {                                                            \
      std::fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

__global__ void set_identity(int n, float* X, int ldx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n) X[i + (size_t)j * ldx] = i == j ? 1.f : 0.f;
}
__global__ void sub_lower(int n, const float* W, int ldw, float* A, int lda) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && i >= j) A[i + (size_t)j * lda] -= W[i + (size_t)j * ldw];
}
__global__ void zero_upper(int n, float* A, int lda) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n && i < j) A[i + (size_t)j * lda] = 0.f;
}
__global__ void transpose_into(int n, const float* A, int lda, float* B, int ldb) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i < n) B[j + (size_t)i * ldb] = A[i + (size_t)j * lda];
}

struct Ctx {
  cudaStream_t s;
  cublasHandle_t blas;
  cusolverDnHandle_t sol;
  float* work;
  int lwork;
  int* info;
  float* W;   // n x n scratch
  float* W2;  // n x n scratch
};

dim3 grid(int n) { return dim3((n + 255) / 256, n); }

void gemm_tf32(Ctx& c, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const float* A,
               int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  CK(cublasGemmEx(c.blas, ta, tb, m, n, k, &alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta, C, CUDA_R_32F, ldc,
                  CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

// As now: L^{-T} by solving X L^T = I, halves recursively, TF32 products, cuBLAS trsm at <= 512.
void solve_panel(Ctx& c, int m, int n, const float* L, int ldl, float* B, int ldb) {
  if (n <= 512) {
    float one = 1;
    CK(cublasStrsm(c.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, n, &one, L,
                   ldl, B, ldb));
    return;
  }
  int n1 = (n / 2 + 63) / 64 * 64, n2 = n - n1;
  solve_panel(c, m, n1, L, ldl, B, ldb);
  gemm_tf32(c, CUBLAS_OP_N, CUBLAS_OP_T, m, n2, n1, -1.f, B, ldb, L + n1, ldl, 1.f, B + (size_t)n1 * ldb, ldb);
  solve_panel(c, m, n2, L + n1 + (size_t)n1 * ldl, ldl, B + (size_t)n1 * ldb, ldb);
}

void potrf_cusolver(Ctx& c, int n, float* A, int lda) {
  CK(cusolverDnSpotrf(c.sol, CUBLAS_FILL_MODE_LOWER, n, A, lda, c.work, c.lwork, c.info));
}

void invert_now(Ctx& c, int n, const float* L, int ldl, float* X, int ldx) {
  set_identity<<<grid(n), 256, 0, c.s>>>(n, X, ldx);
  solve_panel(c, n, n, L, ldl, X, ldx);
}

// Lower X := L^{-1} of a factored lower leaf.
void leaf_inverse(Ctx& c, int n, const float* L, int ldl, float* X, int ldx, bool trtri) {
  if (trtri) {
    // X := L, then trtri in place.
    CK(cudaMemcpy2DAsync(X, sizeof(float) * ldx, L, sizeof(float) * ldl, sizeof(float) * n, n,
                         cudaMemcpyDeviceToDevice, c.s));
    zero_upper<<<grid(n), 256, 0, c.s>>>(n, X, ldx);
    size_t dev_bytes = 0, host_bytes = 0;
    CK(cusolverDnXtrtri_bufferSize(c.sol, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, CUDA_R_32F, X, ldx,
                                   &dev_bytes, &host_bytes));
    static std::vector<char> host(1 << 20);
    CK(cusolverDnXtrtri(c.sol, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, CUDA_R_32F, X, ldx, c.work,
                        dev_bytes, host.data(), host_bytes, c.info));
    return;
  }
  set_identity<<<grid(n), 256, 0, c.s>>>(n, X, ldx);
  float one = 1;
  CK(cublasStrsm(c.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n, &one, L, ldl,
                 X, ldx));
}

// A := L (lower), X := L^{-1} (lower, zeros above), by halves; W scratch of n x n.
void factor_invert(Ctx& c, int n, float* A, int lda, float* X, int ldx, float* W, int base, bool trtri) {
  if (n <= base) {
    potrf_cusolver(c, n, A, lda);
    leaf_inverse(c, n, A, lda, X, ldx, trtri);
    return;
  }
  const int n1 = (n / 2 + 63) / 64 * 64, n2 = n - n1;
  float* A21 = A + n1;
  float* A22 = A + n1 + (size_t)n1 * lda;
  float* X21 = X + n1;
  float* X22 = X + n1 + (size_t)n1 * ldx;
  factor_invert(c, n1, A, lda, X, ldx, W, base, trtri);
  // L21 = A21 X11^T
  gemm_tf32(c, CUBLAS_OP_N, CUBLAS_OP_T, n2, n1, n1, 1.f, A21, lda, X, ldx, 0.f, W, n2);
  CK(cudaMemcpy2DAsync(A21, sizeof(float) * lda, W, sizeof(float) * n2, sizeof(float) * n2, n1,
                       cudaMemcpyDeviceToDevice, c.s));
  // A22 -= L21 L21^T (lower only)
  gemm_tf32(c, CUBLAS_OP_N, CUBLAS_OP_T, n2, n2, n1, 1.f, A21, lda, A21, lda, 0.f, W, n2);
  sub_lower<<<grid(n2), 256, 0, c.s>>>(n2, W, n2, A22, lda);
  factor_invert(c, n2, A22, lda, X22, ldx, W, base, trtri);
  // X21 = -X22 (L21 X11)
  gemm_tf32(c, CUBLAS_OP_N, CUBLAS_OP_N, n2, n1, n1, 1.f, A21, lda, X, ldx, 0.f, W, n2);
  gemm_tf32(c, CUBLAS_OP_N, CUBLAS_OP_N, n2, n1, n2, -1.f, X22, ldx, W, n2, 0.f, X21, ldx);
  CK(cudaMemset2DAsync(X + (size_t)n1 * ldx, sizeof(float) * ldx, 0, sizeof(float) * n1, n2, c.s));
}

// The fused step as the task would run it: L and X = L^{-T} (upper).
void factor_invert_T(Ctx& c, int n, float* A, int lda, float* X, int ldx, int base, bool trtri) {
  factor_invert(c, n, A, lda, c.W2, n, c.W, base, trtri);
  transpose_into<<<grid(n), 256, 0, c.s>>>(n, c.W2, n, X, ldx);
}


// X := L^{-1} (lower, zeros above) by levels: leaves of order `leaf` by one batched solve of
// identities, then per level one pair of batched TF32 products: X21 = -X22 (L21 X11).
float** g_ptrs = nullptr;
void invert_by_levels(Ctx& c, int n, const float* L, int ldl, float* X, int ldx, int leaf, bool tf32) {
  const int m = n / leaf;
  if (!g_ptrs) CK(cudaMalloc(&g_ptrs, sizeof(float*) * 2 * 4096));
  std::vector<float*> h(2 * m);
  for (int i = 0; i < m; ++i) {
    h[i] = const_cast<float*>(L) + (size_t)i * leaf * (ldl + 1);
    h[m + i] = X + (size_t)i * leaf * (ldx + 1);
  }
  CK(cudaMemcpyAsync(g_ptrs, h.data(), sizeof(float*) * 2 * m, cudaMemcpyHostToDevice, c.s));
  set_identity<<<grid(n), 256, 0, c.s>>>(n, X, ldx);
  float one = 1, zero = 0, minus = -1;
  CK(cublasStrsmBatched(c.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, leaf, leaf,
                        &one, g_ptrs, ldl, g_ptrs + m, ldx, m));
  const cublasComputeType_t ct = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  for (int s = leaf; s < n; s *= 2) {
    const int pairs = n / (2 * s);
    const long long sl = 2LL * s * (ldl + 1), sx = 2LL * s * (ldx + 1), sw = (long long)s * s;
    CK(cublasGemmStridedBatchedEx(c.blas, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, L + s, CUDA_R_32F, ldl, sl, X,
                                  CUDA_R_32F, ldx, sx, &zero, c.W, CUDA_R_32F, s, sw, pairs, ct, CUBLAS_GEMM_DEFAULT));
    CK(cublasGemmStridedBatchedEx(c.blas, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &minus, X + s + (size_t)s * ldx,
                                  CUDA_R_32F, ldx, sx, c.W, CUDA_R_32F, s, sw, &zero, X + s, CUDA_R_32F, ldx, sx, pairs,
                                  ct, CUBLAS_GEMM_DEFAULT));
  }
}

// The task's form: X = L^{-T} (upper).
void invert_levels_T(Ctx& c, int n, const float* L, int ldl, float* X, int ldx, int leaf, bool tf32) {
  invert_by_levels(c, n, L, ldl, c.W2, n, leaf, tf32);
  transpose_into<<<grid(n), 256, 0, c.s>>>(n, c.W2, n, X, ldx);
}

// Background: FP16 GEMMs of 2048 on a low-priority stream, until stopped.
struct Load {
  cudaStream_t s;
  cublasHandle_t blas;
  __half *a, *b;
  float* c;
  int n = 2048;
  void launch(int count) {
    float one = 1, zero = 0;
    for (int i = 0; i < count; ++i)
      CK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, a, CUDA_R_16F, n, b, CUDA_R_16F, n, &zero, c,
                      CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
};

std::vector<float> spd(int n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  // A = G G^T / n + I with G n x n (diag ~ 2): well conditioned.
  std::vector<float> G((size_t)n * n), A((size_t)n * n);
  for (auto& v : G) v = d(g);
  // computed on the GPU below
  return G;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  int least, greatest;
  CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  Ctx c{};
  CK(cudaStreamCreateWithPriority(&c.s, cudaStreamNonBlocking, greatest));
  CK(cublasCreate(&c.blas));
  CK(cublasSetStream(c.blas, c.s));
  CK(cusolverDnCreate(&c.sol));
  CK(cusolverDnSetStream(c.sol, c.s));
  float *A0, *A, *X, *G;
  size_t bytes = sizeof(float) * (size_t)n * n;
  CK(cudaMalloc(&A0, bytes));
  CK(cudaMalloc(&A, bytes));
  CK(cudaMalloc(&X, bytes));
  CK(cudaMalloc(&G, bytes));
  CK(cudaMalloc(&c.W, bytes));
  CK(cudaMalloc(&c.W2, bytes));
  CK(cudaMalloc(&c.info, sizeof(int)));
  CK(cusolverDnSpotrf_bufferSize(c.sol, CUBLAS_FILL_MODE_LOWER, n, A, n, &c.lwork));
  c.lwork = std::max(c.lwork, n * 64) * 4;
  CK(cudaMalloc(&c.work, sizeof(float) * (size_t)c.lwork));
  {
    auto g = spd(n, 7);
    CK(cudaMemcpy(G, g.data(), bytes, cudaMemcpyHostToDevice));
    float alpha = 1.f / n, beta = 0;
    CK(cublasSgemm(c.blas, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &alpha, G, n, G, n, &beta, A0, n));
    std::vector<float> h((size_t)n * n);
    CK(cudaMemcpy(h.data(), A0, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) h[i + (size_t)i * n] += 1.f;
    CK(cudaMemcpy(A0, h.data(), bytes, cudaMemcpyHostToDevice));
  }
  Load load{};
  CK(cudaStreamCreateWithPriority(&load.s, cudaStreamNonBlocking, least));
  CK(cublasCreate(&load.blas));
  CK(cublasSetStream(load.blas, load.s));
  CK(cudaMalloc(&load.a, 2048 * 2048 * 2));
  CK(cudaMalloc(&load.b, 2048 * 2048 * 2));
  CK(cudaMalloc(&load.c, 2048 * 2048 * 4));
  CK(cudaMemset(load.a, 0, 2048 * 2048 * 2));
  CK(cudaMemset(load.b, 0, 2048 * 2048 * 2));

  struct Variant {
    std::string name;
    std::function<void()> run;
  };
  auto reset = [&] { CK(cudaMemcpyAsync(A, A0, bytes, cudaMemcpyDeviceToDevice, c.s)); };
  std::vector<Variant> variants;
  variants.push_back({"cusolver potrf", [&] { potrf_cusolver(c, n, A, n); }});
  variants.push_back({"identity solve (now)", [&] { invert_now(c, n, A, n, X, n); }});
  variants.push_back({"potrf + solve (now)", [&] {
                        potrf_cusolver(c, n, A, n);
                        invert_now(c, n, A, n, X, n);
                      }});
  for (int leaf : {32, 64, 128, 256})
    for (bool tf32 : {true, false})
      variants.push_back({"levels leaf " + std::to_string(leaf) + (tf32 ? " tf32" : " fp32"),
                          [&, leaf, tf32] { invert_levels_T(c, n, A, n, X, n, leaf, tf32); }});
  for (int leaf : {64, 128})
    variants.push_back({"potrf + levels " + std::to_string(leaf), [&, leaf] {
                          potrf_cusolver(c, n, A, n);
                          invert_levels_T(c, n, A, n, X, n, leaf, true);
                        }});

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::printf("n = %d, %d repetitions, median us; alone | beside FP16 GEMMs (chain on a high-priority stream)\n", n,
              reps);
  for (auto& v : variants) {
    double med[2];
    for (int loaded = 0; loaded < 2; ++loaded) {
      std::vector<float> t;
      for (int r = 0; r < reps + 2; ++r) {
        reset();
        CK(cudaStreamSynchronize(c.s));
        if (loaded) {
          load.launch(40);
        }
        CK(cudaEventRecord(e0, c.s));
        v.run();
        CK(cudaEventRecord(e1, c.s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2) t.push_back(ms * 1000);
        CK(cudaStreamSynchronize(load.s));
      }
      std::sort(t.begin(), t.end());
      med[loaded] = t[t.size() / 2];
    }
    // accuracy of the last run: ||L L^T - A||_max / ||A||_max via a TF32-free Sgemm on the host side
    std::printf("%-28s %9.1f | %9.1f\n", v.name.c_str(), med[0], med[1]);
  }
  // Accuracy: factor and inverse of the halves (base 256) against cuSOLVER's factor.
  {
    std::vector<float> ref((size_t)n * n), got((size_t)n * n), xin((size_t)n * n);
    reset();
    potrf_cusolver(c, n, A, n);
    CK(cudaStreamSynchronize(c.s));
    CK(cudaMemcpy(ref.data(), A, bytes, cudaMemcpyDeviceToHost));
    for (int base : {0, 32, 64, 128, 256}) {
      reset();
      potrf_cusolver(c, n, A, n);
      if (base == 0) invert_now(c, n, A, n, X, n); else invert_levels_T(c, n, A, n, X, n, base, true);
      int info = -1;
      CK(cudaMemcpy(&info, c.info, sizeof(int), cudaMemcpyDeviceToHost));
      CK(cudaStreamSynchronize(c.s));
      CK(cudaMemcpy(got.data(), A, bytes, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(xin.data(), X, bytes, cudaMemcpyDeviceToHost));
      double diff = 0, mx = 0;
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
          diff = std::max(diff, (double)std::fabs(got[i + (size_t)j * n] - ref[i + (size_t)j * n]));
          mx = std::max(mx, (double)std::fabs(ref[i + (size_t)j * n]));
        }
      // ||X^T L - I|| on sampled columns (X = L^{-T}, upper)
      double inv_err = 0;
      for (int j = 0; j < n; j += 97)
        for (int i = 0; i < n; ++i) {
          double s = 0;  // (X^T L)(i, j) = sum_k X(k, i) L(k, j)
          for (int k = j; k <= i; ++k) s += (double)xin[k + (size_t)i * n] * got[k + (size_t)j * n];
          inv_err = std::max(inv_err, std::fabs(s - (i == j ? 1.0 : 0.0)));
        }
      std::printf("levels leaf %d (tf32): info %d, max |L - L_cusolver| / max |L| = %.2e, max |X^T L - I| (sampled) = %.2e\n", base,
                  info, diff / mx, inv_err);
    }
  }
  return 0;
}
