#include "drop_in_environment.hpp"

#include <cstdlib>

namespace tessera::lapack {

bool verbose_asked_for() {
  const char* value = std::getenv("TESSERA_LAPACK_VERBOSE");
  if (!value || !*value) return false;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  return *end == '\0' && parsed != 0;
}

}  // namespace tessera::lapack
