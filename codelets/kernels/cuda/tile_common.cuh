// Device helpers and internal entry points shared by the tile kernels (tile_*.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "check.hpp"
#include "tessera/precision.hpp"
#include "tile_kernels.hpp"

namespace tessera::kernels::cuda::detail {

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int round_up(int a, int b) { return ceil_div(a, b) * b; }

// ---- device helpers ------------------------------------------------------------------------

constexpr unsigned kFullMask = 0xffffffffu;  // every lane of a warp, for the *_sync intrinsics

// Asynchronous copy of one element from global to shared memory; the destination is zero-filled
// when `valid` is false (no byte is read then, but `src` must still be a mapped address).
template <class T>
__device__ __forceinline__ void cp_async_elem(T* dst, const T* src, bool valid) {
  const unsigned saddr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int src_bytes = valid ? static_cast<int>(sizeof(T)) : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(saddr), "l"(src),
               "n"(static_cast<int>(sizeof(T))), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// D += A * B for one 16x8x8 FP64 tile (tensor cores). Fragments follow the PTX layout:
// a[v0 + 2 v1] = A(g + 8 v0, t + 4 v1), b[v] = B(t + 4 v, g), d[v] = D(g + 8 (v / 2), 2 t + v % 2)
// with g = lane / 4 and t = lane % 4.
__device__ __forceinline__ void dmma_16x8x8(double (&d)[4], const double (&a)[4],
                                            const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // The same product as four 8x8x4 steps (rows g / g + 8, k halves t / t + 4).
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(d[0]), "+d"(d[1]) : "d"(a[0]), "d"(b[0]));
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(d[0]), "+d"(d[1]) : "d"(a[2]), "d"(b[1]));
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(d[2]), "+d"(d[3]) : "d"(a[1]), "d"(b[0]));
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
      : "+d"(d[2]), "+d"(d[3]) : "d"(a[3]), "d"(b[1]));
#else
  // FP64 MMA needs sm_80; the host side never launches a DMMA kernel on older devices.
  __trap();
#endif
}

// D += A * B for one 16x8x16 FP64 tile: a[v0 + 2 v1] = A(g + 8 v0, t + 4 v1), b[v] = B(t + 4 v, g).
__device__ __forceinline__ void dmma_16x8x16(double (&d)[4], const double (&a)[8],
                                             const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
      "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
  const double a0[4] = {a[0], a[1], a[2], a[3]};
  const double a1[4] = {a[4], a[5], a[6], a[7]};
  const double b0[2] = {b[0], b[1]};
  const double b1[2] = {b[2], b[3]};
  dmma_16x8x8(d, a0, b0);
  dmma_16x8x8(d, a1, b1);
#endif
}

// Hides p's value from the compiler, so that addresses computed from it are not shared with
// earlier ones (kept live across a kernel, such shared addresses spilled registers).
template <class T>
__device__ __forceinline__ void opaque(T*& p) {
  asm("" : "+l"(p));
}

// Thread 0 of the block waits until *counter >= target (acquire), then every thread acquires too:
// the writes released before the counter reached target are visible to the whole block.
__device__ __forceinline__ void block_wait_at_least(const int* counter, int target) {
  if (threadIdx.x == 0 && target > 0) {
    int seen;
    do {
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
    } while (seen < target);
  }
  __syncthreads();
  __threadfence();
}

// Every thread's earlier memory operations made visible to the device, then *counter raised by
// one with release semantics by thread 0.
__device__ __forceinline__ void block_count_up(int* counter) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(counter) : "memory");
  }
}

// LAPACK info of a factorization split into calls in stream order: the first call overwrites
// *info, later ones write only while it is still 0, so the first failure wins.
__device__ __forceinline__ void report_info(int* info, int value, bool overwrite) {
  if (overwrite)
    *info = value;
  else if (*info == 0)
    *info = value;
}

// Forward substitution of one row p (its first w <= N columns) against a lower-triangular block
// L (L(c, j) at L[j * ld + c], invd = 1 / diagonal): for each j, p_j *= invd[j], then
// p_c -= p_j L(c, j) for c > j.
template <class T, int N>
__device__ __forceinline__ void substitute_row(T (&p)[N], int w, const T* L, int ld,
                                               const T* invd) {
#pragma unroll
  for (int jj = 0; jj < N; ++jj) {
    if (jj < w) {
      const T xv = p[jj] * invd[jj];
      p[jj] = xv;
#pragma unroll
      for (int c = jj + 1; c < N; ++c) p[c] = fma(-xv, L[jj * ld + c], p[c]);
    }
  }
}

template <class T>
__device__ __forceinline__ T reciprocal_sqrt(T x);
template <>
__device__ __forceinline__ double reciprocal_sqrt<double>(double x) { return rsqrt(x); }
template <>
__device__ __forceinline__ float reciprocal_sqrt<float>(float x) { return rsqrtf(x); }

// ---- host helpers --------------------------------------------------------------------------

// Raises a kernel's dynamic shared-memory limit on the current device (once per kernel/device).
void ensure_dynamic_smem(const void* kernel, std::size_t bytes);
// Opt-in shared memory per block of the current device.
std::size_t max_dynamic_smem();
// Compute capability major*10+minor of the current device.
int device_cc();
// Multiprocessor count of the current device.
int device_sm_count();

// Device memory from a per-device stream-ordered pool (for calls made without workspace).
void* pool_alloc(std::size_t bytes, cudaStream_t stream);
void pool_free(void* p, cudaStream_t stream);

[[noreturn]] void invalid_config(const std::string& what);

// Argument check of the public entry points (position: LAPACK-style argument number).
inline void require(bool ok, const char* what, int position) {
  if (!ok) throw InvalidArgument(std::string("tile kernels: ") + what, position);
}

// ---- internal entry points -----------------------------------------------------------------

enum class GemmMode {
  update,        // C -= A B^T
  lower_update,  // C -= A B^T on the lower triangle of a square C (B == A), strict upper untouched
  overwrite,     // C = A B^T; C may alias A when one block column covers n (bn >= n)
};

// Block shape of the gemm kernels: bm x bn outputs per block of `threads` threads.
struct GemmShape {
  int bm, bn, threads;
};

// Block shapes instantiated per precision (double: FP64 MMA kernels, single: FP32 FMA kernels).
const std::vector<GemmShape>& gemm_shapes(Precision precision);
// The shape cfg names (tile, tile_n, threads), or the built-in default for this size.
GemmShape pick_gemm_shape(Precision precision, GemmMode mode, int m, int n,
                          const TileKernelConfig& cfg);

template <class T>
void gemm_launch(GemmMode mode, int m, int n, int k, const T* A, int lda, const T* B, int ldb,
                 T* C, int ldc, cudaStream_t stream, const TileKernelConfig& cfg);

// Built-in defaults (the configurations measured best on the H100), nearest nb.
TileKernelConfig default_tile_config(Precision precision, const char* op, int nb);


}  // namespace tessera::kernels::cuda::detail
