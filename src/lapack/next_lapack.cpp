#include "next_lapack.hpp"

#include <dlfcn.h>

#include <string>

namespace tessera::lapack {

namespace {

const void* base_of(const void* address) {
  Dl_info info{};
  return address && dladdr(address, &info) ? info.dli_fbase : nullptr;
}

bool in_this_library(const void* address) {
  static const void* const own_base = base_of(reinterpret_cast<const void*>(&base_of));
  return address && base_of(address) == own_base;
}

// `symbol` as the object holding `address` binds it among its own dependencies (its dlopen
// handle's search list), or null. For the main program that is the global search order, where
// this library's own definition comes first: it is skipped.
void* definition_seen_by(const void* address, const char* symbol) {
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname || !*info.dli_fname) return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) return nullptr;
  void* found = dlsym(handle, symbol);
  dlclose(handle);
  return in_this_library(found) ? nullptr : found;
}

void* definition_in(void* handle, const char* symbol) {
  if (!handle) return nullptr;
  void* found = dlsym(handle, symbol);
  return in_this_library(found) ? nullptr : found;
}

const char* file_holding(const void* address) {
  Dl_info info{};
  return address && dladdr(address, &info) && info.dli_fname ? info.dli_fname : "";
}

// dlsym returns void*; POSIX guarantees it converts to a function pointer.
template <class Routine>
Routine as_routine(void* address) {
  return reinterpret_cast<Routine>(address);
}

template <class Family, class T, class Find>
LapackRoutines<T, typename Family::Int> routines_from(Find&& find) {
  using Int = typename Family::Int;
  LapackRoutines<T, Int> routines;
  routines.potrf = as_routine<PotrfRoutine<T, Int>>(find(symbol_of<Family>(RoutineNames<T>::potrf.base_name).c_str()));
  routines.potrs = as_routine<PotrsRoutine<T, Int>>(find(symbol_of<Family>(RoutineNames<T>::potrs.base_name).c_str()));
  routines.posv = as_routine<PosvRoutine<T, Int>>(find(symbol_of<Family>(RoutineNames<T>::posv.base_name).c_str()));
  routines.potri = as_routine<PotrfRoutine<T, Int>>(find(symbol_of<Family>(RoutineNames<T>::potri.base_name).c_str()));
  if constexpr (kHasRefinedSolve<T>)
    routines.posv_refined =
        as_routine<RefinedRoutine<T, Int>>(find(symbol_of<Family>(RoutineNames<T>::posv_refined.base_name).c_str()));
  return routines;
}

// The family's routines from one place (`find` maps a symbol to its address there); empty unless
// that place has the family's dpotrf.
template <class Family, class Find>
LapackLibrary<Family> library_from(Find&& find) {
  LapackLibrary<Family> library;
  void* dpotrf = find(symbol_of<Family>(RoutineNames<double>::potrf.base_name).c_str());
  if (!dpotrf) return library;
  library.d = routines_from<Family, double>(find);
  library.s = routines_from<Family, float>(find);
  library.z = routines_from<Family, std::complex<double>>(find);
  library.c = routines_from<Family, std::complex<float>>(find);
  library.file = file_holding(dpotrf);
  return library;
}

// XERBLA as the replaced routine would have called it: a definition in the global search order
// (the program's own, as LAPACK allows), else the caller's, else the next LAPACK's.
template <class Family>
XerblaRoutine<typename Family::Int> find_xerbla(const void* caller, const char* next_file) {
  const std::string symbol = symbol_of<Family>("xerbla");
  void* found = dlsym(RTLD_DEFAULT, symbol.c_str());
  if (!found) found = definition_seen_by(caller, symbol.c_str());
  if (!found && *next_file) {
    if (void* next = dlopen(next_file, RTLD_LAZY | RTLD_NOLOAD)) {
      found = dlsym(next, symbol.c_str());
      dlclose(next);
    }
  }
  return as_routine<XerblaRoutine<typename Family::Int>>(found);
}

template <class Family>
LapackLibrary<Family> find_next_lapack(const void* caller, void* (*tessera_lapack)()) {
  LapackLibrary<Family> next = library_from<Family>([](const char* symbol) { return dlsym(RTLD_NEXT, symbol); });
  if (!*next.file) next = library_from<Family>([&](const char* symbol) { return definition_seen_by(caller, symbol); });
  if (!*next.file) {
    void* const tessera = tessera_lapack();
    next = library_from<Family>([&](const char* symbol) { return definition_in(tessera, symbol); });
  }
  next.xerbla = find_xerbla<Family>(caller, next.file);
  return next;
}

}  // namespace

template <class Family>
const LapackLibrary<Family>& next_lapack(const void* caller, void* (*tessera_lapack)()) {
  static const LapackLibrary<Family> next = find_next_lapack<Family>(caller, tessera_lapack);
  return next;
}

template <class Family>
const LapackLibrary<Family>& tessera_own_lapack(void* tessera_lapack) {
  static const LapackLibrary<Family> own =
      library_from<Family>([&](const char* symbol) { return definition_in(tessera_lapack, symbol); });
  return own;
}

template const LapackLibrary<Lp64>& next_lapack<Lp64>(const void*, void* (*)());
template const LapackLibrary<ScipyLp64>& next_lapack<ScipyLp64>(const void*, void* (*)());
template const LapackLibrary<Ilp64>& next_lapack<Ilp64>(const void*, void* (*)());
template const LapackLibrary<ScipyIlp64>& next_lapack<ScipyIlp64>(const void*, void* (*)());
template const LapackLibrary<Lp64>& tessera_own_lapack<Lp64>(void*);
template const LapackLibrary<ScipyLp64>& tessera_own_lapack<ScipyLp64>(void*);
template const LapackLibrary<Ilp64>& tessera_own_lapack<Ilp64>(void*);
template const LapackLibrary<ScipyIlp64>& tessera_own_lapack<ScipyIlp64>(void*);

}  // namespace tessera::lapack
