#include "next_lapack.hpp"

#include <dlfcn.h>

namespace tessera::lapack {

namespace {

// dlsym returns void*; POSIX guarantees it converts to a function pointer.
template <class Routine>
Routine find_next(const char* symbol) {
  return reinterpret_cast<Routine>(dlsym(RTLD_NEXT, symbol));
}

template <class T>
LapackRoutines<T> find_next_routines() {
  LapackRoutines<T> routines;
  routines.potrf = find_next<PotrfRoutine<T>>(RoutineNames<T>::potrf.symbol);
  routines.potrs = find_next<PotrsRoutine<T>>(RoutineNames<T>::potrs.symbol);
  routines.posv = find_next<PosvRoutine<T>>(RoutineNames<T>::posv.symbol);
  return routines;
}

std::string library_holding(const void* address) {
  Dl_info info{};
  if (address && dladdr(address, &info) && info.dli_fname) return info.dli_fname;
  return {};
}

NextLapack find_next_lapack() {
  NextLapack next;
  next.d = find_next_routines<double>();
  next.s = find_next_routines<float>();
  next.library = library_holding(reinterpret_cast<const void*>(next.d.potrf));
  return next;
}

}  // namespace

const NextLapack& next_lapack() {
  static const NextLapack next = find_next_lapack();  // thread-safe initialization
  return next;
}

}  // namespace tessera::lapack
