// CUDA kernels of the adaptive-precision factorization (FactorOptions::accuracy): tile norms, the
// FP16 pieces of a tile, and the trailing update of a double tile from products of such pieces on
// the tensor cores (device pointers, asynchronous on `stream`).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "../tile_part.hpp"

namespace tessera::kernels::cuda {

// *norm (device memory) := the Frobenius norm of the part of the m x n block A (NaN if an element
// read is NaN), its squares scaled by the largest modulus against overflow; partial results
// combined in a fixed order, so that the same tile always gives the same norm. `workspace`: device
// memory of frobenius_norm_workspace_bytes(n).
std::size_t frobenius_norm_workspace_bytes(int n);
void frobenius_norm(TilePart part, int m, int n, const double* A, int lda, double* workspace, double* norm,
                    cudaStream_t stream);

// *exponent (device memory) := e such that 2^e brings the largest modulus of the m x n block A to
// [2^14, 2^15): 0 for a block of zeros or one with a value that is not finite. The largest
// modulus is the norm's first pass; `workspace`: device memory of range_exponent_workspace_bytes().
std::size_t range_exponent_workspace_bytes();
void range_exponent(int m, int n, const double* A, int lda, double* workspace, short* exponent, cudaStream_t stream);

// The FP16 pieces of the m x n block A scaled by 2^(*exponent) (every value of the block's
// magnitude inside FP16's range): hi := A 2^e rounded to nearest, and, where lo is not null, lo :=
// (A 2^e - hi) 2^11 rounded to nearest, so that hi + 2^-11 lo holds A 2^e to about 2^-22 of
// each value. Both m x n, leading dimension ldd.
void split_to_fp16(int m, int n, const double* A, int lda, const short* exponent, void* hi, void* lo, int ldd,
                   cudaStream_t stream);

// C (double) += alpha 2^-(*ea + *eb) (W + 2^-11 W2) (W2 null: W alone), all m x n, W and W2 FP32
// with leading dimension ldw: products of scaled pieces brought back to their scale and
// accumulated in double.
void add_unscaled(int m, int n, double alpha, const float* W, const float* W2, int ldw, const short* ea,
                  const short* eb, double* C, int ldc, cudaStream_t stream);

}  // namespace tessera::kernels::cuda
