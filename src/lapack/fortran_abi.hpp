// LAPACK's Fortran calling convention as gfortran compiles it: every argument by reference, INFO
// last among the regular arguments, then one hidden length per CHARACTER argument (size_t since
// gfortran 8). Programs written in C often leave the hidden length out; for a CHARACTER*1 argument
// no LAPACK reads it, so Tessera passes it on unchanged and never reads it either.
//
// LAPACK libraries export the same routines under several spellings, one per integer width and
// symbol prefix (a family); lapack_interface.cpp exports libtessera_lapack's routines in each:
//   dpotrf_            LP64 (32-bit INTEGER): reference LAPACK, OpenBLAS, MKL, Debian's numpy
//   scipy_dpotrf_      LP64, prefixed: the OpenBLAS bundled in SciPy's wheels (scipy-openblas32)
//   dpotrf_64_         ILP64 (64-bit INTEGER): OpenBLAS built with INTERFACE64 and a suffix (Julia)
//   scipy_dpotrf_64_   ILP64, prefixed: the OpenBLAS bundled in numpy 2's wheels (scipy-openblas64)
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/precision.hpp"

namespace tessera::lapack {

using fortran_strlen = std::size_t;

// A family's symbols: the INTEGER's width decides the suffix, and SciPy's wheels add a prefix.
template <class Integer, bool scipy_prefix>
struct SymbolFamily {
  using Int = Integer;
  static constexpr const char* prefix = scipy_prefix ? "scipy_" : "";
  static constexpr const char* suffix = sizeof(Integer) == 8 ? "_64_" : "_";
};
using Lp64 = SymbolFamily<std::int32_t, false>;
using ScipyLp64 = SymbolFamily<std::int32_t, true>;
using Ilp64 = SymbolFamily<std::int64_t, false>;
using ScipyIlp64 = SymbolFamily<std::int64_t, true>;

// A routine's symbol in a family: "dpotrf" -> "scipy_dpotrf_64_".
template <class Family>
std::string symbol_of(const char* base_name) {
  return std::string(Family::prefix) + base_name + Family::suffix;
}

template <class T, class Int>
using PotrfRoutine = void (*)(const char* uplo, const Int* n, T* a, const Int* lda, Int* info, fortran_strlen uplo_len);
template <class T, class Int>
using PotrsRoutine = void (*)(const char* uplo, const Int* n, const Int* nrhs, const T* a, const Int* lda, T* b,
                              const Int* ldb, Int* info, fortran_strlen uplo_len);
template <class T, class Int>
using PosvRoutine = void (*)(const char* uplo, const Int* n, const Int* nrhs, T* a, const Int* lda, T* b,
                             const Int* ldb, Int* info, fortran_strlen uplo_len);
// The refined solves: DSPOSV (WORK double, SWORK real) and ZCPOSV (WORK complex*16, SWORK complex,
// and RWORK double precision).
template <class Int>
using DsposvRoutine = void (*)(const char* uplo, const Int* n, const Int* nrhs, double* a, const Int* lda, double* b,
                               const Int* ldb, double* x, const Int* ldx, double* work, float* swork, Int* iter,
                               Int* info, fortran_strlen uplo_len);
template <class Int>
using ZcposvRoutine = void (*)(const char* uplo, const Int* n, const Int* nrhs, std::complex<double>* a,
                               const Int* lda, std::complex<double>* b, const Int* ldb, std::complex<double>* x,
                               const Int* ldx, std::complex<double>* work, std::complex<float>* swork, double* rwork,
                               Int* iter, Int* info, fortran_strlen uplo_len);
// The refined solve of scalar type T (of its double precision: none for float and complex<float>).
template <class T, class Int>
struct RefinedRoutineOf {
  using type = void*;
};
template <class Int>
struct RefinedRoutineOf<double, Int> {
  using type = DsposvRoutine<Int>;
};
template <class Int>
struct RefinedRoutineOf<std::complex<double>, Int> {
  using type = ZcposvRoutine<Int>;
};
template <class T, class Int>
using RefinedRoutine = typename RefinedRoutineOf<T, Int>::type;
template <class T>
inline constexpr bool kHasRefinedSolve = std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>;
// XERBLA(SRNAME, INFO): SRNAME is CHARACTER*(*), INFO the family's INTEGER.
template <class Int>
using XerblaRoutine = void (*)(const char* srname, const Int* info, fortran_strlen srname_len);

constexpr char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// Each routine's name as LAPACK passes it to XERBLA (six characters, blank padded: 'DPOSV ') and
// the base of its symbol ("dposv").
struct RoutineName {
  char xerbla_name[7];
  char base_name[7];
};

// The name of the routine `stem` ("potrf", at most five characters) in the precision of LAPACK's
// letter: ('d', "posv") -> {"DPOSV ", "dposv"}.
constexpr RoutineName routine_name(char letter, const char* stem) {
  RoutineName name{};
  name.xerbla_name[0] = ascii_upper(letter);
  name.base_name[0] = letter;
  int i = 1;
  for (; stem[i - 1] != '\0'; ++i) {
    name.xerbla_name[i] = ascii_upper(stem[i - 1]);
    name.base_name[i] = stem[i - 1];
  }
  for (; i < 6; ++i) name.xerbla_name[i] = ' ';
  return name;
}

// The routines of scalar type T.
template <class T>
struct RoutineNames {
  static constexpr RoutineName potrf = routine_name(ScalarTraits<T>::letter, "potrf");
  static constexpr RoutineName potrs = routine_name(ScalarTraits<T>::letter, "potrs");
  static constexpr RoutineName posv = routine_name(ScalarTraits<T>::letter, "posv");
  static constexpr RoutineName potri = routine_name(ScalarTraits<T>::letter, "potri");
  // DSPOSV, ZCPOSV (for the double precisions only: kHasRefinedSolve).
  static constexpr RoutineName posv_refined = routine_name(ScalarTraits<T>::letter, ScalarTraits<T>::is_complex ? "cposv" : "sposv");
};

// XERBLA's name argument is CHARACTER*(*): always six characters here.
constexpr fortran_strlen xerbla_name_length = 6;

}  // namespace tessera::lapack
