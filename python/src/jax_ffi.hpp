// tessera._core's XLA FFI targets (jax_ffi.cpp), where the package was built with jaxlib's headers.
#pragma once

#include <nanobind/nanobind.h>

namespace tessera_python {

// Defines jax_ffi_targets(): {"cpu": capsule, "CUDA": capsule} of the handlers for
// jax.ffi.register_ffi_target.
void define_jax_ffi(nanobind::module_& m);

}  // namespace tessera_python
