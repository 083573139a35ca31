#include "tessera/runtime.hpp"
#include "tessera/version.h"

namespace tessera {
const char* version() noexcept { return TESSERA_VERSION_STRING; }
}  // namespace tessera
