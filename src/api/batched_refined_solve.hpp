// The two ways device::posv_refined_batched (tessera/device.hpp) solves a batch: the public
// function takes the one the plan chooses for the GPU (plan.hpp, batched_refinement_in_single);
// each can be asked for here, so that both are tested on any GPU.
#pragma once

#include "tessera/device.hpp"

namespace tessera::detail {

enum class BatchedRefinedPath {
  refine_in_single,  // LAPACK's DSPOSV/ZCPOSV steps per matrix
  double_at_once,    // every matrix factored and solved in double precision, ITER -1
};

// The path the plan chooses on the current GPU.
BatchedRefinedPath batched_refined_path();

// device::posv_refined_batched along `path` (the same arguments, checks and results).
template <class T>
int posv_refined_batched(BatchedRefinedPath path, Uplo uplo, int n, int nrhs, T* A, int lda, long long strideA,
                         const T* B, int ldb, long long strideB, T* X, int ldx, long long strideX, int batch,
                         int* host_info, int* host_iter, device::Stream stream);

}  // namespace tessera::detail
