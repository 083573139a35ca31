// What libtessera_lapack reads from the environment itself. Everything else it reads through the
// backend (libtessera, whose environment.cpp owns the environment); this is for when the backend
// cannot be loaded, and libtessera with it.
#pragma once

namespace tessera::lapack {

// TESSERA_LAPACK_VERBOSE set to an integer other than 0 (libtessera's reading of it).
bool verbose_asked_for();

}  // namespace tessera::lapack
