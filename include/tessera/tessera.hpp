// Tessera's C++ API: everything in one include.
#pragma once

#include "tessera/batched.hpp"
#include "tessera/blas.hpp"
#include "tessera/cholesky.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/options.hpp"
#include "tessera/policies.hpp"
#include "tessera/precision.hpp"
#include "tessera/refinement.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tile_matrix.hpp"
#include "tessera/trace.hpp"
#include "tessera/version.h"
