// The batched kernels' name for a triangle of the public API (host code only: the kernels' own
// files need not see the API's options).
#pragma once

#include "cuda/batched_kernels.hpp"
#include "tessera/options.hpp"

namespace tessera::kernels::cuda {

inline BatchUplo batch_uplo(Uplo uplo) { return uplo == Uplo::upper ? BatchUplo::upper : BatchUplo::lower; }

}  // namespace tessera::kernels::cuda
