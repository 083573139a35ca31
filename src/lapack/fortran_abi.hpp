// LAPACK's Fortran calling convention as gfortran compiles it (LP64 integers): every argument by
// reference, INFO last among the regular arguments, then one hidden length per CHARACTER
// argument (size_t since gfortran 8). Programs written in C often leave the hidden length out;
// for a CHARACTER*1 argument no LAPACK reads it, so Tessera passes it on unchanged and never
// reads it either.
#pragma once

#include <cstddef>

namespace tessera::lapack {

using fortran_int = int;
using fortran_strlen = std::size_t;

template <class T>
using PotrfRoutine = void (*)(const char* uplo, const fortran_int* n, T* a, const fortran_int* lda,
                              fortran_int* info, fortran_strlen uplo_len);
template <class T>
using PotrsRoutine = void (*)(const char* uplo, const fortran_int* n, const fortran_int* nrhs, const T* a,
                              const fortran_int* lda, T* b, const fortran_int* ldb, fortran_int* info,
                              fortran_strlen uplo_len);
template <class T>
using PosvRoutine = void (*)(const char* uplo, const fortran_int* n, const fortran_int* nrhs, T* a,
                             const fortran_int* lda, T* b, const fortran_int* ldb, fortran_int* info,
                             fortran_strlen uplo_len);

// Each routine's name as LAPACK passes it to XERBLA (six characters, blank padded: 'DPOSV ') and
// its symbol.
struct RoutineName {
  const char* xerbla_name;
  const char* symbol;
};

template <class T>
struct RoutineNames;

template <>
struct RoutineNames<double> {
  static constexpr RoutineName potrf{"DPOTRF", "dpotrf_"};
  static constexpr RoutineName potrs{"DPOTRS", "dpotrs_"};
  static constexpr RoutineName posv{"DPOSV ", "dposv_"};
};

template <>
struct RoutineNames<float> {
  static constexpr RoutineName potrf{"SPOTRF", "spotrf_"};
  static constexpr RoutineName potrs{"SPOTRS", "spotrs_"};
  static constexpr RoutineName posv{"SPOSV ", "sposv_"};
};

// XERBLA's name argument is CHARACTER*(*): always six characters here.
constexpr fortran_strlen xerbla_name_length = 6;

}  // namespace tessera::lapack

extern "C" {
// LAPACK's error handler, resolved like LAPACK's own calls to it: the program's definition when
// it has one, else the LAPACK library's.
void xerbla_(const char* srname, const tessera::lapack::fortran_int* info, tessera::lapack::fortran_strlen srname_len);
}
