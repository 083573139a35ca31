// Cholesky of one small real or complex (Hermitian) matrix by one thread block, in one launch (no
// host synchronisation): what the device API uses for a single matrix up to the plan's orders
// instead of cuSOLVER's potrf, whose launches for such a matrix take longer than the whole
// factorization here.
#pragma once

#include <cuda_runtime.h>

namespace tessera::kernels::cuda {

// The largest order the kernel takes (its shared memory holds the padded lower triangle; complex
// double's fits only up to order 128 on the GPUs with the most shared memory).
constexpr int one_block_potrf_max_n = 192;

// Whether this GPU's shared memory holds the kernel's for order n.
template <class T>
bool potrf_one_block_fits(int n);

// L := the lower Cholesky factor of the matrix whose element (i, j), i >= j, lies at
// A + i * a_row + j * a_col (only that triangle is read), element (i, j) of L written at
// L + i * l_row + j * l_col; *info (device memory) := 0, or LAPACK's info: the 1-based column of
// the first pivot that is not positive (NaN included), the columns before it then holding L's and
// the later ones A's values. `out_of_place` (L's memory apart from A's): L's strict upper triangle
// (i < j) := 0 and the columns from a failing one := A's; in place (L == A, the same strides)
// nothing outside the lower triangle is written. Complex T: the Hermitian matrix's diagonal read as
// its real part, the factor's diagonal written real; an upper triangle read through transposed
// strides is the lower one of the conjugate matrix, whose factor written through the same strides is
// the upper factor. T: float, double, std::complex<float>, std::complex<double>; potrf_one_block_fits(n).
template <class T>
void potrf_one_block(int n, const T* A, long long a_row, long long a_col, T* L, long long l_row, long long l_col,
                     bool out_of_place, int* info, cudaStream_t stream);

// potrf_one_block on each matrix b < batch of a stack, one thread block each in one launch: matrix b
// at A + b * a_matrix, its factor at L + b * l_matrix, its info at info[b].
template <class T>
void potrf_one_block_stack(int n, int batch, const T* A, long long a_row, long long a_col, long long a_matrix, T* L,
                           long long l_row, long long l_col, long long l_matrix, bool out_of_place, int* info,
                           cudaStream_t stream);

}  // namespace tessera::kernels::cuda
