// The boundary between libtessera_lapack (the LAPACK symbols a program calls) and
// libtessera_lapack_backend (Tessera behind them).
//
// libtessera_lapack depends on nothing that defines a LAPACK or BLAS symbol: whatever a preloaded
// library depends on joins the process's global search order, ahead of the libraries that Python
// extensions and plugins load for themselves, and would take their place. Tessera and the
// OpenBLAS it is linked with would then answer XERBLA calls meant for numpy's own handler and the
// routines libtessera_lapack does not handle. So libtessera_lapack loads the backend (libtessera,
// StarPU, OpenBLAS) with dlopen(RTLD_LOCAL) on the first call, from its own directory, and talks
// to it through this table of plain functions only.
#pragma once

#include "tessera/precision.hpp"

namespace tessera::lapack {

// Raised with each change of the structures below (3: the calls' precision as a Precision; 4: potri;
// 5: the refined solves; 6: the options read by libtessera_lapack itself).
inline constexpr int backend_version = 6;
inline constexpr const char* backend_file = "libtessera_lapack_backend.so";
inline constexpr const char* backend_entry_point = "tessera_lapack_backend";

// posv_refined: DSPOSV and ZCPOSV (double and complex<double> only).
enum class Operation : int { potrf, potrs, posv, potri, posv_refined };

// One call with LAPACK's meaning, its arguments already checked and within int.
struct BackendCall {
  Operation operation;
  Precision precision;
  char uplo;  // 'U' or 'L' (either case)
  int n;
  int nrhs;
  void* a;
  int lda;
  void* b;
  int ldb;
  void* x = nullptr;  // posv_refined: the solution, leading dimension ldx (B is then only read)
  int ldx = 0;
};

enum class BackendStatus : int {
  done,                // info and mode are set
  declined,            // not Tessera's to take (the shared runtime stopped at exit): arrays untouched
  cannot_run,          // Tessera cannot run here (message says why): arrays untouched
  failed_after_start,  // a task failed once the arrays began to change (message says why)
  rejected,            // ScaLAPACK calls only: an argument refused, info = ScaLAPACK's negative INFO
};

// BLACS routines as ScaLAPACK's library exports them (Fortran interface: the system context of
// BLACS_GET(ctxt, 10) is then the Fortran handle of the grid's MPI communicator).
using BlacsGridinfoRoutine = void (*)(const int* context, int* nprow, int* npcol, int* myrow, int* mycol);
using BlacsGetRoutine = void (*)(const int* context, const int* what, int* value);

// One call of a ScaLAPACK routine (pxPOTRF, pxPOTRS, pxPOSV) with its Fortran arguments, unchecked.
// A descriptor is ScaLAPACK's 9 integers (DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD).
struct ScalapackCall {
  Operation operation;
  Precision precision;
  char uplo;
  int n;
  int nrhs;  // 0 for potrf
  void* a;
  int ia;
  int ja;
  const int* desca;
  void* b;  // null for potrf
  int ib;
  int jb;
  const int* descb;
  // A ScaLAPACK routine follows in the search order: argument errors and what Tessera does not
  // support go to it (declined); without one they are rejected with ScaLAPACK's INFO.
  bool have_next;
  BlacsGridinfoRoutine blacs_gridinfo;
  BlacsGetRoutine blacs_get;
};

struct BackendResult {
  int info = 0;
  int iter = 0;            // posv_refined: LAPACK's ITER
  char mode[16] = {};      // "cpu", "gpu" or "hybrid": where the call ran
  char message[512] = {};  // why, for cannot_run and failed_after_start
};

struct Backend {
  int version;
  // True on a worker thread of the runtime's StarPU.
  bool (*on_runtime_worker)();
  BackendStatus (*run)(const BackendCall* call, BackendResult* result);
  // Collective over the BLACS grid of call->desca's context; null in a Tessera built without
  // StarPU-MPI (scalapack_backend.cpp).
  BackendStatus (*run_scalapack)(const ScalapackCall* call, BackendResult* result);
};

}  // namespace tessera::lapack

// The backend's one exported symbol.
extern "C" const tessera::lapack::Backend* tessera_lapack_backend();
