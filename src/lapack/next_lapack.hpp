// The LAPACK a call would have reached without libtessera_lapack, found per symbol family
// (fortran_abi.hpp):
//   1. the next definition after this library in the process's global search order
//      (dlsym(RTLD_NEXT)): the LAPACK the program was linked against, or a library it preloads;
//   2. else the one the calling object sees among its own dependencies: a module loaded with
//      RTLD_LOCAL (a Python extension such as numpy's _umath_linalg, a plugin) keeps its LAPACK
//      out of the global search order;
//   3. else the LAPACK that Tessera itself is linked with (OpenBLAS), which libtessera_lapack
//      loads with the rest of Tessera, out of the global search order.
// XERBLA is looked up the way the replaced routine would have bound it: the program's own or a
// global one first, then the caller's, then the next LAPACK's.
#pragma once

#include <complex>
#include <type_traits>

#include "fortran_abi.hpp"

namespace tessera::lapack {

template <class T, class Int>
struct LapackRoutines {
  PotrfRoutine<T, Int> potrf = nullptr;
  PotrsRoutine<T, Int> potrs = nullptr;
  PosvRoutine<T, Int> posv = nullptr;
  PotrfRoutine<T, Int> potri = nullptr;  // xPOTRI takes xPOTRF's arguments
  RefinedRoutine<T, Int> posv_refined = nullptr;  // DSPOSV, ZCPOSV (kHasRefinedSolve)

  // What every call needs; xPOTRI, newer in the drop-in, is checked on its own.
  bool complete() const { return potrf && potrs && posv; }
};

template <class Family>
struct LapackLibrary {
  using Int = typename Family::Int;
  LapackRoutines<double, Int> d;
  LapackRoutines<float, Int> s;
  LapackRoutines<std::complex<double>, Int> z;
  LapackRoutines<std::complex<float>, Int> c;
  XerblaRoutine<Int> xerbla = nullptr;
  const char* file = "";  // the file holding dpotrf ("" when none); the dynamic loader owns it

  template <class T>
  const LapackRoutines<T, Int>& routines() const {
    if constexpr (std::is_same_v<T, double>) {
      return d;
    } else if constexpr (std::is_same_v<T, float>) {
      return s;
    } else if constexpr (std::is_same_v<T, std::complex<double>>) {
      return z;
    } else {
      return c;
    }
  }
};

// The next LAPACK of the family, resolved on the family's first call from that call's caller;
// `tessera_lapack` gives the dlopen handle of the library that links Tessera (or null), called
// only where steps 1 and 2 find nothing, since it loads Tessera. Once per process, safe from any
// thread. Trivially destructible: still valid in exit handlers.
template <class Family>
const LapackLibrary<Family>& next_lapack(const void* caller, void* (*tessera_lapack)());

// The family's routines in the LAPACK Tessera is linked with (empty where it lacks the family),
// for calls that Tessera's own tile kernels make on the runtime's workers.
template <class Family>
const LapackLibrary<Family>& tessera_own_lapack(void* tessera_lapack);

}  // namespace tessera::lapack
