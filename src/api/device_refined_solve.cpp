// device::posv_refined (tessera/device.hpp): LAPACK's DSPOSV and ZCPOSV on matrices in GPU memory.
// The single-precision factorization runs through the tile DAG (a real one on the tensor cores
// where asked); the scaling, the triangular solves and the residuals on the caller's stream.
#include <complex>

#include "argument_errors.hpp"
#include "callers_stream.hpp"
#include "device_checks.hpp"
#include "device_factor.hpp"
#include "device_memory.hpp"
#include "gmres.hpp"
#include "refined_solve.hpp"
#include "tessera/device.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera::device {

#ifdef TESSERA_HAVE_CUDA

namespace {

// The single-precision factorization's options: the caller's, on the lower triangle of the scaled
// copy (always stored lower), without a log-determinant.
FactorOptions single_precision_options(const FactorOptions& options) {
  FactorOptions single = options;
  single.uplo = Uplo::lower;
  single.log_determinant = nullptr;
  return single;
}

// The single-precision factorization of the scaled copy; a real one keeps its diagonal blocks'
// inverses for the corrections where its tile DAG makes them.
template <class T>
int factor_single(Runtime& runtime, detail::RefinementOnStream<T>& steps, int n, Stream stream,
                  const FactorOptions& options) {
  if constexpr (kIsComplex<T>) {
    return potrf(runtime, n, steps.single_matrix(), steps.single_ld(), stream, options);
  } else {
    bool kept = false;
    const int info = potrf_keeping_diagonal_inverses(runtime, n, steps.single_matrix(), steps.single_ld(),
                                                     steps.diagonal_block_inverses(), &kept, stream, options);
    if (kept) steps.note_diagonal_block_inverses_made();
    return info;
  }
}

// GMRES-IR's Krylov space in GPU memory for one column of the last residual (gmres.hpp).
template <class T>
class DeviceKrylovSpace {
 public:
  DeviceKrylovSpace(detail::RefinementOnStream<T>& steps, int column) : steps_(steps) {
    steps_.krylov_begin(column, detail::kMostKrylovSteps);
  }
  bool start(double* beta) { return steps_.krylov_start(beta); }
  bool extend(int k, T* column) { return steps_.krylov_extend(k, column); }
  void add_combination(int k, const T* y) { steps_.krylov_add_combination(k, y); }

 private:
  detail::RefinementOnStream<T>& steps_;
};

// GMRES-IR from X and its last residual: in each step, each column that has not converged gets
// the correction GMRES finds for A d = r, preconditioned by the single-precision factor. The
// solve's ITER (the `done` classical steps plus these), kNarrowingOverflowed or kNotConverged.
template <class T>
int refine_by_gmres(detail::RefinementOnStream<T>& steps, int n, int nrhs, double bound, int done, int* krylov) {
  using Convergence = typename detail::RefinementOnStream<T>::Convergence;
  for (int step = 1; step <= detail::kMostGmresSteps; ++step) {
    for (int j = 0; j < nrhs; ++j) {
      if (steps.column_converged(j)) continue;
      DeviceKrylovSpace<T> space(steps, j);
      const detail::GmresResult found = detail::gmres<T>(n, space, detail::kMostKrylovSteps, detail::kKrylovTolerance);
      *krylov += found.iterations;
      if (found.preconditioner_failed) return detail::kNarrowingOverflowed;
    }
    const Convergence state = steps.converged(bound);
    if (state == Convergence::overflowed) return detail::kNarrowingOverflowed;
    if (state == Convergence::diverged) return detail::kNotConverged;
    if (state == Convergence::converged) return done + step;
  }
  return detail::kNotConverged;
}

// The refinement: the solve's ITER (>= 0 converged, else the reason to fall back; a refinement
// that diverged to a NaN or an infinity from a finite B falls back as one that did not converge,
// where LAPACK's test would pass it). A is not written. Classical refinement, LAPACK's; under
// Refinement::classical_then_gmres GMRES-IR takes over from the first step that does not gain
// enough (kClassicalStepMostProgress), as on host arrays.
template <class T>
int refine(Runtime& runtime, detail::RefinementOnStream<T>& steps, int n, int nrhs, Stream stream,
           const FactorOptions& options, int* krylov) {
  using Narrowing = typename detail::RefinementOnStream<T>::Narrowing;
  const Narrowing narrowed = steps.narrow_matrix();
  if (narrowed == Narrowing::overflowed) return detail::kNarrowingOverflowed;
  if (narrowed == Narrowing::diagonal_not_positive) return detail::kSingleFactorizationFailed;
  const double bound = steps.convergence_bound();
  if (factor_single(runtime, steps, n, stream, single_precision_options(options)) != 0)
    return detail::kSingleFactorizationFailed;
  using Convergence = typename detail::RefinementOnStream<T>::Convergence;
  steps.correct(true);
  double progress = 0;
  for (int iteration = 0;; ++iteration) {
    const double previous = progress;
    const Convergence state = steps.converged(bound, &progress);
    if (state == Convergence::overflowed) return detail::kNarrowingOverflowed;
    if (state == Convergence::converged) return iteration;
    if (state == Convergence::diverged || iteration == detail::kMostIterations) return detail::kNotConverged;
    if (iteration > 0 && options.refinement == Refinement::classical_then_gmres &&
        !(progress <= detail::kClassicalStepMostProgress * previous))
      return refine_by_gmres(steps, n, nrhs, bound, iteration, krylov);
    steps.correct(false);
  }
}

template <class T>
void check_arguments(Runtime& runtime, int n, int nrhs, const T* A, int lda, const T* B, int ldb, const T* X, int ldx,
                     const FactorOptions& options, int* device) {
  constexpr const char* kRoutine = "posv_refined";
  detail::throw_if_invalid("device::posv_refined", posv_refined_argument_error<T>(detail::uplo_letter(options.uplo), n,
                                                                                  nrhs, A, lda, B, ldb, X, ldx));
  if (options.log_determinant)
    throw InvalidArgument(qualified(kRoutine) +
                          ": FactorOptions::log_determinant is not taken (A is factored in single precision)");
  if (kIsComplex<T> && options.tensor_cores != TensorCores::off)
    throw InvalidArgument(qualified(kRoutine) + ": FactorOptions::tensor_cores " + to_string(options.tensor_cores) +
                          " is not taken for complex matrices (their single-precision factor runs in FP32)");
  require_cuda_workers(kRoutine, runtime);
  *device = -1;
  if (n == 0) return;
  *device = device_holding(kRoutine, A, "A", 4);
  if (nrhs == 0) return;
  if (device_holding(kRoutine, B, "B", 6) != *device)
    throw InvalidArgument(qualified(kRoutine) + ": B (argument 6) is not on the GPU that holds A", 6);
  if (device_holding(kRoutine, X, "X", 8) != *device)
    throw InvalidArgument(qualified(kRoutine) + ": X (argument 8) is not on the GPU that holds A", 8);
}

template <class T>
RefinedSolve refined_solve(Runtime& runtime, int n, int nrhs, T* A, int lda, const T* B, int ldb, T* X, int ldx,
                           Stream stream, const FactorOptions& options) {
  int device = -1;
  check_arguments(runtime, n, nrhs, A, lda, B, ldb, X, ldx, options, &device);
  if (n == 0) return {};
  RefinedSolve result;
  {
    detail::RefinementOnStream<T> steps(runtime, device, options.uplo, n, nrhs, A, lda, B, ldb, X, ldx, stream,
                                         options.tensor_cores != TensorCores::off);
    result.iter = refine(runtime, steps, n, nrhs, stream, options, &result.krylov_iterations);
  }  // the single-precision workspace goes back to the pool before A is factored
  if (result.iter >= 0) return result;
  FactorOptions double_options = options;
  double_options.tensor_cores = TensorCores::off;
  result.info = potrf(runtime, n, A, lda, stream, double_options);
  if (result.info != 0) return result;
  detail::copy_matrix_on_stream(n, nrhs, sizeof(T), B, ldb, X, ldx, stream);
  potrs(runtime, n, nrhs, A, lda, X, ldx, stream, double_options);
  return result;
}

}  // namespace

RefinedSolve posv_refined(Runtime& runtime, int n, int nrhs, double* A, int lda, const double* B, int ldb, double* X,
                          int ldx, Stream stream, const FactorOptions& options) {
  return refined_solve(runtime, n, nrhs, A, lda, B, ldb, X, ldx, stream, options);
}

RefinedSolve posv_refined(Runtime& runtime, int n, int nrhs, std::complex<double>* A, int lda,
                          const std::complex<double>* B, int ldb, std::complex<double>* X, int ldx, Stream stream,
                          const FactorOptions& options) {
  return refined_solve(runtime, n, nrhs, A, lda, B, ldb, X, ldx, stream, options);
}

#else

RefinedSolve posv_refined(Runtime&, int, int, double*, int, const double*, int, double*, int, Stream,
                          const FactorOptions&) {
  throw RuntimeError(qualified("posv_refined") + ": Tessera was built without CUDA");
}
RefinedSolve posv_refined(Runtime&, int, int, std::complex<double>*, int, const std::complex<double>*, int,
                          std::complex<double>*, int, Stream, const FactorOptions&) {
  throw RuntimeError(qualified("posv_refined") + ": Tessera was built without CUDA");
}

#endif

}  // namespace tessera::device
