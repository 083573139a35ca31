#include "backend_loader.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <atomic>
#include <cstddef>
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

// The address space loading Tessera takes from a process whose address space is limited
// (ulimit -v, -d): its libraries (the CUDA ones among them: about 1.3 GiB in a CUDA build), its
// CPU workers' BLAS buffers, and a reserve that keeps the program's own LAPACK working. Where the
// limit leaves less, Tessera is not loaded and the calls go to the next LAPACK: loaded, it would
// leave the program's LAPACK no room for the buffer OpenBLAS maps on a thread's first call (and
// OpenBLAS retries that mapping for ever).
constexpr std::size_t kTesseraAddressSpaceBytes = std::size_t(2) << 30;

bool limited(int resource) {
  rlimit limit{};
  return getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
}

bool room_for_tessera() {
  if (!limited(RLIMIT_AS) && !limited(RLIMIT_DATA)) return true;
  void* probe = mmap(nullptr, kTesseraAddressSpaceBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe == MAP_FAILED) return false;
  munmap(probe, kTesseraAddressSpaceBytes);
  return true;
}

LoadedBackend load() {
  LoadedBackend result;
  if (!room_for_tessera()) {
    std::snprintf(result.error, sizeof result.error,
                  "the process's address-space limit (ulimit -v / -d) leaves less than the %zu MiB that Tessera's "
                  "libraries and workers need",
                  kTesseraAddressSpaceBytes >> 20);
    return result;
  }
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
