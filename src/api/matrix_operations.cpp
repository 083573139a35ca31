// The one entry per operation: where the matrices lie picks the implementation (operations.hpp),
// after the checks that only a view can make (square, same home, same sizes, same runtime).
#include <string>
#include <tuple>

#include "operations.hpp"
#include "plan.hpp"
#include "runtime_control.hpp"
#include "submission.hpp"
#include "tessera/error.hpp"
#include "tessera/precision.hpp"

namespace tessera {

namespace {

const char* to_string(MatrixIn where) {
  switch (where) {
    case MatrixIn::host: return "host";
    case MatrixIn::device: return "device";
    case MatrixIn::tiles: return "tiles";
    case MatrixIn::host_batch: return "host_batch";
    case MatrixIn::host_variable_batch: return "host_variable_batch";
  }
  return "?";
}

[[noreturn]] void misuse(const char* routine, const std::string& what) {
  throw InvalidArgument(std::string("tessera::") + routine + ": " + what);
}

template <class T>
bool square(const MatrixView<T>& A) {
  return A.where() == MatrixIn::host_variable_batch ? A.cols() == MatrixView<T>::kSquare : A.rows() == A.cols();
}

template <class T>
void require_square(const char* routine, const MatrixView<T>& A) {
  if (!square(A))
    misuse(routine, "A is " + std::to_string(A.rows()) + " x " + std::to_string(A.cols()) +
                        ": a Cholesky factorization takes a square matrix");
}

template <class T>
void require_tiles_of(const char* routine, const Runtime& runtime, const MatrixView<T>& A, const char* name) {
  if (&A.tiles()->runtime() != &runtime)
    misuse(routine, std::string(name) + "'s tiles belong to another runtime than the one the call is made on");
}

// The factor (or A) and the right-hand sides B of a solve: one home, the same rows and count.
template <class T>
void check_solve_operands(const char* routine, const Runtime& runtime, const MatrixView<T>& A,
                          const MatrixView<T>& B) {
  require_square(routine, A);
  if (A.where() != B.where())
    misuse(routine, std::string("A lies in ") + to_string(A.where()) + " and B in " + to_string(B.where()) +
                        ": both must lie in the same kind of memory");
  if (A.where() == MatrixIn::tiles) {
    require_tiles_of(routine, runtime, A, "A");
    require_tiles_of(routine, runtime, B, "B");
    return;  // the tile implementation checks the shapes
  }
  if (A.count() != B.count())
    misuse(routine, "A has " + std::to_string(A.count()) + " matrices and B " + std::to_string(B.count()));
  if (A.where() == MatrixIn::host_variable_batch) {
    // Null or negative sizes are the implementation's to report, at their LAPACK positions.
    const bool comparable = A.variable_rows() && B.variable_rows() && A.variable_rows() != B.variable_rows();
    for (int k = 0; comparable && k < A.count(); ++k)
      if (A.variable_rows()[k] != B.variable_rows()[k])
        misuse(routine, "matrix " + std::to_string(k) + " of B has " + std::to_string(B.variable_rows()[k]) +
                            " rows, not its A's order " + std::to_string(A.variable_rows()[k]));
    return;
  }
  if (A.rows() != B.rows())
    misuse(routine, "B has " + std::to_string(B.rows()) + " rows, not A's order " + std::to_string(A.rows()));
}

}  // namespace

namespace {

template <class T>
Request potrf_in_home(Runtime& runtime, const MatrixView<T>& A, const FactorOptions& options) {
  if (A.where() == MatrixIn::host) return detail::potrf_array_async(runtime, A.rows(), A.data(), A.ld(), options);
  if (A.where() == MatrixIn::tiles) {
    require_tiles_of("potrf", runtime, A, "A");
    return detail::potrf_tiles_async(*A.tiles(), options);
  }
  if (A.where() == MatrixIn::device)
    return detail::finished_request(device::potrf_dense(runtime, A.rows(), A.data(), A.ld(), A.stream(), options));
  switch (A.where()) {
    case MatrixIn::host:
    case MatrixIn::tiles:
    case MatrixIn::device: break;
    case MatrixIn::host_batch:
      return detail::potrf_strided_batch_async(runtime, A.rows(), A.data(), A.ld(), A.stride(), A.count(), A.info(),
                                               options);
    case MatrixIn::host_variable_batch:
      return detail::potrf_variable_batch_async(runtime, A.variable_rows(), A.data(), A.offsets(), A.variable_ld(),
                                                A.count(), A.info(), options);
  }
  misuse("potrf", "A's MatrixIn is not one of the enumeration's values");
}

template <class T>
Request posv_in_home(Runtime& runtime, const MatrixView<T>& A, const MatrixView<T>& B, const FactorOptions& options) {
  const int n = A.rows();
  if (A.where() == MatrixIn::host)
    return detail::posv_array_async(runtime, n, B.cols(), A.data(), A.ld(), B.data(), B.ld(), options);
  if (A.where() == MatrixIn::tiles) {
    // B is the caller's tiles: solved only once the factor is known to exist, as LAPACK leaves
    // B as it was when the factorization fails.
    const int info = detail::potrf_tiles_async(*A.tiles(), options).wait();
    if (info != 0) return detail::finished_request(info);
    return detail::potrs_tiles_async(*A.tiles(), *B.tiles(), options);
  }
  if (A.where() == MatrixIn::device)
    return detail::finished_request(device::posv_dense(runtime, n, B.cols(), A.data(), A.ld(), B.data(), B.ld(),
                                                       B.stream(), options));
  switch (A.where()) {
    case MatrixIn::host:
    case MatrixIn::tiles:
    case MatrixIn::device: break;
    case MatrixIn::host_batch:
      return detail::posv_strided_batch_async(runtime, n, B.cols(), A.data(), A.ld(), A.stride(), B.data(), B.ld(),
                                              B.stride(), A.count(), A.info(), options);
    case MatrixIn::host_variable_batch:
      return detail::posv_variable_batch_async(runtime, A.variable_rows(), B.cols(), A.data(), A.offsets(),
                                               A.variable_ld(), B.data(), B.offsets(), B.variable_ld(), A.count(),
                                               A.info(), options);
  }
  misuse("posv", "A's MatrixIn is not one of the enumeration's values");
}

}  // namespace

template <class T>
Request potrf_async(Runtime& runtime, const MatrixView<T>& A, const FactorOptions& options) {
  require_square("potrf", A);
  return detail::with_log_determinant(potrf_in_home(runtime, A, options), A, options);
}

template <class T>
Request posv_async(Runtime& runtime, const MatrixView<T>& A, const MatrixView<T>& B, const FactorOptions& options) {
  check_solve_operands("posv", runtime, A, B);
  return detail::with_log_determinant(posv_in_home(runtime, A, B, options), A, options);
}

template <class T>
Request potrs_async(Runtime& runtime, const MatrixView<T>& factor, const MatrixView<T>& B,
                    const FactorOptions& options) {
  check_solve_operands("potrs", runtime, factor, B);
  const int n = factor.rows();
  if (factor.where() == MatrixIn::host)
    return detail::potrs_array_async(runtime, n, B.cols(), factor.data(), factor.ld(), B.data(), B.ld(), options);
  if (factor.where() == MatrixIn::tiles) return detail::potrs_tiles_async(*factor.tiles(), *B.tiles(), options);
  if (factor.where() == MatrixIn::device)
    return detail::finished_request(device::potrs_dense(runtime, n, B.cols(), factor.data(), factor.ld(), B.data(),
                                                        B.ld(), B.stream(), options));
  switch (factor.where()) {
    case MatrixIn::host:
    case MatrixIn::tiles:
    case MatrixIn::device: break;
    case MatrixIn::host_batch:
      return detail::potrs_strided_batch_async(runtime, n, B.cols(), factor.data(), factor.ld(), factor.stride(),
                                               B.data(), B.ld(), B.stride(), B.count(), options);
    case MatrixIn::host_variable_batch:
      return detail::potrs_variable_batch_async(runtime, factor.variable_rows(), B.cols(), factor.data(),
                                                factor.offsets(), factor.variable_ld(), B.data(), B.offsets(),
                                                B.variable_ld(), B.count(), options);
  }
  misuse("potrs", "the factor's MatrixIn is not one of the enumeration's values");
}


template <class T>
Request potri_async(Runtime& runtime, const MatrixView<T>& factor, const FactorOptions& options) {
  require_square("potri", factor);
  if (factor.where() == MatrixIn::device)
    return detail::finished_request(
        device::potri_dense(runtime, factor.rows(), factor.data(), factor.ld(), factor.stream(), options));
  if (factor.where() == MatrixIn::host_batch)
    return detail::potri_strided_batch_async(runtime, factor.rows(), factor.data(), factor.ld(), factor.stride(),
                                             factor.count(), factor.info(), options);
  if (factor.where() != MatrixIn::host)
    misuse("potri", std::string("the factor lies in ") + to_string(factor.where()) +
                        ": the inverse is computed from a factor in host or GPU memory or a strided host batch "
                        "(MatrixIn::host, device, host_batch) only");
  return detail::potri_array_async(runtime, factor.rows(), factor.data(), factor.ld(), options);
}

FactorOptions BatchOptions::as_factor_options() const {
  FactorOptions options;
  std::tie(options.uplo, options.mode, options.batch_chunk, options.fast_math, options.hints, options.progress,
           options.progress_interval) = std::tie(uplo, mode, chunk, fast_math, hints, progress, progress_interval);
  return options;
}

Request detail::finished_request(int info) {
  auto submission = std::make_shared<Submission>();
  if (info > 0) submission->record_not_positive_definite(info);
  return Request(std::move(submission));
}

#define TESSERA_INSTANTIATE(T)                                                                               \
  template Request potrf_async<T>(Runtime&, const MatrixView<T>&, const FactorOptions&);                     \
  template Request potrs_async<T>(Runtime&, const MatrixView<T>&, const MatrixView<T>&, const FactorOptions&); \
  template Request posv_async<T>(Runtime&, const MatrixView<T>&, const MatrixView<T>&, const FactorOptions&);   \
  template Request potri_async<T>(Runtime&, const MatrixView<T>&, const FactorOptions&);
TESSERA_FOR_EACH_SCALAR(TESSERA_INSTANTIATE)
#undef TESSERA_INSTANTIATE

}  // namespace tessera
