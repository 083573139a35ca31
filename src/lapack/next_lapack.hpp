// The LAPACK a program would have called without libtessera_lapack: for each routine, the next
// definition of its symbol after this library in the dynamic linker's search order
// (dlsym(RTLD_NEXT)). Under LD_PRELOAD that is the system LAPACK (or OpenBLAS, which libtessera
// itself loads); linked before -llapack, it is that library.
#pragma once

#include <string>

#include "fortran_abi.hpp"

namespace tessera::lapack {

template <class T>
struct LapackRoutines {
  PotrfRoutine<T> potrf = nullptr;
  PotrsRoutine<T> potrs = nullptr;
  PosvRoutine<T> posv = nullptr;

  bool complete() const { return potrf && potrs && posv; }
};

struct NextLapack {
  LapackRoutines<double> d;
  LapackRoutines<float> s;
  std::string library;  // the file that holds the next dpotrf_ ("" when there is none)

  template <class T>
  const LapackRoutines<T>& routines() const;
};

template <>
inline const LapackRoutines<double>& NextLapack::routines<double>() const { return d; }
template <>
inline const LapackRoutines<float>& NextLapack::routines<float>() const { return s; }

// Resolved on first use, once per process; safe from any thread.
const NextLapack& next_lapack();

}  // namespace tessera::lapack
