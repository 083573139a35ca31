// The refined solve of tessera/refinement.hpp for callers that start no runtime for small work
// (the C API): `runtime_of` is called only where a step needs the runtime's tasks.
#pragma once

#include <functional>

#include "tessera/refinement.hpp"

namespace tessera::detail {

using RuntimeSource = std::function<Runtime&()>;

template <class T>
RefinedSolve posv_refined(const RuntimeSource& runtime_of, const MatrixView<T>& A, const MatrixView<T>& B,
                          const MatrixView<T>& X, const FactorOptions& options);

}  // namespace tessera::detail
