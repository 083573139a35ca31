// One warp's Cholesky of a 32 x 32 block held in registers (lane c = row c), and the solve of
// rows against it: the building blocks of potf2's variants 2 and 3.
#pragma once

#include "tile_common.cuh"

namespace tessera::kernels::cuda::detail {

constexpr int kWarpBlock = 32;  // rows and columns of the block one warp factors

// Cholesky of the 32 x 32 block whose row `lane` is x (lower part; x[k] for k > lane is ignored
// and overwritten). Column j of L goes to lcol[j] and 1 / L(j, j) to inv[j]. Returns the 0-based
// column of the first pivot that is not positive (or NaN), kWarpBlock if none; the columns before it
// are exact, the later ones garbage. Branch-free, so that the column steps, unrolled, form one
// straight stretch of code that the compiler can interleave.
template <class T>
__device__ __forceinline__ int factor_diagonal_warp(T (&x)[kWarpBlock], T (*lcol)[kWarpBlock], T* inv) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  int failed = kWarpBlock;
  T pivot = __shfl_sync(kFullMask, x[0], 0);
#pragma unroll
  for (int j = 0; j < kWarpBlock; ++j) {
    const T d = pivot;
    failed = (failed == kWarpBlock && !(d > T(0))) ? j : failed;
    const T s = reciprocal_sqrt(d);
    const T l = x[j] * s;  // L(lane, j); sqrt(d) on the diagonal
    if (j + 1 < kWarpBlock) pivot = __shfl_sync(kFullMask, fma(-l, l, x[j + 1]), j + 1);
    lcol[j][lane] = l;
    if (lane == j) inv[j] = s;
    __syncwarp();
#pragma unroll
    for (int r = j + 1; r < kWarpBlock; ++r) x[r] = fma(-lcol[j][r], l, x[r]);
    x[j] = l;
  }
  return failed;
}

// Row j of x := row j of x L^{-T}, right-looking, against the factored 32 x 32 diagonal block
// (lcol, inv) of factor_diagonal_warp.
template <class T>
__device__ __forceinline__ void solve_against_diagonal(T (&x)[kWarpBlock], const T (*lcol)[kWarpBlock], const T* inv) {
#pragma unroll
  for (int j = 0; j < kWarpBlock; ++j) {
    const T l = x[j] * inv[j];
    x[j] = l;
#pragma unroll
    for (int r = j + 1; r < kWarpBlock; ++r) x[r] = fma(-lcol[j][r], l, x[r]);
  }
}

}  // namespace tessera::kernels::cuda::detail
