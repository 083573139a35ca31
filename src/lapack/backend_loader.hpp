// libtessera_lapack's side of backend.hpp: the backend, loaded once from this library's own
// directory with dlopen(RTLD_LOCAL).
#pragma once

#include "backend.hpp"

namespace tessera::lapack {

struct LoadedBackend {
  const Backend* backend = nullptr;  // null when it could not be loaded
  void* handle = nullptr;            // its dlopen handle: its dependencies include Tessera's LAPACK
  char error[768] = {};              // why it could not be loaded
};

// Loads it on first use; safe from any thread. Trivially destructible: still valid in exit
// handlers.
const LoadedBackend& loaded_backend();

// The backend if it is already loaded (never loads it), else null.
const Backend* backend_if_loaded();

}  // namespace tessera::lapack
