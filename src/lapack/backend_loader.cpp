#include "backend_loader.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <string>

namespace tessera::lapack {

namespace {

std::atomic<const Backend*>& loaded() {
  static std::atomic<const Backend*> backend{nullptr};
  return backend;
}

// The directory of this library's file ("." when the loader gives no directory).
std::string own_directory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(&own_directory), &info) || !info.dli_fname) return ".";
  const std::string file = info.dli_fname;
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

LoadedBackend load() {
  LoadedBackend result;
  const std::string path = own_directory() + "/" + backend_file;
  // RTLD_LOCAL: Tessera's dependencies (OpenBLAS among them) stay out of the global search order.
  result.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!result.handle) {
    std::snprintf(result.error, sizeof result.error, "cannot load %s: %s", path.c_str(), dlerror());
    return result;
  }
  using EntryPoint = const Backend* (*)();
  const auto entry = reinterpret_cast<EntryPoint>(dlsym(result.handle, backend_entry_point));
  const Backend* backend = entry ? entry() : nullptr;
  if (!backend || backend->version != backend_version) {
    std::snprintf(result.error, sizeof result.error, "%s is not the backend of this libtessera_lapack", path.c_str());
    return result;
  }
  result.backend = backend;
  loaded().store(backend);
  return result;
}

}  // namespace

const LoadedBackend& loaded_backend() {
  static const LoadedBackend backend = load();
  return backend;
}

const Backend* backend_if_loaded() { return loaded().load(); }

}  // namespace tessera::lapack
