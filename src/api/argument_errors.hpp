// The C++ API's side of tessera/tools/lapack_arguments.hpp: a bad argument is an InvalidArgument that
// names it and carries its position.
#pragma once

#include "tessera/error.hpp"
#include "tessera/tools/lapack_arguments.hpp"
#include "tasks.hpp"
#include "tessera/options.hpp"

namespace tessera::detail {

inline void throw_if_invalid(const char* routine, const ArgumentError& error) {
  if (error) throw InvalidArgument(describe(routine, error), error.position);
}

}  // namespace tessera::detail
