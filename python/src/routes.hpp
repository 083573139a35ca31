// Routes that the package's Python layer (through tessera._core) and its JAX FFI handlers both take.
#pragma once

#include "tessera/device.hpp"
#include "tessera/precision.hpp"

namespace tessera_python {

// Whether the solves with a GPU stack of `batch` factors of order n and type T go through the
// batched kernels (one launch of device::potrs_batched_ex) rather than the dense device API one
// matrix after the other: real types, where the plan sends a double stack's factorization there.
template <class T>
bool solve_takes_batched_kernels(int n, int batch) {
  return !tessera::ScalarTraits<T>::is_complex &&
         tessera::device::stack_takes_batched_kernels(n, batch, tessera::Precision::double_real);
}

}  // namespace tessera_python
