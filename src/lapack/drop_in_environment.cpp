#include "drop_in_environment.hpp"

#include <cstdlib>
#include <optional>

namespace tessera::lapack {

namespace {

// NAME's value as an integer in [0, 2^24], or nothing when it is unset or empty; `error` set
// (in libtessera's wording for its own variables) when it is something else.
std::optional<int> non_negative_integer(const char* name, std::string* error) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  char* end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1 << 24) {
    if (error->empty()) *error = std::string(name) + "='" + value + "' is not an integer >= 0";
    return std::nullopt;
  }
  return static_cast<int>(parsed);
}

}  // namespace

DropInOptions drop_in_options_from_environment(std::string* error) {
  error->clear();
  DropInOptions options;
  const std::optional<int> min_n = non_negative_integer("TESSERA_LAPACK_MIN_N", error);
  const std::optional<int> verbose = non_negative_integer("TESSERA_LAPACK_VERBOSE", error);
  if (!error->empty()) return DropInOptions{};
  if (min_n) options.min_n = *min_n;
  if (verbose) options.verbose = *verbose != 0;
  return options;
}

}  // namespace tessera::lapack
