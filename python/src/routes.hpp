// Routes that the package's Python layer (through tessera._core) and its JAX FFI handlers both take.
#pragma once

#include "tessera/device.hpp"
#include "tessera/precision.hpp"

namespace tessera_python {

// Whether the solves with a GPU stack of `batch` factors of order n and type T, `nrhs` right-hand
// sides each, go through the batched kernels (one launch of device::potrs_batched_ex) rather than
// the dense device API one matrix after the other, as the plan says.
template <class T>
bool solve_takes_batched_kernels(int n, int batch, int nrhs) {
  return tessera::device::stack_solves_take_batched_kernels(n, batch, nrhs, tessera::precision_of<T>());
}

}  // namespace tessera_python
