// The scalar types Tessera factors, in one place: the list that instantiates every template of
// the library, and the traits of each type (its Precision, LAPACK letter, real type, name).
// Adding a scalar type means a line in the list and a ScalarTraits specialization here, and the
// kernels that take it; nothing else. Every layer may include this header.
#pragma once

#include <complex>
#include <cstddef>
#include <type_traits>

// Calls X(T) once per real scalar type Tessera factors, e.g. for explicit instantiations:
//   #define TESSERA_INSTANTIATE(T) template void f<T>(T*, int);
//   TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_INSTANTIATE)
//   #undef TESSERA_INSTANTIATE
// TESSERA_FOR_EACH_COMPLEX_SCALAR does the same for the complex (Hermitian) types, and
// TESSERA_FOR_EACH_SCALAR for all four, real first: a template that takes every scalar type is
// instantiated from TESSERA_FOR_EACH_SCALAR; one that takes real types only (the custom CUDA
// kernels, the distributed matrices) from the real list.
#define TESSERA_FOR_EACH_REAL_SCALAR(X) X(float) X(double)
#define TESSERA_FOR_EACH_COMPLEX_SCALAR(X) X(std::complex<float>) X(std::complex<double>)
#define TESSERA_FOR_EACH_SCALAR(X) TESSERA_FOR_EACH_REAL_SCALAR(X) TESSERA_FOR_EACH_COMPLEX_SCALAR(X)

namespace tessera {

// The precision of a matrix's scalars, named as LAPACK's letters s, d, c and z.
enum class Precision { single_real, double_real, single_complex, double_complex };

// The traits of one scalar type; defined for the types of TESSERA_FOR_EACH_SCALAR only.
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

template <>
struct ScalarTraits<std::complex<float>> {
  using real_type = float;
  static constexpr Precision precision = Precision::single_complex;
  static constexpr char letter = 'c';
  static constexpr bool is_complex = true;
  static constexpr const char* name = "complex<float>";
};

template <>
struct ScalarTraits<std::complex<double>> {
  using real_type = double;
  static constexpr Precision precision = Precision::double_complex;
  static constexpr char letter = 'z';
  static constexpr bool is_complex = true;
  static constexpr const char* name = "complex<double>";
};

// The real type of a scalar type: T itself, or the type of a complex T's parts.
template <class T>
using RealOf = typename ScalarTraits<T>::real_type;

template <class T>
inline constexpr bool kIsComplex = ScalarTraits<T>::is_complex;

// The single-precision type of T's kind (what a mixed-precision solve factors T in): float, or
// std::complex<float>.
template <class T>
using SingleOf = std::conditional_t<kIsComplex<T>, std::complex<float>, float>;

// Every precision of TESSERA_FOR_EACH_REAL_SCALAR, and of TESSERA_FOR_EACH_SCALAR, in their order.
#define TESSERA_PRECISION_OF(T) ScalarTraits<T>::precision,
inline constexpr Precision kRealPrecisions[] = {TESSERA_FOR_EACH_REAL_SCALAR(TESSERA_PRECISION_OF)};
inline constexpr Precision kPrecisions[] = {TESSERA_FOR_EACH_SCALAR(TESSERA_PRECISION_OF)};
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
    case Precision::single_complex:
      return f(std::complex<float>{});
    case Precision::double_complex:
      return f(std::complex<double>{});
  }
  return f(double{});
}

// LAPACK's letter of a precision: 's', 'd', 'c', 'z'.
constexpr char lapack_letter(Precision p) {
  return with_scalar_type(p, [](auto x) { return ScalarTraits<decltype(x)>::letter; });
}

// The name of a precision's scalar type: "float", "double", "complex<float>", "complex<double>".
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
// A^H is A^T: the real BLAS wrappers call both as the transpose. The algorithms ask for A^H only
// (a Hermitian matrix's other triangle is the conjugate of the one stored).
enum class Trans { no, transpose, conjugate_transpose };

// The precision of LAPACK's (lower-case) letter; false where the letter names none.
constexpr bool precision_from_letter(char c, Precision* p) {
  for (const Precision candidate : kPrecisions) {
    if (c == lapack_letter(candidate)) {
      *p = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace tessera
