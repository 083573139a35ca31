// What a perfect schedule of vendor kernels reaches, with no runtime at all: blocked right-looking
// Cholesky (lower, matrix resident, lda = n) from cuSOLVER potrf, cuBLAS trsm, syrk and gemm,
//   plain:     one stream, per step the diagonal block, the panel below it, then the trailing
//              update one block column at a time (syrk of its diagonal block, gemm below);
//   lookahead: the diagonal block, the panel and the update of the next block column on a stream
//              of the highest priority, the rest of the trailing update on a second stream, so
//              that the next step's diagonal factorization runs beside this step's update;
//   lookahead-smR:    the same, with the update's cuBLAS handle told to target all SMs but R
//                     (cublasSetSmCountTarget), so that its grids leave room for the panel;
//   lookahead-greenR: the same, with the panel's stream in a green context of R SMs and the
//                     update's in one of the other SMs (a hard partition of the GPU);
//   la-SOLVE-wW:      lookahead with the panel solved as Schedule says (trsm, or through the
//                     diagonal block's inverse) and the rest of the update in calls W block columns wide;
//   recLEAF-KIND:     recursive (potrf of the leading half, the panel's solve, the trailing half's
//                     syrk, potrf of the trailing half; cuSOLVER potrf from order LEAF down), on one
//                     stream; KIND says how the solve and the syrk are made: `cublas` (one cuBLAS
//                     call each), `split` (halved recursively down to --split-leaf, the off-diagonal
//                     parts as cuBLAS gemm), `split-tessera` (the same with Tessera's trsm kernel at
//                     the solve's leaves);
// against cuSOLVER potrf on the whole matrix in the same run. Also the time of cuSOLVER potrf on
// one diagonal block alone (the chain every blocked variant pays once per step).
//
//   bench_schedule_bound [--sizes 8192,16384] [--nb 512,1024,2048] [--precisions d,s]
//                        [--repetitions 3] [--reserve 0,16] [--green 0,16]
//                        [--solves trsm,trtri,identity] [--update-widths 1,4]
//                        [--recursive-leaves 1024,2048] [--split-leaf 2048] [--emulate-fp64]
// --emulate-fp64 adds double rows with cuBLAS's FP64 emulation on the schedules' cuBLAS handles
// (emu-*; cuSOLVER's own calls stay native), and a DGEMM native against emulated.
// Each figure is the median of the repetitions after a warm-up; every result is checked by a
// sampled residual |L L^T - A| / n on 4096 entries.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../bench_support.hpp"
#include "cuda/tile_kernels.hpp"
#include "cuda/vendor.hpp"
#include "device_support.hpp"

namespace {

using tessera::bench::Device;
namespace vendor = tessera::kernels::cuda::vendor;
using tessera::Trans;

__device__ double entry(long i, long j, long n) {
  const long a = i < j ? i : j, b = i < j ? j : i;
  unsigned long long h = (a * 2654435761ull) ^ (b * 0x9E3779B97F4A7C15ull);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5 + (i == j ? static_cast<double>(n) : 0.0);
}

// Symmetric, diagonally dominant: SPD.
template <class T>
__global__ void generate(T* A, long n) {
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < n * n;
       idx += static_cast<long>(gridDim.x) * blockDim.x)
    A[idx] = static_cast<T>(entry(idx % n, idx / n, n));
}

// max over 4096 sampled entries (i >= j) of |(L L^T)_ij - A_ij| / n, as the bits of a double.
template <class T>
__global__ void sampled_residual(const T* L, long n, unsigned long long* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= 4096) return;
  unsigned long long h = t * 0x9E3779B97F4A7C15ull + 12345;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  const long a = static_cast<long>(h % n), b = t < 64 ? a : static_cast<long>((h / n) % n);
  const long i = a > b ? a : b, j = a > b ? b : a;
  double s = 0;
  for (long k = 0; k <= j; ++k) s += static_cast<double>(L[i + k * n]) * L[j + k * n];
  const double r = fabs(s - static_cast<double>(static_cast<T>(entry(i, j, n)))) / static_cast<double>(n);
  atomicMax(out, static_cast<unsigned long long>(__double_as_longlong(r)));
}

#define BENCH_CU_CHECK(call)                                                              \
  do {                                                                                    \
    const CUresult bench_status = (call);                                                 \
    if (bench_status != CUDA_SUCCESS) {                                                   \
      const char* bench_text = nullptr;                                                   \
      cuGetErrorString(bench_status, &bench_text);                                        \
      throw std::runtime_error(std::string(#call) + ": " + (bench_text ? bench_text : "?")); \
    }                                                                                     \
  } while (0)

// How a lookahead step solves its panel below the diagonal block, and how wide the calls of the
// rest of its trailing update are.
//   trsm:     cuBLAS trsm with the factored diagonal block;
//   trtri:    the block's inverse by cuSOLVER trtri (on a copy), then the panel multiplied by it
//             (cuBLAS trmm in place): a multiplication has no chain over the block's columns;
//   identity: the same with the inverse from cuBLAS trsm on an identity block.
struct Schedule {
  enum class Solve { trsm, trtri, identity } solve = Solve::trsm;
  int update_width = 1;  // block columns per syrk + gemm pair in the rest of the update
};

// Buffers of the inverse-based solves, made before the timed runs.
template <class T>
struct SolveWork {
  T* inverse = nullptr;   // nb x nb, leading dimension nb
  T* identity = nullptr;  // nb x nb identity
  void* trtri_device = nullptr;
  std::size_t trtri_device_bytes = 0;
  std::vector<char> trtri_host;
  int* trtri_info = nullptr;
};

inline cudaDataType data_type(double*) { return CUDA_R_64F; }
inline cudaDataType data_type(float*) { return CUDA_R_32F; }
inline void trmm_right_lower_t(cublasHandle_t h, int m, int n, const double* W, int ldw, double* B, int ldb) {
  const double one = 1;
  TESSERA_CUBLAS_CHECK(cublasDtrmm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, n,
                                   &one, W, ldw, B, ldb, B, ldb));
}
inline void trmm_right_lower_t(cublasHandle_t h, int m, int n, const float* W, int ldw, float* B, int ldb) {
  const float one = 1;
  TESSERA_CUBLAS_CHECK(cublasStrmm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, n,
                                   &one, W, ldw, B, ldb, B, ldb));
}

template <class T>
__global__ void set_identity(T* W, int nb) {
  for (long idx = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; idx < static_cast<long>(nb) * nb;
       idx += static_cast<long>(gridDim.x) * blockDim.x)
    W[idx] = idx % nb == idx / nb ? T(1) : T(0);
}

// The panel below the factored diagonal block Akk (kb columns, `below` rows), as `schedule` says.
template <class T>
void solve_panel(const Schedule& schedule, SolveWork<T>& w, cusolverDnHandle_t solver, cublasHandle_t blas,
                 cudaStream_t stream, T* Akk, int n, int kb, int below) {
  if (schedule.solve == Schedule::Solve::trsm) {
    vendor::trsm(blas, false, 'L', Trans::conjugate_transpose, below, kb, T(1), Akk, n, Akk + kb, n);
    return;
  }
  if (schedule.solve == Schedule::Solve::trtri) {
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(w.inverse, kb * sizeof(T), Akk, n * sizeof(T), kb * sizeof(T), kb,
                                         cudaMemcpyDeviceToDevice, stream));
    TESSERA_CUSOLVER_CHECK(cusolverDnXtrtri(solver, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, kb,
                                            data_type(w.inverse), w.inverse, kb, w.trtri_device,
                                            w.trtri_device_bytes, w.trtri_host.data(), w.trtri_host.size(),
                                            w.trtri_info));
  } else {
    TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(w.inverse, kb * sizeof(T), w.identity, kb * sizeof(T), kb * sizeof(T), kb,
                                         cudaMemcpyDeviceToDevice, stream));
    vendor::trsm(blas, true, 'L', Trans::no, kb, kb, T(1), Akk, n, w.inverse, kb);
  }
  trmm_right_lower_t(blas, below, kb, w.inverse, kb, Akk + kb, n);
}

// How the panel's work is kept clear of the update's on the GPU.
struct Partition {
  int reserve_sms = 0;  // update handle's SM count target leaves these SMs (0: off)
  int green_sms = 0;    // panel's green context has these SMs, the update's the rest (0: off)
  bool potrf_only = false;  // with green_sms: only the diagonal block in the small context; the
                            // panel's solve and the next column on a high-priority stream of the other
};

// Two green contexts that split the SMs: `panel_sms` for one and the rest for the other.
struct GreenSplit {
  CUgreenCtx panel = nullptr, update = nullptr;
  CUcontext panel_ctx = nullptr, update_ctx = nullptr;
  unsigned panel_count = 0, update_count = 0;
  explicit GreenSplit(int panel_sms) {
    CUdevice dev = 0;
    BENCH_CU_CHECK(cuInit(0));
    BENCH_CU_CHECK(cuDeviceGet(&dev, 0));
    CUdevResource all{}, group{}, rest{};
    BENCH_CU_CHECK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    unsigned groups = 1;
    BENCH_CU_CHECK(cuDevSmResourceSplitByCount(&group, &groups, &all, &rest, 0, static_cast<unsigned>(panel_sms)));
    panel_count = group.sm.smCount;
    update_count = rest.sm.smCount;
    CUdevResourceDesc panel_desc{}, update_desc{};
    BENCH_CU_CHECK(cuDevResourceGenerateDesc(&panel_desc, &group, 1));
    BENCH_CU_CHECK(cuDevResourceGenerateDesc(&update_desc, &rest, 1));
    BENCH_CU_CHECK(cuGreenCtxCreate(&panel, panel_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    BENCH_CU_CHECK(cuGreenCtxCreate(&update, update_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    BENCH_CU_CHECK(cuCtxFromGreenCtx(&panel_ctx, panel));
    BENCH_CU_CHECK(cuCtxFromGreenCtx(&update_ctx, update));
  }
  ~GreenSplit() {
    cuGreenCtxDestroy(panel);
    cuGreenCtxDestroy(update);
  }
};

struct Streams {
  cudaStream_t urgent = nullptr, normal = nullptr;
  cudaStream_t green_panel = nullptr, green_update = nullptr, green_update_hi = nullptr;
  cublasHandle_t blas_urgent = nullptr, blas_normal = nullptr;
  cublasHandle_t blas_green_panel = nullptr, blas_green_update = nullptr, blas_green_update_hi = nullptr;
  cusolverDnHandle_t solver = nullptr, solver_green = nullptr;
  std::unique_ptr<GreenSplit> green;
  Streams() {
    int lowest = 0, highest = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&urgent, cudaStreamNonBlocking, highest));
    TESSERA_CUDA_CHECK(cudaStreamCreateWithPriority(&normal, cudaStreamNonBlocking, lowest));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_urgent));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_normal));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas_normal, normal));
  }
  // Streams and handles in two green contexts; the primary context is current again after.
  void make_green(int panel_sms) {
    drop_green();
    CUcontext primary = nullptr;
    BENCH_CU_CHECK(cuCtxGetCurrent(&primary));
    green = std::make_unique<GreenSplit>(panel_sms);
    int lowest = 0, highest = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    BENCH_CU_CHECK(cuGreenCtxStreamCreate(reinterpret_cast<CUstream*>(&green_panel), green->panel, CU_STREAM_NON_BLOCKING, highest));
    BENCH_CU_CHECK(cuGreenCtxStreamCreate(reinterpret_cast<CUstream*>(&green_update), green->update, CU_STREAM_NON_BLOCKING, lowest));
    BENCH_CU_CHECK(cuGreenCtxStreamCreate(reinterpret_cast<CUstream*>(&green_update_hi), green->update, CU_STREAM_NON_BLOCKING, highest));
    BENCH_CU_CHECK(cuCtxSetCurrent(green->panel_ctx));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_green_panel));
    TESSERA_CUSOLVER_CHECK(cusolverDnCreate(&solver_green));
    BENCH_CU_CHECK(cuCtxSetCurrent(green->update_ctx));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_green_update));
    TESSERA_CUBLAS_CHECK(cublasCreate(&blas_green_update_hi));
    BENCH_CU_CHECK(cuCtxSetCurrent(primary));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas_green_update_hi, green_update_hi));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas_green_panel, green_panel));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver_green, green_panel));
    TESSERA_CUBLAS_CHECK(cublasSetStream(blas_green_update, green_update));
  }
  // cuBLAS's FP64 emulation on the tensor cores' integer units (fixed point, accuracy kept by the
  // library's default mantissa control), wherever cuBLAS can use it, on both handles.
  void emulate_fp64() {
    for (cublasHandle_t h : {blas_urgent, blas_normal}) {
      TESSERA_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH));
      TESSERA_CUBLAS_CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
    }
  }
  void drop_green() {
    if (!green) return;
    cusolverDnDestroy(solver_green);
    cublasDestroy(blas_green_panel);
    cublasDestroy(blas_green_update);
    cublasDestroy(blas_green_update_hi);
    cudaStreamDestroy(green_update_hi);
    cudaStreamDestroy(green_panel);
    cudaStreamDestroy(green_update);
    green.reset();
  }
  ~Streams() {
    drop_green();
    cusolverDnDestroy(solver);
    cublasDestroy(blas_urgent);
    cublasDestroy(blas_normal);
    cudaStreamDestroy(urgent);
    cudaStreamDestroy(normal);
  }
};

// Trailing columns [c0, c1) updated by the block column at k0 (width kb), lower triangle only.
template <class T>
void update_columns(cublasHandle_t h, T* A, int n, int k0, int kb, int c0, int c1, int nb) {
  const T* L = A + static_cast<std::size_t>(k0) * n;
  for (int j = c0; j < c1; j += nb) {
    const int w = std::min(nb, c1 - j), below = n - j - w;
    vendor::syrk(h, 'L', Trans::no, w, kb, T(-1), L + j, n, T(1), A + j + static_cast<std::size_t>(j) * n, n);
    if (below > 0)
      vendor::gemm(h, Trans::no, Trans::conjugate_transpose, below, w, kb, T(-1), L + j + w, n, L + j, n, T(1),
                   A + j + w + static_cast<std::size_t>(j) * n, n);
  }
}

// Per step of a lookahead run, timing events: on the panel's stream before the diagonal block, after
// it, after the panel's solve and after the next column's update; on the update's stream before and
// after the rest of the update.
struct Timeline {
  enum { kPotrfStart, kPotrfEnd, kTrsmEnd, kNextEnd, kRestStart, kRestEnd, kMarks };
  std::vector<std::array<cudaEvent_t, kMarks>> steps;
  void record(int k, int mark, cudaStream_t stream) {
    if (k >= static_cast<int>(steps.size())) return;
    TESSERA_CUDA_CHECK(cudaEventRecord(steps[k][mark], stream));
  }
};

template <class T>
void blocked_potrf(Streams& s, T* A, int n, int nb, bool lookahead, const Partition& part, T* work, int lwork,
                   int* info, Timeline* timeline = nullptr, const Schedule& schedule = {},
                   SolveWork<T>* solve_work = nullptr) {
  auto mark = [&](int k, int m, cudaStream_t st) {
    if (timeline) timeline->record(k, m, st);
  };
  const int nt = (n + nb - 1) / nb;
  std::vector<cudaEvent_t> panel_done(nt), rest_done(nt);
  for (int k = 0; k < nt; ++k) {
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&panel_done[k], cudaEventDisableTiming));
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&rest_done[k], cudaEventDisableTiming));
  }
  const bool green = part.green_sms > 0, split_potrf = green && part.potrf_only;
  cudaStream_t panel = split_potrf ? s.green_update_hi : green ? s.green_panel : lookahead ? s.urgent : s.normal;
  cudaStream_t update = green ? s.green_update : s.normal;
  cublasHandle_t panel_blas = split_potrf ? s.blas_green_update_hi : green ? s.blas_green_panel : s.blas_urgent;
  cudaEvent_t hop = nullptr;  // panel stream <-> diagonal stream when they differ
  if (split_potrf) TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&hop, cudaEventDisableTiming));
  cublasHandle_t update_blas = green ? s.blas_green_update : s.blas_normal;
  cusolverDnHandle_t solver = green ? s.solver_green : s.solver;
  if (!green) {
    TESSERA_CUBLAS_CHECK(cublasSetStream(panel_blas, panel));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(solver, panel));
    int sms = 0;
    TESSERA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    TESSERA_CUBLAS_CHECK(cublasSetSmCountTarget(update_blas, part.reserve_sms > 0 ? sms - part.reserve_sms : 0));
  }
  // The caller's stream (s.normal) orders the factorization after the matrix's generation.
  if (green) {
    TESSERA_CUDA_CHECK(cudaEventRecord(rest_done[0], s.normal));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(panel, rest_done[0]));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(update, rest_done[0]));
  }
  for (int k = 0; k < nt; ++k) {
    const int k0 = k * nb, kb = std::min(nb, n - k0), below = n - k0 - kb, next = k0 + kb;
    // Block column k has had every update but the one of step k - 1 (on this stream) once the
    // rest of step k - 2 is done.
    if (lookahead && k >= 2) TESSERA_CUDA_CHECK(cudaStreamWaitEvent(panel, rest_done[k - 2]));
    T* Akk = A + k0 + static_cast<std::size_t>(k0) * n;
    mark(k, Timeline::kPotrfStart, panel);
    if (split_potrf) {
      TESSERA_CUDA_CHECK(cudaEventRecord(hop, panel));
      TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s.green_panel, hop));
      vendor::potrf(solver, 'L', kb, Akk, n, work, lwork, info);
      TESSERA_CUDA_CHECK(cudaEventRecord(hop, s.green_panel));
      TESSERA_CUDA_CHECK(cudaStreamWaitEvent(panel, hop));
    } else {
      vendor::potrf(solver, 'L', kb, Akk, n, work, lwork, info);
    }
    mark(k, Timeline::kPotrfEnd, panel);
    if (below > 0) {
      if (solve_work) solve_panel<T>(schedule, *solve_work, solver, panel_blas, panel, Akk, n, kb, below);
      else vendor::trsm(panel_blas, false, 'L', Trans::conjugate_transpose, below, kb, T(1), Akk, n, Akk + kb, n);
    }
    mark(k, Timeline::kTrsmEnd, panel);
    if (!lookahead) {
      update_columns<T>(panel_blas, A, n, k0, kb, next, n, nb);
      continue;
    }
    const int lookahead_end = std::min(n, next + nb);
    update_columns<T>(panel_blas, A, n, k0, kb, next, lookahead_end, nb);
    mark(k, Timeline::kNextEnd, panel);
    TESSERA_CUDA_CHECK(cudaEventRecord(panel_done[k], panel));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(update, panel_done[k]));
    mark(k, Timeline::kRestStart, update);
    update_columns<T>(update_blas, A, n, k0, kb, lookahead_end, n, nb * schedule.update_width);
    mark(k, Timeline::kRestEnd, update);
    TESSERA_CUDA_CHECK(cudaEventRecord(rest_done[k], update));
  }
  if (lookahead || green) {
    TESSERA_CUDA_CHECK(cudaEventRecord(panel_done[0], panel));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s.normal, panel_done[0]));
    TESSERA_CUDA_CHECK(cudaEventRecord(rest_done[0], update));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s.normal, rest_done[0]));
  }
  TESSERA_CUBLAS_CHECK(cublasSetSmCountTarget(s.blas_normal, 0));
  if (hop) cudaEventDestroy(hop);
  for (int k = 0; k < nt; ++k) {
    cudaEventDestroy(panel_done[k]);
    cudaEventDestroy(rest_done[k]);
  }
}

// A recursive factorization's choices (recLEAF-KIND above) and the buffers it needs.
struct Recursion {
  enum class Kind { cublas, split, split_tessera } kind = Kind::cublas;
  int leaf = 2048;        // cuSOLVER potrf from this order down
  int split_leaf = 2048;  // split solves and syrks: one vendor (or Tessera) call from this order down
};

inline const char* name(Recursion::Kind k) {
  return k == Recursion::Kind::cublas ? "cublas" : k == Recursion::Kind::split ? "split" : "split-tessera";
}

template <class T>
struct RecursionContext {
  Recursion r;
  cusolverDnHandle_t solver;
  cublasHandle_t blas;
  cudaStream_t stream;
  T* work;
  int lwork;
  int* info;
  void* trsm_workspace;
  std::size_t trsm_workspace_bytes;
};

// Halves of order n, the first a multiple of 256 (so that the leaves' columns stay aligned).
inline int leading_half(int n) { return std::min(n - 1, (n / 2 + 255) / 256 * 256); }

// B (m x k) := B L^{-T}, L lower k x k.
template <class T>
void solve_recursive(const RecursionContext<T>& c, int m, int k, const T* L, int ldl, T* B, int ldb) {
  if (c.r.kind == Recursion::Kind::cublas || k <= c.r.split_leaf) {
    if (c.r.kind == Recursion::Kind::split_tessera)
      tessera::kernels::cuda::trsm_rlt<T>(m, k, L, ldl, B, ldb, c.trsm_workspace, c.trsm_workspace_bytes, c.stream);
    else
      vendor::trsm(c.blas, false, 'L', Trans::conjugate_transpose, m, k, T(1), L, ldl, B, ldb);
    return;
  }
  const int k1 = leading_half(k), k2 = k - k1;
  solve_recursive(c, m, k1, L, ldl, B, ldb);
  T* B2 = B + static_cast<std::size_t>(k1) * ldb;
  vendor::gemm(c.blas, Trans::no, Trans::conjugate_transpose, m, k2, k1, T(-1), B, ldb, L + k1, ldl, T(1), B2, ldb);
  solve_recursive(c, m, k2, L + k1 + static_cast<std::size_t>(k1) * ldl, ldl, B2, ldb);
}

// C (lower, n x n) -= A A^T, A n x k.
template <class T>
void syrk_recursive(const RecursionContext<T>& c, int n, int k, const T* A, int lda, T* C, int ldc) {
  if (c.r.kind == Recursion::Kind::cublas || n <= c.r.split_leaf) {
    vendor::syrk(c.blas, 'L', Trans::no, n, k, T(-1), A, lda, T(1), C, ldc);
    return;
  }
  const int n1 = leading_half(n), n2 = n - n1;
  syrk_recursive(c, n1, k, A, lda, C, ldc);
  vendor::gemm(c.blas, Trans::no, Trans::conjugate_transpose, n2, n1, k, T(-1), A + n1, lda, A, lda, T(1), C + n1, ldc);
  syrk_recursive(c, n2, k, A + n1, lda, C + n1 + static_cast<std::size_t>(n1) * ldc, ldc);
}

template <class T>
void potrf_recursive(const RecursionContext<T>& c, int n, T* A, int lda) {
  if (n <= c.r.leaf) {
    vendor::potrf(c.solver, 'L', n, A, lda, c.work, c.lwork, c.info);
    return;
  }
  const int n1 = leading_half(n), n2 = n - n1;
  T* A21 = A + n1;
  T* A22 = A + n1 + static_cast<std::size_t>(n1) * lda;
  potrf_recursive(c, n1, A, lda);
  solve_recursive(c, n2, n1, A, lda, A21, lda);
  syrk_recursive(c, n2, n1, A21, lda, A22, lda);
  potrf_recursive(c, n2, A22, lda);
}

double tflops(int n, double ms) { return static_cast<double>(n) * n * n / 3.0 / (ms * 1e-3) * 1e-12; }

struct Measurement {
  double ms = 0, residual = 0;
  int info = 0;
};

template <class T>
class Bench {
 public:
  Bench(int n, int repetitions, bool emulate = false)
      : n_(n), repetitions_(repetitions), A_(static_cast<std::size_t>(n) * n) {
    if (emulate) s_.emulate_fp64();
    TESSERA_CUDA_CHECK(cudaEventCreate(&start_));
    TESSERA_CUDA_CHECK(cudaEventCreate(&stop_));
    lwork_ = vendor::potrf_workspace(s_.solver, 'L', n, A_.get(), n);
    work_ = std::make_unique<Device<T>>(static_cast<std::size_t>(lwork_));
  }
  ~Bench() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  // Median time of `factor` on a freshly generated matrix, after one warm-up call.
  template <class F>
  Measurement measure(F&& factor) {
    std::vector<double> times;
    for (int r = 0; r <= repetitions_; ++r) {
      generate<T><<<4096, 256, 0, s_.normal>>>(A_.get(), n_);
      TESSERA_CUDA_CHECK_LAUNCH();
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      TESSERA_CUDA_CHECK(cudaEventRecord(start_, s_.normal));
      factor();
      TESSERA_CUDA_CHECK(cudaEventRecord(stop_, s_.normal));
      TESSERA_CUDA_CHECK(cudaEventSynchronize(stop_));
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      if (r > 0) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    Measurement m;
    m.ms = times[times.size() / 2];
    TESSERA_CUDA_CHECK(cudaMemcpy(&m.info, info_.get(), sizeof(int), cudaMemcpyDeviceToHost));
    m.residual = residual();
    return m;
  }

  Measurement vendor_potrf() {
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(s_.solver, s_.normal));
    return measure([&] { vendor::potrf(s_.solver, 'L', n_, A_.get(), n_, work_->get(), lwork_, info_.get()); });
  }
  Measurement blocked(int nb, bool lookahead, const Partition& part = {}) {
    if (part.green_sms > 0 && (!s_.green || part.green_sms != green_request_)) {
      s_.make_green(part.green_sms);
      green_request_ = part.green_sms;
    }
    return measure(
        [&] { blocked_potrf<T>(s_, A_.get(), n_, nb, lookahead, part, work_->get(), lwork_, info_.get()); });
  }
  // A lookahead run with the panel solved and the update cut as `schedule` says.
  Measurement scheduled(int nb, const Schedule& schedule) {
    SolveWork<T> w;
    Device<T> inverse(static_cast<std::size_t>(nb) * nb), identity(static_cast<std::size_t>(nb) * nb);
    Device<int> trtri_info(1);
    w.inverse = inverse.get();
    w.identity = identity.get();
    w.trtri_info = trtri_info.get();
    set_identity<T><<<256, 256>>>(w.identity, nb);
    TESSERA_CUDA_CHECK_LAUNCH();
    std::size_t host_bytes = 0;
    TESSERA_CUSOLVER_CHECK(cusolverDnXtrtri_bufferSize(s_.solver, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, nb,
                                                       data_type(w.inverse), w.inverse, nb, &w.trtri_device_bytes,
                                                       &host_bytes));
    w.trtri_host.resize(host_bytes);
    Device<char> device_bytes(std::max<std::size_t>(w.trtri_device_bytes, 1));
    w.trtri_device = device_bytes.get();
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    return measure([&] {
      blocked_potrf<T>(s_, A_.get(), n_, nb, true, {}, work_->get(), lwork_, info_.get(), nullptr, schedule, &w);
    });
  }
  // The recursive factorization `r` on the caller's stream.
  Measurement recursive(const Recursion& r) {
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(s_.solver, s_.normal));
    TESSERA_CUBLAS_CHECK(cublasSetStream(s_.blas_normal, s_.normal));
    const std::size_t trsm_bytes = tessera::kernels::cuda::trsm_rlt_workspace_bytes<T>(n_, r.split_leaf);
    Device<char> trsm_workspace(std::max<std::size_t>(trsm_bytes, 1));
    const int leaf_lwork = vendor::potrf_workspace(s_.solver, 'L', std::min(n_, r.leaf), A_.get(), n_);
    if (leaf_lwork > lwork_) throw std::runtime_error("recursive: leaf workspace larger than the whole matrix's");
    const RecursionContext<T> c{r,      s_.solver,          s_.blas_normal, s_.normal, work_->get(), lwork_,
                                info_.get(), trsm_workspace.get(), trsm_bytes};
    return measure([&] { potrf_recursive<T>(c, n_, A_.get(), n_); });
  }
  // One lookahead run with timing events; prints each step's phases in ms from the start.
  void timeline(int nb) {
    generate<T><<<4096, 256, 0, s_.normal>>>(A_.get(), n_);
    TESSERA_CUDA_CHECK_LAUNCH();
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const int nt = (n_ + nb - 1) / nb;
    Timeline t;
    t.steps.resize(nt);
    for (auto& step : t.steps)
      for (auto& e : step) TESSERA_CUDA_CHECK(cudaEventCreate(&e));
    TESSERA_CUDA_CHECK(cudaEventRecord(start_, s_.normal));
    blocked_potrf<T>(s_, A_.get(), n_, nb, true, {}, work_->get(), lwork_, info_.get(), &t);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    auto at = [&](cudaEvent_t e) {
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, e));
      return ms;
    };
    fmt::print("timeline n={} nb={}: step, potrf [start end], trsm end, next-column end, rest [start end] (ms)\n", n_, nb);
    for (int k = 0; k < nt; ++k) {
      auto& e = t.steps[k];
      const bool rest = k + 2 < nt;
      fmt::print("  {:3d} potrf [{:8.3f} {:8.3f}] {:8.3f} trsm {:8.3f} next  rest [{:8.3f} {:8.3f}]\n", k,
                 at(e[Timeline::kPotrfStart]), at(e[Timeline::kPotrfEnd]), at(e[Timeline::kTrsmEnd]),
                 k + 1 < nt ? at(e[Timeline::kNextEnd]) : 0.0f, rest ? at(e[Timeline::kRestStart]) : 0.0f,
                 rest ? at(e[Timeline::kRestEnd]) : 0.0f);
    }
    for (auto& step : t.steps)
      for (auto& e : step) cudaEventDestroy(e);
  }
  // cuSOLVER potrf of the whole (small) matrix on the small green context alone: median ms.
  Measurement green_potrf_alone(int sms) {
    if (!s_.green || sms != green_request_) {
      s_.make_green(sms);
      green_request_ = sms;
    }
    return measure([&] {
      cudaEvent_t e = nullptr;
      TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      TESSERA_CUDA_CHECK(cudaEventRecord(e, s_.normal));
      TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s_.green_panel, e));
      vendor::potrf(s_.solver_green, 'L', n_, A_.get(), n_, work_->get(), lwork_, info_.get());
      TESSERA_CUDA_CHECK(cudaEventRecord(e, s_.green_panel));
      TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s_.normal, e));
      cudaEventDestroy(e);
    });
  }
  // cuSOLVER potrf of the whole (small) matrix replayed from a CUDA graph captured once: median ms.
  Measurement graph_potrf() {
    cudaStream_t capture = nullptr;
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    TESSERA_CUSOLVER_CHECK(cusolverDnSetStream(s_.solver, capture));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    TESSERA_CUDA_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    vendor::potrf(s_.solver, 'L', n_, A_.get(), n_, work_->get(), lwork_, info_.get());
    TESSERA_CUDA_CHECK(cudaStreamEndCapture(capture, &graph));
    TESSERA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    size_t nodes = 0;
    TESSERA_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    graph_nodes_ = static_cast<int>(nodes);
    const Measurement m = measure([&] { TESSERA_CUDA_CHECK(cudaGraphLaunch(exec, s_.normal)); });
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(capture);
    return m;
  }
  int graph_nodes() const { return graph_nodes_; }
  unsigned green_panel_sms() const { return s_.green ? s_.green->panel_count : 0; }
  unsigned green_update_sms() const { return s_.green ? s_.green->update_count : 0; }

 private:
  double residual() {
    Device<unsigned long long> bits(1);
    TESSERA_CUDA_CHECK(cudaMemset(bits.get(), 0, sizeof(unsigned long long)));
    sampled_residual<T><<<16, 256>>>(A_.get(), n_, bits.get());
    TESSERA_CUDA_CHECK_LAUNCH();
    unsigned long long raw = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&raw, bits.get(), sizeof raw, cudaMemcpyDeviceToHost));
    double r = 0;
    std::memcpy(&r, &raw, sizeof r);
    return r;
  }

  int n_, repetitions_;
  Streams s_;
  Device<T> A_;
  Device<int> info_{1};
  int lwork_ = 0;
  int green_request_ = 0;
  int graph_nodes_ = 0;
  std::unique_ptr<Device<T>> work_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// cuBLAS DGEMM C := A B^T (n x n, k = n) natively and with FP64 emulation: median ms of 3 after a
// warm-up each, and the largest difference between the two results relative to the largest entry.
void gemm_emulation_probe(int n) {
  Device<double> A(static_cast<std::size_t>(n) * n), C(static_cast<std::size_t>(n) * n),
      E(static_cast<std::size_t>(n) * n);
  generate<double><<<4096, 256>>>(A.get(), n);
  TESSERA_CUDA_CHECK_LAUNCH();
  cublasHandle_t h = nullptr;
  TESSERA_CUBLAS_CHECK(cublasCreate(&h));
  cudaEvent_t start = nullptr, stop = nullptr;
  TESSERA_CUDA_CHECK(cudaEventCreate(&start));
  TESSERA_CUDA_CHECK(cudaEventCreate(&stop));
  auto time = [&](double* out) {
    std::vector<float> times;
    for (int r = 0; r < 4; ++r) {
      TESSERA_CUDA_CHECK(cudaEventRecord(start));
      vendor::gemm(h, Trans::no, Trans::conjugate_transpose, n, n, n, 1.0 / n, A.get(), n, A.get(), n, 0.0, out, n);
      TESSERA_CUDA_CHECK(cudaEventRecord(stop));
      TESSERA_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r > 0) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    return static_cast<double>(times[1]);
  };
  const double native = time(C.get());
  TESSERA_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH));
  TESSERA_CUBLAS_CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
  const double emulated = time(E.get());
  std::vector<double> c(static_cast<std::size_t>(n) * n), e(c.size());
  TESSERA_CUDA_CHECK(cudaMemcpy(c.data(), C.get(), c.size() * sizeof(double), cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(cudaMemcpy(e.data(), E.get(), e.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double largest = 0, difference = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    largest = std::max(largest, std::abs(c[i]));
    difference = std::max(difference, std::abs(c[i] - e[i]));
  }
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  fmt::print("d DGEMM n={}: native {:.3f} ms {:.2f} TFLOP/s, emulated {:.3f} ms {:.2f} TFLOP/s, max |difference| / max |C| {:.1e}\n",
             n, native, flops / native * 1e-9, emulated, flops / emulated * 1e-9, difference / largest);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cublasDestroy(h);
}

// cuSOLVER potrf of one nb x nb block alone: best of 5, microseconds.
template <class T>
double diagonal_block_us(int nb) {
  Bench<T> bench(nb, 5);
  return bench.vendor_potrf().ms * 1e3;
}

void print_row(char letter, int n, int nb, const std::string& variant, const Measurement& m, const Measurement& ref) {
  fmt::print("{} n={:6d} nb={:4d} {:18s}  {:9.2f} ms {:6.2f} TFLOP/s  {:.2f}x cuSOLVER  info {} residual {:.1e}\n", letter,
             n, nb, variant, m.ms, tflops(n, m.ms), ref.ms / m.ms, m.info, m.residual);
}

template <class T>
void run(const std::vector<int>& sizes, const std::vector<int>& nbs, int repetitions, const std::vector<int>& reserves,
         const std::vector<int>& greens, bool show_timeline, const std::vector<std::string>& solves,
         const std::vector<int>& widths, const std::vector<int>& leaves, int split_leaf, bool emulate) {
  const char letter = sizeof(T) == 8 ? 'd' : 's';
  if (emulate && sizeof(T) == 8)
    for (int n : {8192, 16384}) gemm_emulation_probe(n);
  for (int nb : nbs) {
    const double us = diagonal_block_us<T>(nb);
    fmt::print("{} potrf of one {} block alone: {:.1f} us ({:.0f} ns per column)\n", letter, nb, us, us * 1e3 / nb);
    {
      Bench<T> bench(nb, 5);
      const Measurement m = bench.graph_potrf();
      fmt::print("{} potrf of one {} block replayed from a CUDA graph ({} nodes): {:.1f} us, info {} residual {:.1e}\n",
                 letter, nb, bench.graph_nodes(), m.ms * 1e3, m.info, m.residual);
    }
    for (int g : greens) {
      if (g <= 0) continue;
      Bench<T> bench(nb, 5);
      const Measurement m = bench.green_potrf_alone(g);
      fmt::print("{} potrf of one {} block alone on a green context of {} SMs: {:.1f} us\n", letter, nb,
                 bench.green_panel_sms(), m.ms * 1e3);
    }
  }
  for (int n : sizes) {
    Bench<T> bench(n, repetitions);
    const Measurement ref = bench.vendor_potrf();
    fmt::print("{} n={:6d} cuSOLVER potrf                      {:9.2f} ms {:6.2f} TFLOP/s  info {} residual {:.1e}\n",
               letter, n, ref.ms, tflops(n, ref.ms), ref.info, ref.residual);
    for (int leaf : leaves)
      for (auto kind : {Recursion::Kind::cublas, Recursion::Kind::split, Recursion::Kind::split_tessera}) {
        Recursion r;
        r.kind = kind;
        r.leaf = leaf;
        r.split_leaf = split_leaf;
        print_row(letter, n, leaf, fmt::format("rec-{}", name(kind)), bench.recursive(r), ref);
      }
    if (emulate && sizeof(T) == 8) {
      Bench<T> emulated(n, repetitions, true);
      for (int leaf : leaves) {
        Recursion r;
        r.kind = Recursion::Kind::split;
        r.leaf = leaf;
        r.split_leaf = split_leaf;
        print_row(letter, n, leaf, "emu-rec-split", emulated.recursive(r), ref);
      }
      for (int nb : nbs)
        if (n >= 2 * nb) print_row(letter, n, nb, "emu-lookahead", emulated.blocked(nb, true), ref);
    }
    for (int nb : nbs) {
      if (n < 2 * nb) continue;
      print_row(letter, n, nb, "plain", bench.blocked(nb, false), ref);
      print_row(letter, n, nb, "lookahead", bench.blocked(nb, true), ref);
      if (show_timeline) bench.timeline(nb);
      for (const std::string& solve : solves)
        for (int width : widths) {
          if (solve == "trsm" && width == 1) continue;  // the lookahead row above
          Schedule schedule;
          schedule.solve = solve == "trtri" ? Schedule::Solve::trtri
                           : solve == "identity" ? Schedule::Solve::identity
                                                 : Schedule::Solve::trsm;
          schedule.update_width = width;
          print_row(letter, n, nb, fmt::format("la-{}-w{}", solve, width), bench.scheduled(nb, schedule), ref);
        }
      for (int r : reserves)
        if (r > 0) print_row(letter, n, nb, fmt::format("lookahead-sm{}", r), bench.blocked(nb, true, {r, 0}), ref);
      for (int g : greens) {
        if (g <= 0) continue;
        try {
          const Measurement m = bench.blocked(nb, true, {0, g});
          print_row(letter, n, nb, fmt::format("lookahead-green{}", bench.green_panel_sms()), m, ref);
          const Measurement p = bench.blocked(nb, true, {0, g, true});
          print_row(letter, n, nb, fmt::format("green-potrf{}", bench.green_panel_sms()), p, ref);
        } catch (const std::exception& e) {
          fmt::print("{} n={:6d} nb={:4d} lookahead-green{}: {}\n", letter, n, nb, g, e.what());
        }
      }
    }
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<int> sizes{8192, 16384, 30000, 40000}, nbs{512, 1024, 2048};
    std::vector<std::string> precisions{"d"};
    int repetitions = 3;
    std::vector<int> reserves, greens;
    bool show_timeline = false;
    std::vector<std::string> solves;
    std::vector<int> widths{1};
    std::vector<int> leaves;
    int split_leaf = 2048;
    bool emulate = false;
    for (tessera::bench::Arguments args(argc, argv); args.next();) {
      const std::string opt = args.option();
      if (opt == "--sizes") sizes = tessera::bench::parse_int_list(args.value());
      else if (opt == "--nb") nbs = tessera::bench::parse_int_list(args.value());
      else if (opt == "--precisions") precisions = tessera::bench::split_commas(args.value());
      else if (opt == "--repetitions") repetitions = std::stoi(args.value());
      else if (opt == "--reserve") reserves = tessera::bench::parse_int_list(args.value());
      else if (opt == "--green") greens = tessera::bench::parse_int_list(args.value());
      else if (opt == "--timeline") show_timeline = true;
      else if (opt == "--solves") solves = tessera::bench::split_commas(args.value());
      else if (opt == "--update-widths") widths = tessera::bench::parse_int_list(args.value());
      else if (opt == "--recursive-leaves") leaves = tessera::bench::parse_int_list(args.value());
      else if (opt == "--split-leaf") split_leaf = std::stoi(args.value());
      else if (opt == "--emulate-fp64") emulate = true;
      else throw std::runtime_error("unknown option " + opt);
    }
    if (!tessera::bench::cuda_device_present()) {
      fmt::print("no CUDA device: nothing to measure\n");
      return 0;
    }
    cudaDeviceProp prop{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    fmt::print("{}; medians of {} runs after a warm-up, TFLOP/s with n^3/3 flops\n", prop.name, repetitions);
    for (const std::string& p : precisions) {
      if (p == "d") run<double>(sizes, nbs, repetitions, reserves, greens, show_timeline, solves, widths, leaves, split_leaf, emulate);
      else if (p == "s") run<float>(sizes, nbs, repetitions, reserves, greens, show_timeline, solves, widths, leaves, split_leaf, emulate);
      else throw std::runtime_error("precision must be d or s");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_schedule_bound: %s\n", e.what());
    return 1;
  }
}
