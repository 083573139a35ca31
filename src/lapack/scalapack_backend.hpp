// The ScaLAPACK entry points' work in the backend (scalapack_backend.cpp), in a Tessera built with
// StarPU-MPI.
#pragma once

#include "backend.hpp"

namespace tessera::lapack {

// ScaLAPACK's argument checks, collective over the grid, then the call through Tessera's distributed
// matrices. done: result->info is ScaLAPACK's INFO; declined: the call is ScaLAPACK's to make
// (message says why), nothing changed; rejected: result->info is the negative INFO ScaLAPACK gives
// (or would give an argument Tessera cannot take) when no ScaLAPACK follows; cannot_run: Tessera
// cannot run and no ScaLAPACK follows; failed_after_start: the arrays may be half written.
BackendStatus run_scalapack(const ScalapackCall* call, BackendResult* result);

}  // namespace tessera::lapack
