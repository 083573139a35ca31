// The scalar types Tessera factors, in one place: the list that instantiates every template of
// the library, and the traits of each type (its Precision, LAPACK letter, real type, name).
// Adding a scalar type means a line in the list and a ScalarTraits specialization here, and the
// kernels that take it; nothing else. Every layer may include this header.
#pragma once

#include <cstddef>
#include <type_traits>

// Calls X(T) once per real scalar type Tessera factors, e.g. for explicit instantiations:
//   #define TESSERA_INSTANTIATE(T) template void f<T>(T*, int);
//   TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
//   #undef TESSERA_INSTANTIATE
// The complex types (std::complex<float>, std::complex<double>: Precision::single_complex and
// double_complex) join in a TESSERA_FOR_EACH_SCALAR list once the kernels take them.
#define TESSERA_FOR_EACH_REAL_SCALAR(X) X(float) X(double)

namespace tessera {

// The precision of a matrix's scalars, named as LAPACK's letters s and d (c and z to come).
enum class Precision { single_real, double_real };

// The traits of one scalar type; defined for the types of TESSERA_FOR_EACH_REAL_SCALAR only.
template <class T>
struct ScalarTraits;

template <>
struct ScalarTraits<float> {
  using real_type = float;
  static constexpr Precision precision = Precision::single_real;
  static constexpr char letter = 's';
  static constexpr bool is_complex = false;
  static constexpr const char* name = "float";
};

template <>
struct ScalarTraits<double> {
  using real_type = double;
  static constexpr Precision precision = Precision::double_real;
  static constexpr char letter = 'd';
  static constexpr bool is_complex = false;
  static constexpr const char* name = "double";
};

// Every precision of TESSERA_FOR_EACH_REAL_SCALAR, in its order.
#define TESSERA_PRECISION_OF(T) ScalarTraits<T>::precision,
inline constexpr Precision kRealPrecisions[] = {TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_PRECISION_OF)};
#undef TESSERA_PRECISION_OF

template <class T>
constexpr Precision precision_of() {
  return ScalarTraits<T>::precision;
}

// Calls f(T{}) with the scalar type of precision p (a value of that type, for its type only) and
// returns what f returns.
template <class F>
constexpr decltype(auto) with_scalar_type(Precision p, F&& f) {
  switch (p) {
    case Precision::single_real:
      return f(float{});
    case Precision::double_real:
      break;
  }
  return f(double{});
}

// LAPACK's letter of a precision: 's', 'd'.
constexpr char lapack_letter(Precision p) {
  return with_scalar_type(p, [](auto x) { return ScalarTraits<decltype(x)>::letter; });
}

// The name of a precision's scalar type: "float", "double".
constexpr const char* scalar_name(Precision p) {
  return with_scalar_type(p, [](auto x) { return ScalarTraits<decltype(x)>::name; });
}

constexpr bool is_complex(Precision p) {
  return with_scalar_type(p, [](auto x) { return ScalarTraits<decltype(x)>::is_complex; });
}

constexpr std::size_t bytes_per_element(Precision p) {
  return with_scalar_type(p, [](auto x) { return sizeof(x); });
}

// op(A) in a BLAS call: A, its transpose A^T or its conjugate transpose A^H. For real scalars
// A^H is A^T: the real BLAS wrappers call both as the transpose.
enum class Trans { no, transpose, conjugate_transpose };

// The precision of LAPACK's (lower-case) letter; false where the letter names none.
constexpr bool precision_from_letter(char c, Precision* p) {
  for (const Precision candidate : kRealPrecisions) {
    if (c == lapack_letter(candidate)) {
      *p = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace tessera
