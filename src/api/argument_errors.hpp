// The C++ API's side of tessera/lapack_arguments.hpp: a bad argument is an InvalidArgument that
// names it and carries its position.
#pragma once

#include "tessera/error.hpp"
#include "tessera/lapack_arguments.hpp"
#include "tessera/options.hpp"

namespace tessera::detail {

// The C++ API takes uplo as an enum, always valid: the checks see it as LAPACK's letter.
inline char uplo_letter(Uplo uplo) { return uplo == Uplo::upper ? 'U' : 'L'; }

inline void throw_if_invalid(const char* routine, const ArgumentError& error) {
  if (error) throw InvalidArgument(describe(routine, error), error.position);
}

}  // namespace tessera::detail
