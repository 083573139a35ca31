// A float factorization in GPU memory for the refined solve, keeping what its triangular solves
// use afterwards.
#pragma once

#include "tessera/device.hpp"

namespace tessera::device {

#ifdef TESSERA_HAVE_CUDA
// device::potrf of a float matrix in GPU memory, lower storage. Where the plan takes a tensor-core
// tile DAG whose tiles are kernels::cuda::vendor::kInverseBlock wide, the inverses of the diagonal
// tiles' factors, which its panel solves make anyway, are kept at `inverses` in the layout of
// vendor::invert_lower_diagonal_blocks (inverse_blocks_elements(n) floats on A's GPU) and *kept is
// true; elsewhere *kept is false and `inverses` is not written.
int potrf_keeping_diagonal_inverses(Runtime& runtime, int n, float* A, int lda, float* inverses, bool* kept,
                                    Stream stream, const FactorOptions& options);
#endif

}  // namespace tessera::device
