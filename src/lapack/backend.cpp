// libtessera_lapack_backend: runs the calls that libtessera_lapack sends through Tessera, on the
// shared runtime (backend.hpp says why it is a library of its own).
#include "backend.hpp"

#if TESSERA_LAPACK_SCALAPACK
#include "scalapack_backend.hpp"
#endif

#include <complex>
#include <cstdio>
#include <exception>

#include "tessera/cholesky.hpp"
#include "tessera/error.hpp"
#include "tessera/refinement.hpp"

namespace tessera::lapack {

namespace {

template <std::size_t size>
void copy_text(char (&to)[size], const char* text) {
  std::snprintf(to, size, "%s", text);
}

bool on_runtime_worker() { return Runtime::called_from_task(); }

template <class T>
Request submit(Runtime& runtime, const BackendCall& call, const FactorOptions& options) {
  T* a = static_cast<T*>(call.a);
  T* b = static_cast<T*>(call.b);
  switch (call.operation) {
    case Operation::posv_refined: break;  // synchronous: refined() below
    case Operation::potrf: return potrf_async(runtime, call.n, a, call.lda, options);
    case Operation::potri: return potri_async(runtime, call.n, a, call.lda, options);
    case Operation::potrs: return potrs_async(runtime, call.n, call.nrhs, static_cast<const T*>(a), call.lda, b, call.ldb, options);
    case Operation::posv:
      // With no right-hand side LAPACK's xPOSV only factors A.
      return call.nrhs == 0 ? potrf_async(runtime, call.n, a, call.lda, options)
                            : posv_async(runtime, call.n, call.nrhs, a, call.lda, b, call.ldb, options);
  }
  throw InvalidArgument("unknown operation");
}

// DSPOSV and ZCPOSV, which are a sequence of requests rather than one; LAPACK's steps exactly
// (its ITER), without GMRES-IR.
RefinedSolve refined(Runtime& runtime, const BackendCall& call, const FactorOptions& lapack_options) {
  FactorOptions options = lapack_options;
  options.refinement = Refinement::lapack;
  const auto solve = [&](auto x) {
    using T = decltype(x);
    return posv_refined(runtime, MatrixView<T>::host(call.n, call.n, static_cast<T*>(call.a), call.lda),
                        MatrixView<T>::host(call.n, call.nrhs, static_cast<T*>(call.b), call.ldb),
                        MatrixView<T>::host(call.n, call.nrhs, static_cast<T*>(call.x), call.ldx), options);
  };
  if (call.precision == Precision::double_real) return solve(double{});
  if (call.precision == Precision::double_complex) return solve(std::complex<double>{});
  throw InvalidArgument("the refined solves take double and complex<double> matrices");
}

// Submits through Tessera (starting the shared runtime on first use) and waits; TESSERA_MODE,
// TESSERA_NB... are read for each call, as the C API does. A failure before any task ran leaves
// the arrays untouched (cannot_run); one once tasks ran may leave them half written, which
// LAPACK's INFO cannot express (failed_after_start).
BackendStatus run(const BackendCall* call, BackendResult* result) {
  if (Runtime::shared_ended()) return BackendStatus::declined;  // an exit handler's call
  Request request;
  Runtime* runtime = nullptr;
  FactorOptions options;
  try {
    options = FactorOptions::from_environment();
    options.uplo = (call->uplo == 'U' || call->uplo == 'u') ? Uplo::upper : Uplo::lower;
    runtime = &Runtime::shared();
    copy_text(result->mode, to_string(runtime->resolve(options.mode)));
    if (call->operation != Operation::posv_refined)
      request = with_scalar_type(call->precision, [&](auto x) { return submit<decltype(x)>(*runtime, *call, options); });
  } catch (const std::exception& e) {
    copy_text(result->message, e.what());
    return BackendStatus::cannot_run;
  }
  try {
    if (call->operation == Operation::posv_refined) {
      const RefinedSolve solved = refined(*runtime, *call, options);
      result->info = solved.info;
      result->iter = solved.iter;
      return BackendStatus::done;
    }
    result->info = request.wait();
    return BackendStatus::done;
  } catch (const std::exception& e) {
    copy_text(result->message, e.what());
    return BackendStatus::failed_after_start;
  }
}

// Null in a Tessera built without StarPU-MPI.
constexpr BackendStatus (*run_scalapack_or_null)(const ScalapackCall*, BackendResult*) =
#if TESSERA_LAPACK_SCALAPACK
    run_scalapack;
#else
    nullptr;
#endif

}  // namespace

}  // namespace tessera::lapack

extern "C" __attribute__((visibility("default"))) const tessera::lapack::Backend* tessera_lapack_backend() {
  static const tessera::lapack::Backend backend{tessera::lapack::backend_version, tessera::lapack::on_runtime_worker,
                                                tessera::lapack::run, tessera::lapack::run_scalapack_or_null};
  return &backend;
}
